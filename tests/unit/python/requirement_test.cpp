#include "python/requirement.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "tests/unit/python_vectors.h"

using nlohmann::json;
using trainpack::Error;
using trainpack::python::MarkerEnvironment;
using trainpack::python::Requirement;
using trainpack::test_support::python_vectors;

namespace {

TEST(PythonRequirement, VectorsFromPackaging) {
  json data = python_vectors("requirements.json");
  ASSERT_GT(data.at("cases").size(), 40u);
  for (const auto& c : data.at("cases")) {
    std::string text = c.at("requirement");
    SCOPED_TRACE(text);
    Requirement r = Requirement::parse(text);
    EXPECT_EQ(r.name, c.at("name").get<std::string>());
    std::set<std::string> extras;
    for (const auto& e : c.at("extras")) extras.insert(e.get<std::string>());
    EXPECT_EQ(r.extras, extras);
    EXPECT_EQ(r.specifier, c.at("specifier").get<std::string>());
    std::vector<std::pair<std::string, std::string>> items;
    for (const auto& p : c.at("specifier_items")) items.emplace_back(p[0], p[1]);
    EXPECT_EQ(r.specifier_items, items);
    EXPECT_EQ(r.url, c.at("url").get<std::string>());
    if (c.at("marker").is_null()) {
      EXPECT_FALSE(r.marker.has_value());
    } else {
      ASSERT_TRUE(r.marker.has_value());
      EXPECT_EQ(r.marker->str(), c.at("marker").get<std::string>());
    }
    EXPECT_EQ(r.str(), c.at("str").get<std::string>());
    EXPECT_EQ(Requirement::parse(r.str()).str(), r.str());
  }
}

TEST(PythonRequirement, InvalidVectorsFromPackaging) {
  json data = python_vectors("requirements.json");
  for (const auto& c : data.at("invalid")) {
    std::string text = c.at("requirement");
    SCOPED_TRACE(text);
    try {
      Requirement r = Requirement::parse(text);
      ADD_FAILURE() << "parsed as " << r.str();
    } catch (const Error& e) {
      std::string cause = e.what();
      EXPECT_NE(cause.find(c.at("message").get<std::string>()), std::string::npos) << cause;
      if (c.contains("column")) {
        std::string col = std::to_string(c.at("column").get<int>());
        EXPECT_TRUE(cause.find("position " + col) != std::string::npos ||
                    cause.find("-" + col + ")") != std::string::npos)
            << cause;
      }
      EXPECT_EQ(cause.find('\n'), std::string::npos);
      EXPECT_FALSE(e.hint().empty());
    }
  }
}

TEST(PythonRequirement, HandWrittenEdgeCases) {
  // Name, extras and specifier keep their spelling; specifiers are stripped, de-duplicated and sorted.
  Requirement r = Requirement::parse("  Foo_Bar [ B , a ] ( <2 , >= 1.0 , <2 ) ; extra == 'X_Y'  ");
  EXPECT_EQ(r.name, "Foo_Bar");
  EXPECT_EQ(r.extras, (std::set<std::string>{"B", "a"}));
  EXPECT_EQ(r.specifier, "<2,>=1.0");
  EXPECT_EQ(r.specifier_items,
            (std::vector<std::pair<std::string, std::string>>{{"<", "2"}, {">=", "1.0"}}));
  EXPECT_EQ(r.str(), "Foo_Bar[B,a]<2,>=1.0; extra == \"x-y\"");
  ASSERT_TRUE(r.marker.has_value());
  auto env = MarkerEnvironment::cpython_linux("3.11.4", "x86_64");
  EXPECT_FALSE(r.marker->evaluate(env));
  env.extra = "x.y";
  EXPECT_TRUE(r.marker->evaluate(env));

  // '===' takes anything up to whitespace, ';' or ')'.
  EXPECT_EQ(Requirement::parse("name===1.0-weird+thing").specifier_items.at(0),
            (std::pair<std::string, std::string>{"===", "1.0-weird+thing"}));
  // URL forms: a space is needed before ';', the marker follows.
  Requirement u = Requirement::parse("pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; os_name=='posix'");
  EXPECT_EQ(u.url, "https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee");
  EXPECT_EQ(u.str(), "pip@ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; os_name == \"posix\"");
  EXPECT_EQ(Requirement::parse("x @ file:///tmp/x.whl").url, "file:///tmp/x.whl");
  EXPECT_THROW(Requirement::parse("x @ file:///tmp/x.whl?"), Error);  // urlunparse drops the empty query
  EXPECT_THROW(Requirement::parse("x @ FILE:///tmp/x.whl"), Error);   // ... and lower-cases the scheme
  // A trailing newline is allowed (Python's `$`), other trailing text is not.
  EXPECT_EQ(Requirement::parse("name==1\n").str(), "name==1");
  EXPECT_THROW(Requirement::parse("name==1\n\n"), Error);
  EXPECT_THROW(Requirement::parse("name ; os_name == 'a' and"), Error);
}

}  // namespace

// "===" takes any text up to whitespace, ';' or ')', commas included; packaging then splits the specifier on commas
// into a SpecifierSet, which refuses a part that is not a specifier (InvalidSpecifier). Found by the requirement
// fuzz target: "na===a,b" was accepted with an operator-less item "b", and printed as text that did not parse.
TEST(PythonRequirement, ArbitraryEqualityTextIsSplitIntoSpecifiersThatMustBeValid) {
  // Python's \s, which ends the "===" text, includes \x1c-\x1f: "==," is the version, and "\x1d====" is left over.
  for (const char* text : {"na===a,b", "x===1.0,(2", "x===a,==1.0,b", "n=====,\x1d====\x1d"}) {
    try {
      Requirement::parse(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("invalid requirement '" + std::string(text) + "'"), std::string::npos)
          << e.what();
    }
  }
  Requirement r = Requirement::parse("x===a,==1.0");
  EXPECT_EQ(r.specifier, "==1.0,===a");  // str(SpecifierSet): sorted
  EXPECT_EQ(Requirement::parse(r.str()).str(), "x==1.0,===a");
}

// packaging's SpecifierSet strips each comma-separated item with str.strip(), whose whitespace includes \x1c-\x1f:
// the "===" text "   \x1c  " is an empty version, the same item as the next "===" (packaging 21.3 and 24.1 both
// print "n==="). Found by the requirement fuzz target: the item kept "\x1c" and printed as text that did not parse.
TEST(PythonRequirement, SpecifierItemsAreStrippedOfPythonsWhitespace) {
  Requirement r = Requirement::parse("n===             \x1c  ,===,");
  EXPECT_EQ(r.specifier_items, (std::vector<std::pair<std::string, std::string>>{{"===", ""}}));
  EXPECT_EQ(r.str(), "n===");
  EXPECT_EQ(Requirement::parse(r.str()).str(), "n===");
  EXPECT_EQ(Requirement::parse("n===\x1c").str(), "n===");
}
