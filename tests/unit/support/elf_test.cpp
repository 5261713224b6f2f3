// support/elf: the header, PT_INTERP and the dynamic section's strings, from synthetic files laid out as the gABI
// describes and from the host's own binaries.
#include "support/elf.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "support/fs.h"
#include "tests/unit/elf_test_support.h"

using trainpack::ElfFile;
using trainpack::parse_elf;
using trainpack::test_support::make_elf64;


TEST(Elf, DynamicSectionStringsOfAProgram) {
  std::string bytes = make_elf64({"/lib64/ld-linux-x86-64.so.2", {"libpython3.9.so.1.0", "libc.so.6"},
                                  "$ORIGIN/../lib:/opt/lib", "", ""});
  std::optional<ElfFile> elf = parse_elf(bytes);
  ASSERT_TRUE(elf);
  EXPECT_TRUE(elf->is64);
  EXPECT_FALSE(elf->big_endian);
  EXPECT_EQ(elf->machine, "x86_64");
  EXPECT_EQ(elf->interpreter, "/lib64/ld-linux-x86-64.so.2");
  EXPECT_TRUE(elf->has_dynamic);
  EXPECT_EQ(elf->needed, (std::vector<std::string>{"libpython3.9.so.1.0", "libc.so.6"}));
  EXPECT_EQ(elf->runpath, (std::vector<std::string>{"$ORIGIN/../lib", "/opt/lib"}));
  EXPECT_TRUE(elf->rpath.empty());
}

TEST(Elf, ALibraryWithSonameAndRpathInBigEndian) {
  std::string bytes = make_elf64({"", {"libc.so.6"}, "", "/usr/lib/s390x-linux-gnu", "libz.so.1"}, true, 22);
  std::optional<ElfFile> elf = parse_elf(bytes);
  ASSERT_TRUE(elf);
  EXPECT_TRUE(elf->big_endian);
  EXPECT_EQ(elf->machine, "s390x");
  EXPECT_EQ(elf->interpreter, "");
  EXPECT_EQ(elf->soname, "libz.so.1");
  EXPECT_EQ(elf->rpath, (std::vector<std::string>{"/usr/lib/s390x-linux-gnu"}));
  EXPECT_EQ(elf->needed, (std::vector<std::string>{"libc.so.6"}));
}

TEST(Elf, TruncatedFilesAndNonElfAreHandled) {
  std::string bytes = make_elf64({"/lib/ld-musl-x86_64.so.1", {"libc.musl-x86_64.so.1"}, "", "", ""});
  // The first bytes hold the header and PT_INTERP; the dynamic section lies past them.
  std::optional<ElfFile> head = parse_elf(bytes.substr(0, 300));
  ASSERT_TRUE(head);
  EXPECT_EQ(head->interpreter, "/lib/ld-musl-x86_64.so.1");
  EXPECT_FALSE(head->has_dynamic);
  EXPECT_TRUE(head->needed.empty());
  EXPECT_FALSE(parse_elf("#!/bin/sh\necho not elf\n" + std::string(64, ' ')));
  EXPECT_FALSE(parse_elf(std::string("\x7f" "ELF", 4)));
  // A string offset past the string table: the dynamic section is not trusted.
  std::string corrupt = bytes;
  corrupt[corrupt.size() - 16 * 4 + 8] = '\x7f';  // DT_NEEDED's value
  std::optional<ElfFile> bad = parse_elf(corrupt);
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->has_dynamic);
}

TEST(Elf, TheHostsOwnPythonNeedsLibc) {
  if (::access("/usr/bin/python3.11", R_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3.11";
  std::optional<ElfFile> elf = parse_elf(trainpack::read_file("/usr/bin/python3.11", 64u << 20));
  ASSERT_TRUE(elf);
  EXPECT_FALSE(elf->interpreter.empty());
  EXPECT_TRUE(elf->has_dynamic);
  EXPECT_NE(std::find(elf->needed.begin(), elf->needed.end(), "libc.so.6"), elf->needed.end());
}
