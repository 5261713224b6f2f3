// Referrers (registry/referrers.h) against an in-memory registry: a registry with the referrers API says so in its
// answer to their PUT (OCI-Subject), lists them itself and gets no fallback tag, and nobody asks it beforehand;
// without it the sha256-<hex> index lists each once, and what is listed is not pushed again (its manifest, its
// listing). The fallback against a real docker-registry is in tests/integration/registry_build_test.cpp; no registry
// packaged for Debian has the API, so that half is shown here.
#include "registry/referrers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "image/artifact_image.h"
#include "image/digest.h"
#include "image/media_types.h"
#include "support/fs.h"
#include "tests/unit/fake_registry.h"

using namespace trainpack::registry;
using nlohmann::json;
using trainpack::test_support::FakeRegistry;

namespace {

struct Referred {
  trainpack::ScopedDir dir{trainpack::make_temp_dir({}, "referrers-")};
  std::shared_ptr<const trainpack::store::BlobStore> store{
      std::make_shared<trainpack::store::BlobStore>(dir.path())};
  trainpack::image::Descriptor subject{std::string(trainpack::image::media::kOciManifest),
                                       trainpack::image::sha256_of("the image"), 9, {}, {}, {}};
  std::vector<std::shared_ptr<const trainpack::image::Image>> referrers{
      trainpack::image::make_referrer(store, subject, "application/spdx+json", "application/spdx+json", "{\"s\":1}",
                                      {}, "the SBOM"),
      trainpack::image::make_referrer(store, subject, "application/vnd.in-toto+json",
                                      "application/vnd.in-toto+json", "{\"p\":1}", {}, "the provenance")};
};

}  // namespace

TEST(Referrers, WithoutTheApiTheFallbackTagListsEachOnceAndAListedOneIsNotPushedAgain) {
  FakeRegistry fake;
  Keychain keychain({});
  RegistryClient client(std::ref(fake), keychain, "reg.test", "http");
  Referred r;
  EXPECT_EQ(ReferrerPush(client, "r", r.referrers, r.subject.digest, {}).finish(), 2u);
  const std::string tag = "sha256-" + r.subject.digest.hex();
  EXPECT_EQ(referrers_tag(r.subject.digest), tag);
  ASSERT_TRUE(fake.repositories["r"].manifests.count(tag));
  json index = json::parse(fake.repositories["r"].manifests[tag]);
  ASSERT_EQ(index.at("manifests").size(), 2u);
  EXPECT_EQ(index["manifests"][0].at("artifactType"), "application/spdx+json");
  EXPECT_EQ(index["manifests"][1].at("digest"), r.referrers[1]->manifest_digest().str());
  EXPECT_EQ(fake.count("PUT /v2/r/manifests/" + tag), 1) << "one PUT for both";

  fake.requests.clear();
  EXPECT_EQ(ReferrerPush(client, "r", r.referrers, r.subject.digest, {}).finish(), 0u);
  EXPECT_EQ(fake.count_starting("PUT /v2/r/manifests/"), 0) << "a listed referrer put or listed again";

  std::vector<trainpack::image::Descriptor> listed = list_referrers(client, "r", r.subject.digest);
  ASSERT_EQ(listed.size(), 2u);
  std::vector<trainpack::image::AttachedDocument> provenance =
      read_attached(client, "r", r.subject.digest, {"application/vnd.in-toto+json"});
  ASSERT_EQ(provenance.size(), 1u);
  EXPECT_EQ(provenance[0].content, "{\"p\":1}");
  EXPECT_EQ(provenance[0].listed_type, "application/vnd.in-toto+json");
  EXPECT_EQ(provenance[0].referrer, r.referrers[1]->manifest_digest());
  EXPECT_EQ(provenance[0].manifest, r.referrers[1]->raw_manifest());
  EXPECT_TRUE(read_attached(client, "r", r.subject.digest, {"application/vnd.cyclonedx+json"}).empty());
  // Both kinds asked: each, in the listing's order.
  std::vector<trainpack::image::AttachedDocument> both =
      read_attached(client, "r", r.subject.digest, {"application/vnd.in-toto+json", "application/spdx+json"});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].content, "{\"s\":1}");
  EXPECT_EQ(both[1].content, "{\"p\":1}");
}

TEST(Referrers, ARegistryWithTheApiListsThemItselfAndGetsNoFallbackTag) {
  FakeRegistry fake;
  fake.referrers_api = true;
  Keychain keychain({});
  RegistryClient client(std::ref(fake), keychain, "reg.test", "http");
  Referred r;
  EXPECT_EQ(ReferrerPush(client, "r", r.referrers, r.subject.digest, {}).finish(), 2u);
  EXPECT_FALSE(fake.repositories["r"].manifests.count("sha256-" + r.subject.digest.hex()));
  EXPECT_EQ(fake.count("GET /v2/r/manifests/sha256-" + r.subject.digest.hex()), 0);
  EXPECT_EQ(list_referrers(client, "r", r.subject.digest).size(), 2u);
  std::vector<trainpack::image::AttachedDocument> sbom =
      read_attached(client, "r", r.subject.digest, {"application/spdx+json"});
  ASSERT_EQ(sbom.size(), 1u);
  EXPECT_EQ(sbom[0].content, "{\"s\":1}");
  EXPECT_EQ(fake.count_starting("GET /v2/r/referrers/"), 2) << "the two reads, not the push";
  // Pushed again, the same manifests are put again (a PUT costs what a listing would) and still no fallback tag.
  fake.requests.clear();
  EXPECT_EQ(ReferrerPush(client, "r", r.referrers, r.subject.digest, {}).finish(), 2u);
  EXPECT_EQ(fake.count_starting("GET /v2/r/referrers/"), 0);
  EXPECT_EQ(fake.count_starting("PUT /v2/r/manifests/sha256:"), 2);
  EXPECT_FALSE(fake.repositories["r"].manifests.count("sha256-" + r.subject.digest.hex()));
  EXPECT_EQ(list_referrers(client, "r", r.subject.digest).size(), 2u);
}

// Begun beside the subject's push, the referrers' blobs may go up at once, but their manifests and the fallback tag
// only in finish(), once the subject's manifest is in; a push abandoned (the subject's failed) tags nothing.
TEST(Referrers, BegunBesideTheSubjectTheirManifestsWaitForFinish) {
  FakeRegistry fake;
  Keychain keychain({});
  RegistryClient client(std::ref(fake), keychain, "reg.test", "http");
  Referred r;
  { ReferrerPush abandoned(client, "r", r.referrers, r.subject.digest, {}); }
  EXPECT_TRUE(fake.repositories["r"].manifests.empty());
  EXPECT_EQ(fake.count_starting("PUT /v2/r/manifests/"), 0);

  ReferrerPush push(client, "r", r.referrers, r.subject.digest, {});
  EXPECT_EQ(fake.count_starting("PUT /v2/r/manifests/"), 0);  // the background never puts a manifest
  EXPECT_EQ(push.finish(), 2u);
  EXPECT_EQ(fake.count_starting("PUT /v2/r/manifests/"), 3);  // both referrers, then the fallback index
  EXPECT_EQ(json::parse(fake.repositories["r"].manifests["sha256-" + r.subject.digest.hex()]).at("manifests").size(),
            2u);
}

// Once the subject's blobs are in, the referrers' manifests go up beside the subject's own, not after it: a round trip
// fewer. A registry that refuses a manifest whose subject is not there yet gets it again in finish(); one that takes
// it is not asked twice.
TEST(Referrers, TheirManifestsGoUpBesideTheSubjectsAndARefusedOneAgainOnceItIsIn) {
  for (bool refuses_early : {false, true}) {
    SCOPED_TRACE(refuses_early ? "a registry that wants the subject first" : "a registry as the spec says");
    FakeRegistry fake;
    std::atomic<bool> subject_in{false};
    std::atomic<int> refused{0};
    if (refuses_early)
      fake.intercept = [&](const trainpack::net::HttpRequest& request) -> std::optional<trainpack::net::HttpResponse> {
        if (request.method != "PUT" || subject_in || request.url.find("/manifests/sha256:") == std::string::npos)
          return std::nullopt;
        ++refused;
        trainpack::net::HttpResponse r;
        r.status = 400;
        r.body = R"({"errors":[{"code":"MANIFEST_INVALID","message":"subject unknown"}]})";
        return r;
      };
    Keychain keychain({});
    RegistryClient client(std::ref(fake), keychain, "reg.test", "http");
    Referred r;
    ReferrerPush push(client, "r", r.referrers, r.subject.digest, {});
    push.subject_blobs_pushed();
    // The manifests go up in the background: the subject's goes up once they have been answered.
    auto answered = [&] {
      if (refuses_early) return refused == 2;
      return fake.count_starting("PUT /v2/r/manifests/sha256:") == 2;
    };
    for (int i = 0; i < 500 && !answered(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(answered()) << "the referrers' manifests waited for finish()";
    subject_in = true;
    EXPECT_EQ(push.finish(), 2u);
    for (const auto& referrer : r.referrers)
      EXPECT_EQ(fake.count("PUT /v2/r/manifests/" + referrer->manifest_digest().str()), 1);
    EXPECT_EQ(refused, refuses_early ? 2 : 0);
    EXPECT_EQ(fake.count("PUT /v2/r/manifests/sha256-" + r.subject.digest.hex()), 1);
  }
}
