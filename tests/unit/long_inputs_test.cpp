// Inputs from outside (requirement lines, Requires-Dist, versions, wheel file names, image references) of any
// length: they parse as packaging and pip parse them, or fail with an error, never by overflowing the stack.
#include <gtest/gtest.h>

#include <string>

#include "python/markers.h"
#include "python/requirement.h"
#include "python/requirements_file.h"
#include "python/specifier.h"
#include "python/version.h"
#include "support/error.h"
#include "transports/docker_archive.h"
#include "tests/unit/error_of.h"

using trainpack::Error;
using namespace trainpack::python;

using trainpack::test_support::error_of;

namespace {

// "1.0.0...." of about `size` bytes: a valid PEP 440 version equal to 1.
std::string long_version(size_t size) {
  std::string v = "1";
  while (v.size() < size) v += ".0";
  return v;
}

// `os_name == "posix" and ...` of about `size` bytes.
std::string long_marker(size_t size) {
  std::string m = "os_name == \"posix\"";
  while (m.size() < size) m += " and os_name == \"posix\"";
  return m;
}

RequirementsEnv no_files() {
  RequirementsEnv env;
  env.read_file = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  env.path_exists = [](const std::string&) { return false; };
  return env;
}

TEST(LongInputs, TwentyKilobyteRequirementLinesParse) {
  const auto env = MarkerEnvironment::cpython_linux("3.11.4", "x86_64");
  std::string version = long_version(20000);
  Requirement r = Requirement::parse("pkg==" + version + "; " + long_marker(20000));
  EXPECT_EQ(r.specifier_items, (std::vector<std::pair<std::string, std::string>>{{"==", version}}));
  ASSERT_TRUE(r.marker.has_value());
  EXPECT_TRUE(r.marker->evaluate(env));

  std::string arbitrary(20000, 'a');
  EXPECT_EQ(Requirement::parse("pkg===" + arbitrary).specifier, "===" + arbitrary);

  RequirementsFile file = parse_requirements_text("pkg>=" + version + ",<2\n", "requirements.txt", no_files());
  ASSERT_EQ(file.lines.size(), 1u);
  ASSERT_TRUE(file.lines[0].requirement.has_value());
  EXPECT_EQ(file.lines[0].requirement->specifier, "<2,>=" + version);
}

TEST(LongInputs, SixtyKilobyteRequirementLinesParse) {
  std::string arbitrary(60000, 'a');
  EXPECT_EQ(Requirement::parse("pkg===" + arbitrary + " ; os_name == 'posix'").specifier, "===" + arbitrary);
  std::string version = long_version(60000);
  EXPECT_EQ(Requirement::parse("pkg~=" + version).specifier, "~=" + version);
  EXPECT_EQ(Requirement::parse("pkg!=" + version + "+local").specifier, "!=" + version + "+local");
  // A specifier the marker tokenizer takes apart at its end: 60 KB of text, then a local label '<' cannot have.
  EXPECT_NE(error_of([&] { Requirement::parse("pkg<" + version + "+local"); }).find("Local version label"),
            std::string::npos);
}

TEST(LongInputs, LongVersionsAndSpecifiers) {
  std::string version = long_version(60000);
  std::optional<Version> v = Version::try_parse(version + ".post1");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->release().size(), 30001u);
  EXPECT_EQ(v->base(), Version::parse("1"));
  EXPECT_TRUE(Specifier(">=" + version).contains(Version::parse("1.0")));
  EXPECT_TRUE(Specifier("==" + version + ".*").contains(Version::parse("1")));
  EXPECT_FALSE(Specifier("==" + version + ".*").contains(Version::parse("1.0.1")));
  EXPECT_FALSE(Version::try_parse(version + "x"));
}

TEST(LongInputs, DeeplyNestedMarkersAreRefused) {
  std::string nested = std::string(100, '(') + "os_name == 'posix'" + std::string(100, ')');
  EXPECT_EQ(Marker(nested).str(), "os_name == \"posix\"");
  std::string deeper = "(" + nested + ")";
  EXPECT_NE(error_of([&] { Marker{deeper}; }).find("nested more than 100 parentheses deep"), std::string::npos);
  std::string mebibyte(1 << 20, '(');
  EXPECT_NE(error_of([&] { Marker{mebibyte}; }).find("nested more than 100 parentheses deep"), std::string::npos);
  EXPECT_NE(error_of([&] { Requirement::parse("pkg; " + mebibyte); }).find("nested more than 100"),
            std::string::npos);
}

TEST(LongInputs, LongWheelFileNames) {
  std::string name(2000, 'n');
  RequirementsFile file = parse_requirements_text("https://files.example/" + name + "-1.0-py3-none-any.whl\n",
                                                  "requirements.txt", no_files());
  ASSERT_EQ(file.lines.size(), 1u);
  ASSERT_TRUE(file.lines[0].requirement.has_value());
  EXPECT_EQ(file.lines[0].requirement->str(), name + "==1.0");
}

TEST(LongInputs, LongImageReferences) {
  EXPECT_NE(error_of([] { trainpack::transports::parse_docker_archive_ref(std::string(60000, 'a')); })
                .find("longer than 255"),
            std::string::npos);
  EXPECT_NE(error_of([] { trainpack::transports::parse_docker_archive_ref("a.b:" + std::string(60000, '5') + "/x"); })
                .find("longer than 255"),
            std::string::npos);
}

}  // namespace
