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
