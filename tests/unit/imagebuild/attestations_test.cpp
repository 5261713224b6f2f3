// The attestations step (imagebuild/attestations.h): the SBOM and provenance of a new image come from what the build
// recorded and from parts kept by layer, so a one-line change hashes only the layer it made and reads nothing of a
// base that no pip step read. The documents themselves are tested in image_attestations_test.cpp.
#include "imagebuild/attestations.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "image/artifact_image.h"
#include "image/digest.h"
#include "support/fs.h"
#include "tests/unit/image_test_support.h"
#include "transports/image_location.h"

namespace {

using trainpack::imagebuild::AttestedBuild;
using trainpack::imagebuild::Attestations;
using trainpack::imagebuild::BuildRequest;
using trainpack::imagebuild::LayerStack;
using trainpack::imagebuild::Progress;
using trainpack::layers::FileEntry;
using trainpack::layers::LayerBlob;
using nlohmann::json;
namespace test_support = trainpack::test_support;

// A COPY layer of the trainer's task.py with `code` (its blob named for the code: a new code, a new layer).
LayerStack stack_with_code(const std::string& code) {
  LayerStack stack;
  stack.append("COPY [\"requirements.txt\", \"./requirements.txt\"]",
               LayerBlob{trainpack::image::sha256_of("req tar"), trainpack::image::sha256_of("req gz"), 1},
               {FileEntry::inline_file("usr/app/requirements.txt", "numpy\n")}, LayerStack::Maker::kCopy);
  stack.append("COPY [\"trainer\", \"trainer\"]",
               LayerBlob{trainpack::image::sha256_of(code + " tar"), trainpack::image::sha256_of(code + " gz"), 1},
               {FileEntry::directory("usr/app/trainer", 0755), FileEntry::inline_file("usr/app/trainer/task.py", code)},
               LayerStack::Maker::kCopy);
  return stack;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

json document_of(const trainpack::image::Image& referrer) {
  json manifest = json::parse(referrer.raw_manifest());
  auto digest = trainpack::image::Digest::parse_or_throw(manifest.at("layers").at(0).at("digest").get<std::string>(),
                                                         "test");
  return json::parse(trainpack::read_file(referrer.blob_path(digest)));
}

struct AttestationsTest : ::testing::Test {
  trainpack::ScopedDir dir{trainpack::make_temp_dir({}, "attestations-step-")};
  trainpack::store::CacheDir cache{dir.path() / "cache"};
  std::ostringstream said;
  Progress progress{Progress::Mode::kPlain, true, said};
  BuildRequest request;

  AttestationsTest() {
    request.base_name = "debian:12";
    request.outputs = {*trainpack::transports::parse_image_location("oci:" + (dir.path() / "out").string() + ":v1")};
  }

  // The referrers of an image made of `code`: the image's own digest follows the code too.
  std::vector<std::shared_ptr<const trainpack::image::Image>> attest(Attestations& attestations,
                                                                     const std::string& code) {
    test_support::BuiltImage image =
        test_support::make_image_of_layers(dir.path() / "store", "amd64", {{{"task.py", code}}});
    LayerStack stack = stack_with_code(code);
    const std::string base_digest = trainpack::image::sha256_of("the base").str();
    const std::string created = "2026-12-07T00:00:00Z";
    const std::vector<trainpack::imagebuild::InstalledArtifact> installed;
    AttestedBuild built{*image.image, base_digest, created, stack, image.image->config(), installed,
                        []() -> const trainpack::layers::ScannedImage& {
                          throw std::runtime_error("the base was read for an image no pip step made");
                        },
                        [](const trainpack::image::ImageConfig&) -> trainpack::python::PythonFacts {
                          throw std::runtime_error("the base's Python was read for an image no pip step made");
                        }};
    return attestations.referrers(built);
  }
};

TEST_F(AttestationsTest, ACodeChangeHashesOnlyTheLayerItMadeAndNeverReadsTheBase) {
  Attestations attestations(request, cache, progress);
  ASSERT_TRUE(attestations.wanted());
  auto first = attest(attestations, "print('one')\n");
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(trainpack::image::artifact_type_of(*first[0]), trainpack::imagebuild::kSpdxType);
  EXPECT_EQ(trainpack::image::artifact_type_of(*first[1]), trainpack::imagebuild::kInTotoType);
  EXPECT_EQ(count_of(said.str(), "hashed the files of a layer for the SBOM"), 2u) << said.str();

  auto second = attest(attestations, "print('two')\n");
  EXPECT_EQ(count_of(said.str(), "hashed the files of a layer for the SBOM"), 3u) << said.str();
  EXPECT_NE(count_of(said.str(), "): COPY [\"trainer\", \"trainer\"]"), 0u);
  // The new image's SBOM names both files, task.py with its new hash.
  json sbom = document_of(*second[0]);
  std::string files = sbom.at("files").dump();
  EXPECT_NE(files.find("usr/app/requirements.txt"), std::string::npos) << files;
  EXPECT_NE(files.find(trainpack::image::sha256_of("print('two')\n").hex()), std::string::npos) << files;
  EXPECT_EQ(files.find(trainpack::image::sha256_of("print('one')\n").hex()), std::string::npos) << files;
  // The provenance names the output and the image.
  json statement = document_of(*second[1]);
  EXPECT_EQ(statement.at("subject").at(0).at("digest").at("sha256"),
            json::parse(second[1]->raw_manifest()).at("subject").at("digest").get<std::string>().substr(7));
}

TEST_F(AttestationsTest, AnImageBuiltAgainReadsItsSbomBackAndHashesNothing) {
  Attestations attestations(request, cache, progress);
  auto first = attest(attestations, "print('same')\n");
  const std::size_t hashed = count_of(said.str(), "hashed the files");
  auto again = attest(attestations, "print('same')\n");
  EXPECT_EQ(count_of(said.str(), "hashed the files"), hashed);
  EXPECT_EQ(again[0]->manifest_digest(), first[0]->manifest_digest());
}

// A damaged kept part is a miss said in a warning: the part is made again, and the SBOM is the same.
TEST_F(AttestationsTest, ADamagedKeptFileListIsMadeAgain) {
  Attestations attestations(request, cache, progress);
  auto first = attest(attestations, "print('kept')\n");
  const trainpack::store::CacheArea sboms = cache.area(trainpack::store::CacheKind::kSboms);
  for (const auto& e : std::filesystem::directory_iterator(sboms.dir()))
    trainpack::write_file_atomic(e.path(), "damaged");
  auto again = attest(attestations, "print('kept')\n");
  EXPECT_EQ(again[0]->manifest_digest(), first[0]->manifest_digest());
  EXPECT_EQ(count_of(said.str(), "hashed the files"), 4u) << said.str();
}

// The SBOM is kept as the digest of its blob: a blob damaged since is a miss, made again from the kept parts (no file
// hashed again), the same bytes, and the blob is whole again.
TEST_F(AttestationsTest, ADamagedSbomBlobIsMadeAgainTheSame) {
  Attestations attestations(request, cache, progress);
  auto first = attest(attestations, "print('blob')\n");
  const trainpack::image::Digest sbom = first[0]->manifest().layers.at(0).digest;
  const std::filesystem::path blob = cache.blobs().path_of(sbom);
  ASSERT_TRUE(std::filesystem::exists(blob));
  trainpack::write_file_atomic(blob, "damaged");
  const std::size_t hashed = count_of(said.str(), "hashed the files");
  auto again = attest(attestations, "print('blob')\n");
  EXPECT_EQ(again[0]->manifest_digest(), first[0]->manifest_digest());
  EXPECT_EQ(count_of(said.str(), "hashed the files"), hashed) << "the file lists are kept";
  EXPECT_EQ(trainpack::image::sha256_of_file(blob), sbom);
}

TEST_F(AttestationsTest, NoneAskedForIsNoneWanted) {
  request.sbom = trainpack::imagebuild::SbomFormat::kNone;
  request.provenance = false;
  EXPECT_FALSE(Attestations(request, cache, progress).wanted());
  request.provenance = true;
  Attestations provenance_only(request, cache, progress);
  auto referrers = attest(provenance_only, "x\n");
  ASSERT_EQ(referrers.size(), 1u);
  EXPECT_EQ(trainpack::image::artifact_type_of(*referrers[0]), trainpack::imagebuild::kInTotoType);
}

}  // namespace
