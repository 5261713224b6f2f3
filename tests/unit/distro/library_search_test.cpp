// layers/library_search: ld.so.conf as glibc's ldconfig reads it, and where the image's loader would find each
// DT_NEEDED (ld.so(8) order for glibc, musl's own), over in-memory roots.
#include "distro/library_search.h"

#include <gtest/gtest.h>

#include <map>

#include "layers/memory_filesystem.h"
#include "tests/unit/elf_test_support.h"

using namespace trainpack::image;
using namespace trainpack::layers;
using namespace trainpack::distro;
using trainpack::test_support::make_elf64;

TEST(LdSoConf, LinesAsLdconfigReadsThem) {
  auto lines = parse_ld_so_conf(
      "# comment\n"
      "  /usr/local/lib   # trailing comment\n"
      "include /etc/ld.so.conf.d/*.conf\tmore/*.conf\n"
      "hwcap 1 nosegneg\n"
      "/opt/lib//\n"
      "includes/are/directories\n"
      "\n");
  EXPECT_EQ(lines, (std::vector<LdSoConfLine>{{false, "/usr/local/lib"},
                                              {true, "/etc/ld.so.conf.d/*.conf"},
                                              {true, "more/*.conf"},
                                              {false, "/opt/lib"},
                                              {false, "includes/are/directories"}}));
}

TEST(LdSoConf, IncludesAreExpandedInTheImageSortedOnceEach) {
  MemoryFilesystem fs;
  fs.add_file("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/usr/lib/extra\n");
  fs.add_file("etc/ld.so.conf.d/b.conf", "/opt/b\ninclude nested/*.conf\n");
  fs.add_file("etc/ld.so.conf.d/a.conf", "/opt/a\n/usr/lib/extra\ninclude /etc/ld.so.conf\n");  // a loop, and a repeat
  fs.add_file("etc/ld.so.conf.d/.hidden.conf", "/opt/hidden\n");  // glob(3) leaves dot files out
  fs.add_file("etc/ld.so.conf.d/nested/c.conf", "/opt/c\n");       // relative to the including file's directory
  fs.add_file("etc/ld.so.conf.d/readme.txt", "/opt/not-conf\n");
  EXPECT_EQ(ld_so_conf_directories(fs),
            (std::vector<std::string>{"/opt/a", "/usr/lib/extra", "/opt/b", "/opt/c"}));
  MemoryFilesystem none;
  EXPECT_TRUE(ld_so_conf_directories(none).empty());
}

namespace {

// A merged-/usr Debian layout: /lib -> usr/lib, libc in the multiarch directory, ld.so.conf listing /usr/local/lib.
MemoryFilesystem debian_root() {
  MemoryFilesystem fs;
  trainpack::test_support::add_debian11_loader(fs);
  fs.add_file("usr/lib/x86_64-linux-gnu/libc-2.31.so", make_elf64({"", {"ld-linux-x86-64.so.2"}, "", "", "libc.so.6"}));
  fs.add_symlink("usr/lib/x86_64-linux-gnu/libc.so.6", "libc-2.31.so");
  fs.add_file("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  fs.add_file("etc/ld.so.conf.d/libc.conf", "/usr/local/lib\n");
  return fs;
}

LibrarySearch search_for(const MemoryFilesystem& fs) {
  return image_library_search(fs, "/lib64/ld-linux-x86-64.so.2", "x86_64-linux-gnu", "");
}

LoadedObject object(const std::string& path, const trainpack::test_support::DynamicSpec& spec) {
  return {path, *trainpack::parse_elf(make_elf64(spec))};
}

}  // namespace

TEST(LibrarySearch, GlibcOrderRpathLibraryPathRunpathCacheDefaults) {
  MemoryFilesystem fs = debian_root();
  for (const char* dir : {"opt/rpath", "opt/env", "opt/runpath", "usr/local/lib", "usr/lib/x86_64-linux-gnu"})
    fs.add_file(std::string(dir) + "/libx.so.1", "x");
  LibrarySearch search = image_library_search(fs, "/lib64/ld-linux-x86-64.so.2", "x86_64-linux-gnu", "/opt/env:");
  EXPECT_FALSE(search.musl);
  EXPECT_EQ(search.loader_name, "ld-linux-x86-64.so.2");
  EXPECT_EQ(search.library_path, (std::vector<std::string>{"/opt/env"}));
  EXPECT_EQ(search.configured, (std::vector<std::string>{"/usr/local/lib"}));
  EXPECT_EQ(search.system.front(), "/lib/x86_64-linux-gnu");

  LoadedObject exe = object("/usr/bin/python3.9", {"", {"libx.so.1"}, "", "", ""});
  // DT_RPATH (without DT_RUNPATH) comes before LD_LIBRARY_PATH...
  LoadedObject with_rpath = object("/usr/lib/a.so", {"", {}, "", "/opt/rpath", ""});
  EXPECT_EQ(find_library(fs, search, "libx.so.1", with_rpath, exe)->path, "/opt/rpath/libx.so.1");
  // ...DT_RUNPATH after it, and a DT_RUNPATH makes the DT_RPATH ignored.
  LoadedObject with_both = object("/usr/lib/b.so", {"", {}, "/opt/runpath", "/opt/rpath", ""});
  auto found = find_library(fs, search, "libx.so.1", with_both, exe);
  EXPECT_EQ(found->path, "/opt/env/libx.so.1");
  EXPECT_FALSE(found->from_rpath);
  LibrarySearch no_env = search;
  no_env.library_path.clear();
  found = find_library(fs, no_env, "libx.so.1", with_both, exe);
  EXPECT_EQ(found->path, "/opt/runpath/libx.so.1");
  EXPECT_TRUE(found->from_rpath);
  EXPECT_FALSE(found->origin_relative);
  // Then the configured directories (ldconfig's cache), then the built-in ones.
  EXPECT_EQ(find_library(fs, no_env, "libx.so.1", exe, exe)->path, "/usr/local/lib/libx.so.1");
  found = find_library(fs, no_env, "libc.so.6", exe, exe);
  EXPECT_EQ(found->path, "/lib/x86_64-linux-gnu/libc.so.6") << "the name as the loader opens it, through /lib";
  EXPECT_EQ(found->directory, "/lib/x86_64-linux-gnu");
  EXPECT_FALSE(find_library(fs, no_env, "libnope.so.1", exe, exe));
}

TEST(LibrarySearch, OriginIsTheRequestingObjectsDirectoryAndTheExecutablesRpathIsInherited) {
  MemoryFilesystem fs = debian_root();
  fs.add_file("opt/conda/lib/libpython3.9.so.1.0", "py");
  fs.add_file("opt/conda/lib/python3.9/lib-dynload/_ssl.so", "ssl");
  fs.add_file("opt/conda/lib/libssl.so.3", "ssl");
  LibrarySearch search = image_library_search(fs, "/lib64/ld-linux-x86-64.so.2", "x86_64-linux-gnu", "");
  LoadedObject exe = object("/opt/conda/bin/python3.9", {"", {}, "", "${ORIGIN}/../lib", ""});
  auto found = find_library(fs, search, "libpython3.9.so.1.0", exe, exe);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, "/opt/conda/lib/libpython3.9.so.1.0");
  EXPECT_TRUE(found->origin_relative);
  // A module without run paths of its own: the executable's DT_RPATH still applies (glibc and musl alike).
  LoadedObject module = object("/opt/conda/lib/python3.9/lib-dynload/_ssl.so", {"", {}, "", "", ""});
  EXPECT_EQ(find_library(fs, search, "libssl.so.3", module, exe)->path, "/opt/conda/lib/libssl.so.3");
  // $LIB and relative entries are not modelled: skipped, not guessed.
  LoadedObject odd = object("/opt/x/bin/p", {"", {}, "", "$LIB/x:lib", ""});
  EXPECT_FALSE(find_library(fs, search, "libssl.so.3", odd, odd));
}

TEST(LibrarySearch, MuslReadsItsPathFileAfterLibraryPathAndRpath) {
  MemoryFilesystem fs;
  fs.add_file("lib/ld-musl-x86_64.so.1", "musl", 0755);
  fs.add_file("etc/ld-musl-x86_64.path", "/usr/local/lib\n/usr/lib:/lib\n");
  fs.add_file("usr/local/lib/liby.so.1", "y");
  fs.add_file("usr/lib/liby.so.1", "y");
  fs.add_file("opt/env/liby.so.1", "y");
  LibrarySearch search = image_library_search(fs, "/lib/ld-musl-x86_64.so.1", "", "/opt/env");
  EXPECT_TRUE(search.musl);
  EXPECT_EQ(search.configured, (std::vector<std::string>{"/usr/local/lib", "/usr/lib", "/lib"}));
  LoadedObject exe = object("/usr/bin/python3.11", {"", {"liby.so.1"}, "", "/usr/lib", ""});
  EXPECT_EQ(find_library(fs, search, "liby.so.1", exe, exe)->path, "/opt/env/liby.so.1") << "LD_LIBRARY_PATH first";
  search.library_path.clear();
  EXPECT_EQ(find_library(fs, search, "liby.so.1", exe, exe)->path, "/usr/lib/liby.so.1") << "then the rpath";
  LoadedObject plain = object("/usr/bin/python3.11", {"", {"liby.so.1"}, "", "", ""});
  EXPECT_EQ(find_library(fs, search, "liby.so.1", plain, plain)->path, "/usr/local/lib/liby.so.1");
}

TEST(LibrarySearch, ClosureFollowsDependenciesAndReportsWhatIsMissingOrUnread) {
  MemoryFilesystem fs = debian_root();
  std::map<std::string, std::string> bytes;  // what the caller has read so far (resolved paths)
  auto put = [&](const std::string& path, const trainpack::test_support::DynamicSpec& spec) {
    std::string elf = make_elf64(spec);
    fs.add_file(path.substr(1), elf, 0755);
    bytes[path] = elf;
  };
  put("/usr/bin/python3.9", {"/lib64/ld-linux-x86-64.so.2", {"libz.so.1", "libc.so.6"}, "", "", ""});
  put("/usr/lib/x86_64-linux-gnu/libz.so.1.2.11", {"", {"libc.so.6"}, "", "", "libz.so.1"});
  fs.add_symlink("usr/lib/x86_64-linux-gnu/libz.so.1", "libz.so.1.2.11");
  put("/usr/lib/python3.9/lib-dynload/_ssl.so", {"", {"libssl.so.1.1", "libc.so.6"}, "", "", ""});
  put("/usr/lib/python3.9/lib-dynload/_tkinter.so", {"", {"libtk8.6.so"}, "", "", ""});
  fs.add_file("usr/lib/x86_64-linux-gnu/libssl.so.1.1", make_elf64({"", {"libcrypto.so.1.1"}, "", "", ""}));
  auto read = [&](const std::string& path) -> std::optional<std::string> {
    auto it = bytes.find(path);
    return it == bytes.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  std::vector<std::string> roots{"/usr/bin/python3.9", "/usr/lib/python3.9/lib-dynload/_ssl.so",
                                 "/usr/lib/python3.9/lib-dynload/_tkinter.so"};
  LibraryClosure first = library_closure(fs, search_for(fs), "/usr/bin/python3.9", roots, read);
  std::vector<std::string> found;
  for (const auto& lib : first.libraries) found.push_back(lib.path);
  EXPECT_EQ(found, (std::vector<std::string>{"/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libc.so.6",
                                             "/lib/x86_64-linux-gnu/libssl.so.1.1"}));
  // libc and libssl were found but not read yet; the loader's own name is never looked up.
  EXPECT_EQ(first.unread, (std::vector<std::string>{"/lib/x86_64-linux-gnu/libc.so.6",
                                                    "/lib/x86_64-linux-gnu/libssl.so.1.1"}));
  ASSERT_EQ(first.missing.size(), 1u);
  EXPECT_EQ(first.missing[0].name, "libtk8.6.so");
  EXPECT_EQ(first.missing[0].root, "/usr/lib/python3.9/lib-dynload/_tkinter.so");

  bytes["/usr/lib/x86_64-linux-gnu/libc-2.31.so"] = *fs.read("usr/lib/x86_64-linux-gnu/libc-2.31.so", 1 << 20);
  bytes["/usr/lib/x86_64-linux-gnu/libssl.so.1.1"] = *fs.read("usr/lib/x86_64-linux-gnu/libssl.so.1.1", 1 << 20);
  LibraryClosure second = library_closure(fs, search_for(fs), "/usr/bin/python3.9", roots, read);
  EXPECT_TRUE(second.unread.empty());
  ASSERT_EQ(second.missing.size(), 2u);
  EXPECT_EQ(second.missing[0].name, "libcrypto.so.1.1");
  EXPECT_EQ(second.missing[0].needer, "/lib/x86_64-linux-gnu/libssl.so.1.1");
  EXPECT_EQ(second.missing[0].root, "/usr/lib/python3.9/lib-dynload/_ssl.so");
  EXPECT_EQ(second.missing[1].name, "libtk8.6.so");
}
