#include "python/specifier.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "tests/unit/python_vectors.h"

using trainpack::python::Specifier;
using trainpack::python::SpecifierSet;
using trainpack::python::Version;
using trainpack::test_support::python_vectors;

namespace {

std::vector<Version> vs(std::initializer_list<const char*> list) {
  std::vector<Version> out;
  for (const char* s : list) out.push_back(Version::parse(s));
  return out;
}

std::vector<std::string> strs(const std::vector<Version>& list) {
  std::vector<std::string> out;
  for (const auto& v : list) out.push_back(v.str());
  return out;
}

}  // namespace

TEST(PythonSpecifier, ParseVectors) {
  auto data = python_vectors("specifiers.json");
  for (const auto& c : data["specifiers"]) {
    const std::string input = c["input"];
    SCOPED_TRACE("spec: '" + input + "'");
    if (!c["valid"].get<bool>()) {
      EXPECT_THROW(Specifier{input}, trainpack::Error);
      continue;
    }
    Specifier s(input);
    EXPECT_EQ(s.op(), c["operator"].get<std::string>());
    EXPECT_EQ(s.version(), c["version"].get<std::string>());
    EXPECT_EQ(s.str(), c["str"].get<std::string>());
  }
}

TEST(PythonSpecifier, ContainsVectorsWithExplicitPrereleases) {
  auto data = python_vectors("specifiers.json");
  ASSERT_GT(data["contains"].size(), 1000u);
  for (const auto& c : data["contains"]) {
    SpecifierSet set(c[0].get<std::string>());
    Version v = Version::parse(c[1].get<std::string>());
    const bool pre = c[2];
    EXPECT_EQ(set.contains(v, pre), c[3].get<bool>())
        << "'" << c[0].get<std::string>() << "' contains " << c[1].get<std::string>() << " prereleases=" << pre;
  }
}

TEST(PythonSpecifier, FilterVectorsWithExplicitPrereleases) {
  auto data = python_vectors("specifiers.json");
  for (const auto& c : data["filter"]) {
    SpecifierSet set(c["set"].get<std::string>());
    std::vector<Version> input;
    std::vector<std::string> raw = c["input"];
    for (const auto& s : raw) input.push_back(Version::parse(s));
    std::vector<std::string> want;
    for (const auto& s : c["output"]) want.push_back(Version::parse(s.get<std::string>()).str());
    EXPECT_EQ(strs(set.filter(input, c["prereleases"].get<bool>())), want)
        << "'" << c["set"].get<std::string>() << "' prereleases=" << c["prereleases"].get<bool>();
  }
}

// prereleases=None: packaging >= 25 semantics (the doctests of SpecifierSet.filter/contains).
TEST(PythonSpecifier, DefaultPrereleasePolicy) {
  EXPECT_EQ(strs(SpecifierSet(">=1.2.3").filter(vs({"1.2", "1.3", "1.5a1"}))), (std::vector<std::string>{"1.3"}));
  EXPECT_EQ(strs(SpecifierSet(">=1.2.3").filter(vs({"1.2", "1.5a1"}))), (std::vector<std::string>{"1.5a1"}));
  EXPECT_EQ(strs(SpecifierSet(">=1.2.3").filter(vs({"1.3", "1.5a1"}), true)),
            (std::vector<std::string>{"1.3", "1.5a1"}));
  EXPECT_EQ(strs(SpecifierSet(">=1.2.3", true).filter(vs({"1.3", "1.5a1"}))),
            (std::vector<std::string>{"1.3", "1.5a1"}));
  EXPECT_EQ(strs(SpecifierSet("").filter(vs({"1.3", "1.5a1"}))), (std::vector<std::string>{"1.3"}));
  EXPECT_EQ(strs(SpecifierSet("").filter(vs({"1.5a1"}))), (std::vector<std::string>{"1.5a1"}));
  EXPECT_EQ(strs(SpecifierSet("", true).filter(vs({"1.3", "1.5a1"}))), (std::vector<std::string>{"1.3", "1.5a1"}));
  EXPECT_EQ(strs(SpecifierSet("").filter(vs({"1.3", "1.5a1"}), true)), (std::vector<std::string>{"1.3", "1.5a1"}));
  // A set naming a pre-release admits pre-releases next to finals.
  EXPECT_EQ(strs(SpecifierSet(">=1.0a1").filter(vs({"0.9", "1.0a2", "1.0", "1.1b1"}))),
            (std::vector<std::string>{"1.0a2", "1.0", "1.1b1"}));
  EXPECT_EQ(strs(SpecifierSet(">=1.0a1", false).filter(vs({"1.0a2", "1.0"}))), (std::vector<std::string>{"1.0"}));
  // != with a pre-release does not opt in; ==X.* never does.
  EXPECT_EQ(strs(SpecifierSet("!=1.0a1").filter(vs({"1.0a2", "1.0"}))), (std::vector<std::string>{"1.0"}));
  EXPECT_EQ(strs(SpecifierSet("==2.*").filter(vs({"2rc1", "2.0"}))), (std::vector<std::string>{"2.0"}));
  EXPECT_EQ(strs(SpecifierSet("==2.*").filter(vs({"2rc1", "1.0"}))), (std::vector<std::string>{"2rc1"}));
  EXPECT_TRUE(SpecifierSet(">=1.0.0,!=1.0.1").contains(Version::parse("1.3.0a1")));
  EXPECT_FALSE(SpecifierSet(">=1.0.0,!=1.0.1", false).contains(Version::parse("1.3.0a1")));
  EXPECT_FALSE(SpecifierSet(">=1.0.0").contains(Version::parse("1.3.0a1"), false));
  EXPECT_TRUE(SpecifierSet(">=1.0.0").contains(Version::parse("1.3.0a1"), false, /*installed=*/true));
  EXPECT_FALSE(SpecifierSet(">=1.0.0").contains(Version::parse("0.3.0a1"), false, true));
  EXPECT_TRUE(Specifier(">=1.2.3").contains(Version::parse("1.3.0a1")));
  EXPECT_FALSE(Specifier(">=1.2.3", false).contains(Version::parse("1.3.0a1")));
  EXPECT_EQ(strs(Specifier(">=1.2.3").filter(vs({"1.2", "1.5a1"}))), (std::vector<std::string>{"1.5a1"}));
  EXPECT_EQ(strs(Specifier(">=1.2.3").filter(vs({"1.3", "1.5a1"}))), (std::vector<std::string>{"1.3"}));

  EXPECT_EQ(SpecifierSet("").prereleases(), std::nullopt);
  EXPECT_EQ(SpecifierSet(">=1.0").prereleases(), std::nullopt);
  EXPECT_EQ(SpecifierSet(">=1.0,<2.0rc1").prereleases(), true);
  EXPECT_EQ(Specifier("<2.0rc1").prereleases(), true);
  EXPECT_EQ(Specifier("!=2.0rc1").prereleases(), false);
  EXPECT_EQ(Specifier("===foo").prereleases(), std::nullopt);
  EXPECT_EQ(Specifier("===1.0a1").prereleases(), true);
}

TEST(PythonSpecifier, OperatorEdgeCases) {
  auto in = [](const char* spec, const char* v) { return SpecifierSet(spec).contains(Version::parse(v), true); };
  EXPECT_TRUE(in("==1.0", "1.0+anything"));
  EXPECT_FALSE(in("==1.0+a", "1.0+b"));
  EXPECT_TRUE(in("==1.0+A", "1.0+a"));
  EXPECT_TRUE(in("==1.0.*", "1.0.dev1"));
  EXPECT_TRUE(in("==1.0.*", "1"));
  EXPECT_FALSE(in("==1.0.*", "1.1"));
  EXPECT_TRUE(in("==2.*", "2rc1"));
  EXPECT_FALSE(in("==1.*", "1!1.0"));
  EXPECT_TRUE(in("~=2.2", "2.9"));
  EXPECT_FALSE(in("~=2.2", "3.0"));
  EXPECT_TRUE(in("~=1.4.5a4", "1.4.5"));
  EXPECT_FALSE(in("~=1.4.5a4", "1.5"));
  EXPECT_FALSE(in("<2.0", "2.0a1"));
  EXPECT_TRUE(in("<2.0rc1", "2.0a1"));
  EXPECT_FALSE(in(">1.0", "1.0.post1"));
  EXPECT_TRUE(in(">1.0.post0", "1.0.post1"));
  EXPECT_FALSE(in(">1.0", "1.0+local"));
  EXPECT_TRUE(in(">=1.0", "1.0+local"));
  EXPECT_TRUE(in("<=1.0", "1.0+local"));
  EXPECT_TRUE(in("===1.0", "1.0"));
  EXPECT_FALSE(in("===1.0", "1.0.0"));
  EXPECT_TRUE(Specifier("===Foo").matches(std::string_view("fOO")));
  EXPECT_FALSE(Specifier("==1.0").matches(std::string_view("not a version")));
  EXPECT_EQ(SpecifierSet(" <2 , >=1.0,, ").str(), "<2,>=1.0");
  EXPECT_EQ(SpecifierSet("").specifiers().size(), 0u);
  try {
    SpecifierSet(">=1.0, =>2");
    FAIL();
  } catch (const trainpack::Error& e) {
    EXPECT_EQ(std::string(e.what()), "invalid version specifier '=>2'");
    EXPECT_FALSE(e.hint().empty());
  }
  EXPECT_THROW(SpecifierSet("~=1"), trainpack::Error);
  EXPECT_THROW(SpecifierSet("==" + std::string(5000, '1')), trainpack::Error);
  // Pinned packaging <= 25 operator behaviour (packaging 26's range rewrite differs here).
  EXPECT_FALSE(in("<1.0.post1", "1.0rc1"));
  EXPECT_FALSE(in(">1.0a1", "1.0.post1"));
  EXPECT_FALSE(in(">1.0.dev1", "1.0+local"));
  EXPECT_THROW(SpecifierSet(">=1.0.*"), trainpack::Error);
  EXPECT_THROW(SpecifierSet("<=1.0+local"), trainpack::Error);
}
