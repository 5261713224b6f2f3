// Wheel installer vs Debian 12's pip 23.0.1 (testdata/python/wheels/expected.json, made by gen_wheels.py), plus
// launcher templates of newer pips, validation failures, and layers streamed from zip members.
#include "python/records.h"
#include "python/scripts.h"
#include "python/wheel_installer.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <zip.h>
#include <locale.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "layers/layer_cache.h"
#include "layers/layer_writer.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/gzip_test_support.h"
#include "tests/unit/wheel_test_support.h"

namespace fs = std::filesystem;
using namespace trainpack::python;
using trainpack::layers::FileEntries;
using trainpack::layers::FileEntry;
using nlohmann::json;

namespace {

const std::string kWheels = std::string(TRAINPACK_TESTDATA_DIR) + "/python/wheels/";

InstallScheme debian_scheme(const std::string& headers_name) {
  return {"/usr/local/lib/python3.11/dist-packages", "/usr/local/lib/python3.11/dist-packages",
          "/usr/include/python3.11/" + headers_name, "/usr/local/bin", "/usr/local"};
}

std::string member_bytes(const fs::path& archive, zip_uint64_t index) {
  zip_t* za = zip_open(archive.c_str(), ZIP_RDONLY, nullptr);
  EXPECT_NE(za, nullptr);
  zip_stat_t st;
  zip_stat_index(za, index, 0, &st);
  std::string out(st.size, '\0');
  zip_file_t* f = zip_fopen_index(za, index, 0);
  EXPECT_EQ(zip_fread(f, out.data(), out.size()), static_cast<zip_int64_t>(out.size()));
  zip_fclose(f);
  zip_discard(za);
  return out;
}

std::string bytes_of(const FileEntry& e) {
  if (!e.zip_member.empty()) return member_bytes(e.source, e.zip_index);
  EXPECT_TRUE(e.source.empty()) << e.path;
  return e.data;
}

using trainpack::testing::gunzip;

struct TarFile {
  unsigned mode;
  std::string data;
};
std::map<std::string, TarFile> read_tar(const std::string& tar) {
  // Non-ASCII (UTF-8) names convert only under a UTF-8 locale, as in the writer.
  locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  locale_t previous = uselocale(utf8);
  std::map<std::string, TarFile> files;
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  EXPECT_EQ(archive_read_open_memory(a, tar.data(), tar.size()), ARCHIVE_OK);
  archive_entry* e;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    TarFile f{static_cast<unsigned>(archive_entry_mode(e)), ""};
    char buf[4096];
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, sizeof buf)) > 0) f.data.append(buf, static_cast<size_t>(n));
    files[archive_entry_pathname(e)] = f;
  }
  archive_read_free(a);
  uselocale(previous);
  freelocale(utf8);
  return files;
}

using trainpack::test_support::ZipItem;

const std::string kGoodWheel = "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n";

class WheelInstallerTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = trainpack::make_temp_dir({}, "wheelinst-"); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path make_zip(const std::string& filename, const std::vector<ZipItem>& items) {
    fs::path p = dir_ / filename;
    trainpack::test_support::write_zip(p, items);
    return p;
  }

  // A minimal valid wheel "pkg-1.0" plus `extra` members; `wheel_text` replaces WHEEL.
  fs::path make_wheel(const std::vector<ZipItem>& extra, const std::string& wheel_text = kGoodWheel,
                      const std::string& record = "") {
    std::vector<ZipItem> items{{"pkg/__init__.py", "X = 1\n"},
                               {"pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"},
                               {"pkg-1.0.dist-info/WHEEL", wheel_text},
                               {"pkg-1.0.dist-info/RECORD", record}};
    items.insert(items.end(), extra.begin(), extra.end());
    return make_zip("pkg-1.0-py3-none-any.whl", items);
  }

  WheelInstallRequest request(const fs::path& whl, std::string name = "pkg") {
    WheelInstallRequest r;
    r.wheel = whl;
    r.name = name;
    r.version = "1.0";
    r.scheme = debian_scheme(name);
    r.sys_executable = "/usr/bin/python3";
    r.python_version = "3.11";
    return r;
  }

  static const FileEntry* find(const InstalledWheel& w, const std::string& path) {
    for (const FileEntry& e : w.files)
      if (e.path == path) return &e;
    return nullptr;
  }

  fs::path dir_;
};

const std::string kLib = "usr/local/lib/python3.11/dist-packages/";

}  // namespace

// Every oracle case: same paths, modes, bytes (launchers, rewritten scripts, RECORD, INSTALLER, REQUESTED,
// direct_url.json) and directories as pip 23.0.1; then the same files through a real layer.
TEST_F(WheelInstallerTest, MatchesPip2301Oracle) {
  std::ifstream in(kWheels + "expected.json");
  ASSERT_TRUE(in) << "missing testdata";
  json doc = json::parse(in);
  ASSERT_GE(doc["cases"].size(), 6u);
  for (const json& c : doc["cases"]) {
    SCOPED_TRACE(c["wheel"].get<std::string>());
    WheelInstallRequest r;
    r.wheel = kWheels + c["wheel"].get<std::string>();
    r.name = c["name"];
    r.version = c["version"];
    r.scheme = {c["scheme"]["purelib"], c["scheme"]["platlib"], c["scheme"]["headers"], c["scheme"]["scripts"],
                c["scheme"]["data"]};
    r.sys_executable = c["sys_executable"];
    r.pip_version = Version::parse(c["pip_version"].get<std::string>());
    r.python_version = c["python_version"];
    r.requested = c["requested"];
    if (!c["direct_url"].is_null()) r.direct_url = c["direct_url"];
    InstalledWheel w = install_wheel(r);

    std::set<std::string> want_paths, got_paths(w.installed_paths.begin(), w.installed_paths.end());
    for (auto it = c["files"].begin(); it != c["files"].end(); ++it) want_paths.insert(it.key());
    EXPECT_EQ(got_paths, want_paths);
    ASSERT_EQ(w.files.size(), got_paths.size());
    std::map<std::string, std::string> bytes;
    for (const FileEntry& e : w.files) {
      SCOPED_TRACE(e.path);
      ASSERT_TRUE(c["files"].contains(e.path));
      const json& f = c["files"][e.path];
      std::string data = bytes_of(e);
      EXPECT_EQ(e.size, data.size());
      EXPECT_EQ(data.size(), f["size"].get<std::size_t>());
      EXPECT_EQ(trainpack::image::sha256_of(data).hex(), f["sha256"].get<std::string>());
      char mode[16];
      std::snprintf(mode, sizeof mode, "0o%o", e.mode);
      EXPECT_EQ(mode, f["mode"].get<std::string>());
      if (e.path.ends_with(".dist-info/RECORD")) {
        EXPECT_EQ(data, c["record"].get<std::string>());
      }
      bytes[e.path] = data;
    }
    EXPECT_EQ(std::set<std::string>(w.directories.begin(), w.directories.end()),
              c["dirs"].get<std::set<std::string>>());

    // Through the layer writer: zip members streamed, directories added as the caller would.
    FileEntries entries = w.files;
    for (const std::string& d : w.directories) entries.push_back(FileEntry::directory(d, 0755));
    trainpack::store::BlobStore store(dir_ / "store");
    auto blob = trainpack::layers::write_layer(store, entries, {});
    auto tar = read_tar(gunzip(trainpack::read_file(store.path_of(blob.digest), 1 << 30)));
    for (const auto& [path, data] : bytes) {
      ASSERT_TRUE(tar.count(path)) << path;
      EXPECT_EQ(tar[path].data, data) << path;
    }
  }
}

TEST_F(WheelInstallerTest, DebianDemoDetails) {
  WheelInstallRequest r = request(kWheels + "Demo_Pkg-1.0-py3-none-any.whl", "Demo_Pkg");
  InstalledWheel w = install_wheel(r);
  EXPECT_EQ(w.dist_info_dir, "Demo_Pkg-1.0.dist-info");
  EXPECT_EQ(w.lib_dir, "/usr/local/lib/python3.11/dist-packages");
  // Not requested, no direct URL: neither file nor RECORD row.
  EXPECT_EQ(find(w, kLib + "Demo_Pkg-1.0.dist-info/REQUESTED"), nullptr);
  EXPECT_EQ(find(w, kLib + "Demo_Pkg-1.0.dist-info/direct_url.json"), nullptr);
  for (const RecordRow& row : w.record_rows) EXPECT_FALSE(row[0].ends_with("REQUESTED"));
  // The package file streams from the zip; the #!python script is rewritten inline.
  const FileEntry* mod = find(w, kLib + "demo_pkg/cli.py");
  ASSERT_NE(mod, nullptr);
  EXPECT_EQ(mod->zip_member, "demo_pkg/cli.py");
  const FileEntry* script = find(w, "usr/local/bin/demo-script");
  ASSERT_NE(script, nullptr);
  EXPECT_TRUE(script->zip_member.empty());
  EXPECT_EQ(script->data, "#!/usr/bin/python3\nprint('hello')\n");
  // The wrapper named like an entry point was not installed from .data; the launcher took its place.
  EXPECT_TRUE(find(w, "usr/local/bin/demo-cli")->data.starts_with("#!/usr/bin/python3\n# -*- coding: utf-8 -*-"));
}

TEST_F(WheelInstallerTest, BytecodeHookAddsUnhashedRows) {
  InstalledWheel w = install_wheel(request(kWheels + "uni_names-0.1-py3-none-any.whl", "uni_names"));
  w.add_unhashed_record_paths({"uni_names/__pycache__/__init__.cpython-311.pyc"});
  const FileEntry* record = find(w, kLib + "uni_names-0.1.dist-info/RECORD");
  ASSERT_NE(record, nullptr);
  EXPECT_NE(record->data.find("\r\nuni_names/__pycache__/__init__.cpython-311.pyc,,\r\n\"uni_names/a,b.txt\""),
            std::string::npos)
      << record->data;  // sorted like Python's tuples: '_' (0x5f) before 'a'
  EXPECT_EQ(record->size, record->data.size());
}

TEST(WheelLauncher, TemplatesByPipVersion) {
  EXPECT_EQ(launcher_script("/usr/local/bin/python3.12", "pkg.cli", "Main.run", Version::parse("25.2")),
            "#!/usr/local/bin/python3.12\n"
            "import sys\n"
            "from pkg.cli import Main\n"
            "if __name__ == '__main__':\n"
            "    if sys.argv[0].endswith('.exe'):\n"
            "        sys.argv[0] = sys.argv[0][:-4]\n"
            "    sys.exit(Main.run())\n");
  EXPECT_EQ(launcher_script("/usr/local/bin/python3.12", "pkg.cli", "Main.run", Version::parse("25.3")),
            launcher_script("/usr/local/bin/python3.12", "pkg.cli", "Main.run", Version::parse("25.2")));
  EXPECT_EQ(launcher_script("/opt/venv/bin/python", "flask.cli", "main", Version::parse("26.0")),
            "#!/opt/venv/bin/python\n"
            "import sys\n"
            "from flask.cli import main\n"
            "if __name__ == '__main__':\n"
            "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
            "    sys.exit(main())\n");
  EXPECT_EQ(launcher_script("/usr/bin/python3", "a", "b", Version::parse("25.1")),
            "#!/usr/bin/python3\n"
            "# -*- coding: utf-8 -*-\n"
            "import re\n"
            "import sys\n"
            "from a import b\n"
            "if __name__ == '__main__':\n"
            "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
            "    sys.exit(b())\n");
}

TEST(WheelLauncher, ShebangRule) {
  std::string exe124 = "/" + std::string(123, 'p');  // 124 + 3 = 127: still a plain shebang
  EXPECT_EQ(launcher_shebang(exe124), "#!" + exe124 + "\n");
  std::string exe125 = exe124 + "y";
  EXPECT_EQ(launcher_shebang(exe125), "#!/bin/sh\n'''exec' " + exe125 + " \"$0\" \"$@\"\n' '''\n");
  EXPECT_EQ(launcher_shebang("/opt/my env/bin/python"),
            "#!/bin/sh\n'''exec' \"/opt/my env/bin/python\" \"$0\" \"$@\"\n' '''\n");
}

TEST(WheelRecord, CsvAndHashAndJson) {
  EXPECT_EQ(record_hash("pip\n"), "sha256=zuuue4knoyJ-UwPPXg8fezS7VCrXJQrAP7zeNuwvFQg");
  EXPECT_EQ(record_hash(""), "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  EXPECT_EQ(format_record({{"a,b", "x", "1"}, {"say \"hi\"", "", ""}, {"line\nbreak", "", ""}}),
            "\"a,b\",x,1\r\n\"say \"\"hi\"\"\",,\r\n\"line\nbreak\",,\r\n");
  json j = {{"url", "file:///usr/app/caf\xc3\xa9 \xf0\x9f\x98\x80.whl"},
            {"archive_info", {{"hashes", {{"sha256", "ab"}}}, {"hash", "sha256=ab"}}},
            {"list", {1, true, nullptr, "\t\"\x7f"}}};
  EXPECT_EQ(python_json_dumps(j),
            "{\"archive_info\": {\"hash\": \"sha256=ab\", \"hashes\": {\"sha256\": \"ab\"}}, "
            "\"list\": [1, true, null, \"\\t\\\"\\u007f\"], "
            "\"url\": \"file:///usr/app/caf\\u00e9 \\ud83d\\ude00.whl\"}");
  EXPECT_EQ(python_json_dumps(json{{"dir_info", json::object()}, {"url", "file:///usr/app"}}),
            "{\"dir_info\": {}, \"url\": \"file:///usr/app\"}");
}

TEST_F(WheelInstallerTest, RejectsUnsafeNames) {
  for (std::string bad : {"../evil.py", "/abs.py", "pkg\\win.py", "pkg/../../x.py", "C:/x.py", "pkg/./x.py",
                          "pkg-1.0.data/data/../../../etc/passwd"}) {
    SCOPED_TRACE(bad);
    fs::path whl = make_wheel({{bad, "x"}});
    EXPECT_THROW(install_wheel(request(whl)), trainpack::Error);
  }
  EXPECT_THROW(install_wheel(request(kWheels + "bad/dup-1.0-py3-none-any.whl", "dup")), trainpack::Error);
}

TEST_F(WheelInstallerTest, RejectsBadWheelFiles) {
  for (std::string text : {"Wheel-Version: 2.0\nRoot-Is-Purelib: true\n", "Wheel-Version: one\n",
                           "Root-Is-Purelib: true\n", "Wheel-Version: 1.x\n"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW(install_wheel(request(make_wheel({}, text))), trainpack::Error);
  }
  // A newer 1.x is accepted (pip warns), and Root-Is-Purelib false picks platlib.
  WheelInstallRequest r = request(make_wheel({}, "Wheel-Version: 1.9\nRoot-Is-Purelib: false\n"));
  r.scheme.platlib = "/usr/local/lib64/python3.11/site-packages";
  InstalledWheel w = install_wheel(r);
  EXPECT_EQ(w.lib_dir, "/usr/local/lib64/python3.11/site-packages");
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_NE(w.warnings[0].find("newer Wheel-Version (1.9)"), std::string::npos);
  EXPECT_NE(find(w, "usr/local/lib64/python3.11/site-packages/pkg/__init__.py"), nullptr);

  EXPECT_THROW(install_wheel(request(make_wheel({}), "other")), trainpack::Error);  // dist-info name mismatch
  EXPECT_THROW(install_wheel(request(make_wheel({{"pkg-2.0.dist-info/WHEEL", kGoodWheel}}))), trainpack::Error);
  EXPECT_THROW(install_wheel(request(make_wheel({{"pkg-1.0.data/unknown/x", "x"}}))), trainpack::Error);
  EXPECT_THROW(install_wheel(request(make_wheel({{"pkg-1.0.data/scripts", "x"}}))), trainpack::Error);
  EXPECT_THROW(install_wheel(request(make_wheel({{"pkg-1.0.dist-info/entry_points.txt",
                                                  "[console_scripts]\nx = pkg\n"}}))),
               trainpack::Error);  // no callable suffix
  EXPECT_THROW(install_wheel(request(make_wheel({{"pkg-1.0.dist-info/entry_points.txt",
                                                  "[console_scripts]\n.. = pkg:main\n"}}))),
               trainpack::Error);
}

TEST_F(WheelInstallerTest, SkipsSignaturesAndDirectoriesAndMapsSymlinks) {
  fs::path whl = make_wheel({{"pkg/", "", 040755},
                             {"pkg-1.0.dist-info/RECORD.jws", "sig"},
                             {"pkg-1.0.dist-info/RECORD.p7s", "sig"},
                             {"pkg/link", "target", 0120777},
                             {"pkg/tool", "#!/bin/sh\n", 0100750}});
  WheelInstallRequest r = request(whl);
  r.uid = 1000;
  r.gid = 1001;
  InstalledWheel w = install_wheel(r);
  EXPECT_TRUE(w.warnings.empty());
  EXPECT_EQ(find(w, kLib + "pkg-1.0.dist-info/RECORD.jws"), nullptr);
  EXPECT_EQ(find(w, kLib + "pkg-1.0.dist-info/RECORD.p7s"), nullptr);
  EXPECT_EQ(find(w, kLib + "pkg"), nullptr);
  const FileEntry* link = find(w, kLib + "pkg/link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->type, FileEntry::Type::kRegular);
  EXPECT_EQ(link->mode, 0644u);
  EXPECT_EQ(bytes_of(*link), "target");
  EXPECT_EQ(find(w, kLib + "pkg/tool")->mode, 0755u);
  for (const FileEntry& e : w.files) {
    EXPECT_EQ(e.uid, 1000u);
    EXPECT_EQ(e.gid, 1001u);
  }
  // Files the wheel's RECORD does not list get empty hash rows, RECORD included.
  const FileEntry* record = find(w, kLib + "pkg-1.0.dist-info/RECORD");
  EXPECT_NE(record->data.find("pkg/link,,\r\n"), std::string::npos);
  EXPECT_NE(record->data.find("pkg-1.0.dist-info/RECORD,,\r\n"), std::string::npos);
  EXPECT_TRUE(w.directories.count("usr/local/lib/python3.11/dist-packages/pkg"));
}

TEST_F(WheelInstallerTest, RejectsZipBombRatio) {
  if (!zip_compression_method_supported(ZIP_CM_BZIP2, 1)) GTEST_SKIP() << "libzip without bzip2";
  fs::path whl = make_wheel({{"pkg/zeros.bin", std::string(16u << 20, '\0'), 0100644, ZIP_CM_BZIP2}});
  EXPECT_THROW(install_wheel(request(whl)), trainpack::Error);
}

TEST_F(WheelInstallerTest, LayerChecksZipMemberSizeAndName) {
  fs::path whl = make_wheel({});
  trainpack::store::BlobStore store(dir_ / "store");
  FileEntry good = FileEntry::zip_file("x.py", whl, "pkg/__init__.py", 0, 6);
  auto blob = trainpack::layers::write_layer(store, {good}, {});
  auto tar = read_tar(gunzip(trainpack::read_file(store.path_of(blob.digest))));
  EXPECT_EQ(tar["x.py"].data, "X = 1\n");

  FileEntry shorter = good;
  shorter.size = 5;  // the member has more bytes than declared
  EXPECT_THROW(trainpack::layers::write_layer(store, {shorter}, {}), trainpack::Error);
  FileEntry longer = good;
  longer.size = 7;
  EXPECT_THROW(trainpack::layers::write_layer(store, {longer}, {}), trainpack::Error);
  FileEntry renamed = good;
  renamed.zip_member = "pkg/other.py";  // index 0 is not that member: the archive changed
  EXPECT_THROW(trainpack::layers::write_layer(store, {renamed}, {}), trainpack::Error);

  // The cache fingerprint tells members apart and follows the archive's stamp.
  FileEntry meta = FileEntry::zip_file("x.py", whl, "pkg-1.0.dist-info/METADATA", 1, 6);
  auto fp = [](const FileEntry& e) { return trainpack::layers::LayerCache::fingerprint({e}, {}); };
  EXPECT_NE(fp(good), fp(meta));
  EXPECT_EQ(fp(good), fp(good));
  FileEntry stamped = good;
  stamped.source_stamp = "1:2:3";
  FileEntry restamped = good;
  restamped.source_stamp = "1:2:4";
  EXPECT_NE(fp(stamped), fp(restamped));
}
