#include "python/version.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "python/names.h"
#include "support/error.h"
#include "tests/unit/python_vectors.h"

using trainpack::python::Version;
using trainpack::test_support::python_vectors;

namespace {

std::string local_json(const Version& v) {
  return v.has_local() ? v.local_str() : std::string();
}

}  // namespace

TEST(PythonVersion, PackagingVectors) {
  auto data = python_vectors("versions.json");
  ASSERT_GT(data["cases"].size(), 300u);
  for (const auto& c : data["cases"]) {
    const std::string input = c["input"];
    SCOPED_TRACE("input: '" + input + "'");
    auto v = Version::try_parse(input);
    ASSERT_EQ(v.has_value(), c["valid"].get<bool>());
    if (!v) {
      EXPECT_THROW(Version::parse(input), trainpack::Error);
      continue;
    }
    EXPECT_EQ(v->str(), c["str"].get<std::string>());
    EXPECT_EQ(v->public_version(), c["public"].get<std::string>());
    EXPECT_EQ(v->base_version(), c["base_version"].get<std::string>());
    EXPECT_EQ(v->epoch(), c["epoch"].get<std::uint64_t>());
    std::vector<std::string> rel;
    for (auto n : v->release()) rel.push_back(std::to_string(n));
    EXPECT_EQ(rel, c["release"].get<std::vector<std::string>>());
    if (c["pre"].is_null()) {
      EXPECT_FALSE(v->pre());
    } else {
      ASSERT_TRUE(v->pre());
      EXPECT_EQ(v->pre()->letter, c["pre"][0].get<std::string>());
      EXPECT_EQ(std::to_string(v->pre()->number), c["pre"][1].get<std::string>());
    }
    if (c["post"].is_null()) EXPECT_FALSE(v->post());
    else EXPECT_EQ(std::to_string(v->post().value_or(99999)), c["post"].get<std::string>());
    if (c["dev"].is_null()) EXPECT_FALSE(v->dev());
    else EXPECT_EQ(std::to_string(v->dev().value_or(99999)), c["dev"].get<std::string>());
    EXPECT_EQ(local_json(*v), c["local"].is_null() ? std::string() : c["local"].get<std::string>());
    EXPECT_EQ(v->is_prerelease(), c["is_prerelease"].get<bool>());
    EXPECT_EQ(v->is_postrelease(), c["is_postrelease"].get<bool>());
    EXPECT_EQ(v->is_devrelease(), c["is_devrelease"].get<bool>());
    // Normalised form is a fixed point and compares equal.
    auto again = Version::try_parse(v->str());
    ASSERT_TRUE(again);
    EXPECT_EQ(again->str(), v->str());
    EXPECT_EQ(*again, *v);
  }
}

TEST(PythonVersion, OrderingMatchesPackaging) {
  auto data = python_vectors("versions_order.json");
  std::vector<std::vector<Version>> groups;
  std::vector<Version> flat;
  for (const auto& g : data["groups"]) {
    groups.emplace_back();
    for (const auto& s : g) {
      groups.back().push_back(Version::parse(s.get<std::string>()));
      flat.push_back(groups.back().back());
    }
  }
  ASSERT_GT(groups.size(), 60u);
  for (size_t i = 0; i < groups.size(); ++i)
    for (size_t j = 0; j < groups.size(); ++j)
      for (const auto& a : groups[i])
        for (const auto& b : groups[j]) {
          SCOPED_TRACE(a.str() + " vs " + b.str());
          if (i < j) EXPECT_TRUE(a < b);
          else if (i > j) EXPECT_TRUE(a > b);
          else EXPECT_TRUE(a == b);
        }
  std::vector<Version> shuffled = flat;
  std::mt19937 rng(440);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::stable_sort(shuffled.begin(), shuffled.end());
    for (size_t i = 0; i < flat.size(); ++i) EXPECT_EQ(shuffled[i], flat[i]);
  }
}

TEST(PythonVersion, HandWrittenEdgeCases) {
  EXPECT_EQ(Version::parse("1.0-1").str(), "1.0.post1");
  EXPECT_EQ(Version::parse("1.1-a-1").str(), "1.1a1");
  EXPECT_EQ(Version::parse(" v1.2.POST ").str(), "1.2.post0");
  EXPECT_EQ(Version::parse("1.0+Ubuntu-1_2.03").str(), "1.0+ubuntu.1.2.3");
  EXPECT_EQ(Version::parse("1.0"), Version::parse("1.0.0.0"));
  EXPECT_NE(Version::parse("1.0"), Version::parse("1.0+0"));
  EXPECT_LT(Version::parse("1.0+abc"), Version::parse("1.0+1"));
  EXPECT_LT(Version::parse("1.0+1"), Version::parse("1.0+1.a"));
  EXPECT_LT(Version::parse("1.0.dev456"), Version::parse("1.0a1.dev1"));
  EXPECT_LT(Version::parse("1.0+local"), Version::parse("1.0.post0.dev0"));
  EXPECT_LT(Version::parse("9999"), Version::parse("1!0"));
  auto v = Version::parse("1!2.3.4rc5.post6.dev7+x.8");
  EXPECT_EQ(v.major(), 2u);
  EXPECT_EQ(v.minor(), 3u);
  EXPECT_EQ(v.micro(), 4u);
  EXPECT_EQ(v.base().str(), "1!2.3.4");
  EXPECT_EQ(v.without_local().str(), "1!2.3.4rc5.post6.dev7");
  EXPECT_EQ(Version::parse("7").minor(), 0u);
  // Outside packaging's range for us: bigger than 64 bits (documented deviation).
  EXPECT_FALSE(Version::try_parse("18446744073709551616"));
  EXPECT_FALSE(Version::try_parse("1.0\xC5\xBF"));
  EXPECT_FALSE(Version::try_parse(std::string(5000, '1')));
  try {
    Version::parse("french toast");
    FAIL();
  } catch (const trainpack::Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_FALSE(e.hint().empty());
  }
}

TEST(PythonNames, CanonicalizeAndValidate) {
  using trainpack::python::canonicalize_name;
  using trainpack::python::is_valid_name;
  EXPECT_EQ(canonicalize_name("Foo.Bar__baz--QUX"), "foo-bar-baz-qux");
  EXPECT_EQ(canonicalize_name("zope.interface"), "zope-interface");
  EXPECT_EQ(canonicalize_name("A"), "a");
  EXPECT_EQ(canonicalize_name("a-_.-b"), "a-b");
  EXPECT_EQ(canonicalize_name("-a-"), "-a-");
  EXPECT_TRUE(is_valid_name("a"));
  EXPECT_TRUE(is_valid_name("Foo.Bar_baz-9"));
  EXPECT_FALSE(is_valid_name(""));
  EXPECT_FALSE(is_valid_name("-a"));
  EXPECT_FALSE(is_valid_name("a."));
  EXPECT_FALSE(is_valid_name("a b"));
  EXPECT_FALSE(is_valid_name("caf\xC3\xA9"));
}
