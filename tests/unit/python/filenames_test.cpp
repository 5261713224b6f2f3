#include "python/filenames.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "support/error.h"
#include "tests/unit/python_vectors.h"

using nlohmann::json;
using trainpack::Error;
using trainpack::python::BuildTag;
using trainpack::python::is_pure_wheel_filename;
using trainpack::python::SdistFilename;
using trainpack::python::Tag;
using trainpack::python::WheelFilename;
using trainpack::test_support::python_vectors;

namespace {

TEST(PythonFilenames, WheelVectorsFromPackaging) {
  json data = python_vectors("filenames/filenames.json");
  ASSERT_GE(data.at("wheels").size(), 40u);
  for (const auto& c : data.at("wheels")) {
    std::string filename = c.at("filename");
    SCOPED_TRACE(filename);
    auto w = WheelFilename::try_parse(filename);
    if (c.contains("error")) {
      EXPECT_FALSE(w.has_value());
      try {
        WheelFilename::parse(filename);
        ADD_FAILURE() << "parsed";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(filename), std::string::npos) << e.what();
        EXPECT_FALSE(e.hint().empty());
      }
      continue;
    }
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->name, c.at("name").get<std::string>());
    EXPECT_EQ(w->version.str(), c.at("version").get<std::string>());
    if (c.at("build").is_null()) {
      EXPECT_FALSE(w->build.has_value());
    } else {
      ASSERT_TRUE(w->build.has_value());
      EXPECT_EQ(w->build->number, c.at("build")[0].get<std::string>());  // decimal text: Python ints are unbounded
      EXPECT_EQ(w->build->rest, c.at("build")[1].get<std::string>());
    }
    std::vector<std::string> tags;
    for (const auto& t : w->tags) tags.push_back(t.str());
    std::sort(tags.begin(), tags.end());
    EXPECT_EQ(tags, c.at("tags").get<std::vector<std::string>>());
    EXPECT_EQ(WheelFilename::parse(filename).name, w->name);
  }
}

TEST(PythonFilenames, SdistVectorsFromPackaging) {
  json data = python_vectors("filenames/filenames.json");
  ASSERT_GE(data.at("sdists").size(), 15u);
  for (const auto& c : data.at("sdists")) {
    std::string filename = c.at("filename");
    SCOPED_TRACE(filename);
    auto s = SdistFilename::try_parse(filename);
    if (c.contains("error")) {
      EXPECT_FALSE(s.has_value());
      EXPECT_THROW(SdistFilename::parse(filename), Error);
      continue;
    }
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->name, c.at("name").get<std::string>());
    EXPECT_EQ(s->version.str(), c.at("version").get<std::string>());
  }
}

TEST(PythonFilenames, TagsKeepCrossProductOrderAndAreUnique) {
  auto w = WheelFilename::parse("x-1-py2.py3.PY3-none.abi3-any.whl");
  std::vector<std::string> tags;
  for (const auto& t : w.tags) tags.push_back(t.str());
  EXPECT_EQ(tags, (std::vector<std::string>{"py2-none-any", "py2-abi3-any", "py3-none-any", "py3-abi3-any"}));
  EXPECT_FALSE(trainpack::python::parse_compressed_tag("py3-none"));
  EXPECT_FALSE(trainpack::python::parse_compressed_tag("py3-none-any-x"));
}

TEST(PythonFilenames, CompressedTagSetIsBounded) {
  std::string many;
  for (int i = 0; i < 20; ++i) many += (i ? "." : "") + std::string("p") + std::to_string(i);
  // 20 x 20 x 20 = 8000 tags: more than we expand.
  std::string name = "x-1-" + many + "-" + many + "-" + many + ".whl";
  EXPECT_FALSE(WheelFilename::try_parse(name));
  EXPECT_THROW(WheelFilename::parse(name), Error);
  name = "x-1-" + many + "-" + many + "-any.whl";
  ASSERT_TRUE(WheelFilename::try_parse(name));
  EXPECT_EQ(WheelFilename::parse(name).tags.size(), 400u);
}

TEST(PythonFilenames, BuildTagOrdersLikePythonTuples) {
  auto build = [](const char* f) { return *WheelFilename::parse(f).build; };
  BuildTag b1 = build("x-1-1-py3-none-any.whl");
  BuildTag b2 = build("x-1-2-py3-none-any.whl");
  BuildTag b10 = build("x-1-10-py3-none-any.whl");
  BuildTag b007 = build("x-1-007-py3-none-any.whl");
  BuildTag b1a = build("x-1-1a-py3-none-any.whl");
  BuildTag b1b = build("x-1-1b-py3-none-any.whl");
  BuildTag big = build("x-1-99999999999999999999-py3-none-any.whl");
  EXPECT_LT(b1, b2);
  EXPECT_LT(b2, b10);  // numeric, not lexicographic
  EXPECT_EQ(b007, (BuildTag{"7", ""}));
  EXPECT_LT(b2, b007);
  EXPECT_LT(b1, b1a);  // (1, "") < (1, "a")
  EXPECT_LT(b1a, b1b);
  EXPECT_LT(b1b, b2);
  EXPECT_LT(b10, big);
  EXPECT_EQ(build("x-1-0-py3-none-any.whl"), (BuildTag{"0", ""}));
  EXPECT_EQ(build("x-1-000-py3-none-any.whl"), (BuildTag{"0", ""}));
}

}  // namespace

TEST(PythonFilenames, PureWheelNamesAreNoneAny) {
  EXPECT_TRUE(is_pure_wheel_filename("a-1.0-py3-none-any.whl"));
  EXPECT_TRUE(is_pure_wheel_filename("a-1.0-py2.py3-none-any.whl"));
  EXPECT_FALSE(is_pure_wheel_filename("a-1.0-cp311-cp311-linux_x86_64.whl"));
  EXPECT_FALSE(is_pure_wheel_filename("a-1.0-cp311-abi3-any.whl"));
  EXPECT_FALSE(is_pure_wheel_filename("not-a-wheel.tar.gz"));
}
