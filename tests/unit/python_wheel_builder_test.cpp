// python/wheel_builder: host builds of projects and sdists into wheels, pure-Python only.
#include "python/wheel_builder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "support/error.h"
#include "support/fs.h"
#include "support/process.h"

using namespace trainpack::python;
namespace fs = std::filesystem;

TEST(WheelBuilder, PureWheelNamesAreNoneAny) {
  EXPECT_TRUE(is_pure_wheel_filename("a-1.0-py3-none-any.whl"));
  EXPECT_TRUE(is_pure_wheel_filename("a-1.0-py2.py3-none-any.whl"));
  EXPECT_FALSE(is_pure_wheel_filename("a-1.0-cp311-cp311-linux_x86_64.whl"));
  EXPECT_FALSE(is_pure_wheel_filename("a-1.0-cp311-abi3-any.whl"));
  EXPECT_FALSE(is_pure_wheel_filename("not-a-wheel.tar.gz"));
}

TEST(WheelBuilder, NativeSourcesInAnSdistAreListed) {
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-sdist-"));
  fs::path top = work.path() / "pkg-1.0";
  fs::create_directories(top / "pkg");
  trainpack::write_file_atomic(top / "setup.py", "from setuptools import setup\nsetup()\n");
  trainpack::write_file_atomic(top / "pkg" / "__init__.py", "");
  auto tar = [&](const std::string& name) {
    auto r = trainpack::run_process({"tar", "-czf", (work.path() / name).string(), "-C", work.path().string(), "pkg-1.0"},
                                    "", std::chrono::seconds(30));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  };
  tar("pure.tar.gz");
  EXPECT_TRUE(native_sources_in_sdist(work.path() / "pure.tar.gz").empty());
  trainpack::write_file_atomic(top / "pkg" / "_speed.c", "int x;\n");
  tar("native.tar.gz");
  EXPECT_EQ(native_sources_in_sdist(work.path() / "native.tar.gz"), (std::vector<std::string>{"pkg/_speed.c"}));
  trainpack::write_file_atomic(work.path() / "junk.tar.gz", "not an archive");
  EXPECT_THROW(native_sources_in_sdist(work.path() / "junk.tar.gz"), trainpack::Error);
}

TEST(WheelBuilder, ASetupPyProjectBuildsInPlaceWithTheHostPython) {
  // Debian's own python3.11, which has setuptools beside it (python3-setuptools, installed for the tests).
  if (::access("/usr/bin/python3.11", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3.11";
  trainpack::ScopedDir work(trainpack::make_temp_dir("", "tp-build-"));
  Interpreter python;
  python.argv = {"/usr/bin/python3.11"};
  python.env = clean_environment(work.path() / "scratch");
  python.scratch = work.path() / "scratch";
  python.version = python.major_minor = "3.11";
  python.description = "the host's /usr/bin/python3.11";
  fs::path project = work.path() / "app";
  fs::create_directories(project);
  trainpack::write_file_atomic(project / "setup.py",
                               "from setuptools import setup\nsetup(name='tiny-app', version='0.3', py_modules=[])\n");
  WheelBuildRequest req;
  req.python = python;
  req.source = project;
  req.display = "the project in setup.py";
  req.out_dir = work.path() / "out";  // no index: a setup.py project builds with the host's setuptools
  fs::path wheel = build_wheel(req);
  EXPECT_EQ(wheel.filename(), "tiny_app-0.3-py3-none-any.whl");
  EXPECT_TRUE(fs::is_directory(project / "tiny_app.egg-info")) << "pip builds a local project in place";

  trainpack::write_file_atomic(project / "setup.py", "raise SystemExit('broken on purpose')\n");
  req.out_dir = work.path() / "out2";
  try {
    build_wheel(req);
    FAIL() << "a failing build must throw";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("building the project in setup.py into a wheel"), std::string::npos) << e.what();
  }
}
