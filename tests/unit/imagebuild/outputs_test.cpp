// The outputs step (imagebuild/outputs.h): the image goes to every output in order, each says whether it holds the
// SBOM and provenance (and why not), and the result lists what was written. Pushes are tested against real
// registries in tests/integration/registry_build_test.cpp.
#include "imagebuild/outputs.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "imagebuild/image_attestations.h"
#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/unit/image_test_support.h"
#include "transports/image_location.h"

namespace {

using trainpack::imagebuild::BuildRequest;
using trainpack::imagebuild::BuildResult;
using trainpack::imagebuild::Outputs;
using trainpack::imagebuild::Progress;
using nlohmann::json;

struct OutputsTest : ::testing::Test {
  trainpack::ScopedDir dir{trainpack::make_temp_dir({}, "outputs-step-")};
  trainpack::store::CacheDir cache{dir.path() / "cache"};
  trainpack::registry::BlobLocations locations{cache.area(trainpack::store::CacheKind::kBlobLocations)};
  std::ostringstream said;
  Progress progress{Progress::Mode::kPlain, false, said};
  BuildRequest request;
  BuildResult result;

  trainpack::transports::ImageLocation location(const std::string& text) {
    return *trainpack::transports::parse_image_location(text);
  }
};

TEST_F(OutputsTest, EachOutputGetsTheImageAndSaysWhetherItHoldsTheAttachments) {
  trainpack::test_support::BuiltImage image =
      trainpack::test_support::make_image_of_layers(cache.blobs().root(), "amd64", {{{"a.txt", "a"}}});
  auto referrers = trainpack::imagebuild::attestation_referrers(
      std::make_shared<trainpack::store::BlobStore>(cache.blobs()), *image.image,
      trainpack::imagebuild::SbomFormat::kSpdx,
      std::string("{}"), std::string("{}"), "2026-12-07T00:00:00Z");
  const std::string tagged = "oci:" + (dir.path() / "tagged").string() + ":v1";
  const std::string archive = "docker-archive:" + (dir.path() / "image.tar").string() + ":trainer:v1";
  const std::string untagged = "oci:" + (dir.path() / "untagged").string();
  request.outputs = {location(tagged), location(archive), location(untagged)};
  request.outputs_without_attachments = {location(untagged).str()};
  result.manifest_digest = image.image->manifest_digest();
  Outputs outputs(request, cache.blobs(), locations, progress, result);
  EXPECT_TRUE(outputs.take_attachments());
  EXPECT_FALSE(outputs.registries_have(image.layers[0].digest));  // no registry output

  outputs.write(*image.image, referrers);

  ASSERT_EQ(result.outputs.size(), 3u);
  EXPECT_EQ(result.outputs[0], location(tagged).str());
  ASSERT_EQ(result.attached.size(), 2u);
  EXPECT_EQ(result.attached[0].artifact_type, trainpack::imagebuild::kSpdxType);
  EXPECT_EQ(result.attached[1].digest, referrers[1]->manifest_digest());
  ASSERT_EQ(result.not_attached.size(), 2u);
  EXPECT_EQ(result.not_attached[0].reason, "a docker-archive has no place for them");
  EXPECT_NE(result.not_attached[1].reason.find("named without a tag"), std::string::npos);
  json tagged_index = json::parse(trainpack::read_file(dir.path() / "tagged" / "index.json"));
  EXPECT_EQ(tagged_index.at("manifests").size(), 3u);  // the image and its two referrers
  json untagged_index = json::parse(trainpack::read_file(dir.path() / "untagged" / "index.json"));
  EXPECT_EQ(untagged_index.at("manifests").size(), 1u);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path() / "image.tar"));
  EXPECT_NE(said.str().find("attached SBOM and provenance to " + location(tagged).str()), std::string::npos)
      << said.str();
}

TEST_F(OutputsTest, OnlyADockerArchiveTakesNoAttachments) {
  request.outputs = {location("docker-archive:" + (dir.path() / "image.tar").string())};
  EXPECT_FALSE(Outputs(request, cache.blobs(), locations, progress, result).take_attachments());
}

}  // namespace
