// image/manifest and image/platform: manifests, indexes and platforms as pulled documents give them. A member of the wrong type is the
// document's fault and must come back as trainpack::Error, never as the JSON library's type_error (an internal error).
#include "image/image.h"

#include <gtest/gtest.h>

#include <functional>

#include "support/error.h"
#include "tests/unit/error_of.h"

using trainpack::test_support::error_of;

namespace {

using namespace trainpack::image;
using nlohmann::json;

const std::string kConfigDigest = "sha256:" + std::string(64, '1');

json manifest_json() {
  return {{"schemaVersion", 2},
          {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
          {"config",
           {{"mediaType", "application/vnd.oci.image.config.v1+json"}, {"digest", kConfigDigest}, {"size", 2}}},
          {"layers", json::array()}};
}

TEST(ImageMetadata, ManifestWithMembersOfTheWrongTypeIsMalformed) {
  EXPECT_EQ(Manifest::parse(manifest_json().dump(), "m").config.size, 2u);

  json m = manifest_json();
  m["schemaVersion"] = "2";
  EXPECT_NE(error_of([&] { Manifest::parse(m.dump(), "m"); }).find("schemaVersion is not 2"), std::string::npos);
  m["schemaVersion"] = 2.5;
  EXPECT_NE(error_of([&] { Manifest::parse(m.dump(), "m"); }).find("schemaVersion is not 2"), std::string::npos);

  m = manifest_json();
  m["mediaType"] = 5;
  EXPECT_NE(error_of([&] { Manifest::parse(m.dump(), "m"); }).find("m: manifest mediaType is not a string"),
            std::string::npos);
}

TEST(ImageMetadata, IndexWithMembersOfTheWrongTypeIsMalformed) {
  json index = {{"schemaVersion", json::array()}, {"manifests", json::array()}};
  EXPECT_NE(error_of([&] { Index::parse(index.dump(), "i"); }).find("schemaVersion is not 2"), std::string::npos);
  index = {{"schemaVersion", 2}, {"mediaType", json::object()}};
  EXPECT_NE(error_of([&] { Index::parse(index.dump(), "i"); }).find("i: index mediaType is not a string"),
            std::string::npos);
}

TEST(ImageMetadata, PlatformMembersOfTheWrongTypeMatchNothing) {
  json entry = {{"mediaType", "application/vnd.oci.image.manifest.v1+json"}, {"digest", kConfigDigest}, {"size", 9},
                {"platform", {{"os", 1}, {"architecture", "amd64"}, {"variant", true}}}};
  Index index = Index::parse(json{{"schemaVersion", 2}, {"manifests", {entry}}}.dump(), "i");
  Platform amd64 = Platform::parse("linux/amd64");
  EXPECT_FALSE(amd64.matches(index.manifests[0].platform));
  std::string err = error_of([&] { select_platform(index, amd64, "i"); });
  EXPECT_NE(err.find("no image for platform linux/amd64"), std::string::npos) << err;
}

TEST(ImageMetadata, StringMemberFallsBackForAbsentOrOtherTypes) {
  json j = {{"os", "linux"}, {"n", 3}};
  EXPECT_EQ(string_member(j, "os"), "linux");
  EXPECT_EQ(string_member(j, "n", "?"), "?");
  EXPECT_EQ(string_member(j, "missing", "?"), "?");
  EXPECT_EQ(string_member(json::array({"os"}), "os", "?"), "?");
}

}  // namespace
