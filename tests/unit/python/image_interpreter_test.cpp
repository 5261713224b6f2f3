// python/image_interpreter: what the base's interpreter needs from its image (the pure part; running it is covered
// by the PipBuildPython integration tests on a real base).
#include "python/image_interpreter.h"

#include <gtest/gtest.h>

#include <sys/utsname.h>

#include "layers/memory_filesystem.h"
#include "support/error.h"
#include "tests/unit/elf_test_support.h"

using namespace trainpack::python;
using trainpack::layers::MemoryFilesystem;
using trainpack::test_support::make_elf64;

namespace {

std::string host_machine() {
  struct utsname u {};
  ::uname(&u);
  return u.machine;
}

// Debian 11's layout, merged /usr: the loader behind an absolute symlink, the stdlib with its test suite and
// lib-dynload, Debian's dist-packages with setuptools and pip (and something else), its python-wheels.
MemoryFilesystem debian11() {
  MemoryFilesystem fs;
  trainpack::test_support::add_debian11_loader(fs);
  fs.add_file("usr/bin/python3.9", make_elf64({"/lib64/ld-linux-x86-64.so.2", {"libc.so.6"}, "", "", ""}), 0755);
  fs.add_symlink("usr/bin/python3", "python3.9");
  fs.add_file("usr/lib/python3.9/os.py", "");
  fs.add_file("usr/lib/python3.9/lib-dynload/_ssl.cpython-39-x86_64-linux-gnu.so", "");
  fs.add_dir("usr/lib/python3/dist-packages/setuptools");
  fs.add_dir("usr/lib/python3/dist-packages/setuptools-52.0.0.egg-info");
  fs.add_dir("usr/lib/python3/dist-packages/pkg_resources");
  fs.add_dir("usr/lib/python3/dist-packages/pip");
  fs.add_dir("usr/lib/python3/dist-packages/pip-20.3.4.egg-info");
  fs.add_dir("usr/lib/python3/dist-packages/six-1.16.0.egg-info");
  fs.add_file("usr/lib/python3/dist-packages/six.py", "");
  fs.add_dir("usr/share/python-wheels");
  return fs;
}

PythonFacts debian11_facts() {
  PythonFacts f;
  f.interpreter = "/usr/bin/python3.9";
  f.python_version = "3.9";
  f.python_full_version = "3.9.2";
  f.stdlib = "/usr/lib/python3.9";
  f.prefix = f.base_prefix = "/usr";
  f.multiarch = "x86_64-linux-gnu";
  f.elf_interpreter = "/lib64/ld-linux-x86-64.so.2";
  f.libc = "glibc";
  f.machine = host_machine();
  f.site_dirs = {"/usr/local/lib/python3.9/dist-packages", "/usr/lib/python3/dist-packages"};
  f.env = {{"LD_LIBRARY_PATH", "/opt/extra"}};
  return f;
}

}  // namespace

TEST(ImageInterpreter, TheStdlibWithoutSitePackagesTestsOrBuildConfig) {
  EXPECT_FALSE(left_out_of_stdlib("os.py"));
  EXPECT_FALSE(left_out_of_stdlib("/lib-dynload/_ssl.so"));
  EXPECT_FALSE(left_out_of_stdlib("email/mime"));
  EXPECT_FALSE(left_out_of_stdlib("unittest/mock.py"));
  EXPECT_FALSE(left_out_of_stdlib("testing.py"));
  EXPECT_TRUE(left_out_of_stdlib("site-packages"));
  EXPECT_TRUE(left_out_of_stdlib("/dist-packages/x"));
  EXPECT_TRUE(left_out_of_stdlib("test"));
  EXPECT_TRUE(left_out_of_stdlib("unittest/test/test_case.py"));
  EXPECT_TRUE(left_out_of_stdlib("lib2to3/tests"));
  EXPECT_TRUE(left_out_of_stdlib("idlelib/idle_test"));
  EXPECT_TRUE(left_out_of_stdlib("config-3.9-x86_64-linux-gnu"));
}

TEST(ImageInterpreter, PackagesByTopLevelNameWithTheirMetadata) {
  const std::vector<std::string> wanted{"setuptools", "pkg_resources", "distutils-precedence.pth", "six"};
  EXPECT_TRUE(names_package("setuptools", wanted));
  EXPECT_TRUE(names_package("setuptools-65.5.0.dist-info", wanted));
  EXPECT_TRUE(names_package("setuptools-52.0.0.egg-info", wanted));
  EXPECT_TRUE(names_package("setuptools.egg-info", wanted));
  EXPECT_TRUE(names_package("distutils-precedence.pth", wanted));
  EXPECT_TRUE(names_package("six.py", wanted));
  EXPECT_TRUE(names_package("Six-1.16.0.dist-info", wanted));
  EXPECT_FALSE(names_package("setuptools_scm", wanted));
  EXPECT_FALSE(names_package("setuptools_scm-7.0.dist-info", wanted));
  EXPECT_FALSE(names_package("pip", wanted));
  EXPECT_FALSE(names_package("anything", {}));
}

TEST(ImageInterpreter, PlanForDebian11) {
  MemoryFilesystem fs = debian11();
  InterpreterPlan plan = plan_image_interpreter(fs, debian11_facts(), build_packages());
  EXPECT_EQ(plan.loader, "/usr/lib/x86_64-linux-gnu/ld-2.31.so") << "PT_INTERP resolved inside the image";
  EXPECT_EQ(plan.interpreter, "/usr/bin/python3.9");
  EXPECT_EQ(plan.home, "/usr");
  EXPECT_EQ(plan.stdlib, (std::vector<std::string>{"/usr/lib/python3.9"}));
  EXPECT_EQ(plan.lib_dynload, "/usr/lib/python3.9/lib-dynload");
  EXPECT_EQ(plan.site_items, (std::vector<std::string>{"/usr/lib/python3/dist-packages/pip",
                                                       "/usr/lib/python3/dist-packages/pip-20.3.4.egg-info",
                                                       "/usr/lib/python3/dist-packages/pkg_resources",
                                                       "/usr/lib/python3/dist-packages/setuptools",
                                                       "/usr/lib/python3/dist-packages/setuptools-52.0.0.egg-info"}));
  EXPECT_EQ(plan.site_dirs, (std::vector<std::string>{"/usr/lib/python3/dist-packages"}));
  EXPECT_EQ(plan.extras, (std::vector<std::string>{"/usr/share/python-wheels"}))
      << "the wheels Debian's debundled pip puts on sys.path";
  EXPECT_EQ(plan.search.library_path, (std::vector<std::string>{"/opt/extra"})) << "the image's LD_LIBRARY_PATH";
  EXPECT_EQ(plan.search.loader_name, "ld-linux-x86-64.so.2");

  InterpreterPlan stdlib_only = plan_image_interpreter(fs, debian11_facts(), {});
  EXPECT_TRUE(stdlib_only.site_items.empty());
  EXPECT_TRUE(stdlib_only.extras.empty());
  EXPECT_NE(stdlib_only.to_json(), plan.to_json()) << "the packages are part of the cache key";
}

TEST(ImageInterpreter, WhatCannotRunHereIsRefusedWithACause) {
  MemoryFilesystem fs = debian11();
  PythonFacts other_arch = debian11_facts();
  other_arch.machine = host_machine() == "aarch64" ? "x86_64" : "aarch64";
  try {
    plan_image_interpreter(fs, other_arch, {});
    FAIL() << "an image of another architecture cannot run here";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run here"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("--no-compile"), std::string::npos) << e.hint();
  }
  PythonFacts no_loader = debian11_facts();
  no_loader.elf_interpreter = "/lib/ld-linux-missing.so.2";
  EXPECT_THROW(plan_image_interpreter(fs, no_loader, {}), trainpack::Error);
  MemoryFilesystem no_stdlib = debian11();
  no_stdlib.remove("usr/lib/python3.9");
  EXPECT_THROW(plan_image_interpreter(no_stdlib, debian11_facts(), {}), trainpack::Error);
}

TEST(ImageInterpreter, MuslUsesItsOwnLoaderTheSameWay) {
  MemoryFilesystem fs;
  fs.add_file("lib/ld-musl-x86_64.so.1", "musl", 0755);
  fs.add_file("usr/local/bin/python3.12",
              make_elf64({"/lib/ld-musl-x86_64.so.1", {"libc.musl-x86_64.so.1"}, "", "", ""}), 0755);
  fs.add_file("usr/local/lib/python3.12/os.py", "");
  PythonFacts f;
  f.interpreter = "/usr/local/bin/python3.12";
  f.python_version = "3.12";
  f.prefix = f.base_prefix = "/usr/local";
  f.elf_interpreter = "/lib/ld-musl-x86_64.so.1";
  f.libc = "musl";
  f.machine = host_machine();
  InterpreterPlan plan = plan_image_interpreter(fs, f, {});
  EXPECT_EQ(plan.loader, "/lib/ld-musl-x86_64.so.1");
  EXPECT_TRUE(plan.search.musl);
  EXPECT_EQ(plan.stdlib, (std::vector<std::string>{"/usr/local/lib/python3.12"})) << "from the prefix";
  EXPECT_EQ(plan.lib_dynload, "");
}
