// python/source_build: pip's three build paths run by an interpreter of the image's X.Y, here Debian's own
// python3.11 with Debian's setuptools 66 and wheel 0.38 (python3-setuptools, python3-wheel: installed for the
// tests) given as the "image's" site directory.
#include "python/source_build.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/fs.h"
#include "support/privileges.h"

using nlohmann::json;

using namespace trainpack::python;
namespace fs = std::filesystem;

namespace {

const char* kDebianSite = "/usr/lib/python3/dist-packages";

class SourceBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/python3.11", X_OK) != 0 || !fs::is_directory(std::string(kDebianSite) + "/setuptools"))
      GTEST_SKIP() << "needs Debian's python3.11 with python3-setuptools and python3-wheel";
    python_.argv = {"/usr/bin/python3.11"};
    python_.scratch = work_.path() / "scratch";
    python_.env = clean_environment(python_.scratch);
    python_.version = python_.major_minor = "3.11";
    python_.description = "the host's /usr/bin/python3.11";
    tree_ = work_.path() / "app";
    fs::create_directories(tree_ / "tool");
    trainpack::write_file_atomic(tree_ / "tool" / "__init__.py", "X = 1\n");
    trainpack::write_file_atomic(
        tree_ / "setup.py",
        "from setuptools import setup\n"
        "setup(name='tiny-app', version='0.3', packages=['tool'], install_requires=['six>=1.0'],\n"
        "      entry_points={'console_scripts': ['tiny = tool:main']})\n");
  }

  SourceBuild build() const {
    SourceBuild b;
    b.python = &python_;
    b.tree = tree_;
    b.display = "the project in setup.py";
    b.site_dirs = {kDebianSite};
    b.sys_executable = "/opt/image/bin/python3";
    b.sys_prefix = b.sys_base_prefix = "/opt/image";
    b.image_env = {"PYTHONDONTWRITEBYTECODE=1"};
    return b;
  }

  trainpack::ScopedDir work_{trainpack::make_temp_dir("", "tp-source-build-")};
  Interpreter python_;
  fs::path tree_;
};

}  // namespace

TEST_F(SourceBuildTest, LegacyWheelBuildsInPlaceWithTheGivenSetuptools) {
  fs::path wheel = build_legacy_wheel(build(), work_.path() / "out");
  EXPECT_EQ(wheel.filename(), "tiny_app-0.3-py3-none-any.whl");
  EXPECT_TRUE(fs::is_directory(tree_ / "tiny_app.egg-info")) << "setup.py bdist_wheel runs egg_info in the tree";
  EXPECT_TRUE(fs::is_directory(tree_ / "build")) << "and leaves build/ there";
}

TEST_F(SourceBuildTest, LegacyMetadataThenInstallStagesFilesAndWritesInstalledFiles) {
  EggInfo egg = legacy_metadata(build(), work_.path() / "egg-base");
  EXPECT_NE(egg.pkg_info.find("Name: tiny-app"), std::string::npos) << egg.pkg_info;
  EXPECT_NE(egg.requires_txt.find("six>=1.0"), std::string::npos);
  EXPECT_FALSE(fs::exists(tree_ / "tiny_app.egg-info")) << "egg_info --egg-base writes elsewhere";

  InstallScheme scheme{"/opt/image/lib/python3.11/site-packages", "/opt/image/lib/python3.11/site-packages",
                       "/opt/image/include/site/python3.11/tiny-app", "/opt/image/bin", "/opt/image"};
  LegacyInstall li = legacy_install(build(), scheme, work_.path() / "stage");
  const std::string site = "opt/image/lib/python3.11/site-packages/";
  EXPECT_TRUE(fs::is_regular_file(li.stage / site / "tool" / "__init__.py"));
  EXPECT_FALSE(fs::exists(li.stage / site / "tool" / "__pycache__")) << "PYTHONDONTWRITEBYTECODE skips byte_compile";
  EXPECT_EQ(li.egg_info_dir.rfind("/opt/image/lib/python3.11/site-packages/tiny_app-0.3", 0), 0u) << li.egg_info_dir;
  // The console script: an easy_install-style wrapper naming the image's interpreter, not the one that ran it.
  std::string script = trainpack::read_file(li.stage / "opt/image/bin/tiny", 1 << 20);
  EXPECT_EQ(script.rfind("#!/opt/image/bin/python3\n", 0), 0u) << script;
  // installed-files.txt lists paths relative to the egg-info directory, the .pyc that --compile would make too.
  EXPECT_NE(li.installed_files_txt.find("../tool/__init__.py\n"), std::string::npos) << li.installed_files_txt;
  EXPECT_NE(li.installed_files_txt.find("../tool/__pycache__/__init__.cpython-311.pyc\n"), std::string::npos);
  EXPECT_NE(li.installed_files_txt.find("../../../../bin/tiny\n"), std::string::npos);
  EXPECT_NE(li.installed_files_txt.find("PKG-INFO\n"), std::string::npos);
  EXPECT_EQ(li.installed_files_txt.find("installed-files.txt"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(tree_ / "tiny_app.egg-info")) << "install runs egg_info in the tree";
}

TEST_F(SourceBuildTest, Pep517HooksOfSetuptoolsLegacyBackend) {
  SourceBuild b = build();
  Pep517Backend backend{"setuptools.build_meta:__legacy__", {}};
  std::vector<std::string> more = pep517_requires_for_build_wheel(b, backend);
  EXPECT_EQ(more, std::vector<std::string>{"wheel"}) << "setuptools < 70.1 asks for wheel";
  fs::path wheel = pep517_build_wheel(b, backend, work_.path() / "out517");
  EXPECT_EQ(wheel.filename(), "tiny_app-0.3-py3-none-any.whl");
}

TEST_F(SourceBuildTest, AFailingBuildNamesTheProjectAndShowsTheException) {
  trainpack::write_file_atomic(tree_ / "setup.py", "import nonexistent_module_for_the_test\n");
  try {
    build_legacy_wheel(build(), work_.path() / "out");
    FAIL() << "a failing build must throw";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the project in setup.py"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("ModuleNotFoundError: No module named 'nonexistent_module_for_the_test'"),
              std::string::npos)
        << e.hint();
  }
}

TEST(SourceBuild, InstalledFilesFromTheRecordAsPipWritesThem) {
  LegacyInstall li = installed_files_from_record(
      {"/usr/local/lib/python3.9/dist-packages/t/__init__.py", "/usr/local/bin/t",
       "/usr/local/lib/python3.9/dist-packages/t-1.0.egg-info/PKG-INFO",
       "/usr/local/lib/python3.9/dist-packages/t-1.0.egg-info/SOURCES.txt"},
      "t");
  EXPECT_EQ(li.egg_info_dir, "/usr/local/lib/python3.9/dist-packages/t-1.0.egg-info");
  EXPECT_EQ(li.installed_files_txt, "../../../../bin/t\n../t/__init__.py\nPKG-INFO\nSOURCES.txt\n");
  EXPECT_THROW(installed_files_from_record({"/usr/local/lib/x.py"}, "x"), trainpack::Error);
}

TEST_F(SourceBuildTest, TheExceptionIsTheErrorLineEvenAfterMuchOutput) {
  // A build that prints a lot (as compilers do) on stdout, then fails with a chained exception on stderr: the
  // error's one line is the last exception, and the hint ends with it, not with stdout printed before.
  trainpack::write_file_atomic(tree_ / "setup.py",
                               "import sys\n"
                               "for i in range(200): print('compiling module', i)\n"
                               "sys.stdout.flush()\n"
                               "try:\n"
                               "    raise KeyError('inner')\n"
                               "except KeyError:\n"
                               "    raise RuntimeError('the C compiler is missing')\n");
  try {
    build_legacy_wheel(build(), work_.path() / "out");
    FAIL() << "a failing build must throw";
  } catch (const trainpack::Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("failed: RuntimeError: the C compiler is missing"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line";
    EXPECT_NE(e.hint().find("    RuntimeError: the C compiler is missing\n"), std::string::npos) << e.hint();
    EXPECT_EQ(e.hint().find("compiling module 150"), std::string::npos) << "only the end of the output";
  }
}

TEST(SourceBuildOutput, TheReasonIsTheLastExceptionElseTheLastErrorLine) {
  EXPECT_EQ(build_failure_reason("Traceback (most recent call last):\n  File \"setup.py\", line 1\n"
                                 "    import x\nModuleNotFoundError: No module named 'x'\n"),
            "ModuleNotFoundError: No module named 'x'");
  EXPECT_EQ(build_failure_reason("running build_ext\nerror: command 'gcc' failed: No such file or directory\n"
                                 "cleaning up\n"),
            "error: command 'gcc' failed: No such file or directory");
  EXPECT_EQ(build_failure_reason("one\r\ntwo\r\n\r\n"), "two");
  EXPECT_EQ(build_failure_reason(""), "it printed nothing");
  EXPECT_EQ(build_output_tail("a\n\nb\nc\n", 2), "\n    b\n    c");
}

// Started as root, a build runs as the unprivileged user: setup.py can read neither root's files (a registry
// credential) nor the environment or memory of the process that started it.
TEST_F(SourceBuildTest, AsRootTheBuildRunsAsAnotherUserWhoSeesNoSecret) {
  std::optional<trainpack::UserIds> user = trainpack::unprivileged_build_user();
  if (!user) GTEST_SKIP() << "not root, or no other user to become";
  fs::path secret = work_.path() / "docker" / "config.json";
  fs::create_directories(secret.parent_path());
  trainpack::write_file_atomic(secret, "{\"auths\":{}}");
  fs::permissions(secret, fs::perms(0600));
  fs::permissions(secret.parent_path(), fs::perms(0700));
  trainpack::write_file_atomic(
      tree_ / "setup.py",
      "import os\n"
      "assert os.getuid() == " + std::to_string(user->uid) + ", os.getuid()\n"
      "for path in (" + json(secret.string()).dump() + ", '/proc/%d/environ' % os.getppid()):\n"
      "    try:\n"
      "        open(path).read()\n"
      "        raise SystemExit('read ' + path)\n"
      "    except PermissionError:\n"
      "        pass\n"
      "from setuptools import setup\n"
      "setup(name='tiny-app', version='0.3', packages=['tool'])\n");
  fs::permissions(work_.path(), fs::perms(0711));
  trainpack::give_tree(tree_, *user);
  trainpack::give_tree(python_.scratch, *user);
  SourceBuild b = build();
  b.run_as = user;
  fs::path wheel = build_legacy_wheel(b, work_.path() / "out");
  EXPECT_EQ(wheel.filename(), "tiny_app-0.3-py3-none-any.whl");
}

// A build that leaves a symlink where its result is read gets nothing read through it.
TEST_F(SourceBuildTest, AResultThatIsASymlinkIsRefused) {
  fs::path secret = work_.path() / "secret.txt";
  trainpack::write_file_atomic(secret, "Name: stolen\n");
  trainpack::write_file_atomic(
      tree_ / "setup.py",
      "import os, sys\n"
      "base = sys.argv[sys.argv.index('--egg-base') + 1]\n"
      "os.makedirs(os.path.join(base, 'x.egg-info'))\n"
      "os.symlink(" + json(secret.string()).dump() + ", os.path.join(base, 'x.egg-info', 'PKG-INFO'))\n");
  try {
    legacy_metadata(build(), work_.path() / "egg-base");
    FAIL() << "a symlinked PKG-INFO must be refused";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("left a symlink at"), std::string::npos) << e.what();
  }
}
