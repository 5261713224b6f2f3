#include "python/tags.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/python_vectors.h"

using nlohmann::json;
using trainpack::python::CPythonTarget;
using trainpack::python::Libc;
using trainpack::python::Tag;
using trainpack::python::TagBehaviour;
using trainpack::python::TagPriority;
using trainpack::test_support::python_vectors;

namespace {

json tag_vectors(const char* name) { return python_vectors(std::string("tags/") + name); }

std::vector<std::string> strs(const std::vector<Tag>& tags) {
  std::vector<std::string> out;
  for (const auto& t : tags) out.push_back(t.str());
  return out;
}

CPythonTarget glibc_target(int minor, std::string arch, int glibc_minor) {
  CPythonTarget t;
  t.major = 3;
  t.minor = minor;
  t.libc = Libc::glibc;
  t.libc_major = 2;
  t.libc_minor = glibc_minor;
  t.arch = std::move(arch);
  return t;
}

TEST(PythonTags, VectorsFromPackaging) {
  json data = tag_vectors("tags.json");
  ASSERT_GE(data.at("cases").size(), 30u);
  for (const auto& c : data.at("cases")) {
    CPythonTarget t;
    t.major = c.at("python")[0];
    t.minor = c.at("python")[1];
    t.debug = c.at("debug");
    t.pymalloc = c.at("pymalloc");
    std::string libc = c.at("libc");
    t.libc = libc == "glibc" ? Libc::glibc : libc == "musl" ? Libc::musl : Libc::none;
    if (!c.at("libc_version").is_null()) {
      t.libc_major = c.at("libc_version")[0];
      t.libc_minor = c.at("libc_version")[1];
    }
    t.arch = c.at("arch");
    t.is_32bit = c.at("is_32bit");
    t.elf_abi_compatible = c.at("elf_abi_ok");
    SCOPED_TRACE(c.at("python").dump() + " " + libc + " " + c.at("libc_version").dump() + " " + t.arch +
                 (t.is_32bit ? " 32-bit" : "") + (t.elf_abi_compatible ? "" : " no-elf-abi"));

    // packaging 23.0 = linux_<arch> last, the default.
    EXPECT_EQ(trainpack::python::cpython_abis(t), c.at("abis").get<std::vector<std::string>>());
    EXPECT_EQ(trainpack::python::linux_platforms(t), c.at("platforms").get<std::vector<std::string>>());
    EXPECT_EQ(strs(trainpack::python::sys_tags(t)), c.at("tags").get<std::vector<std::string>>());
  }
}

TEST(PythonTags, DocumentedExampleCPython310Glibc231X8664) {
  CPythonTarget t = glibc_target(10, "x86_64", 31);
  TagBehaviour first;
  first.linux_platform_first = true;
  std::vector<std::string> p = trainpack::python::linux_platforms(t, first);
  ASSERT_EQ(p.size(), 31u);
  EXPECT_EQ(p[0], "linux_x86_64");
  EXPECT_EQ(p[1], "manylinux_2_31_x86_64");
  EXPECT_EQ(p[15], "manylinux_2_17_x86_64");
  EXPECT_EQ(p[16], "manylinux2014_x86_64");
  EXPECT_EQ(p[17], "manylinux_2_16_x86_64");
  EXPECT_EQ(p[21], "manylinux_2_12_x86_64");
  EXPECT_EQ(p[22], "manylinux2010_x86_64");
  EXPECT_EQ(p[23], "manylinux_2_11_x86_64");
  EXPECT_EQ(p[29], "manylinux_2_5_x86_64");
  EXPECT_EQ(p[30], "manylinux1_x86_64");

  std::vector<Tag> tags = trainpack::python::sys_tags(t, first);
  ASSERT_EQ(tags.size(), 726u);
  for (int i = 0; i < 31; ++i) {
    EXPECT_EQ(tags[i], (Tag{"cp310", "cp310", p[i]}));
    EXPECT_EQ(tags[31 + i], (Tag{"cp310", "abi3", p[i]}));
    EXPECT_EQ(tags[62 + i], (Tag{"cp310", "none", p[i]}));
  }
  for (int v = 9, k = 0; v >= 2; --v, ++k)
    for (int i = 0; i < 31; ++i) EXPECT_EQ(tags[93 + 31 * k + i], (Tag{"cp3" + std::to_string(v), "abi3", p[i]}));
  EXPECT_EQ(tags[340], (Tag{"cp32", "abi3", "manylinux1_x86_64"}));
  std::vector<std::string> py{"py310", "py3", "py39", "py38", "py37", "py36", "py35",
                              "py34",  "py33", "py32", "py31", "py30"};
  for (std::size_t k = 0; k < py.size(); ++k)
    for (int i = 0; i < 31; ++i) EXPECT_EQ(tags[341 + 31 * k + i], (Tag{py[k], "none", p[i]}));
  EXPECT_EQ(tags[713], (Tag{"cp310", "none", "any"}));
  for (std::size_t k = 0; k < py.size(); ++k) EXPECT_EQ(tags[714 + k], (Tag{py[k], "none", "any"}));

  // packaging <= 26.2: the same with linux_x86_64 at the end of P.
  std::vector<Tag> last = trainpack::python::sys_tags(t);
  ASSERT_EQ(last.size(), 726u);
  EXPECT_EQ(last[0].str(), "cp310-cp310-manylinux_2_31_x86_64");
  EXPECT_EQ(last[30].str(), "cp310-cp310-linux_x86_64");
  EXPECT_EQ(last[29].str(), "cp310-cp310-manylinux1_x86_64");
  EXPECT_EQ(last[725].str(), "py30-none-any");
}

TEST(PythonTags, Aarch64AndMusl) {
  std::vector<std::string> p = trainpack::python::linux_platforms(glibc_target(11, "aarch64", 31));
  ASSERT_EQ(p.size(), 17u);
  EXPECT_EQ(p[0], "manylinux_2_31_aarch64");
  EXPECT_EQ(p[14], "manylinux_2_17_aarch64");
  EXPECT_EQ(p[15], "manylinux2014_aarch64");
  EXPECT_EQ(p[16], "linux_aarch64");

  CPythonTarget alpine;
  alpine.major = 3;
  alpine.minor = 12;
  alpine.libc = Libc::musl;
  alpine.libc_major = 1;
  alpine.libc_minor = 2;
  alpine.arch = "x86_64";
  TagBehaviour first;
  first.linux_platform_first = true;
  EXPECT_EQ(trainpack::python::linux_platforms(alpine, first),
            (std::vector<std::string>{"linux_x86_64", "musllinux_1_2_x86_64", "musllinux_1_1_x86_64",
                                      "musllinux_1_0_x86_64"}));

  // Newer arches packaging 23.0 did not know yet.
  for (const char* arch : {"riscv64", "loongarch64", "ppc64"}) {
    p = trainpack::python::linux_platforms(glibc_target(12, arch, 39));
    ASSERT_EQ(p.size(), 25u) << arch;
    EXPECT_EQ(p.front(), std::string("manylinux_2_39_") + arch);
    EXPECT_EQ(p.back(), std::string("linux_") + arch);
  }
  // Unknown arch: no manylinux.
  EXPECT_EQ(trainpack::python::linux_platforms(glibc_target(12, "mips", 31)),
            (std::vector<std::string>{"linux_mips"}));
}

TEST(PythonTags, Arm32OnAarch64) {
  // packaging >= 24: armv8l first, armv7l as a second arch; the armhf ELF check decides manylinux.
  CPythonTarget t = glibc_target(11, "aarch64", 31);
  t.is_32bit = true;
  std::vector<std::string> p = trainpack::python::linux_platforms(t);
  ASSERT_EQ(p.size(), 2u * 16 + 2);
  EXPECT_EQ(p[0], "manylinux_2_31_armv8l");
  EXPECT_EQ(p[15], "manylinux2014_armv8l");
  EXPECT_EQ(p[16], "manylinux_2_31_armv7l");
  EXPECT_EQ(p[32], "linux_armv8l");
  EXPECT_EQ(p[33], "linux_armv7l");
  t.elf_abi_compatible = false;
  EXPECT_EQ(trainpack::python::linux_platforms(t), (std::vector<std::string>{"linux_armv8l", "linux_armv7l"}));
}

TEST(PythonTags, FreeThreadedAndDebug) {
  CPythonTarget t = glibc_target(13, "x86_64", 36);
  t.free_threaded = true;
  EXPECT_EQ(trainpack::python::cpython_abis(t), (std::vector<std::string>{"cp313t"}));
  t.debug = true;
  EXPECT_EQ(trainpack::python::cpython_abis(t), (std::vector<std::string>{"cp313td", "cp313t"}));
  t.debug = false;

  std::vector<std::string> p{"manylinux_2_17_x86_64", "linux_x86_64"};
  // packaging >= 26.1: abi3t where GIL builds get abi3, also for older minors.
  std::vector<Tag> tags = trainpack::python::cpython_tags(3, 13, {"cp313t"}, p);
  ASSERT_EQ(tags.size(), 2u + 2 + 2 + 11 * 2);
  EXPECT_EQ(tags[0].str(), "cp313-cp313t-manylinux_2_17_x86_64");
  EXPECT_EQ(tags[2].str(), "cp313-abi3t-manylinux_2_17_x86_64");
  EXPECT_EQ(tags[4].str(), "cp313-none-manylinux_2_17_x86_64");
  EXPECT_EQ(tags[6].str(), "cp312-abi3t-manylinux_2_17_x86_64");
  EXPECT_EQ(tags.back().str(), "cp32-abi3t-linux_x86_64");
  for (const auto& tag : tags) EXPECT_NE(tag.abi, "abi3");
  // Before 26.1: no stable ABI at all.
  TagBehaviour old;
  old.free_threaded_abi3t = false;
  EXPECT_EQ(strs(trainpack::python::cpython_tags(3, 13, {"cp313t"}, p, old)),
            (std::vector<std::string>{"cp313-cp313t-manylinux_2_17_x86_64", "cp313-cp313t-linux_x86_64",
                                      "cp313-none-manylinux_2_17_x86_64", "cp313-none-linux_x86_64"}));
  // Explicit "abi3"/"none" in the abi list are moved to their normal place.
  EXPECT_EQ(strs(trainpack::python::cpython_tags(3, 3, {"none", "abi3", "cp33m"}, {"any"})),
            (std::vector<std::string>{"cp33-cp33m-any", "cp33-abi3-any", "cp33-none-any", "cp32-abi3-any"}));
}

TEST(PythonTags, PriorityLookup) {
  TagPriority prio(trainpack::python::sys_tags(glibc_target(10, "x86_64", 31)));
  ASSERT_EQ(prio.tags().size(), 726u);
  for (std::size_t i = 0; i < prio.tags().size(); ++i) EXPECT_EQ(prio.index(prio.tags()[i]), i);
  EXPECT_EQ(prio.index(Tag{"cp310", "cp310", "manylinux_2_31_x86_64"}), 0u);
  EXPECT_EQ(prio.index(Tag{"py3", "none", "any"}), 715u);
  EXPECT_FALSE(prio.index(Tag{"cp311", "cp311", "manylinux_2_17_x86_64"}));
  EXPECT_FALSE(prio.index(Tag{"cp310", "cp310", "manylinux_2_32_x86_64"}));
  EXPECT_FALSE(prio.index(Tag{"cp310", "cp310", "musllinux_1_1_x86_64"}));

  // numpy-style wheel with two platform tags: the better one counts.
  std::vector<Tag> numpy{{"cp310", "cp310", "manylinux2014_x86_64"}, {"cp310", "cp310", "manylinux_2_17_x86_64"}};
  EXPECT_EQ(prio.wheel_priority(numpy), 14u);
  std::vector<Tag> universal{{"py2", "none", "any"}, {"py3", "none", "any"}};
  EXPECT_EQ(prio.wheel_priority(universal), 715u);
  std::vector<Tag> incompatible{{"cp39", "cp39", "manylinux2014_x86_64"}, {"py2", "none", "any"}};
  EXPECT_FALSE(prio.wheel_priority(incompatible));
  EXPECT_FALSE(prio.wheel_priority({}));

  // Duplicated tags keep their first position.
  TagPriority dup({Tag{"a", "b", "c"}, Tag{"x", "y", "z"}, Tag{"a", "b", "c"}});
  EXPECT_EQ(dup.index(Tag{"a", "b", "c"}), 0u);
}

}  // namespace
