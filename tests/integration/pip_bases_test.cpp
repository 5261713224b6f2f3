// The pip steps on the bases users really use besides Debian 12's system Python (tests/fixtures/python-bases.sh),
// each against `docker build` of gcloud's Dockerfile with the image's own pip: root filesystem, config, and a run
// of the entrypoint. Every one has a setup.py, a requirements.txt, a --requirements item and --extra-packages:
//   - Debian 11: python3.9 (not on this host: the base's own interpreter builds and compiles) with Debian's pip
//     20.3.4, which builds setup.py in a copy under /tmp with the image's setuptools and wheel, keeps its hands off
//     Debian's own .egg-info distributions (python3-six 1.16.0 stays; six 1.17.0 goes to /usr/local), and builds an
//     sdist dependency from the index the same way;
//   - a bookworm venv without `wheel`: pip 23.0.1 takes the legacy `setup.py install` for the project and for an
//     sdist dependency (.egg-info with installed-files.txt, NAME.egg-info left in /usr/app);
//   - the official python:3.13 layout (CPython in /usr/local, no setuptools): pip 25.1.1 builds setup.py and a local
//     sdist in isolation, with setuptools from the index;
//   - a conda prefix: the same, and a distribution conda installed (INSTALLER conda) upgraded through its RECORD.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/image_equivalence.h"
#include "tests/integration/pip_test_support.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

// TRAINPACK_TEST_BASE_<NAME>_<KEY> of the bases fixture.
std::string base_env(const std::string& name, const std::string& key) {
  return read_env_file(fs::path(env_or_fail("TRAINPACK_TEST_BASES")) / "env")
      .at("TRAINPACK_TEST_BASE_" + name + "_" + key);
}

// gcloud copies only setup.py before `pip install .`: its packages are not there yet (find_packages finds none).
void write_setup_py(const fs::path& pkg, const std::string& install_requires) {
  write_file(pkg / "setup.py",
             "from setuptools import find_packages, setup\n"
             "setup(name='trainer-pkg', version='0.1', packages=find_packages(),\n"
             "      install_requires=[" + install_requires + "],\n"
             "      entry_points={'console_scripts': ['trainer-run = trainer.task:main']})\n");
  write_file(pkg / "trainer" / "__init__.py", "");
}

// The fixture base NAME with its pip pointed at the test index by ENV PIP_INDEX_URL, as `tag` in the test dockerd.
std::string base_using_the_index(const fs::path& work, const std::string& name, const std::string& tag) {
  return derived_base(work, tag,
                      "FROM " + base_env(name, "ARCHIVE_REF") + "\nENV PIP_INDEX_URL=" + index_url() + "\n",
                      base_env(name, "ARCHIVE"));
}

std::vector<std::string> flags(const std::string& tag, const fs::path& pkg, std::vector<std::string> more) {
  std::vector<std::string> out{"--executor-image-uri=" + tag, "--local-package-path=" + pkg.string(),
                               "--script=trainer/task.py"};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

}  // namespace

TEST(PipBases, Debian11SystemPythonWithDistroEggInfoPackages) {
  TempDir dir("tp-pip-bases");
  const std::string tag = "trainpack-test/debian11-pip:1";
  std::string base = derived_base(dir.path(), tag,
                                  "FROM " + base_env("DEBIAN11", "ARCHIVE_REF") + "\n"
                                  "RUN printf '[global]\\nindex-url = " + index_url() + "\\n' > /etc/pip.conf\n",
                                  base_env("DEBIAN11", "ARCHIVE"));
  fs::path pkg = trainer_package(dir.path(), "tp-alpha[cli]\ntp-ns-one\n", "tp_alpha, six; print(six.__version__)");
  write_setup_py(pkg, "'tp-gamma', 'tp-pure-sdist'");
  expect_same_image(dir.path(),
                    flags(tag, pkg, {"--requirements=six==1.17.0",
                                     "--extra-packages=dist/tp_local-1.0-py3-none-any.whl"}),
                    {}, base, EquivalenceOptions{"host", {}, "1.17.0"});
}

TEST(PipBases, VenvWithoutWheelTakesTheLegacySetupPyInstall) {
  TempDir dir("tp-pip-bases");
  const std::string tag = "trainpack-test/venv-nowheel:1";
  std::string base = venv_base(dir.path(), tag);
  fs::path pkg = trainer_package(dir.path(), "tp-tool\ntp-alpha\n");
  write_setup_py(pkg, "'tp-gamma', 'tp-pure-sdist'");
  expect_same_image(dir.path(),
                    flags(tag, pkg, {"--requirements=tp-beta==1.0",
                                     "--extra-packages=dist/tp_local-1.0-py3-none-any.whl"}),
                    {}, base, EquivalenceOptions{"host", {}, "trained"});
}

TEST(PipBases, OfficialPythonLayoutBuildsInIsolationWithSetuptoolsFromTheIndex) {
  TempDir dir("tp-pip-bases");
  const std::string tag = "trainpack-test/cpython-pip:1";
  std::string base = base_using_the_index(dir.path(), "CPYTHON", tag);
  fs::path pkg = trainer_package(dir.path(), "tp-alpha[cli]\n");
  write_setup_py(pkg, "'tp-gamma'");
  fs::copy_file(index_dir() / "files" / "tp-pure-sdist-1.0.tar.gz", pkg / "dist" / "tp-pure-sdist-1.0.tar.gz");
  expect_same_image(dir.path(),
                    flags(tag, pkg, {"--requirements=tp-beta==1.0",
                                     "--extra-packages=dist/tp-pure-sdist-1.0.tar.gz,dist/tp_local-1.0-py3-none-any.whl"}),
                    {}, base, EquivalenceOptions{"host", {}, "trained"});
}

TEST(PipBases, CondaPrefixUpgradesWhatCondaInstalled) {
  TempDir dir("tp-pip-bases");
  const std::string tag = "trainpack-test/conda-pip:1";
  std::string base = base_using_the_index(dir.path(), "CONDA", tag);
  fs::path pkg = trainer_package(dir.path(), "tp-alpha\n", "tp_alpha, tp_condadist; print(tp_condadist.__version__)");
  write_setup_py(pkg, "'tp-delta'");
  expect_same_image(dir.path(),
                    flags(tag, pkg, {"--requirements=tp-condadist==2.0",
                                     "--extra-packages=dist/tp_local-1.0-py3-none-any.whl"}),
                    {}, base, EquivalenceOptions{"host", {}, "2.0"});
}
