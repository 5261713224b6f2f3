// local-run flags, gcloud's validation (plus trainpack's containment checks) and image naming (gcloud 578.0.0: command_lib/ai/custom_jobs/{flags,validation,local_util}.py).
#include "gcloud/local_run_spec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "gcloud/gcloud_flags.h"
#include "support/error.h"
#include "support/fs.h"
#include "gcloud/dockerfile.h"

namespace {

namespace fs = std::filesystem;
using trainpack::Error;
using trainpack::gcloud::add_local_run_flags;
using trainpack::gcloud::default_local_image_name;
using trainpack::gcloud::local_image_tag;
using trainpack::gcloud::LocalRunFlags;
using trainpack::gcloud::LocalRunSpec;
using trainpack::gcloud::sanitize_repository_name;
using trainpack::gcloud::parse_like_argparse;
using trainpack::gcloud::validate_local_run;
using trainpack::gcloud::validate_repository_and_tag;

constexpr const char* kPython = "python:3.10";
constexpr const char* kPrebuilt = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest";

// A package directory in a fresh temp dir, removed afterwards.
class Package {
 public:
  Package()
      : root_(trainpack::make_temp_dir({}, "trainpack-local-run-")),
        dir_(fs::canonical(root_.path()) / "pkg") {
    fs::create_directories(dir_);
  }
  const fs::path& dir() const { return dir_; }
  std::string str() const { return dir_.string(); }
  fs::path outside() const { return fs::canonical(root_.path()); }  // the parent of the package dir
  Package& file(const std::string& rel, const std::string& text = "") {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return *this;
  }
  Package& dir(const std::string& rel) {
    fs::create_directories(dir_ / rel);
    return *this;
  }

 private:
  trainpack::ScopedDir root_;
  fs::path dir_;
};

LocalRunFlags flags_for(const Package& pkg, const std::string& base = kPython) {
  LocalRunFlags flags;
  flags.executor_image_uri = base;
  flags.local_package_path = pkg.str();
  return flags;
}

// The Error validate_local_run throws (fails the test when there is none).
Error validation_error(const LocalRunFlags& flags) {
  try {
    validate_local_run(flags);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "validate_local_run did not throw";
  return Error("");
}

std::string read_golden(const std::string& name) {
  std::ifstream in(fs::path(TRAINPACK_TESTDATA_DIR) / "dockerfile" / name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ----- flag parsing -----

std::optional<LocalRunFlags> parse(std::vector<std::string> args) {
  CLI::App app{"test"};
  LocalRunFlags flags;
  add_local_run_flags(app, flags);
  std::vector<const char*> argv{"local-run"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    parse_like_argparse(app, static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return std::nullopt;
  }
  return flags;
}

TEST(LocalRunFlags, BothValueFormsAndDefaults) {
  auto f = parse({"--executor-image-uri=python:3.10", "--script", "trainer/task.py"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->executor_image_uri, "python:3.10");
  EXPECT_EQ(f->script, "trainer/task.py");
  EXPECT_EQ(f->local_package_path, ".");
  EXPECT_TRUE(f->python_module.empty());
  EXPECT_TRUE(f->requirements.empty());
  EXPECT_FALSE(f->gpu);

  f = parse({"--executor-image-uri", "img", "--local-package-path=/src", "--python-module=trainer.task",
             "--output-image-uri", "my-image:1", "--service-account-key-file=/k.json", "--gpu"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->local_package_path, "/src");
  EXPECT_EQ(f->python_module, "trainer.task");
  EXPECT_EQ(f->output_image_uri, "my-image:1");
  EXPECT_EQ(f->service_account_key_file, "/k.json");
  EXPECT_TRUE(f->gpu);
}

TEST(LocalRunFlags, ExecutorImageIsRequired) { EXPECT_FALSE(parse({"--script=task.py"})); }

TEST(LocalRunFlags, ListsAreGcloudListsAndTheLastOccurrenceCounts) {
  // argparse's 'store' (custom_jobs/flags.py declares no action): a repeated list flag replaces the list.
  auto f = parse({"--executor-image-uri=img", "--requirements=pandas==1.2.0,scipy>=1.3.0", "--requirements",
                  "torch", "--extra-packages", "dep/foo.tar.gz,bar.whl", "--extra-dirs=dataset,config",
                  "--extra-dirs=^;^more,data; x"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->requirements, (std::vector<std::string>{"torch"}));
  EXPECT_EQ(f->extra_packages, (std::vector<std::string>{"dep/foo.tar.gz", "bar.whl"}));
  EXPECT_EQ(f->extra_dirs, (std::vector<std::string>{"more,data", " x"}));
  f = parse({"--executor-image-uri=img", "--requirements=a,,b,", "--extra-dirs=a", "--extra-dirs="});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->requirements, (std::vector<std::string>{"a", "", "b"}));
  EXPECT_TRUE(f->extra_dirs.empty());
}

TEST(LocalRunFlags, ListFlagTakesOneValuePerOccurrence) {
  CLI::App app{"test"};
  LocalRunFlags flags;
  add_local_run_flags(app, flags);
  std::vector<std::string> rest;
  app.add_option("rest", rest);
  const char* argv[] = {"local-run", "--executor-image-uri=img", "--requirements", "a,b", "positional"};
  parse_like_argparse(app, 5, argv);
  EXPECT_EQ(flags.requirements, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rest, (std::vector<std::string>{"positional"}));
}

TEST(LocalRunFlags, EmptyValuesMeanAbsentAndDoNotSwallowTheNextFlag) {
  // "--flag=$EMPTY" is how scripts pass nothing; gcloud reads it as an absent value / empty list.
  auto f = parse({"--executor-image-uri=img", "--output-image-uri=", "--requirements=", "--extra-dirs", "",
                  "--script=task.py", "--gpu"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->output_image_uri, "");
  EXPECT_TRUE(f->requirements.empty());
  EXPECT_TRUE(f->extra_dirs.empty());
  EXPECT_EQ(f->script, "task.py");
  EXPECT_TRUE(f->gpu);
}

TEST(LocalRunFlags, RepeatedScalarFlagLastWins) {
  auto f = parse({"--executor-image-uri=a", "--executor-image-uri=b", "--script=x.py", "--script=y.py"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->executor_image_uri, "b");
  EXPECT_EQ(f->script, "y.py");
}

// ----- validation: successes -----

TEST(ValidateLocalRun, ScriptInSubdir) {
  Package pkg;
  pkg.file("trainer/task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "trainer/task.py";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_TRUE(spec.builds_image());
  EXPECT_EQ(spec.package_dir, pkg.dir());
  EXPECT_EQ(spec.script, "trainer/task.py");
  EXPECT_EQ(spec.parent_dir, "trainer");
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"python", "trainer/task.py"}));
  EXPECT_FALSE(spec.prebuilt);
  EXPECT_FALSE(spec.has_setup_py);
  EXPECT_FALSE(spec.has_requirements_txt);
  EXPECT_TRUE(spec.output_image_generated);
  EXPECT_TRUE(std::regex_match(spec.output_image,
                               std::regex(R"(cloudai-autogenerated/trainer\.task\.py:\d{8}\.\d\d\.\d\d\.\d\d\.\d{6})")))
      << spec.output_image;
  EXPECT_EQ(trainpack::gcloud::render_dockerfile(spec.dockerfile_spec()), read_golden("A.Dockerfile"));
}

TEST(ValidateLocalRun, DotSlashScriptIsKeptAsGiven) {
  Package pkg;
  pkg.file("trainer/task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "./trainer/task.py";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_EQ(spec.script, "./trainer/task.py");
  EXPECT_EQ(spec.parent_dir, "./trainer");
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"python", "./trainer/task.py"}));
  EXPECT_TRUE(spec.output_image.starts_with("cloudai-autogenerated/trainer.task.py:"));
}

TEST(ValidateLocalRun, RootScriptOnPrebuilt) {
  Package pkg;
  pkg.file("task.py");
  LocalRunFlags flags = flags_for(pkg, kPrebuilt);
  flags.script = "task.py";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_TRUE(spec.prebuilt);
  EXPECT_EQ(spec.parent_dir, ".");
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"python3", "task.py"}));
  EXPECT_EQ(trainpack::gcloud::render_dockerfile(spec.dockerfile_spec()), read_golden("B.Dockerfile"));
}

TEST(ValidateLocalRun, ShellScript) {
  Package pkg;
  pkg.file("scripts/run.sh", "#!/bin/bash\n");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "scripts/run.sh";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"/bin/bash", "scripts/run.sh"}));
  EXPECT_EQ(trainpack::gcloud::render_dockerfile(spec.dockerfile_spec()), read_golden("C.Dockerfile"));
}

TEST(ValidateLocalRun, PythonModuleBecomesItsPath) {
  Package pkg;
  pkg.file("a/b/c.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.python_module = "a.b.c";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_EQ(spec.script, "a/b/c.py");
  EXPECT_EQ(spec.python_module, "a.b.c");
  EXPECT_EQ(spec.parent_dir, "a/b");
  EXPECT_EQ(spec.entrypoint, (std::vector<std::string>{"python", "-m", "a.b.c"}));
  EXPECT_TRUE(spec.output_image.starts_with("cloudai-autogenerated/a.b.c.py:")) << spec.output_image;
  EXPECT_EQ(trainpack::gcloud::render_dockerfile(spec.dockerfile_spec()), read_golden("D-prime.Dockerfile"));
}

TEST(ValidateLocalRun, EverythingMatchesGoldenE) {
  Package pkg;
  pkg.file("setup.py").file("requirements.txt").file("trainer/task.py").file("dep/foo.tar.gz").file("bar.whl");
  pkg.dir("dataset").dir("config");
  for (const char* base : {kPrebuilt, kPython}) {
    LocalRunFlags flags = flags_for(pkg, base);
    flags.python_module = "trainer.task";
    flags.requirements = {"pandas==1.2.0", "scipy>=1.3.0"};
    flags.extra_packages = {"dep/foo.tar.gz", "bar.whl"};
    flags.extra_dirs = {"dataset", "config"};
    flags.output_image_uri = "gcr.io/my-proj/trainer:v1";
    flags.gpu = true;
    flags.service_account_key_file = "/keys/k.json";
    const LocalRunSpec spec = validate_local_run(flags);
    EXPECT_TRUE(spec.has_setup_py);
    EXPECT_TRUE(spec.has_requirements_txt);
    EXPECT_EQ(spec.output_image, "gcr.io/my-proj/trainer:v1");
    EXPECT_FALSE(spec.output_image_generated);
    EXPECT_TRUE(spec.gpu);
    EXPECT_EQ(spec.service_account_key_file, "/keys/k.json");
    EXPECT_EQ(trainpack::gcloud::render_dockerfile(spec.dockerfile_spec()),
              read_golden(base == kPrebuilt ? "E.Dockerfile" : "E-prime.Dockerfile"));
  }
}

TEST(ValidateLocalRun, RootFilesNeedToBeRegularFiles) {
  Package pkg;
  pkg.file("task.py").dir("setup.py").file("real-requirements.txt");
  fs::create_symlink("real-requirements.txt", pkg.dir() / "requirements.txt");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "task.py";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_FALSE(spec.has_setup_py);         // a directory named setup.py does not count
  EXPECT_TRUE(spec.has_requirements_txt);  // os.path.isfile follows symlinks
}

TEST(ValidateLocalRun, NothingToBuildRunsTheExecutorImage) {
  Package pkg;
  const LocalRunSpec spec = validate_local_run(flags_for(pkg));
  EXPECT_FALSE(spec.builds_image());
  EXPECT_EQ(spec.package_dir, pkg.dir());
  EXPECT_TRUE(spec.output_image.empty());
  EXPECT_THROW(spec.dockerfile_spec(), Error);
}

TEST(ValidateLocalRun, PackagePathIsMadeAbsoluteAndNormalized) {
  Package pkg;
  pkg.file("task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.local_package_path = pkg.str() + "/./sub/../";
  flags.script = "task.py";
  EXPECT_EQ(validate_local_run(flags).package_dir, pkg.dir());

  // Relative to the current directory; empty means the current directory.
  const fs::path saved = fs::current_path();
  fs::current_path(pkg.dir().parent_path());
  flags.local_package_path = "pkg";
  const auto relative = validate_local_run(flags).package_dir;
  fs::current_path(pkg.dir());
  flags.local_package_path = "";
  const auto empty = validate_local_run(flags).package_dir;
  fs::current_path(saved);
  EXPECT_EQ(relative, pkg.dir());
  EXPECT_EQ(empty, pkg.dir());
}

TEST(ValidateLocalRun, TildeExpandsToHome) {
  Package pkg;
  pkg.file("task.py");
  const char* old_home = std::getenv("HOME");
  const std::optional<std::string> saved = old_home ? std::optional<std::string>(old_home) : std::nullopt;
  setenv("HOME", pkg.dir().parent_path().c_str(), 1);
  LocalRunFlags flags = flags_for(pkg);
  flags.local_package_path = "~/pkg";
  flags.script = "task.py";
  const auto dir = validate_local_run(flags).package_dir;
  if (saved) {
    setenv("HOME", saved->c_str(), 1);
  } else {
    unsetenv("HOME");
  }
  EXPECT_EQ(dir, pkg.dir());
}

TEST(ValidateLocalRun, BackslashScriptIsCheckedAsSlashes) {
  Package pkg;
  pkg.file("trainer/task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "trainer\\task.py";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_EQ(spec.script, "trainer\\task.py");
  EXPECT_EQ(spec.parent_dir, "trainer");
  EXPECT_TRUE(spec.output_image.starts_with("cloudai-autogenerated/trainer.task.py:"));
}

TEST(ValidateLocalRun, SymlinkedPackageDirIsFine) {
  Package pkg;
  pkg.file("trainer/task.py");
  const fs::path link = pkg.outside() / "link";
  fs::create_directory_symlink(pkg.dir(), link);
  LocalRunFlags flags = flags_for(pkg);
  flags.local_package_path = link.string();
  flags.script = "trainer/task.py";
  const LocalRunSpec spec = validate_local_run(flags);
  EXPECT_EQ(spec.package_dir, link);  // abspath does not resolve symlinks
}

// ----- validation: errors -----

TEST(ValidateLocalRunErrors, PackagePathMissing) {
  Package pkg;
  LocalRunFlags flags = flags_for(pkg);
  flags.local_package_path = (pkg.dir() / "nope").string();
  const Error e = validation_error(flags);
  EXPECT_EQ(std::string(e.what()),
            "Invalid value for [--local-package-path]: Directory '" + pkg.str() + "/nope' is not found.");
  EXPECT_FALSE(e.hint().empty());
}

TEST(ValidateLocalRunErrors, PackagePathIsAFile) {
  Package pkg;
  pkg.file("f");
  LocalRunFlags flags = flags_for(pkg);
  flags.local_package_path = (pkg.dir() / "f").string();
  const Error e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("Directory '" + pkg.str() + "/f' is not found."), std::string::npos);
  EXPECT_NE(e.hint().find("not a directory"), std::string::npos) << e.hint();
}

TEST(ValidateLocalRunErrors, ScriptAndModuleTogether) {
  Package pkg;
  pkg.file("task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "task.py";
  flags.python_module = "task";
  const Error e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("At most one of --python-module | --script"), std::string::npos) << e.what();
}

TEST(ValidateLocalRunErrors, BuildFlagsWithoutScriptOrModule) {
  Package pkg;
  pkg.dir("data");
  LocalRunFlags flags = flags_for(pkg);
  flags.requirements = {"pandas"};
  flags.extra_dirs = {"data"};
  flags.output_image_uri = "img";
  flags.extra_packages = {"x.whl"};
  const Error e = validation_error(flags);
  EXPECT_EQ(std::string(e.what()),
            "One of [--script, --python-module] must be supplied: They are required to build a training container "
            "image. Otherwise, please remove flags [extra-dirs, extra-packages, output-image-uri, requirements] to "
            "directly run the `executor-image-uri`..");
  EXPECT_FALSE(e.hint().empty());

  LocalRunFlags only_output = flags_for(pkg);
  only_output.output_image_uri = "img";
  EXPECT_NE(std::string(validation_error(only_output).what())
                .find("They are required to build a training container image. Otherwise, please remove flags "
                      "[output-image-uri] to directly run the `executor-image-uri`."),
            std::string::npos);
}

TEST(ValidateLocalRunErrors, EmptyExecutorImage) {
  Package pkg;
  LocalRunFlags flags = flags_for(pkg, "");
  EXPECT_NE(std::string(validation_error(flags).what()).find("[--executor-image-uri]"), std::string::npos);
}

TEST(ValidateLocalRunErrors, ScriptMissingOrNotAFile) {
  Package pkg;
  pkg.dir("trainer/task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "trainer/other.py";
  Error e = validation_error(flags);
  EXPECT_EQ(std::string(e.what()), "Invalid value for [--script]: File 'trainer/other.py' is not found under the "
                                   "package: '" + pkg.str() + "'.");
  flags.script = "trainer/task.py";  // a directory
  e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("File 'trainer/task.py' is not found under the package"), std::string::npos);
  EXPECT_NE(e.hint().find("not a regular file"), std::string::npos) << e.hint();
}

TEST(ValidateLocalRunErrors, DanglingScriptSymlink) {
  Package pkg;
  pkg.dir("trainer");
  fs::create_symlink("gone.py", pkg.dir() / "trainer/task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "trainer/task.py";
  const Error e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("is not found under the package"), std::string::npos);
  EXPECT_NE(e.hint().find("dangling symlink"), std::string::npos) << e.hint();
}

TEST(ValidateLocalRunErrors, ModuleFileMissing) {
  Package pkg;
  pkg.file("a/b/__init__.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.python_module = "a.b.c";
  const Error e = validation_error(flags);
  EXPECT_EQ(std::string(e.what()), "Invalid value for [--python-module]: File 'a/b/c.py' is not found under the "
                                   "package: '" + pkg.str() + "'.");
}

TEST(ValidateLocalRunErrors, ExtraPackageMissingOrADirectory) {
  Package pkg;
  pkg.file("task.py").dir("dist/pkg.whl");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "task.py";
  flags.extra_packages = {"dist/missing.whl"};
  EXPECT_EQ(std::string(validation_error(flags).what()),
            "Invalid value for [--extra-packages]: Package file 'dist/missing.whl' is not found under the package: '" +
                pkg.str() + "'.");
  flags.extra_packages = {"dist/pkg.whl"};
  EXPECT_NE(std::string(validation_error(flags).what()).find("Package file 'dist/pkg.whl' is not found"),
            std::string::npos);
}

TEST(ValidateLocalRunErrors, ExtraDirMissingOrAFile) {
  Package pkg;
  pkg.file("task.py").file("notes.txt");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "task.py";
  flags.extra_dirs = {"data"};
  EXPECT_EQ(std::string(validation_error(flags).what()),
            "Invalid value for [--extra-dirs]: Directory 'data' is not found under the package: '" + pkg.str() + "'.");
  flags.extra_dirs = {"notes.txt"};
  const Error e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("Directory 'notes.txt' is not found"), std::string::npos);
  EXPECT_NE(e.hint().find("not a directory"), std::string::npos) << e.hint();
}

TEST(ValidateLocalRunErrors, DotDotLeavesThePackage) {
  Package pkg;
  pkg.file("task.py");
  std::ofstream(pkg.outside() / "outside.py") << "";
  std::ofstream(pkg.outside() / "dep.whl") << "";
  fs::create_directories(pkg.outside() / "data");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "../outside.py";  // exists, and gcloud would accept it
  Error e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("[--script]: path outside the package dir"), std::string::npos) << e.what();
  EXPECT_FALSE(e.hint().empty());

  flags.script = "../pkg/task.py";  // normpath folds it back in, but Docker would look for <context>/pkg/task.py
  e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("path outside the package dir"), std::string::npos) << e.what();

  flags.script = "task.py";
  flags.extra_packages = {"../dep.whl"};
  e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("[--extra-packages]: path outside the package dir"), std::string::npos);

  flags.extra_packages = {};
  flags.extra_dirs = {"sub/../../data"};
  e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("[--extra-dirs]: path outside the package dir"), std::string::npos);
}

TEST(ValidateLocalRunErrors, DotDotInsideThePackageIsFine) {
  Package pkg;
  pkg.file("task.py").dir("a/b");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "a/../task.py";
  flags.extra_dirs = {"a/b/.."};
  EXPECT_NO_THROW(validate_local_run(flags));
}

TEST(ValidateLocalRunErrors, SymlinkLeavesThePackage) {
  Package pkg;
  pkg.dir("trainer");
  std::ofstream(pkg.outside() / "real.py") << "";
  fs::create_directories(pkg.outside() / "elsewhere");
  std::ofstream(pkg.outside() / "elsewhere/task.py") << "";
  fs::create_symlink(pkg.outside() / "real.py", pkg.dir() / "trainer/task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "trainer/task.py";
  Error e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("path outside the package dir"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find((pkg.outside() / "real.py").string()), std::string::npos) << e.what();

  // A symlinked directory on the way.
  fs::create_directory_symlink(pkg.outside() / "elsewhere", pkg.dir() / "linked");
  flags.script = "linked/task.py";
  e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("path outside the package dir"), std::string::npos) << e.what();

  flags.script = "trainer/task.py";
  fs::remove(pkg.dir() / "trainer/task.py");
  pkg.file("trainer/task.py");
  flags.extra_dirs = {"linked"};
  e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("[--extra-dirs]: path outside the package dir"), std::string::npos);
}

TEST(ValidateLocalRunErrors, SymlinkInsideThePackageIsFine) {
  Package pkg;
  pkg.file("src/task.py");
  fs::create_directory_symlink(pkg.dir() / "src", pkg.dir() / "trainer");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "trainer/task.py";
  EXPECT_EQ(validate_local_run(flags).parent_dir, "trainer");
}

TEST(ValidateLocalRunErrors, AbsolutePathsAreRefused) {
  Package pkg;
  pkg.file("task.py").file("dep.whl");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = (pkg.dir() / "task.py").string();
  Error e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("[--script]: path outside the package dir"), std::string::npos) << e.what();
  EXPECT_NE(e.hint().find("'task.py'"), std::string::npos) << e.hint();  // suggests the relative form

  flags.script = "task.py";
  flags.extra_packages = {"/etc/hostname"};
  e = validation_error(flags);
  EXPECT_NE(std::string(e.what()).find("[--extra-packages]: path outside the package dir"), std::string::npos);
}

TEST(ValidateLocalRunErrors, InvalidOutputImage) {
  Package pkg;
  pkg.file("task.py");
  LocalRunFlags flags = flags_for(pkg);
  flags.script = "task.py";
  flags.output_image_uri = "My-Image:v1";
  Error e = validation_error(flags);
  EXPECT_EQ(std::string(e.what()),
            "Invalid value for [--output-image-uri]: 'My-Image:v1' is not a valid container image uri: Invalid path "
            "component \"My-Image\" in repository name.");
  EXPECT_FALSE(e.hint().empty());
  flags.output_image_uri = "img:.v1";
  EXPECT_NE(std::string(validation_error(flags).what()).find("Invalid tag."), std::string::npos);
}

// ----- image naming (§5) -----

TEST(SanitizeRepositoryName, TableFromTheSpec) {
  EXPECT_EQ(sanitize_repository_name("trainer/task.py"), "trainer.task.py");
  EXPECT_EQ(sanitize_repository_name("My_Trainer/Task.py"), "my_trainer.task.py");
  EXPECT_EQ(sanitize_repository_name("a__b/c.py"), "a.b.c.py");
  EXPECT_EQ(sanitize_repository_name("a/b/c.py"), "a.b.c.py");
  EXPECT_EQ(sanitize_repository_name("./trainer/task.py"), "trainer.task.py");
  EXPECT_EQ(sanitize_repository_name("_x/y.py"), "x.y.py");
  EXPECT_EQ(sanitize_repository_name("a_/b"), "a_.b");
  EXPECT_EQ(sanitize_repository_name(""), "unnamed");
}

TEST(SanitizeRepositoryName, EdgeCasesMatchPython) {
  EXPECT_EQ(sanitize_repository_name("a/./b"), "a...b");  // the replacement is not re-scanned
  EXPECT_EQ(sanitize_repository_name("a...b"), "a.b");
  EXPECT_EQ(sanitize_repository_name("a._b"), "a.b");
  EXPECT_EQ(sanitize_repository_name("a.-b"), "a.-b");
  EXPECT_EQ(sanitize_repository_name("a--b"), "a--b");
  EXPECT_EQ(sanitize_repository_name("___"), "");
  EXPECT_EQ(sanitize_repository_name("-x-"), "x");
  EXPECT_EQ(sanitize_repository_name("run me.sh"), "run.me.sh");
  EXPECT_EQ(sanitize_repository_name("d\xc3\xa4t\xc3\xa4.py"), "d.t..py");
  EXPECT_EQ(sanitize_repository_name("\xe2\x84\xaa" "elvin"), "kelvin");  // KELVIN SIGN lowercases to 'k'
  EXPECT_EQ(sanitize_repository_name("\xc4\xb0x"), "i.x");                 // U+0130 lowercases to "i\u0307"
  EXPECT_EQ(sanitize_repository_name("trainer\\task.py"), "trainer.task.py");
  EXPECT_EQ(sanitize_repository_name("\xff" "a"), "a");
}

// Runs `body` with TZ=UTC, restoring the previous zone afterwards.
template <typename F>
void in_utc(F body) {
  const char* old = std::getenv("TZ");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("TZ", "UTC", 1);
  tzset();
  body();
  if (saved) {
    setenv("TZ", saved->c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

std::chrono::system_clock::time_point at(int y, unsigned mo, unsigned d, int h, int mi, int s, long us) {
  using namespace std::chrono;
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s} + microseconds{us};
}

TEST(ImageName, TagIsLocalTimeWithMicroseconds) {
  in_utc([] {
    EXPECT_EQ(local_image_tag(at(2026, 12, 2, 12, 10, 19, 246450)), "20261202.12.10.19.246450");
    EXPECT_EQ(local_image_tag(at(2026, 1, 5, 3, 4, 5, 7)), "20260105.03.04.05.000007");
    EXPECT_EQ(local_image_tag(at(2026, 1, 5, 3, 4, 5, 0)), "20260105.03.04.05.000000");
  });
}

TEST(ImageName, LocalRunDefault) {
  in_utc([] {
    LocalRunSpec spec;
    spec.script = "trainer/task.py";
    EXPECT_EQ(default_local_image_name(spec, at(2026, 12, 2, 12, 10, 19, 246450)),
              "cloudai-autogenerated/trainer.task.py:20261202.12.10.19.246450");
    spec.script = "a/b/c.py";  // what --python-module a.b.c checks and names
    spec.python_module = "a.b.c";
    EXPECT_EQ(default_local_image_name(spec, at(2026, 12, 2, 12, 10, 19, 1)),
              "cloudai-autogenerated/a.b.c.py:20261202.12.10.19.000001");
  });
}

// ----- ValidateRepositoryAndTag -----

std::string repository_error(const std::string& name) {
  try {
    validate_repository_and_tag(name);
  } catch (const Error& e) {
    const std::string prefix = "'" + name + "' is not a valid container image uri: ";
    const std::string what = e.what();
    EXPECT_TRUE(what.starts_with(prefix)) << what;
    EXPECT_FALSE(e.hint().empty()) << what;
    return what.substr(prefix.size());
  }
  return "OK";
}

TEST(ValidateRepositoryAndTag, AcceptsDockerNames) {
  for (const char* name : {"my-image", "my-image:v1", "gcr.io/my-proj/img:v1", "localhost:5000/a/b",
                           "localhost:5000/a/b:latest", "us-docker.pkg.dev/p/r/i:tag_1.0-x", "a__b", "a--b", "a.b",
                           "a_b/c-d.e", "cloudai-autogenerated/trainer.task.py:20261202.12.10.19.246450",
                           "Host.Example.COM/x", "x:_tag"}) {
    EXPECT_EQ(repository_error(name), "OK") << name;
  }
  EXPECT_EQ(repository_error("x:" + std::string(128, 'a')), "OK");
}

TEST(ValidateRepositoryAndTag, GcloudReasons) {
  EXPECT_EQ(repository_error("a:b:c:d"), "Unable to parse repository and tag.");
  EXPECT_EQ(repository_error(std::string(256, 'a')), "Repository name must not be more than 255 characters.");
  EXPECT_EQ(repository_error(std::string(255, 'a')), "OK");
  EXPECT_EQ(repository_error("-bad.io/x"), "Invalid hostname/port \"-bad.io\" in repository name.");
  EXPECT_EQ(repository_error("host.io:port/x"), "Invalid hostname/port \"host.io:port\" in repository name.");
  EXPECT_EQ(repository_error("a..io/x"), "Invalid hostname/port \"a..io\" in repository name.");
  EXPECT_EQ(repository_error("a//b"), "Empty path component in repository name.");
  EXPECT_EQ(repository_error("/a"), "Empty path component in repository name.");
  EXPECT_EQ(repository_error("Bad/name"), "Invalid path component \"Bad\" in repository name.");
  EXPECT_EQ(repository_error("a._b"), "Invalid path component \"a._b\" in repository name.");
  EXPECT_EQ(repository_error("a___b"), "Invalid path component \"a___b\" in repository name.");
  EXPECT_EQ(repository_error("a_"), "Invalid path component \"a_\" in repository name.");
  EXPECT_EQ(repository_error("x:" + std::string(129, 'a')), "Tag name must not be more than 128 characters.");
  EXPECT_EQ(repository_error("x:.bad"), "Invalid tag.");
  EXPECT_EQ(repository_error("x:-bad"), "Invalid tag.");
  EXPECT_EQ(repository_error("x:a+b"), "Invalid tag.");
  // Digest references are not accepted: "@sha256" ends up in a path component.
  EXPECT_EQ(repository_error("x@sha256:abc"), "Invalid path component \"x@sha256\" in repository name.");
  // A ':' followed by a '/' is not a tag separator: here "host:5000" is a host, "a:b/c" is one path component.
  EXPECT_EQ(repository_error("a:b/c"), "Invalid hostname/port \"a:b\" in repository name.");
  // Lengths count characters (code points), as in Python: 200 two-byte characters are not "too long".
  std::string wide;
  for (int i = 0; i < 200; ++i) wide += "\xc3\xa9";
  EXPECT_EQ(repository_error(wide), "Invalid path component \"" + wide + "\" in repository name.");
}

TEST(ValidateRepositoryAndTag, RejectsWhatDockerRejectsEvenWhereGcloudDoesNot) {
  EXPECT_EQ(repository_error("x:"), "Invalid tag.");                      // gcloud skips an empty tag
  EXPECT_EQ(repository_error("x:t\xc3\xa9"), "Invalid tag.");             // Python's \w is Unicode
  EXPECT_EQ(repository_error("x\n"), "Invalid path component \"x\n\" in repository name.");  // re's $ before \n
  EXPECT_EQ(repository_error("x:v1\n"), "Invalid tag.");
  EXPECT_EQ(repository_error("host:/x"), "Invalid hostname/port \"host:\" in repository name.");  // empty port
}

TEST(ValidateRepositoryAndTag, LinearTimeOnLongInvalidComponents) {
  // gcloud's path-component regex backtracks exponentially on this; ours answers at once.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(repository_error(std::string(5000, 'a') + "!"),
            "Repository name must not be more than 255 characters.");
  EXPECT_EQ(repository_error(std::string(200, 'a') + "!"),
            "Invalid path component \"" + std::string(200, 'a') + "!\" in repository name.");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
