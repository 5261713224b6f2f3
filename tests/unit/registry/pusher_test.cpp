// push_image (registry/pusher.h) against an in-memory registry: what is done with each blob (nothing when the
// repository has it, a mount from where it was seen, an upload otherwise), the manifest last, and a failed blob
// failing the whole push with nothing tagged. The same against a real registry, with faults injected, is in
// tests/integration/push_faults_test.cpp; these show the decisions one by one.
#include "registry/pusher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "registry/remote_image.h"
#include "support/error.h"
#include "tests/unit/push_test_support.h"

using namespace trainpack::registry;
using trainpack::image::Digest;
using trainpack::net::HttpRequest;
using trainpack::net::HttpResponse;
using trainpack::test_support::FakeRegistry;
using trainpack::test_support::comes_true;
using trainpack::test_support::PushFixture;
using trainpack::test_support::sends_blob;
using Kind = BlobEvent::Kind;

namespace {

const std::vector<Kind> kUploaded{Kind::kUploading, Kind::kUploaded};

}  // namespace

TEST(Pusher, ABlobNoRepositoryHoldsIsUploadedInOnePutAndTheManifestGoesLast) {
  PushFixture p;
  PushResult result = p.push();
  EXPECT_EQ(result.blobs_uploaded, 3);
  EXPECT_EQ(result.bytes_uploaded,
            p.bytes_of(p.large).size() + p.bytes_of(p.small).size() + p.bytes_of(p.config).size());
  for (const Digest& digest : {p.large, p.small, p.config}) {
    EXPECT_EQ(p.registry.repositories["t"].blobs[digest.str()], p.bytes_of(digest));
    EXPECT_EQ(p.events_of(digest), kUploaded) << digest.str();
  }
  EXPECT_EQ(p.registry.count("POST /v2/t/blobs/uploads/"), 3);
  EXPECT_EQ(p.registry.count_starting("PUT /v2/t/blobs/uploads/"), 3);
  EXPECT_EQ(p.registry.count("PUT /v2/t/manifests/latest"), 1);
  EXPECT_EQ(p.registry.requests.back(), "PUT /v2/t/manifests/latest") << "a tag never names a missing blob";
  EXPECT_EQ(result.manifest_digest, p.built.image->manifest_digest());
  EXPECT_EQ(result.reference, "reg.test/t@" + result.manifest_digest.str());
  EXPECT_TRUE(p.registry.uploads.empty());
}

TEST(Pusher, OnlyALargeBlobIsAskedAboutBeforeItIsSent) {
  PushFixture p;
  p.push();
  EXPECT_EQ(p.registry.count("HEAD /v2/t/blobs/" + p.large.str()), 1);
  EXPECT_EQ(p.registry.count("HEAD /v2/t/blobs/" + p.small.str()), 0) << "sending it costs no more than asking";
  EXPECT_EQ(p.registry.count("HEAD /v2/t/blobs/" + p.config.str()), 0);
}

TEST(Pusher, ABlobTheRepositoryHoldsIsNotUploaded) {
  PushFixture p;
  p.registry.repositories["t"].blobs[p.large.str()] = p.bytes_of(p.large);
  PushResult result = p.push();
  EXPECT_EQ(result.blobs_existing, 1);
  EXPECT_EQ(result.blobs_uploaded, 2);
  EXPECT_EQ(p.events_of(p.large), std::vector<Kind>{Kind::kExists});
  EXPECT_EQ(p.registry.count("POST /v2/t/blobs/uploads/"), 2) << "no upload begun for the blob it has";
  EXPECT_EQ(p.registry.requests.back(), "PUT /v2/t/manifests/latest");
}

TEST(Pusher, ABlobKnownToBeInTheRepositoryIsAskedAboutHoweverSmall) {
  PushFixture p;
  p.locations.remember(p.small, {"reg.test", "t"});
  p.registry.repositories["t"].blobs[p.small.str()] = p.bytes_of(p.small);
  PushResult result = p.push();
  EXPECT_EQ(p.registry.count("HEAD /v2/t/blobs/" + p.small.str()), 1);
  EXPECT_EQ(p.events_of(p.small), std::vector<Kind>{Kind::kExists});
  EXPECT_EQ(result.blobs_existing, 1);
}

TEST(Pusher, ABlobSeenInAnotherRepositoryOfTheRegistryIsMountedFromThere) {
  PushFixture p;
  p.locations.remember(p.large, {"reg.test", "other"});
  p.locations.remember(p.small, {"elsewhere.test", "other"});
  p.registry.repositories["other"].blobs[p.large.str()] = p.bytes_of(p.large);
  p.registry.repositories["other"].blobs[p.small.str()] = p.bytes_of(p.small);
  PushResult result = p.push();
  EXPECT_EQ(result.blobs_mounted, 1);
  ASSERT_EQ(p.events_of(p.large), std::vector<Kind>{Kind::kMounted});
  for (const BlobEvent& e : p.events) {
    if (e.kind == Kind::kMounted) {
      EXPECT_EQ(e.from, "other");
    }
  }
  EXPECT_EQ(p.registry.repositories["t"].blobs[p.large.str()], p.bytes_of(p.large));
  EXPECT_EQ(p.events_of(p.small), kUploaded) << "another registry's repository is no mount source";
  EXPECT_EQ(p.registry.count("POST /v2/t/blobs/uploads/"), 3) << "one mount, two uploads";
  EXPECT_EQ(p.registry.count_starting("PUT /v2/t/blobs/uploads/"), 2);
}

// A registry that refuses a mount may answer with an upload session: the upload then uses it, rather than leaving
// it open and starting another.
TEST(Pusher, AMountAnsweredWithASessionIsUploadedThroughThatSession) {
  PushFixture p;
  p.locations.remember(p.large, {"reg.test", "emptied"});
  PushResult result = p.push();
  EXPECT_EQ(result.blobs_uploaded, 3);
  EXPECT_EQ(p.registry.count("POST /v2/t/blobs/uploads/"), 3) << "the refused mount's session took the bytes";
  EXPECT_EQ(p.registry.repositories["t"].blobs[p.large.str()], p.bytes_of(p.large));
  EXPECT_TRUE(p.registry.uploads.empty());
}

TEST(Pusher, ARegistryThatRefusesABodyOnPutGetsOnePatchAndAnEmptyPut) {
  PushFixture p;
  p.registry.intercept = [](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.method == "PUT" && r.body_file) return FakeRegistry::error(405, "UNSUPPORTED");
    return std::nullopt;
  };
  PushResult result = p.push();
  EXPECT_EQ(result.blobs_uploaded, 3);
  EXPECT_EQ(p.registry.repositories["t"].blobs[p.large.str()], p.bytes_of(p.large));
  EXPECT_EQ(p.registry.count("POST /v2/t/blobs/uploads/"), 3);
  EXPECT_EQ(p.registry.count_starting("PATCH /v2/t/blobs/uploads/"), 3);
  EXPECT_EQ(p.registry.count_starting("PUT /v2/t/blobs/uploads/"), 3) << "the empty PUTs";
}

// The tag names a manifest an earlier push of this image made: the registry holds every blob it names, so one HEAD
// of the tag replaces a HEAD per blob.
TEST(Pusher, BlobsTheTaggedManifestNamesAreNotAskedAboutOneByOne) {
  PushFixture p;
  p.options.store = &p.cache.blobs();
  for (const Digest& digest : {p.large, p.small, p.config}) p.locations.remember(digest, {"reg.test", "t"});
  p.hold_image(p.registry, "t", "latest");
  PushResult result = p.push();
  EXPECT_EQ(result.blobs_existing, 3);
  EXPECT_EQ(p.registry.requests,
            (std::vector<std::string>{"HEAD /v2/t/manifests/latest", "PUT /v2/t/manifests/latest"}));
}

TEST(Pusher, ExtraTagsFollowTheTargetAndThePushedBlobsAreRememberedThere) {
  PushFixture p;
  p.options.extra_tags = {"v1", "latest"};
  PushResult result = p.push();
  EXPECT_EQ(result.tags, (std::vector<std::string>{"reg.test/t:latest", "reg.test/t:v1"}));
  EXPECT_EQ(p.registry.repositories["t"].manifests["v1"], p.built.image->raw_manifest());
  EXPECT_EQ(p.registry.requests.back(), "PUT /v2/t/manifests/v1");
  EXPECT_EQ(p.registry.count("PUT /v2/t/manifests/latest"), 1) << "a tag named twice is put once";
  for (const Digest& digest : {p.large, p.small, p.config})
    EXPECT_EQ(p.locations.known(digest), (std::vector<BlobLocation>{{"reg.test", "t"}}));
}

TEST(Pusher, AtMostJobsUploadsRunAtOnce) {
  PushFixture p;
  p.options.jobs = 1;
  std::mutex mutex;
  int sending = 0, most = 0;
  p.registry.intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (!r.body_file) return std::nullopt;
    {
      std::lock_guard lock(mutex);
      most = std::max(most, ++sending);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // long enough for another upload to begin
    std::lock_guard lock(mutex);
    --sending;
    return std::nullopt;
  };
  EXPECT_EQ(p.push().blobs_uploaded, 3);
  EXPECT_EQ(most, 1);
}

TEST(Pusher, AFailedBlobFailsThePushInOneLineAndNoManifestIsPut) {
  PushFixture p;
  p.registry.intercept = [&p](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (sends_blob(r, p.large)) return FakeRegistry::error(400, "BLOB_UPLOAD_INVALID");
    return std::nullopt;
  };
  try {
    p.push();
    FAIL() << "the push succeeded";
  } catch (const trainpack::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("cannot upload " + p.large.str() + " to reg.test/t"), std::string::npos) << message;
    EXPECT_NE(message.find("BLOB_UPLOAD_INVALID"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_TRUE(p.registry.repositories["t"].manifests.empty());
  EXPECT_EQ(p.registry.count_starting("PUT /v2/t/manifests/"), 0);
  EXPECT_TRUE(p.registry.uploads.empty()) << "the failed upload's session is cancelled";
  EXPECT_TRUE(p.locations.known(p.small).empty()) << "a failed push tells BlobLocations nothing";
}

// Once a blob has failed so has the push: an upload under way stops rather than sending the rest of its bytes,
// whether they come from the store or are relayed from the base's registry, and the error reported is the failed
// blob's, not the stopped upload's.
TEST(Pusher, AFailedBlobStopsTheUploadsUnderWayAndItsErrorIsTheOneReported) {
  for (bool relayed : {false, true}) {
    SCOPED_TRACE(relayed ? "relayed" : "from the store");
    PushFixture p;
    p.hold_image(p.source, "base", "1");
    trainpack::store::BlobStore pulled(p.dir.path() / "pulled");
    std::shared_ptr<RemoteImage> base = RemoteImage::open(p.source_client, {"src.test", "base", "1", ""}, {}, pulled);
    std::atomic<bool> sending{false}, stopped{false};
    p.registry.intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
      if (sends_blob(r, p.large)) {
        sending = true;
        stopped = comes_true([&] { return r.stop && r.stop->load(); });
        throw trainpack::Error("PUT " + r.url + ": stopped before it was done");
      }
      if (sends_blob(r, p.small) && comes_true([&] { return sending.load(); }))
        return FakeRegistry::error(400, "BLOB_UPLOAD_INVALID");
      return std::nullopt;
    };
    try {
      p.push(relayed ? *base : static_cast<const trainpack::image::Image&>(*p.built.image));
      FAIL() << "the push succeeded";
    } catch (const trainpack::Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot upload " + p.small.str()), std::string::npos) << e.what();
    }
    EXPECT_TRUE(stopped.load()) << "the large blob's upload ran on";
    EXPECT_TRUE(p.registry.repositories["t"].manifests.empty());
    EXPECT_TRUE(p.registry.uploads.empty()) << "both sessions are cancelled";
  }
}

TEST(Pusher, ARefusedManifestFailsThePushNamingTheTarget) {
  PushFixture p;
  p.registry.intercept = [](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (r.method == "PUT" && r.url.find("/manifests/") != std::string::npos)
      return FakeRegistry::error(400, "MANIFEST_INVALID");
    return std::nullopt;
  };
  try {
    p.push();
    FAIL() << "the push succeeded";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot push the manifest to reg.test/t:latest"), std::string::npos)
        << e.what();
  }
}

// RemoteImage (registry/remote_image.h) knows where each blob of a base came from: a push to another repository of
// that registry mounts them all and downloads none.
TEST(Pusher, ABaseImagesBlobsAreMountedFromItsRepository) {
  PushFixture p;
  p.hold_image(p.registry, "base", "1");
  trainpack::store::BlobStore pulled(p.dir.path() / "pulled");
  std::shared_ptr<RemoteImage> base = RemoteImage::open(p.client, {"reg.test", "base", "1", ""}, {}, pulled);
  PushResult result = p.push(*base);
  EXPECT_EQ(result.blobs_mounted, 3);
  EXPECT_EQ(p.registry.count_starting("PUT /v2/t/blobs/"), 0);
  EXPECT_EQ(p.registry.repositories["t"].blobs[p.large.str()], p.bytes_of(p.large));
  EXPECT_FALSE(pulled.has(p.large)) << "a mounted layer is never downloaded";
}
