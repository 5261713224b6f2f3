// --build-python: .pyc files and wheels come from a CPython of the image's X.Y, a host python3.X or the base image's
// own interpreter, copied into the cache and started through the image's own loader. On the bookworm test base
// (3.11, which this host has too) both give the same image byte for byte, whether trainpack runs as root or as an
// unprivileged user, and a second build reuses the copy. On Debian 11 (3.9, which the host lacks; a PipBases
// fixture) the base's own interpreter compiles 3.9 bytecode and builds an sdist with the image's own pip.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "store/cache_dir.h"
#include "tests/integration/pip_test_support.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kNobody = 65534;

// A trainer whose requirements pull in distributions with Python modules, so pip would compile .pyc files.
fs::path trainer(const fs::path& dir) {
  fs::path pkg = dir / "pkg";
  write_file(pkg / "task.py", "import tp_alpha\n");
  write_file(pkg / "requirements.txt", "tp-alpha[cli]\ntp-gamma\n");
  return pkg;
}

// `trainpack build` of `pkg` on `base` into oci:OUT:x with its own cache; `as_user` is put before the command.
CommandResult build(const fs::path& pkg, const std::string& base, const fs::path& out, const fs::path& cache,
                    const std::vector<std::string>& flags, const std::vector<std::string>& as_user = {}) {
  std::vector<std::string> argv = as_user;
  argv.insert(argv.end(), {trainpack_bin(), "build", "--executor-image-uri=python:3", "--base-source=" + base,
                           "--local-package-path=" + pkg.string(), "--script=task.py",
                           "--output=oci:" + out.string() + ":x", "--cache-dir=" + cache.string(),
                           "--index-url=" + index_url()});
  argv.insert(argv.end(), flags.begin(), flags.end());
  return run_command(argv);
}

// The .pyc files below `dir` in an output image's root filesystem (unpacked under `work`): path → bytes.
std::map<std::string, std::string> pyc_files(const fs::path& out, const fs::path& work, const std::string& dir) {
  std::vector<std::string> argv{"umoci", "unpack"};
  if (::geteuid() != 0) argv.push_back("--rootless");
  argv.insert(argv.end(), {"--image", out.string() + ":x", (work / "bundle").string()});
  CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
  std::map<std::string, std::string> found;
  fs::path root = work / "bundle" / "rootfs" / dir;
  if (!fs::is_directory(root)) return found;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.path().extension() == ".pyc") found[fs::relative(e.path(), root).string()] = read_file(e.path());
  return found;
}

// PEP 552 header: magic (4 bytes) and flags (0: timestamp-based).
void expect_timestamp_pycs_of(const std::map<std::string, std::string>& pycs, const std::string& magic) {
  EXPECT_GT(pycs.size(), 3u);
  for (const auto& [path, bytes] : pycs) {
    ASSERT_GT(bytes.size(), 16u) << path;
    EXPECT_EQ(bytes.substr(0, 4), magic) << path;
    EXPECT_EQ(bytes.substr(4, 4), std::string(4, '\0')) << path;
  }
}

std::vector<fs::path> entries_of(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

bool host_has(const std::string& program) { return run_command({program, "-c", "pass"}).exit_code == 0; }

}  // namespace

TEST(PipBuildPython, TheBaseImagesOwnPythonGivesTheHostsImageWithoutRoot) {
  TempDir dir("tp-build-python");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);  // the unprivileged build below reads the trainer from here
  fs::path pkg = trainer(dir.path());
  const std::vector<std::string> image_flags{"--break-system-packages", "--build-python=image"};

  CommandResult host = build(pkg, base_oci_ref(), dir.path() / "out-host", dir.path() / "cache-host",
                             {"--break-system-packages", "--build-python=host"});
  ASSERT_EQ(host.exit_code, 0) << host.err;
  EXPECT_EQ(host.err.find("run from the cache"), std::string::npos) << host.err;
  CommandResult image = build(pkg, base_oci_ref(), dir.path() / "out-image", dir.path() / "cache-image", image_flags);
  ASSERT_EQ(image.exit_code, 0) << image.err;
  EXPECT_NE(image.err.find("copying the base image's /usr/bin/python3.11"), std::string::npos) << image.err;
  EXPECT_NE(image.err.find("using the base image's /usr/bin/python3.11, run from the cache (Python 3.11."),
            std::string::npos) << image.err;
  EXPECT_EQ(image.out, host.out) << "the same manifest digest: the same .pyc bytes";
  expect_timestamp_pycs_of(pyc_files(dir.path() / "out-image", dir.path() / "unpacked",
                                     "usr/local/lib/python3.11/dist-packages"),
                           std::string("\xa7\x0d\x0d\x0a", 4));

  // The cache holds one extracted interpreter, renamed into place; a second build uses it without copying again.
  std::vector<fs::path> entries = entries_of(
      trainpack::store::kind_dir(dir.path() / "cache-image", trainpack::store::CacheKind::kInterpreters));
  ASSERT_EQ(entries.size(), 1u) << "no staging directory is left behind";
  EXPECT_TRUE(fs::is_regular_file(entries[0] / "root" / "usr" / "bin" / "python3.11"));
  EXPECT_FALSE(fs::exists(entries[0] / "root" / "usr" / "lib" / "python3.11" / "test"));
  auto stamp = fs::last_write_time(entries[0] / "interpreter.json");
  CommandResult again = build(pkg, base_oci_ref(), dir.path() / "out-again", dir.path() / "cache-image", image_flags);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("copying the base image's"), std::string::npos) << again.err;
  EXPECT_EQ(fs::last_write_time(entries[0] / "interpreter.json"), stamp);
  EXPECT_EQ(again.out, host.out);

  // As an unprivileged user, with a cache that user owns.
  if (::geteuid() != 0) GTEST_SKIP() << "already unprivileged: the builds above needed no root";
  fs::path mine = dir.path() / "nobody";
  fs::create_directories(mine);
  ASSERT_EQ(::chown(mine.c_str(), kNobody, kNobody), 0);
  CommandResult nobody = build(pkg, base_oci_ref(), mine / "out", mine / "cache", image_flags,
                               {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                                "HOME=" + mine.string(), "TMPDIR=" + mine.string()});
  ASSERT_EQ(nobody.exit_code, 0) << nobody.err;
  EXPECT_NE(nobody.err.find("using the base image's /usr/bin/python3.11"), std::string::npos) << nobody.err;
  EXPECT_EQ(nobody.out, host.out);
  struct stat st {};
  const fs::path interpreters = trainpack::store::kind_dir(mine / "cache", trainpack::store::CacheKind::kInterpreters);
  ASSERT_EQ(::stat(interpreters.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
}

// Debian 11's python3.9, which this host does not have: with --build-python=image (and with auto, when the host
// lacks python3.9) the base's own interpreter compiles 3.9 bytecode and its pip 20.3.4 (Debian's debundled one,
// with its setuptools) builds a pure-Python sdist; --build-python=host fails with a cause and a hint.
TEST(PipBasesBuildPython, Debian11sOwnPythonCompilesItsBytecodeAndBuildsItsSdists) {
  const char* bases = std::getenv("TRAINPACK_TEST_BASES");
  if (bases == nullptr || *bases == '\0')
    GTEST_SKIP() << "TRAINPACK_TEST_BASES is not set: the Debian 11 base comes from tests/fixtures/python-bases.sh";
  const std::string base = read_env_file(fs::path(bases) / "env").at("TRAINPACK_TEST_BASE_DEBIAN11_REF");
  TempDir dir("tp-build-python-39");
  fs::path pkg = trainer(dir.path());
  fs::create_directories(pkg / "dist");
  fs::copy_file(index_dir() / "files" / "tp-pure-sdist-1.0.tar.gz", pkg / "dist" / "tp-pure-sdist-1.0.tar.gz");
  const std::string sdist = "--extra-packages=dist/tp-pure-sdist-1.0.tar.gz";

  CommandResult image =
      build(pkg, base, dir.path() / "out-image", dir.path() / "cache", {sdist, "--build-python=image"});
  ASSERT_EQ(image.exit_code, 0) << image.err;
  EXPECT_NE(image.err.find("using the base image's /usr/bin/python3.9, run from the cache (Python 3.9.2, bytecode "
                           "magic 610d0d0a)"),
            std::string::npos) << image.err;
  std::map<std::string, std::string> pycs =
      pyc_files(dir.path() / "out-image", dir.path() / "unpacked", "usr/local/lib/python3.9/dist-packages");
  expect_timestamp_pycs_of(pycs, std::string("\x61\x0d\x0d\x0a", 4));
  EXPECT_TRUE(pycs.count("tp_pure_sdist/__pycache__/__init__.cpython-39.pyc")) << "built by the image's pip";

  if (host_has("python3.9")) GTEST_SKIP() << "this host has a python3.9: auto and host would use it";
  CommandResult automatic = build(pkg, base, dir.path() / "out-auto", dir.path() / "cache", {sdist});
  ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_EQ(automatic.out, image.out);
  CommandResult host = build(pkg, base, dir.path() / "out-host", dir.path() / "cache", {sdist, "--build-python=host"});
  EXPECT_NE(host.exit_code, 0);
  EXPECT_NE(host.err.find("needs python3.9 (the image's Python) on this host"), std::string::npos) << host.err;
  EXPECT_NE(host.err.find("\nhint: "), std::string::npos) << host.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out-host"));
}

// Started as root, trainpack runs the project's setup.py as nobody: it reads neither a registry credential in a
// root-only directory (DOCKER_CONFIG, GOOGLE_APPLICATION_CREDENTIALS name it) nor trainpack's environment, and sees
// no credential variable. setup.py reports what it could do into a file pip (>= 21.3) leaves in /usr/app.
TEST(PipBuildUser, AsRootSetupPyRunsAsNobodyAndReadsNoSecret) {
  if (::geteuid() != 0) GTEST_SKIP() << "only a build started as root drops to another user";
  TempDir dir("tp-build-user");
  fs::path secrets = dir.path() / "docker";
  write_file(secrets / "config.json", "{\"auths\":{\"r.example\":{\"auth\":\"c2VjcmV0LXRva2Vu\"}}}");
  ASSERT_EQ(::chmod((secrets / "config.json").c_str(), 0600), 0);
  ASSERT_EQ(::chmod(secrets.c_str(), 0700), 0);
  fs::path pkg = dir.path() / "pkg";
  write_file(pkg / "task.py", "print('trained')\n");
  write_file(pkg / "setup.py",
             "import os\n"
             "report = ['uid=%d' % os.getuid()]\n"
             "for name, path in (('config', " + std::string("'") + (secrets / "config.json").string() + "'), "
             "('environ', '/proc/%d/environ' % os.getppid())):\n"
             "    try:\n"
             "        open(path, 'rb').read()\n"
             "        report.append(name + '=read')\n"
             "    except OSError as e:\n"
             "        report.append(name + '=' + type(e).__name__)\n"
             "report.append('env=' + ','.join(sorted(k for k in os.environ if k.startswith(('DOCKER', 'GOOGLE')))))\n"
             "here = os.path.dirname(os.path.abspath(__file__))\n"
             "open(os.path.join(here, 'report.txt'), 'w').write('\\n'.join(report) + '\\n')\n"
             "from setuptools import setup\n"
             "setup(name='tp-user-probe', version='1.0')\n");
  CommandResult r = build(pkg, base_oci_ref(), dir.path() / "out", dir.path() / "cache",
                          {"--break-system-packages", "--build-python=host"},
                          {"env", "DOCKER_CONFIG=" + secrets.string(),
                           "GOOGLE_APPLICATION_CREDENTIALS=" + (secrets / "config.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> argv{"umoci", "unpack", "--image", (dir.path() / "out").string() + ":x",
                                (dir.path() / "bundle").string()};
  CommandResult unpacked = run_command(argv);
  ASSERT_EQ(unpacked.exit_code, 0) << describe(argv, unpacked);
  EXPECT_EQ(read_file(dir.path() / "bundle" / "rootfs" / "usr" / "app" / "report.txt"),
            "uid=65534\nconfig=PermissionError\nenviron=PermissionError\nenv=\n");
  // Nothing of the build's is left in the temp directory, and no file in the cache belongs to nobody.
  for (const auto& e : fs::recursive_directory_iterator(dir.path() / "cache")) {
    struct stat st {};
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
    EXPECT_NE(st.st_uid, kNobody) << e.path();
  }
}
