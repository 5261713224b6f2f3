// Proves the extra Python bases (tests/fixtures/python-bases.sh: debian11, cpython, conda) have the layouts the pip
// tests rely on, read from their OCI layouts, and that each one runs its Python and pip in the test dockerd. A broken
// fixture fails here, before it shows up as a puzzling difference in an equivalence test.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "tests/integration/test_support.h"

namespace fs = std::filesystem;
namespace tt = trainpack::testing;
using nlohmann::json;

namespace {

std::string bases_dir() { return tt::env_or_fail("TRAINPACK_TEST_BASES"); }

// A base's rootfs and runtime config (process.env, process.args), unpacked from OUTDIR/NAME/oci by umoci.
class UnpackedBase {
 public:
  explicit UnpackedBase(const std::string& name) : dir_("pip-bases-" + name) {
    std::vector<std::string> argv{"umoci", "unpack"};
    if (::geteuid() != 0) argv.push_back("--rootless");
    argv.insert(argv.end(), {"--image", bases_dir() + "/" + name + "/oci:" + name, dir_ / "bundle"});
    auto r = tt::run_command(argv);
    if (r.exit_code != 0) throw std::runtime_error(tt::describe(argv, r));
    config_ = json::parse(tt::read_file(dir_.path() / "bundle" / "config.json"));
  }
  fs::path operator/(const std::string& rel) const { return dir_.path() / "bundle" / "rootfs" / rel; }
  std::vector<std::string> env() const { return config_["process"]["env"].get<std::vector<std::string>>(); }
  std::vector<std::string> args() const { return config_["process"]["args"].get<std::vector<std::string>>(); }

 private:
  tt::TempDir dir_;
  json config_;
};

bool has(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string link_target(const fs::path& p) {
  std::error_code ec;
  return fs::is_symlink(fs::symlink_status(p)) ? fs::read_symlink(p, ec).string() : "(not a symlink)";
}

// The names in dir starting with prefix.
std::vector<std::string> entries_starting(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) found.push_back(name);
  }
  return found;
}

// Loads OUTDIR/NAME/base.tar into the test dockerd and runs `sh -c script` in it, without network.
tt::CommandResult run_in_base(const std::string& name, const std::string& script) {
  auto load = tt::docker_command({"load", "-i", bases_dir() + "/" + name + "/base.tar"});
  auto loaded = tt::run_command(load);
  if (loaded.exit_code != 0) return loaded;
  return tt::run_command(tt::docker_command(
      {"run", "--rm", "--network", "none", "trainpack-test/" + name + ":1", "/bin/sh", "-c", script}));
}

// Python's and pip's versions, whether wheel and setuptools are importable, and the extension modules that link
// libraries from the base (ssl, sqlite3, ctypes, ...).
// base64url(sha256("conda\n")) without padding: a RECORD hash (PEP 376).
constexpr const char* kCondaInstallerHash = "vDMCLty3Y5_1M1W06R2t5QoLvwKZ7-thcdHsC6UCnPw";

constexpr const char* kProbe =
    "python --version && pip --version | cut -d' ' -f1-4 && "
    "python -c 'import importlib.util as u; print(*(u.find_spec(m) is not None for m in (\"wheel\", \"setuptools\")))'"
    " && python -c 'import ssl, sqlite3, ctypes, zlib, bz2, lzma, uuid, decimal, json; print(\"modules ok\")'";

}  // namespace

TEST(PipBasesFixtures, EnvFileNamesEveryBase) {
  std::string env = tt::read_file(bases_dir() + "/env");
  for (std::string name : {"debian11", "cpython", "conda"}) {
    std::string var = "TRAINPACK_TEST_BASE_";
    for (char c : name) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string oci = bases_dir() + "/" + name + "/oci";
    EXPECT_NE(env.find(var + "_OCI=" + oci + "\n"), std::string::npos) << env;
    EXPECT_NE(env.find(var + "_REF=oci:" + oci + ":" + name + "\n"), std::string::npos) << env;
    EXPECT_NE(env.find(var + "_ARCHIVE=" + bases_dir() + "/" + name + "/base.tar\n"), std::string::npos) << env;
    EXPECT_NE(env.find(var + "_ARCHIVE_REF=trainpack-test/" + name + ":1\n"), std::string::npos) << env;
    std::vector<std::string> validate{"oci-image-tool", "validate", "--type", "image", "--ref", "name=" + name, oci};
    auto r = tt::run_command(validate);
    EXPECT_EQ(r.exit_code, 0) << tt::describe(validate, r);
  }
}

TEST(PipBasesFixtures, Debian11HasDistroPythonWithEggInfo) {
  UnpackedBase base("debian11");
  EXPECT_EQ(link_target(base / "usr/bin/python3"), "python3.9");
  EXPECT_EQ(link_target(base / "usr/bin/python"), "python3");
  EXPECT_TRUE(fs::is_regular_file(base / "usr/bin/pip"));
  EXPECT_TRUE(fs::is_regular_file(base / "etc/passwd"));
  EXPECT_FALSE(fs::exists(base / "usr/lib/python3.9/EXTERNALLY-MANAGED"));
  fs::path dist = base / "usr/lib/python3/dist-packages";
  for (std::string dir : {"pip-20.3.4.egg-info", "six-1.16.0.egg-info", "certifi-2020.6.20.egg-info",
                          "setuptools-52.0.0.egg-info", "wheel-0.34.2.egg-info"}) {
    EXPECT_TRUE(fs::is_regular_file(dist / dir / "PKG-INFO")) << dir << " should be an egg-info directory";
  }
  EXPECT_TRUE(fs::is_regular_file(dist / "PyYAML-5.3.1.egg-info")) << "distutils writes the egg-info as one file";
  EXPECT_TRUE(entries_starting(dist, "pip-").size() == 1 && entries_starting(dist, "six-").size() == 1);
  EXPECT_TRUE(has(base.env(), "LANG=C.UTF-8"));
  EXPECT_EQ(base.args(), std::vector<std::string>{"python3"});
}

TEST(PipBasesFixtures, CpythonHasOfficialImageLayout) {
  UnpackedBase base("cpython");
  EXPECT_TRUE(fs::is_regular_file(base / "usr/local/bin/python3.13"));
  EXPECT_EQ(link_target(base / "usr/local/bin/python3"), "python3.13");
  EXPECT_EQ(link_target(base / "usr/local/bin/python"), "python3");
  EXPECT_EQ(link_target(base / "usr/local/bin/pip"), "pip3");
  EXPECT_TRUE(fs::is_regular_file(base / "usr/local/bin/pip3"));
  EXPECT_TRUE(fs::is_regular_file(base / "usr/local/lib/libpython3.13.so.1.0"));
  EXPECT_NE(tt::read_file(base / "etc/ld.so.cache").find("/usr/local/lib/libpython3.13.so.1.0"), std::string::npos)
      << "ldconfig should have recorded libpython";
  EXPECT_FALSE(fs::exists(base / "usr/bin/python3")) << "no Debian python under the official layout";
  fs::path site = base / "usr/local/lib/python3.13/site-packages";
  EXPECT_EQ(tt::read_file(site / "pip-25.1.1.dist-info/INSTALLER"), "pip\n");
  EXPECT_TRUE(entries_starting(site, "wheel").empty());
  EXPECT_TRUE(entries_starting(site, "setuptools").empty());
  EXPECT_FALSE(fs::exists(base / "usr/local/lib/python3.13/EXTERNALLY-MANAGED"));
  EXPECT_TRUE(fs::is_empty(site / "pip/__pycache__")) << "the official images delete every .pyc, not the directories";
  EXPECT_TRUE(has(base.env(), "PYTHON_VERSION=3.13.5"));
  EXPECT_TRUE(has(base.env(), "PATH=/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
  EXPECT_EQ(base.args(), std::vector<std::string>{"python3"});
}

TEST(PipBasesFixtures, CondaHasPrefixWithCondaMetaAndCondaInstalledDists) {
  UnpackedBase base("conda");
  fs::path prefix = base / "opt/conda";
  EXPECT_EQ(link_target(prefix / "bin/python"), "python3.13");
  EXPECT_TRUE(fs::is_regular_file(prefix / "bin/pip"));
  EXPECT_FALSE(fs::exists(base / "usr/local/bin/python3"));
  EXPECT_EQ(tt::read_file(base / "etc/ld.so.cache").find("libpython3.13"), std::string::npos)
      << "conda's libpython is found through RPATH, not ld.so.cache";
  std::string sysconfig = tt::read_file(prefix / "lib/python3.13/_sysconfigdata__linux_x86_64-linux-gnu.py");
  EXPECT_NE(sysconfig.find("'prefix': '/opt/conda'"), std::string::npos);
  EXPECT_EQ(sysconfig.find("/usr/local"), std::string::npos);

  fs::path site = prefix / "lib/python3.13/site-packages";
  EXPECT_EQ(tt::read_file(site / "pip-25.1.1.dist-info/INSTALLER"), "conda\n");
  EXPECT_EQ(tt::read_file(site / "tp_condadist-1.0.dist-info/INSTALLER"), "conda\n");
  EXPECT_EQ(tt::read_file(site / "tp_condadist/__init__.py"), "__version__ = '1.0'\n");
  // The RECORD rows of INSTALLER carry the hash of "conda\n" (sha256, urlsafe base64 without padding, PEP 376).
  for (std::string dist : {"pip-25.1.1", "tp_condadist-1.0"}) {
    std::string record = tt::read_file(site / (dist + ".dist-info/RECORD"));
    EXPECT_NE(record.find(dist + ".dist-info/INSTALLER,sha256=" + std::string(kCondaInstallerHash) + ",6\n"),
              std::string::npos)
        << record;
  }

  auto records = entries_starting(prefix / "conda-meta", "");
  ASSERT_EQ(records.size(), 4u) << "python, pip and tp-condadist records and history";
  EXPECT_TRUE(fs::is_regular_file(prefix / "conda-meta/history"));
  for (const auto& [name, version, owned] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"python", "3.13.5", "bin/python3.13"},
           {"pip", "25.1.1", "lib/python3.13/site-packages/pip-25.1.1.dist-info/INSTALLER"},
           {"tp-condadist", "1.0", "lib/python3.13/site-packages/tp_condadist/__init__.py"}}) {
    auto found = entries_starting(prefix / "conda-meta", name + "-" + version + "-");
    ASSERT_EQ(found.size(), 1u) << name;
    json record = json::parse(tt::read_file(prefix / "conda-meta" / found[0]));
    EXPECT_EQ(record["name"], name);
    EXPECT_EQ(record["version"], version);
    auto files = record["files"].get<std::vector<std::string>>();
    EXPECT_TRUE(has(files, owned)) << found[0] << " should list " << owned;
    EXPECT_EQ(record["paths_data"]["paths"].size(), files.size());
  }
  EXPECT_TRUE(has(base.env(), "PATH=/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
  EXPECT_EQ(base.args(), std::vector<std::string>{"python3"});
}

TEST(PipBasesFixtures, Debian11RunsPythonAndPipInDocker) {
  auto r = run_in_base("debian11", kProbe);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "Python 3.9.2\npip 20.3.4 from /usr/lib/python3/dist-packages/pip\nTrue True\nmodules ok\n");
}

TEST(PipBasesFixtures, CpythonRunsPythonAndPipInDocker) {
  auto r = run_in_base("cpython", kProbe);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "Python 3.13.5\npip 25.1.1 from /usr/local/lib/python3.13/site-packages/pip\nFalse False\nmodules ok\n");
}

TEST(PipBasesFixtures, CondaRunsPythonAndPipInDocker) {
  auto r = run_in_base("conda", kProbe + std::string(" && python -c 'import sys; print(sys.prefix)'"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "Python 3.13.5\npip 25.1.1 from /opt/conda/lib/python3.13/site-packages/pip\nFalse False\n"
                   "modules ok\n/opt/conda\n");
}
