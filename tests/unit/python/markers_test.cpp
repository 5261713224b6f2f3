#include "python/markers.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "support/error.h"
#include "tests/unit/python_vectors.h"

using nlohmann::json;
using trainpack::Error;
using trainpack::python::Marker;
using trainpack::python::MarkerEnvironment;
using trainpack::python::VersionCompare;
using trainpack::test_support::python_vectors;

namespace {

MarkerEnvironment env_from(const json& j) {
  MarkerEnvironment e;
  e.python_version = j.at("python_version");
  e.python_full_version = j.at("python_full_version");
  e.implementation_name = j.at("implementation_name");
  e.implementation_version = j.at("implementation_version");
  e.os_name = j.at("os_name");
  e.sys_platform = j.at("sys_platform");
  e.platform_system = j.at("platform_system");
  e.platform_release = j.at("platform_release");
  e.platform_version = j.at("platform_version");
  e.platform_machine = j.at("platform_machine");
  e.platform_python_implementation = j.at("platform_python_implementation");
  e.extra = j.at("extra");
  return e;
}

// The PEP 440 answers packaging gave for every comparison the vectors make (recorded by the generator), so these
// tests exercise the marker logic without the PEP 440 code.
VersionCompare recorded_compare(const json& table) {
  auto map = std::make_shared<std::map<std::tuple<std::string, std::string, std::string>, std::optional<bool>>>();
  for (const auto& row : table) {
    std::optional<bool> v;
    if (!row[3].is_null()) v = row[3].get<bool>();
    (*map)[{row[0], row[1], row[2]}] = v;
  }
  return [map](std::string_view op, std::string_view lhs, std::string_view rhs) -> std::optional<bool> {
    auto it = map->find({std::string(op), std::string(lhs), std::string(rhs)});
    if (it == map->end()) {
      ADD_FAILURE() << "comparison not recorded: " << op << " '" << lhs << "' '" << rhs << "'";
      return std::nullopt;
    }
    return it->second;
  };
}

TEST(PythonMarkers, VectorsFromPackaging) {
  json data = python_vectors("markers.json");
  std::map<std::string, MarkerEnvironment> envs;
  for (auto& [name, e] : data.at("environments").items()) envs[name] = env_from(e);
  VersionCompare compare = recorded_compare(data.at("version_compare"));
  size_t n = 0;
  for (const auto& c : data.at("cases")) {
    std::string text = c.at("marker");
    SCOPED_TRACE(text);
    Marker m(text);
    EXPECT_EQ(m.str(), c.at("str").get<std::string>());
    EXPECT_EQ(Marker(m.str()).str(), m.str());
    for (auto& [name, expected] : c.at("results").items()) {
      SCOPED_TRACE(name);
      if (expected.is_string()) {
        EXPECT_THROW(m.evaluate(envs.at(name), compare), Error);
      } else {
        EXPECT_EQ(m.evaluate(envs.at(name), compare), expected.get<bool>());
      }
      ++n;
    }
  }
  EXPECT_GT(n, 1000u);
}

TEST(PythonMarkers, InvalidVectorsFromPackaging) {
  json data = python_vectors("markers.json");
  for (const auto& c : data.at("invalid")) {
    std::string text = c.at("marker");
    SCOPED_TRACE(text);
    try {
      Marker m(text);
      ADD_FAILURE() << "parsed as " << m.str();
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
    }
  }
}

TEST(PythonMarkers, EnvironmentForCPython) {
  auto e = MarkerEnvironment::cpython_linux("3.10.12", "x86_64");
  EXPECT_EQ(e.python_version, "3.10");
  EXPECT_EQ(e.python_full_version, "3.10.12");
  EXPECT_EQ(e.implementation_version, "3.10.12");
  EXPECT_EQ(e.implementation_name, "cpython");
  EXPECT_EQ(e.platform_python_implementation, "CPython");
  EXPECT_EQ(e.os_name, "posix");
  EXPECT_EQ(e.sys_platform, "linux");
  EXPECT_EQ(e.platform_system, "Linux");
  EXPECT_EQ(e.platform_machine, "x86_64");
  EXPECT_EQ(e.platform_release, "");
  EXPECT_EQ(e.extra, "");
  auto rc = MarkerEnvironment::cpython_linux("3.13.0rc1", "arm64");
  EXPECT_EQ(rc.python_version, "3.13");
  EXPECT_EQ(rc.python_full_version, "3.13.0rc1");
  EXPECT_EQ(rc.implementation_version, "3.13.0c1");
  EXPECT_EQ(rc.platform_machine, "aarch64");
  EXPECT_THROW(MarkerEnvironment::cpython_linux("3", "x86_64"), Error);
}

TEST(PythonMarkers, StringOnlyDefaultComparator) {
  auto e = MarkerEnvironment::cpython_linux("3.10.12", "x86_64");
  // Without the PEP 440 comparator versions fall to the string rules: < is always false, >= means ==.
  EXPECT_FALSE(Marker("python_version < \"3.11\"").evaluate(e));
  EXPECT_TRUE(Marker("python_version >= \"3.10\"").evaluate(e));
  EXPECT_FALSE(Marker("python_version >= \"3.9\"").evaluate(e));
  EXPECT_TRUE(Marker("python_version == \"3.10\"").evaluate(e));
  EXPECT_TRUE(Marker("python_full_version === \"3.10.12\"").evaluate(e));
  EXPECT_THROW(Marker("python_version ~= \"3.10\"").evaluate(e), Error);
  // An injected comparator wins over strings.
  VersionCompare always = [](std::string_view, std::string_view, std::string_view) { return std::optional<bool>(true); };
  EXPECT_TRUE(Marker("python_version ~= \"9.0\"").evaluate(e, always));
  // ... but only for the version variables.
  EXPECT_FALSE(Marker("os_name == \"9.0\"").evaluate(e, always));
  EXPECT_THROW(Marker("os_name === \"posix\"").evaluate(e, always), Error);
  // An untagged build's python_full_version "3.12.1+" is compared as "3.12.1+local".
  e.python_full_version = "3.12.1+";
  VersionCompare seen = [](std::string_view, std::string_view lhs, std::string_view) {
    return std::optional<bool>(lhs == "3.12.1+local");
  };
  EXPECT_TRUE(Marker("python_full_version >= \"3.12\"").evaluate(e, seen));
}

TEST(PythonMarkers, HandWrittenEdgeCases) {
  auto e = MarkerEnvironment::cpython_linux("3.11.4", "x86_64");
  // Redundant parentheses go, needed ones stay; single quotes become double.
  EXPECT_EQ(Marker("((os_name=='posix'))").str(), "os_name == \"posix\"");
  EXPECT_EQ(Marker("(os_name=='a' or os_name=='b') and extra=='X'").str(),
            "(os_name == \"a\" or os_name == \"b\") and extra == \"x\"");
  // Every extra literal is normalised in str() (packaging >= 26; 23.0 only did the first comparison).
  EXPECT_EQ(Marker("extra == 'Foo_Bar' or (os_name == 'a' and 'X.Y' == extra)").str(),
            "extra == \"foo-bar\" or (os_name == \"a\" and \"x-y\" == extra)");
  // Escapes in literals are Python's.
  EXPECT_EQ(Marker(R"(os_name == "p\x6fsix")").str(), "os_name == \"posix\"");
  EXPECT_TRUE(Marker(R"(os_name == "p\x6fsix")").evaluate(e));
  // 'and' binds tighter than 'or'.
  EXPECT_TRUE(Marker("os_name == 'x' and os_name == 'y' or os_name == 'posix'").evaluate(e));
  EXPECT_FALSE(Marker("os_name == 'x' and (os_name == 'y' or os_name == 'posix')").evaluate(e));
  // extra: both sides normalised; no extra requested means extra == "".
  EXPECT_TRUE(Marker("extra == ''").evaluate(e));
  e.extra = "Security.Tests";
  EXPECT_TRUE(Marker("extra == 'security_tests'").evaluate(e));
  EXPECT_TRUE(Marker("'SECURITY--tests' == extra").evaluate(e));
  // Trailing text is refused (packaging >= 23.1).
  EXPECT_THROW(Marker("os_name == 'posix' garbage"), Error);
  EXPECT_THROW(Marker("os_name == 'posix'\n\n"), Error);
  EXPECT_NO_THROW(Marker("os_name == 'posix'\n"));  // Python's `$` also matches before a final newline
  // Lock-file variables parse (packaging >= 26) but have no value in a requirement's environment.
  EXPECT_EQ(Marker("'a' in extras").str(), "\"a\" in extras");
  EXPECT_THROW(Marker("'a' in extras").evaluate(e), Error);
  EXPECT_THROW(Marker("'a' in dependency_groups").evaluate(e), Error);
  // A literal Python cannot evaluate is refused at parse time.
  try {
    Marker bad(R"(os_name == "\x4")");
    ADD_FAILURE() << bad.str();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("Invalid quoted string"), std::string::npos) << err.what();
  }
  // Words glued to operators need boundaries.
  EXPECT_THROW(Marker("os_name == 'a' andos_name == 'b'"), Error);
  EXPECT_TRUE(Marker("extra == 'security..-tests'").evaluate(e));
  EXPECT_THROW(Marker("sys_platform == 'it''s'"), Error);  // adjacent literals are not concatenated
}

}  // namespace
