#include "python/base_facts.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "layers/memory_filesystem.h"
#include "support/error.h"
#include "support/fs.h"

using nlohmann::json;
using trainpack::Error;
using trainpack::layers::MemoryFilesystem;
using namespace trainpack::python;

namespace {

const std::string kData = std::string(TRAINPACK_TESTDATA_DIR) + "/python/base_facts/";

json load_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

// The Debian 12 tree collected from a bookworm host by collect_debian12.py.
void add_debian12(MemoryFilesystem& fs) {
  json manifest = load_json(kData + "debian12/manifest.json");
  for (const auto& [path, mode] : manifest.at("files").items())
    fs.add_file(path, trainpack::read_file(kData + "debian12/rootfs/" + path), mode.get<std::uint32_t>());
  for (const auto& [path, target] : manifest.at("symlinks").items()) fs.add_symlink(path, target.get<std::string>());
  fs.add_dir("usr/local/bin");
  fs.add_dir("root", 0700);
}

// A minimal ELF: header, one PT_INTERP program header, the interpreter string.
std::string make_elf(std::uint16_t machine, const std::string& interp, bool is64 = true, bool big = false) {
  std::string b(is64 ? 64 + 56 : 52 + 32, '\0');
  auto put = [&](std::size_t at, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b[at + (big ? n - 1 - i : i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F';
  b[4] = is64 ? 2 : 1;
  b[5] = big ? 2 : 1;
  b[6] = 1;
  put(0x10, 3, 2);  // ET_DYN
  put(0x12, machine, 2);
  std::size_t phoff = is64 ? 64 : 52;
  put(is64 ? 0x20 : 0x1C, phoff, is64 ? 8 : 4);
  put(is64 ? 0x36 : 0x2A, is64 ? 56 : 32, 2);
  put(is64 ? 0x38 : 0x2C, 1, 2);
  put(phoff, 3, 4);  // PT_INTERP
  put(is64 ? phoff + 8 : phoff + 4, b.size(), is64 ? 8 : 4);
  put(is64 ? phoff + 32 : phoff + 16, interp.size() + 1, is64 ? 8 : 4);
  return b + interp + std::string(1, '\0') + std::string(200, 'x');
}

std::string sysconfigdata(const std::string& version, const std::string& prefix, const std::string& multiarch,
                          const std::string& extra = "") {
  std::string nodot = version;
  nodot.erase(nodot.find('.'), 1);
  return "# system configuration generated and used by the sysconfig module\n"
         "build_time_vars = {'ABIFLAGS': '',\n"
         " 'CONFIG_ARGS': (\"'--enable-optimizations' '--with-lto' \"\n"
         "                 \"'--prefix=" + prefix + "'\"),\n"
         " 'EXT_SUFFIX': '.cpython-" + nodot + "-" + multiarch + ".so',\n"
         " 'HAVE_FORK': 1,\n"
         " 'LIBDIR': '" + prefix + "/lib',\n"
         " 'MULTIARCH': '" + multiarch + "',\n"
         " 'PLATLIBDIR': 'lib',\n"
         " 'Py_DEBUG': 0,\n"
         " 'SOABI': 'cpython-" + nodot + "-" + multiarch + "',\n"
         " 'TZPATH': '/usr/share/zoneinfo:/usr/lib/zoneinfo:/usr/share/lib/zoneinfo:/etc/zoneinfo',\n"
         " 'VERSION': '" + version + "',\n" + extra +
         " 'prefix': '" + prefix + "'}\n";
}

std::string metadata(const std::string& name, const std::string& version) {
  return "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\nSummary: x\n\nLong: description\n";
}

const char* kOsReleaseBookworm =
    "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian\n";

// python:3.11-slim-bookworm: CPython built into /usr/local on Debian.
void add_official(MemoryFilesystem& fs) {
  fs.add_file("usr/local/bin/python3.11", make_elf(62, "/lib64/ld-linux-x86-64.so.2"), 0755);
  fs.add_symlink("usr/local/bin/python3", "python3.11");
  fs.add_symlink("usr/local/bin/python", "python3");
  fs.add_file("usr/local/bin/pip", "#!/usr/local/bin/python3.11\n# -*- coding: utf-8 -*-\nimport re\n", 0755);
  fs.add_file("usr/local/bin/pip3", "#!/usr/local/bin/python3.11\n", 0755);
  fs.add_file("usr/local/lib/python3.11/os.py", "");
  fs.add_file("usr/local/lib/python3.11/sysconfig.py", "_INSTALL_SCHEMES = {'posix_prefix': {}}\n");
  fs.add_file("usr/local/lib/python3.11/_sysconfigdata__linux_x86_64-linux-gnu.py",
              sysconfigdata("3.11", "/usr/local", "x86_64-linux-gnu"));
  fs.add_file("usr/local/lib/python3.11/site-packages/pip-24.0.dist-info/METADATA", metadata("pip", "24.0"));
  fs.add_file("usr/local/lib/python3.11/site-packages/pip-24.0.dist-info/RECORD", "pip/__init__.py,,\n");
  fs.add_file("usr/local/lib/python3.11/site-packages/numpy-1.26.4.dist-info/METADATA", metadata("numpy", "1.26.4"));
  fs.add_file("usr/local/lib/python3.11/site-packages/setuptools-65.5.1.dist-info/METADATA",
              metadata("setuptools", "65.5.1"));
  fs.add_symlink("lib", "usr/lib");
  fs.add_symlink("lib64", "usr/lib64");
  fs.add_symlink("usr/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  fs.add_file("usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "\x7f" "ELF", 0755);
  fs.add_file("usr/lib/x86_64-linux-gnu/libc.so.6",
              std::string("\x7f" "ELF") + std::string(100, '\0') +
                  "GNU C Library (Debian GLIBC 2.36-9+deb12u7) stable release version 2.36.\nCopyright",
              0755);
  fs.add_file("etc/os-release", kOsReleaseBookworm);
  fs.add_file("etc/passwd", "root:x:0:0:root:/root:/bin/bash\napp:x:1000:1000::/home/app:/bin/sh\n");
  fs.add_file("etc/group", "root:x:0:\napp:x:1000:\n");
}

ImageConfigFacts official_config() {
  return ImageConfigFacts{{"PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
                           "GPG_KEY=A035C8C19219BA821ECEA86B64E628F8D684696D", "PYTHON_VERSION=3.11.9",
                           "PYTHON_PIP_VERSION=24.0"},
                          "",
                          "amd64",
                          ""};
}

std::vector<std::string> dist_names(const PythonFacts& f) {
  std::vector<std::string> out;
  for (const auto& d : f.installed) out.push_back(d.name + "==" + d.version);
  return out;
}

void expect_error(const std::function<void()>& fn, const std::string& cause_part) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected: " << cause_part;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(cause_part), std::string::npos) << e.what();
    EXPECT_FALSE(e.hint().empty()) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one-line cause: " << e.what();
  }
}

}  // namespace

TEST(PythonBaseFacts, MemoryFilesystemChildrenAndResolve) {
  MemoryFilesystem fs;
  fs.add_file("a/b/c.txt", "x");
  fs.add_file("a/b-x", "y");
  fs.add_file("a/b.y", "y");
  fs.add_file("a/z/deep/er", "z");
  fs.add_symlink("a/link", "/a/b");
  EXPECT_EQ(fs.children("a"), (std::vector<std::string>{"b", "b-x", "b.y", "link", "z"}));
  EXPECT_EQ(fs.children("a/link"), (std::vector<std::string>{"c.txt"}));
  EXPECT_EQ(fs.children(""), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(fs.children("missing").empty());
  EXPECT_EQ(fs.resolve("a/link/../../../../a/b.y"), "a/b.y");
  EXPECT_EQ(*fs.read("a/link/c.txt", 10), "x");
  EXPECT_FALSE(fs.read("a/b", 10).has_value());
  EXPECT_THROW(fs.read("a/b-x", 0), Error);
  EXPECT_EQ(*fs.read_prefix("a/b-x", 0), "");
  fs.remove("a/b");
  EXPECT_EQ(fs.find("a/b/c.txt"), nullptr);
}

TEST(PythonBaseFacts, SysconfigdataTokenizer) {
  auto vars = parse_sysconfigdata(
      "# comment\nbuild_time_vars = {'A': 'x\\'y\\\\z\\n\\x41\\u00e9',\n 'B': (\"one \"\n  \"two\"), 'C': 12,"
      " 'D': -1, 'E': None, 'F': ['a', ('b',)], 'G': r'\\d+', \"H\": '''tri'ple''', 'I': {'k': 'v'}}\n");
  EXPECT_EQ(vars["A"], "x'y\\z\nA\xc3\xa9");
  EXPECT_EQ(vars["B"], "one two");
  EXPECT_EQ(vars["C"], "12");
  EXPECT_EQ(vars["D"], "-1");
  EXPECT_EQ(vars.count("E"), 0u);
  EXPECT_EQ(vars.count("F"), 0u);
  EXPECT_EQ(vars["G"], "\\d+");
  EXPECT_EQ(vars["H"], "tri'ple");
  EXPECT_EQ(vars.count("I"), 0u);
  EXPECT_THROW(parse_sysconfigdata("x = 1"), Error);
  EXPECT_THROW(parse_sysconfigdata("build_time_vars = {'A': 'unterminated"), Error);
}

TEST(PythonBaseFacts, Debian12SystemPythonMatchesTheLiveInterpreter) {
  json expected = load_json(kData + "debian12/expected.json");
  // The real _sysconfigdata file, all keys.
  auto vars = parse_sysconfigdata(trainpack::read_file(
      kData + "debian12/rootfs/usr/lib/python3.11/_sysconfigdata__x86_64-linux-gnu.py"));
  EXPECT_GT(vars.size(), 700u);
  EXPECT_EQ(vars["SOABI"], expected["soabi"]);
  EXPECT_EQ(vars["CONFIG_ARGS"].substr(0, 35), "'--enable-shared' '--prefix=/usr' '");

  MemoryFilesystem fs;
  add_debian12(fs);
  ImageConfigFacts cfg{{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "", "amd64", ""};
  PythonFacts f = read_python_facts(fs, cfg, false);
  EXPECT_EQ(f.pip_path, "/usr/bin/pip");
  EXPECT_EQ(f.python_path, "");  // bookworm has no `python` command
  EXPECT_EQ(f.executable, "/usr/bin/python3");
  EXPECT_EQ(f.interpreter, "/usr/bin/python3.11");
  EXPECT_EQ(f.python_version, expected["python_version"]);
  EXPECT_EQ(f.python_full_version, expected["python_full_version"]);
  EXPECT_EQ(f.version_source, "patchlevel.h");
  EXPECT_EQ(f.soabi, expected["soabi"]);
  EXPECT_EQ(f.ext_suffix, expected["ext_suffix"]);
  EXPECT_EQ(f.multiarch, expected["multiarch"]);
  EXPECT_EQ(f.abiflags, expected["abiflags"]);
  EXPECT_EQ(f.sysconfig_prefix, expected["prefix"]);
  EXPECT_EQ(f.libdir, expected["libdir"]);
  EXPECT_EQ(f.stdlib, expected["scheme"]["stdlib"]);
  EXPECT_EQ(f.prefix, "/usr");
  EXPECT_EQ(f.base_prefix, "/usr");
  EXPECT_FALSE(f.venv);
  EXPECT_FALSE(f.conda);
  EXPECT_EQ(f.distro_id, "debian");
  EXPECT_EQ(f.distro_version_id, "12");
  EXPECT_EQ(f.scheme_name, "deb_posix_local");
  EXPECT_EQ(f.purelib, expected["scheme"]["purelib"]);
  EXPECT_EQ(f.platlib, expected["scheme"]["platlib"]);
  EXPECT_EQ(f.scripts, expected["scheme"]["scripts"]);
  EXPECT_EQ(f.data, expected["scheme"]["data"]);
  EXPECT_EQ(f.include, expected["scheme"]["include"]);
  InstallScheme s = f.scheme_for("My_Project");
  EXPECT_EQ(s.headers, "/usr/include/python3.11/My_Project");
  EXPECT_EQ(s.purelib, f.purelib);
  EXPECT_EQ(f.site_dirs, expected["site_dirs"].get<std::vector<std::string>>());
  EXPECT_EQ(f.externally_managed, "/usr/lib/python3.11/EXTERNALLY-MANAGED");
  EXPECT_EQ(f.externally_managed_error, expected["externally_managed_error"]);
  EXPECT_EQ(f.pip_version, expected["pip_version"]);
  for (const auto& [name, version] : expected["dists"].items()) {
    const SiteDistribution* d = f.find_installed(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_EQ(d->version, version) << name;
    EXPECT_EQ(d->site_dir, "/usr/lib/python3/dist-packages");
  }
  EXPECT_EQ(f.installed.size(), expected["dists"].size());
  const SiteDistribution* yaml = f.find_installed("pyyaml");
  EXPECT_EQ(yaml->name, "PyYAML");
  EXPECT_EQ(yaml->record, "/usr/lib/python3/dist-packages/PyYAML-6.0.dist-info/RECORD");
  EXPECT_FALSE(yaml->egg_info());
  const SiteDistribution* six = f.find_installed("six");
  EXPECT_TRUE(six->egg_info());
  EXPECT_EQ(six->metadata_dir, "/usr/lib/python3/dist-packages/six-1.16.0.egg-info");
  EXPECT_EQ(f.elf_interpreter, "/lib64/ld-linux-x86-64.so.2");
  EXPECT_EQ(f.libc, "glibc");
  EXPECT_EQ(f.libc_version, expected["glibc"]);
  EXPECT_EQ(f.machine, expected["machine"]);
  EXPECT_EQ(f.home, "/root");
  EXPECT_EQ(f.pip_config, PipConfig{});

  // pip3 names (Vertex prebuilt images) find the same interpreter.
  PythonFacts f3 = read_python_facts(fs, cfg, true);
  EXPECT_EQ(f3.pip_path, "/usr/bin/pip3");
  EXPECT_EQ(f3.python_path, "/usr/bin/python3");
  EXPECT_EQ(f3.executable, "/usr/bin/python3");

  // Without python3.11-dev the micro version comes from dpkg.
  fs.remove("usr/include/python3.11/patchlevel.h");
  PythonFacts fd = read_python_facts(fs, cfg, false);
  EXPECT_EQ(fd.python_full_version, "3.11.2");
  EXPECT_EQ(fd.version_source, "dpkg");

  // DEB_PYTHON_INSTALL_LAYOUT=deb selects deb_system.
  cfg.env.push_back("DEB_PYTHON_INSTALL_LAYOUT=deb");
  PythonFacts fs2 = read_python_facts(fs, cfg, false);
  EXPECT_EQ(fs2.scheme_name, "deb_system");
  EXPECT_EQ(fs2.purelib, "/usr/lib/python3/dist-packages");
  EXPECT_EQ(fs2.scripts, "/usr/bin");
  EXPECT_EQ(fs2.data, "/usr");
  EXPECT_EQ(fs2.include, "/usr/include/python3.11");

  // JSON round trip.
  json j = to_json(f);
  EXPECT_EQ(python_facts_from_json(json::parse(j.dump())), f);
  json broken = j;
  broken["facts"].erase("soabi");
  EXPECT_THROW(python_facts_from_json(broken), Error);
}

// Debian 11's python3.9 has Debian's schemes only in distutils; its site.py is what puts dist-packages on sys.path.
TEST(PythonBaseFacts, DebianBeforeSysconfigSchemesIsKnownByItsSitePy) {
  MemoryFilesystem fs;
  add_debian12(fs);
  fs.add_file("usr/lib/python3.11/sysconfig.py", "_INSTALL_SCHEMES = {'posix_prefix': {}}\n");
  ImageConfigFacts cfg{{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "", "amd64", ""};
  expect_error([&] { read_python_facts(fs, cfg, false); }, "no pip distribution");
  fs.add_file("usr/lib/python3.11/site.py",
              "            sitepackages.append(os.path.join(prefix, \"lib\",\n"
              "                                        \"python3\",\n"
              "                                        \"dist-packages\"))\n");
  PythonFacts f = read_python_facts(fs, cfg, false);
  EXPECT_EQ(f.scheme_name, "deb_posix_local");
  EXPECT_EQ(f.purelib, "/usr/local/lib/python3.11/dist-packages");
  EXPECT_EQ(f.site_dirs, load_json(kData + "debian12/expected.json")["site_dirs"].get<std::vector<std::string>>());
}

TEST(PythonBaseFacts, OfficialPythonImage) {
  MemoryFilesystem fs;
  add_official(fs);
  PythonFacts f = read_python_facts(fs, official_config(), false);
  EXPECT_EQ(f.pip_path, "/usr/local/bin/pip");
  EXPECT_EQ(f.python_path, "/usr/local/bin/python");
  EXPECT_EQ(f.executable, "/usr/local/bin/python3.11");
  EXPECT_EQ(f.python_full_version, "3.11.9");
  EXPECT_EQ(f.version_source, "ENV PYTHON_VERSION");
  EXPECT_EQ(f.soabi, "cpython-311-x86_64-linux-gnu");
  EXPECT_EQ(f.sysconfig_prefix, "/usr/local");
  EXPECT_EQ(f.scheme_name, "posix_prefix");
  EXPECT_EQ(f.purelib, "/usr/local/lib/python3.11/site-packages");
  EXPECT_EQ(f.platlib, "/usr/local/lib/python3.11/site-packages");
  EXPECT_EQ(f.scripts, "/usr/local/bin");
  EXPECT_EQ(f.data, "/usr/local");
  EXPECT_EQ(f.scheme_for("foo").headers, "/usr/local/include/python3.11/foo");
  EXPECT_EQ(f.site_dirs, std::vector<std::string>{"/usr/local/lib/python3.11/site-packages"});
  EXPECT_EQ(f.externally_managed, "");
  EXPECT_EQ(f.pip_version, "24.0");
  EXPECT_EQ(dist_names(f), (std::vector<std::string>{"numpy==1.26.4", "pip==24.0", "setuptools==65.5.1"}));
  EXPECT_EQ(f.find_installed("pip")->record, "/usr/local/lib/python3.11/site-packages/pip-24.0.dist-info/RECORD");
  EXPECT_EQ(f.find_installed("numpy")->record, "");
  EXPECT_EQ(f.libc, "glibc");
  EXPECT_EQ(f.libc_version, "2.36");
  EXPECT_EQ(f.machine, "x86_64");

  // A newer patchlevel.h does not beat ENV PYTHON_VERSION; without the ENV it is used.
  fs.add_file("usr/local/include/python3.11/patchlevel.h", "#define PY_VERSION              \"3.11.8\"\n");
  EXPECT_EQ(read_python_facts(fs, official_config(), false).python_full_version, "3.11.9");
  ImageConfigFacts no_env = official_config();
  no_env.env.erase(no_env.env.begin() + 3);
  PythonFacts fp = read_python_facts(fs, no_env, false);
  EXPECT_EQ(fp.python_full_version, "3.11.8");
  EXPECT_EQ(fp.version_source, "patchlevel.h");
  // build-details.json (PEP 739) beats everything.
  fs.add_file("usr/local/lib/python3.11/build-details.json",
              R"({"schema_version": "1.0", "language": {"version": "3.11"},
                  "implementation": {"name": "cpython", "version": {"major": 3, "minor": 11, "micro": 10,
                  "releaselevel": "candidate", "serial": 2}}})");
  PythonFacts fb = read_python_facts(fs, official_config(), false);
  EXPECT_EQ(fb.python_full_version, "3.11.10rc2");
  EXPECT_EQ(fb.version_source, "build-details.json");

  // A user that cannot write site-packages would make pip install with --user.
  ImageConfigFacts user = official_config();
  user.user = "app";
  expect_error([&] { read_python_facts(fs, user, false); }, "cannot write /usr/local/lib/python3.11/site-packages");
  user.user = "1000:1000";
  expect_error([&] { read_python_facts(fs, user, false); }, "pip would install with --user");
  user.user = "nobody";
  expect_error([&] { read_python_facts(fs, user, false); }, "not in its /etc/passwd");
  fs.add_dir("usr/local/lib/python3.11/site-packages", 0775, 0, 1000);
  user.user = "app";
  EXPECT_EQ(read_python_facts(fs, user, false).home, "/home/app");
}

TEST(PythonBaseFacts, VenvOnOfficialImage) {
  MemoryFilesystem fs;
  add_official(fs);
  fs.add_file("usr/local/lib/python3.11/EXTERNALLY-MANAGED", "[externally-managed]\nError=no\n");
  fs.add_file("opt/venv/pyvenv.cfg",
              "home = /usr/local/bin\ninclude-system-site-packages = false\nversion = 3.11.9\n"
              "executable = /usr/local/bin/python3.11\ncommand = /usr/local/bin/python -m venv /opt/venv\n");
  fs.add_symlink("opt/venv/bin/python", "/usr/local/bin/python3.11");
  fs.add_symlink("opt/venv/bin/python3", "python");
  fs.add_file("opt/venv/bin/pip", "#!/opt/venv/bin/python\n# -*- coding: utf-8 -*-\n", 0755);
  fs.add_symlink("opt/venv/lib64", "lib");
  fs.add_file("opt/venv/lib/python3.11/site-packages/pip-23.2.1.dist-info/METADATA", metadata("pip", "23.2.1"));
  fs.add_file("opt/venv/lib/python3.11/site-packages/pip-23.2.1.dist-info/RECORD", "");
  fs.add_file("opt/venv/lib/python3.11/site-packages/Requests-2.31.0.dist-info/METADATA",
              metadata("requests", "2.31.0"));
  fs.add_file("opt/venv/pip.conf", "[global]\nindex-url = https://venv.example/simple\n");
  ImageConfigFacts cfg = official_config();
  cfg.env[0] = "PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin";
  cfg.env.push_back("VIRTUAL_ENV=/opt/venv");
  PythonFacts f = read_python_facts(fs, cfg, false);
  EXPECT_EQ(f.pip_path, "/opt/venv/bin/pip");
  EXPECT_EQ(f.python_path, "/opt/venv/bin/python");
  EXPECT_EQ(f.executable, "/opt/venv/bin/python");
  EXPECT_EQ(f.interpreter, "/usr/local/bin/python3.11");
  EXPECT_TRUE(f.venv);
  EXPECT_EQ(f.venv_home, "/usr/local/bin");
  EXPECT_FALSE(f.include_system_site_packages);
  EXPECT_EQ(f.prefix, "/opt/venv");
  EXPECT_EQ(f.base_prefix, "/usr/local");
  EXPECT_EQ(f.python_full_version, "3.11.9");
  EXPECT_EQ(f.version_source, "pyvenv.cfg");
  EXPECT_EQ(f.scheme_name, "venv");
  EXPECT_EQ(f.purelib, "/opt/venv/lib/python3.11/site-packages");
  EXPECT_EQ(f.platlib, "/opt/venv/lib/python3.11/site-packages");
  EXPECT_EQ(f.scripts, "/opt/venv/bin");
  EXPECT_EQ(f.data, "/opt/venv");
  EXPECT_EQ(f.scheme_for("Foo_Bar").headers, "/opt/venv/include/site/python3.11/Foo_Bar");
  EXPECT_EQ(f.site_dirs, std::vector<std::string>{"/opt/venv/lib/python3.11/site-packages"});
  EXPECT_EQ(f.externally_managed, "") << "EXTERNALLY-MANAGED is ignored in a venv";
  EXPECT_EQ(f.pip_version, "23.2.1");
  EXPECT_EQ(dist_names(f), (std::vector<std::string>{"pip==23.2.1", "requests==2.31.0"}));
  EXPECT_EQ(f.pip_config.index_url, "https://venv.example/simple");
  EXPECT_EQ(f.pip_config.files, std::vector<std::string>{"/opt/venv/pip.conf"});

  fs.add_file("opt/venv/pyvenv.cfg", "home = /usr/local/bin\ninclude-system-site-packages = true\nversion = 3.11.9\n");
  PythonFacts fsys = read_python_facts(fs, cfg, false);
  EXPECT_TRUE(fsys.include_system_site_packages);
  EXPECT_EQ(fsys.site_dirs, (std::vector<std::string>{"/opt/venv/lib/python3.11/site-packages",
                                                      "/usr/local/lib/python3.11/site-packages"}));
  EXPECT_EQ(dist_names(fsys), (std::vector<std::string>{"pip==23.2.1", "requests==2.31.0", "numpy==1.26.4",
                                                         "setuptools==65.5.1"}))
      << "first occurrence on sys.path wins";
  EXPECT_EQ(python_facts_from_json(to_json(fsys)), fsys);
}

TEST(PythonBaseFacts, AlpineMusl) {
  MemoryFilesystem fs;
  fs.add_file("usr/bin/python3.11", make_elf(183, "/lib/ld-musl-aarch64.so.1"), 0755);
  fs.add_symlink("usr/bin/python3", "python3.11");
  fs.add_file("usr/bin/pip3", "#!/usr/bin/python3\n", 0755);
  fs.add_file("usr/lib/python3.11/os.py", "");
  fs.add_file("usr/lib/python3.11/_sysconfigdata__linux_aarch64-linux-musl.py",
              sysconfigdata("3.11", "/usr", "aarch64-linux-musl"));
  fs.add_file("usr/lib/python3.11/EXTERNALLY-MANAGED",
              "[externally-managed]\nError = The system-wide Python installation should be maintained using the "
              "system\n package manager (apk) only.\n\n If the package in question is not packaged already (and "
              "hence installable via\n \"apk add py3-somepackage\"), please consider installing it inside a virtual "
              "environment.\n");
  fs.add_file("usr/lib/python3.11/site-packages/pip-23.1.2.dist-info/METADATA", metadata("pip", "23.1.2"));
  fs.add_file("lib/ld-musl-aarch64.so.1", "\x7f" "ELF", 0755);
  fs.add_file("lib/apk/db/installed",
              "C:Q1abc=\nP:musl\nV:1.2.4-r2\nA:aarch64\n\nC:Q1def=\nP:python3\nV:3.11.6-r1\nA:aarch64\n\n"
              "P:py3-pip\nV:23.1.2-r0\n\n");
  fs.add_file("etc/os-release", "NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.18.4\n");
  ImageConfigFacts cfg{{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "", "arm64", "v8"};
  PythonFacts f = read_python_facts(fs, cfg, true);
  EXPECT_EQ(f.pip_path, "/usr/bin/pip3");
  EXPECT_EQ(f.python_path, "/usr/bin/python3");
  EXPECT_EQ(f.python_full_version, "3.11.6");
  EXPECT_EQ(f.version_source, "apk");
  EXPECT_EQ(f.distro_id, "alpine");
  EXPECT_EQ(f.scheme_name, "posix_prefix");
  EXPECT_EQ(f.purelib, "/usr/lib/python3.11/site-packages");
  EXPECT_EQ(f.scripts, "/usr/bin");
  EXPECT_EQ(f.data, "/usr");
  EXPECT_EQ(f.include, "/usr/include/python3.11");
  EXPECT_EQ(f.externally_managed_error,
            "The system-wide Python installation should be maintained using the system\npackage manager (apk) "
            "only.\n\nIf the package in question is not packaged already (and hence installable via\n\"apk add "
            "py3-somepackage\"), please consider installing it inside a virtual environment.");
  EXPECT_EQ(f.elf_interpreter, "/lib/ld-musl-aarch64.so.1");
  EXPECT_EQ(f.libc, "musl");
  EXPECT_EQ(f.libc_version, "1.2.4");
  EXPECT_EQ(f.machine, "aarch64");
  EXPECT_EQ(f.soabi, "cpython-311-aarch64-linux-musl");

  // `pip` (not pip3) is missing on Alpine.
  expect_error([&] { read_python_facts(fs, cfg, false); }, "no `pip` on its PATH");
  // The binaries say aarch64, the config amd64.
  cfg.architecture = "amd64";
  expect_error([&] { read_python_facts(fs, cfg, true); }, "is a aarch64 binary but the image config says amd64");
}

TEST(PythonBaseFacts, CondaAndFedora) {
  MemoryFilesystem fs;
  fs.add_file("opt/conda/bin/python3.11", make_elf(62, "/lib64/ld-linux-x86-64.so.2"), 0755);
  fs.add_symlink("opt/conda/bin/python", "python3.11");
  fs.add_file("opt/conda/bin/pip", "#!/opt/conda/bin/python\n", 0755);
  fs.add_file("opt/conda/lib/python3.11/os.py", "");
  fs.add_file("opt/conda/lib/python3.11/_sysconfigdata_x86_64_conda_cos7_linux_gnu.py",
              sysconfigdata("3.11", "/opt/conda", "x86_64-linux-gnu"));
  fs.add_file("opt/conda/lib/python3.11/site-packages/pip-23.3.1.dist-info/METADATA", metadata("pip", "23.3.1"));
  fs.add_file("opt/conda/conda-meta/history", "");
  fs.add_file("opt/conda/conda-meta/pip-23.3.1-py311h06a4308_0.json", "{}");
  fs.add_file("opt/conda/conda-meta/python-3.11.5-h955ad1f_0.json", "{}");
  fs.add_file("etc/os-release", kOsReleaseBookworm);
  ImageConfigFacts cfg{{"PATH=/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "",
                       "amd64", ""};
  PythonFacts f = read_python_facts(fs, cfg, false);
  EXPECT_TRUE(f.conda);
  EXPECT_EQ(f.python_full_version, "3.11.5");
  EXPECT_EQ(f.version_source, "conda-meta");
  EXPECT_EQ(f.scheme_name, "conda");
  EXPECT_EQ(f.purelib, "/opt/conda/lib/python3.11/site-packages");
  EXPECT_EQ(f.scripts, "/opt/conda/bin");
  EXPECT_EQ(f.data, "/opt/conda");
  EXPECT_EQ(f.include, "/opt/conda/include/python3.11");
  EXPECT_EQ(f.pip_version, "23.3.1");
  EXPECT_EQ(f.libc, "glibc");
  EXPECT_EQ(f.libc_version, "") << "no libc.so.6 in this tree";

  MemoryFilesystem rh;
  rh.add_file("usr/bin/python3.12", make_elf(62, "/lib64/ld-linux-x86-64.so.2"), 0755);
  rh.add_symlink("usr/bin/python3", "python3.12");
  rh.add_file("usr/bin/pip3", "#!/usr/bin/python3\n", 0755);
  rh.add_file("usr/lib64/python3.12/os.py", "");
  rh.add_file("usr/lib64/python3.12/_sysconfigdata__linux_x86_64-linux-gnu.py",
              sysconfigdata("3.12", "/usr", "x86_64-linux-gnu", " 'PLATLIBDIR': 'lib64',\n"));
  rh.add_dir("usr/lib/python3.12/site-packages");
  rh.add_file("usr/lib/python3.12/site-packages/pip-23.2.1.dist-info/METADATA", metadata("pip", "23.2.1"));
  rh.add_file("usr/include/python3.12/patchlevel.h", "#define PY_VERSION \"3.12.1\"\n");
  rh.add_file("usr/lib64/libc.so.6", "GNU C Library (GNU libc) stable release version 2.39.\n", 0755);
  rh.add_file("etc/os-release", "NAME=\"Fedora Linux\"\nVERSION_ID=40\nID=fedora\n");
  PythonFacts r = read_python_facts(rh, ImageConfigFacts{{}, "", "amd64", ""}, true);
  EXPECT_EQ(r.stdlib, "/usr/lib64/python3.12");
  EXPECT_EQ(r.platlibdir, "lib64");
  EXPECT_EQ(r.python_full_version, "3.12.1");
  EXPECT_EQ(r.scheme_name, "rpm_posix_local");
  EXPECT_EQ(r.purelib, "/usr/local/lib/python3.12/site-packages");
  EXPECT_EQ(r.platlib, "/usr/local/lib64/python3.12/site-packages");
  EXPECT_EQ(r.scripts, "/usr/local/bin");
  EXPECT_EQ(r.site_dirs, (std::vector<std::string>{"/usr/local/lib64/python3.12/site-packages",
                                                   "/usr/local/lib/python3.12/site-packages",
                                                   "/usr/lib64/python3.12/site-packages",
                                                   "/usr/lib/python3.12/site-packages"}));
  EXPECT_EQ(r.libc_version, "2.39");
  EXPECT_EQ(r.pip_version, "23.2.1");
}

TEST(PythonBaseFacts, Errors) {
  {
    MemoryFilesystem fs;
    add_official(fs);
    fs.add_file("usr/local/bin/pip", "import sys\n", 0755);
    expect_error([&] { read_python_facts(fs, official_config(), false); }, "does not start with a #! line");
  }
  {
    MemoryFilesystem fs;
    add_official(fs);
    fs.add_file("usr/local/bin/pip", "#!/usr/bin/python3.9\n", 0755);
    expect_error([&] { read_python_facts(fs, official_config(), false); }, "is not in the image");
  }
  {
    MemoryFilesystem fs;
    add_official(fs);
    fs.add_file("usr/local/bin/pip", "#!/usr/local/bin/python3.11\n", 0644);  // not executable: PATH skips it
    fs.remove("usr/local/bin/pip3");
    expect_error([&] { read_python_facts(fs, official_config(), true); }, "no `pip3` on its PATH");
  }
  {
    MemoryFilesystem fs;
    add_official(fs);
    ImageConfigFacts cfg = official_config();
    cfg.env.erase(cfg.env.begin() + 3);  // PYTHON_VERSION
    expect_error([&] { read_python_facts(fs, cfg, false); }, "cannot tell the micro version of Python 3.11");
  }
  {
    MemoryFilesystem fs;
    add_official(fs);
    fs.remove("usr/local/lib/python3.11/site-packages/pip-24.0.dist-info");
    expect_error([&] { read_python_facts(fs, official_config(), false); }, "no pip distribution");
  }
  {
    MemoryFilesystem fs;
    add_official(fs);
    ImageConfigFacts cfg = official_config();
    cfg.env.push_back("PIP_NO_INDEX=maybe");
    expect_error([&] { read_python_facts(fs, cfg, false); }, "maybe is not a valid value for no-index option");
  }
}

TEST(PythonBaseFacts, PipConfigMatchesPip) {
  std::ifstream in(kData + "pip_config.json");
  auto data = nlohmann::ordered_json::parse(in);  // env order matters (FormatControl)
  ASSERT_GE(data.at("cases").size(), 10u);
  for (const auto& c : data.at("cases")) {
    SCOPED_TRACE(c.dump());
    MemoryFilesystem fs;
    for (const auto& [path, text] : c.at("files").items()) fs.add_file(path, text.get<std::string>());
    std::vector<std::pair<std::string, std::string>> env{{"HOME", "/root"}};
    for (const auto& [k, v] : c.at("env").items()) env.emplace_back(k, v.get<std::string>());
    PipConfig p = read_pip_config(fs, env, "/usr", "/root");
    const auto& e = c.at("expected");
    EXPECT_EQ(p.index_url, e.at("index_url").get<std::string>());
    EXPECT_EQ(p.extra_index_urls, e.at("extra_index_urls").get<std::vector<std::string>>());
    EXPECT_EQ(p.find_links, e.at("find_links").get<std::vector<std::string>>());
    EXPECT_EQ(p.trusted_hosts, e.at("trusted_hosts").get<std::vector<std::string>>());
    EXPECT_EQ(p.no_index, e.at("no_index").get<bool>());
    EXPECT_EQ(p.pre, e.at("pre").get<bool>());
    EXPECT_EQ(p.compile, e.at("compile").get<bool>());
    EXPECT_EQ(p.break_system_packages, e.at("break_system_packages").get<bool>());
    EXPECT_EQ(p.prefer_binary, e.at("prefer_binary").get<bool>());
    EXPECT_EQ(p.require_hashes, e.at("require_hashes").get<bool>());
    EXPECT_EQ(p.user, e.at("user").get<bool>());
    EXPECT_EQ(p.no_deps, e.at("no_deps").get<bool>());
    EXPECT_EQ(p.ignore_installed, e.at("ignore_installed").get<bool>());
    EXPECT_EQ(p.upgrade, e.at("upgrade").get<bool>());
    EXPECT_EQ(p.upgrade_strategy, e.at("upgrade_strategy").get<std::string>());
    EXPECT_EQ(p.only_binary, e.at("only_binary").get<std::vector<std::string>>());
    EXPECT_EQ(p.no_binary, e.at("no_binary").get<std::vector<std::string>>());
    EXPECT_EQ(p.target, e.at("target").get<std::string>());
  }
}

TEST(PythonBaseFacts, PipConfigFileOrder) {
  // pip's site_config_dirs: /etc/xdg/pip first, then /etc; later files win; env wins over [install] over [global].
  MemoryFilesystem fs;
  fs.add_file("etc/xdg/pip/pip.conf", "[global]\nindex-url = https://xdg/simple\nfind-links = /xdg\n");
  fs.add_file("etc/pip.conf", "[global]\nindex-url = https://etc/simple\n");
  fs.add_file("usr/local/pip.conf", "[install]\nfind-links = /site\n");
  std::vector<std::pair<std::string, std::string>> env{{"PIP_PRE", "yes"}};
  PipConfig p = read_pip_config(fs, env, "/usr/local", "/root");
  EXPECT_EQ(p.files, (std::vector<std::string>{"/etc/xdg/pip/pip.conf", "/etc/pip.conf", "/usr/local/pip.conf"}));
  EXPECT_EQ(p.index_url, "https://etc/simple");
  EXPECT_EQ(p.find_links, std::vector<std::string>{"/site"});
  EXPECT_TRUE(p.pre);
  EXPECT_EQ(p.items.back(), (std::pair<std::string, std::string>{"pre", "yes"}));
}

// A pip.conf (or the file PIP_CONFIG_FILE names) that is a FIFO or a device in the base image is refused in one line
// naming it: pip would block on it or read it without end.
TEST(PythonBaseFacts, PipConfigThatIsNotARegularFileIsRefused) {
  trainpack::layers::PathInfo fifo;
  fifo.type = trainpack::layers::PathInfo::Type::kOther;
  for (const std::string path : {"etc/pip.conf", "opt/pip.ini"}) {
    MemoryFilesystem fs;
    fs.add(path, fifo);
    std::vector<std::pair<std::string, std::string>> env{{"PIP_CONFIG_FILE", "/opt/pip.ini"}};
    try {
      read_pip_config(fs, env, "/usr/local", "/root");
      ADD_FAILURE() << path << " was read";
    } catch (const trainpack::Error& e) {
      EXPECT_NE(std::string(e.what()).find("/" + path + " is not a regular file"), std::string::npos) << e.what();
    }
  }
}

TEST(PythonBaseFacts, ElfMachineAndConfigVariant) {
  struct Case {
    std::uint16_t machine;
    bool is64, big;
    const char* arch;
    const char* variant;
    const char* expected;
  };
  for (const Case& c : {Case{40, false, false, "arm", "v6", "armv6l"}, Case{40, false, false, "arm", "v7", "armv7l"},
                        Case{22, true, true, "s390x", "", "s390x"}, Case{21, true, false, "ppc64le", "", "ppc64le"},
                        Case{3, false, false, "386", "", "i686"}, Case{243, true, false, "", "", "riscv64"}}) {
    SCOPED_TRACE(c.expected);
    MemoryFilesystem fs;
    add_official(fs);
    fs.add_file("usr/local/bin/python3.11", make_elf(c.machine, "/lib/ld-linux.so.3", c.is64, c.big), 0755);
    ImageConfigFacts cfg = official_config();
    cfg.architecture = c.arch;
    cfg.variant = c.variant;
    PythonFacts f = read_python_facts(fs, cfg, false);
    EXPECT_EQ(f.machine, c.expected);
    EXPECT_EQ(f.elf_interpreter, "/lib/ld-linux.so.3");
    EXPECT_EQ(f.libc, "glibc");
  }
}

// What exec finds for an entrypoint's program: the first executable file of PATH's directories (symlinks resolved
// in the image, through merged /bin too), Docker's default PATH without one; an absolute name as it is.
TEST(PythonBaseFacts, FindCommandSearchesTheImagesPath) {
  MemoryFilesystem fs;
  fs.add_file("usr/bin/python3.11", "ELF", 0755);
  fs.add_symlink("usr/bin/python3", "python3.11");
  fs.add_symlink("bin", "usr/bin");
  fs.add_file("opt/tools/python", "not executable", 0644);
  fs.add_file("opt/venv/bin/python", "ELF", 0755);
  EXPECT_EQ(find_command(fs, {}, "python3"), "/usr/bin/python3");
  EXPECT_EQ(find_command(fs, {}, "python"), "");
  EXPECT_EQ(find_command(fs, {"LANG=C", "PATH=/bin"}, "python3"), "/bin/python3");
  EXPECT_EQ(find_command(fs, {"PATH=/opt/tools:/usr/bin"}, "python"), "");
  EXPECT_EQ(find_command(fs, {"PATH=relative:/opt/tools:/opt/venv/bin"}, "python"), "/opt/venv/bin/python");
  EXPECT_EQ(find_command(fs, {"PATH="}, "python3"), "");
  EXPECT_EQ(find_command(fs, {}, "/usr/bin/python3"), "/usr/bin/python3");
  EXPECT_EQ(find_command(fs, {}, "/usr/bin/python"), "");
}
