#include "python/metadata.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/error.h"
#include "support/text.h"

using nlohmann::json;
using trainpack::Error;
using trainpack::python::CoreMetadata;
using trainpack::python::EmailMessage;
using trainpack::python::EntryPoint;
using trainpack::python::WheelInfo;

namespace {

std::string dir() { return std::string(TRAINPACK_TESTDATA_DIR) + "/python/metadata/"; }

std::string read(const std::string& rel) {
  std::ifstream in(dir() + rel, std::ios::binary);
  EXPECT_TRUE(in.good()) << rel;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json expected_metadata() {
  std::ifstream in(dir() + "expected.json");
  EXPECT_TRUE(in.good());
  return json::parse(in);
}

void expect_headers(const EmailMessage& m, const json& c) {
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& h : c.at("headers")) headers.emplace_back(h[0], h[1]);
  EXPECT_EQ(m.headers, headers);
}

TEST(PythonMetadata, EmailHeadersAndBodyLikePython) {
  json data = expected_metadata();
  ASSERT_GE(data.at("metadata").size(), 15u);
  for (const auto& c : data.at("metadata")) {
    SCOPED_TRACE(c.at("file").get<std::string>());
    EmailMessage m = EmailMessage::parse(read(c.at("file")));
    expect_headers(m, c);
    EXPECT_EQ(m.body, c.at("body").get<std::string>());
  }
  for (const auto& c : data.at("wheel")) {
    SCOPED_TRACE(c.at("file").get<std::string>());
    expect_headers(EmailMessage::parse(read(c.at("file"))), c);
  }
}

TEST(PythonMetadata, CoreMetadataFromRealAndHandWrittenFiles) {
  json data = expected_metadata();
  int parsed = 0;
  for (const auto& c : data.at("metadata")) {
    const std::string file = c.at("file");
    SCOPED_TRACE(file);
    const std::string text = read(file);
    bool bad_requirement = false;
    for (const auto& r : c.at("requires_dist")) bad_requirement = bad_requirement || r.contains("error");
    if (bad_requirement) {
      try {
        CoreMetadata::parse(text);
        ADD_FAILURE() << "parsed";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Requires-Dist"), std::string::npos) << e.what();
      }
      continue;
    }
    if (file == "cases/future_major.METADATA") {
      EXPECT_THROW(CoreMetadata::parse(text), Error);
      continue;
    }
    CoreMetadata md = CoreMetadata::parse(text);
    ++parsed;
    const EmailMessage& m = md.message;
    auto opt = [&](const char* field) -> std::optional<std::string> {
      for (const auto& h : c.at("headers"))
        if (trainpack::ascii_iequals(h[0].get<std::string>(), field)) return h[1].get<std::string>();
      return std::nullopt;
    };
    EXPECT_EQ(md.name, opt("Name"));
    EXPECT_EQ(md.version_text, opt("Version"));
    EXPECT_EQ(md.requires_python, opt("Requires-Python"));
    EXPECT_EQ(md.metadata_version, opt("Metadata-Version").value_or(""));
    EXPECT_EQ(md.provides_extra, m.get_all("Provides-Extra"));
    EXPECT_EQ(md.description, c.at("body").get<std::string>());
    ASSERT_EQ(md.requires_dist.size(), c.at("requires_dist").size());
    for (std::size_t i = 0; i < md.requires_dist.size(); ++i) {
      const auto& want = c.at("requires_dist")[i];
      const auto& r = md.requires_dist[i];
      SCOPED_TRACE(want.at("text").get<std::string>());
      EXPECT_EQ(r.name, want.at("name").get<std::string>());
      EXPECT_EQ(std::vector<std::string>(r.extras.begin(), r.extras.end()),
                want.at("extras").get<std::vector<std::string>>());
      EXPECT_EQ(r.specifier, want.at("specifier").get<std::string>());
      EXPECT_EQ(r.url, want.at("url").get<std::string>());
      if (want.at("marker").is_null()) {
        EXPECT_FALSE(r.marker.has_value());
      } else {
        ASSERT_TRUE(r.marker.has_value());
        EXPECT_EQ(r.marker->str(), want.at("marker").get<std::string>());
      }
    }
  }
  EXPECT_GE(parsed, 10);
}

TEST(PythonMetadata, TypedFieldsAndWarnings) {
  CoreMetadata demo = CoreMetadata::parse(read("built/demo_pkg/METADATA"));
  EXPECT_EQ(demo.name, "Demo-Pkg");
  ASSERT_TRUE(demo.version.has_value());
  EXPECT_EQ(demo.version->str(), "1.2.3");
  ASSERT_TRUE(demo.requires_python_specifier.has_value());
  EXPECT_EQ(demo.requires_python_specifier->str(), "!=3.8.*,>=3.7");
  EXPECT_EQ(demo.provides_extra, (std::vector<std::string>{"docs_extra", "test"}));
  EXPECT_EQ(demo.requires_dist.size(), 7u);
  EXPECT_TRUE(demo.warnings.empty());
  EXPECT_NE(demo.description.find("    indented line\nLast line: with colon\n"), std::string::npos);

  CoreMetadata dyn = CoreMetadata::parse(read("cases/dynamic.PKG-INFO"));
  EXPECT_EQ(dyn.dynamic, (std::vector<std::string>{"Requires-Dist", "provides-extra"}));
  EXPECT_TRUE(dyn.is_dynamic("requires-dist"));
  EXPECT_TRUE(dyn.is_dynamic("Provides-Extra"));
  EXPECT_FALSE(dyn.is_dynamic("Requires-Python"));

  CoreMetadata missing = CoreMetadata::parse(read("cases/missing.METADATA"));
  EXPECT_FALSE(missing.name);
  EXPECT_FALSE(missing.version);
  EXPECT_FALSE(missing.requires_python);
  EXPECT_TRUE(missing.requires_dist.empty());

  CoreMetadata future = CoreMetadata::parse(read("cases/future.METADATA"));
  ASSERT_EQ(future.warnings.size(), 1u);
  EXPECT_NE(future.warnings[0].find("2.9"), std::string::npos);
  EXPECT_TRUE(CoreMetadata::parse(read("cases/leading_continuation.METADATA")).warnings.empty());  // 2.4 is known

  CoreMetadata odd = CoreMetadata::parse("Name: x\nVersion: not a version\nRequires-Python: >=three\n");
  EXPECT_EQ(odd.warnings.size(), 3u);  // no Metadata-Version, invalid Version, invalid Requires-Python
  EXPECT_FALSE(odd.version);
  EXPECT_EQ(odd.requires_python, ">=three");
  EXPECT_FALSE(odd.requires_python_specifier);
}

TEST(PythonMetadata, EmailEdgeCases) {
  // A unix-from first line is an envelope; a "From " line ending the headers starts the body.
  EmailMessage m = EmailMessage::parse("From someone\nName: a\nFrom other\n\nbody\n");
  EXPECT_EQ(m.headers, (std::vector<std::pair<std::string, std::string>>{{"Name", "a"}}));
  EXPECT_EQ(m.body, "From other\nbody\n");
  // Headers only, no final line break.
  m = EmailMessage::parse("A: 1\nB:2");
  EXPECT_EQ(m.headers, (std::vector<std::pair<std::string, std::string>>{{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(m.body, "");
  // A whitespace-only line continues the previous header; old Mac line breaks split lines too.
  m = EmailMessage::parse("A: 1\n  \nB: 2\rC: 3\r\rbody");
  EXPECT_EQ(m.headers, (std::vector<std::pair<std::string, std::string>>{{"A", "1\n  "}, {"B", "2"}, {"C", "3"}}));
  EXPECT_EQ(m.body, "body");
  EXPECT_EQ(*m.get("b"), "2");
  EXPECT_EQ(m.get("D"), nullptr);
  EXPECT_TRUE(EmailMessage::parse("").headers.empty());
}

TEST(PythonMetadata, WheelFilesLikePip) {
  json data = expected_metadata();
  ASSERT_GE(data.at("wheel").size(), 10u);
  for (const auto& c : data.at("wheel")) {
    SCOPED_TRACE(c.at("file").get<std::string>());
    const std::string text = read(c.at("file"));
    const json& version = c.at("wheel_version");
    if (version.is_null() || version.is_string() || version[0].get<int>() > 1) {
      try {
        WheelInfo::parse(text);
        ADD_FAILURE() << "parsed";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("Wheel-Version"), std::string::npos);
        EXPECT_FALSE(e.hint().empty());
      }
      continue;
    }
    WheelInfo w = WheelInfo::parse(text);
    EXPECT_EQ(w.wheel_version, version.get<std::vector<std::uint64_t>>());
    EXPECT_EQ(w.root_is_purelib, c.at("root_is_purelib").get<bool>());
    EXPECT_EQ(w.tags, c.at("tags").get<std::vector<std::string>>());
    const bool newer = w.wheel_version > std::vector<std::uint64_t>{1, 0};
    EXPECT_EQ(w.warnings.size(), newer ? 1u : 0u);
  }
  EXPECT_EQ(WheelInfo::parse(read("cases/platlib.WHEEL")).build, "2");
  EXPECT_EQ(WheelInfo::parse("Wheel-Version: 1\n").wheel_version, (std::vector<std::uint64_t>{1}));
  EXPECT_THROW(WheelInfo::parse("Wheel-Version: 1.\n"), Error);
}

TEST(PythonMetadata, EntryPointsLikeImportlib) {
  json data = expected_metadata();
  ASSERT_GE(data.at("entry_points").size(), 4u);
  for (const auto& c : data.at("entry_points")) {
    SCOPED_TRACE(c.at("file").get<std::string>());
    std::vector<EntryPoint> eps = trainpack::python::parse_entry_points(read(c.at("file")));
    ASSERT_EQ(eps.size(), c.at("entries").size());
    for (std::size_t i = 0; i < eps.size(); ++i) {
      const auto& want = c.at("entries")[i];
      SCOPED_TRACE(want.at("value").get<std::string>());
      EXPECT_EQ(eps[i].group, want.at("group").get<std::string>());
      EXPECT_EQ(eps[i].name, want.at("name").get<std::string>());
      EXPECT_EQ(eps[i].value, want.at("value").get<std::string>());
      EXPECT_EQ(eps[i].valid, !want.at("module").is_null());
      if (!eps[i].valid) continue;
      EXPECT_EQ(eps[i].module, want.at("module").get<std::string>());
      if (want.at("attr").is_null())
        EXPECT_FALSE(eps[i].attr.has_value());
      else
        EXPECT_EQ(eps[i].attr, want.at("attr").get<std::string>());
      EXPECT_EQ(eps[i].extras, want.at("extras").get<std::vector<std::string>>());
    }
  }
  // Lines before any section are ignored, even without '='; inside a section that is an error.
  EXPECT_TRUE(trainpack::python::parse_entry_points("stray line\n").empty());
  EXPECT_THROW(trainpack::python::parse_entry_points("[console_scripts]\nno equals sign\n"), Error);
  auto eps = trainpack::python::parse_entry_points("[[console_scripts]]\r\na=b:c\r\n");
  ASSERT_EQ(eps.size(), 1u);
  EXPECT_EQ(eps[0].group, "console_scripts");
  EXPECT_EQ(eps[0].attr, "c");
}

}  // namespace
