// PushAhead (registry/push_ahead.h) against an in-memory registry: a blob offered during the build is pushed once
// and the push only counts it, the upload sessions opened ahead are used or cancelled, and a failed build stops an
// upload under way.
#include "registry/push_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/error.h"
#include "tests/unit/push_test_support.h"

using namespace trainpack::registry;
using trainpack::net::HttpRequest;
using trainpack::net::HttpResponse;
using trainpack::test_support::comes_true;
using trainpack::test_support::FakeRegistry;
using trainpack::test_support::PushFixture;
using trainpack::test_support::sends_blob;
using Kind = BlobEvent::Kind;

namespace {

// The fixture, with PushAhead's options: its events go where the push's would.
struct Ahead : PushFixture {
  PushAheadOptions ahead_options;
  const trainpack::image::Descriptor large_layer = built.image->manifest().layers.at(0);

  Ahead() {
    ahead_options.store = &cache.blobs();
    ahead_options.on_blob = [this](const BlobEvent& e) { events.push_back(e); };
  }
};

}  // namespace

TEST(PushAhead, AnOfferedBlobIsUploadedOnceAndThePushOnlyCountsIt) {
  Ahead a;
  {
    PushAhead ahead(a.client, a.target, a.ahead_options);
    ahead.offer(a.large_layer);
    a.options.ahead = &ahead;
    PushResult result = a.push();
    EXPECT_EQ(result.blobs_uploaded, 3);
  }
  EXPECT_EQ(a.events_of(a.large), (std::vector<Kind>{Kind::kUploading, Kind::kUploaded}));
  EXPECT_EQ(a.registry.repositories["t"].blobs[a.large.str()], a.bytes_of(a.large));
  EXPECT_EQ(a.registry.count("POST /v2/t/blobs/uploads/"), 3) << "the two sessions opened ahead, and one more";
  EXPECT_EQ(a.registry.count("HEAD /v2/t/blobs/" + a.large.str()), 1);
  // The tag's HEAD, asked ahead beside the push, may come last on a loaded machine; no blob may follow the tag's PUT.
  for (const std::string& later : a.registry.requests_after("PUT /v2/t/manifests/latest"))
    EXPECT_EQ(later, "HEAD /v2/t/manifests/latest") << "after the tag's PUT";
  EXPECT_TRUE(a.registry.uploads.empty());
}

TEST(PushAhead, SessionsThePushDidNotUseAreCancelled) {
  Ahead a;
  a.ahead_options.sessions = 5;
  {
    PushAhead ahead(a.client, a.target, a.ahead_options);
    // All five POSTs first: a session whose POST is not sent when the push ends is never opened at all.
    ASSERT_TRUE(comes_true([&] { return a.registry.count("POST /v2/t/blobs/uploads/") == 5; }));
    a.options.ahead = &ahead;
    a.push();
  }
  EXPECT_EQ(a.registry.count("POST /v2/t/blobs/uploads/"), 5) << "three used by the push, none opened by it";
  EXPECT_EQ(a.registry.count_starting("DELETE /v2/t/blobs/uploads/"), 2);
  EXPECT_TRUE(a.registry.uploads.empty());
}

TEST(PushAhead, AFailedBuildStopsAnUploadUnderWay) {
  Ahead a;
  std::atomic<bool> sending{false}, stopped{false};
  a.registry.intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (!sends_blob(r, a.large)) return std::nullopt;
    sending = true;
    stopped = comes_true([&] { return r.stop && r.stop->load(); });
    throw trainpack::Error("PUT " + r.url + ": stopped before it was done");
  };
  {
    PushAhead ahead(a.client, a.target, a.ahead_options);
    ahead.offer(a.large_layer);
    EXPECT_TRUE(comes_true([&] { return sending.load(); }));
    ahead.abandon();
  }
  EXPECT_TRUE(stopped.load());
  EXPECT_FALSE(a.registry.repositories["t"].blobs.count(a.large.str()));
  EXPECT_TRUE(a.registry.uploads.empty()) << "the stopped upload's session is cancelled";
}

TEST(PushAhead, AnOfferedBlobThatFailedFailsThePush) {
  Ahead a;
  a.registry.intercept = [&](const HttpRequest& r) -> std::optional<HttpResponse> {
    if (sends_blob(r, a.large)) return FakeRegistry::error(400, "BLOB_UPLOAD_INVALID");
    return std::nullopt;
  };
  PushAhead ahead(a.client, a.target, a.ahead_options);
  ahead.offer(a.large_layer);
  a.options.ahead = &ahead;
  try {
    a.push();
    FAIL() << "the push succeeded";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot upload " + a.large.str()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(a.registry.repositories["t"].manifests.empty());
}

// Blobs the push will need that an earlier one may have left (the referrers' empty config) are asked about beside the
// tag, and those there join what the tag vouches for: no later request asks again.
TEST(PushAhead, BlobsAskedAboutBesideTheTagJoinWhatItVouchesFor) {
  Ahead a;
  const trainpack::image::Digest there = trainpack::image::sha256_of("{}");
  const trainpack::image::Digest absent = trainpack::image::sha256_of("not pushed");
  a.registry.repositories["t"].blobs[there.str()] = "{}";
  a.ahead_options.ask_about = {there, absent};
  PushAhead ahead(a.client, a.target, a.ahead_options);
  std::set<trainpack::image::Digest> vouched = ahead.under_tag().get();
  EXPECT_TRUE(vouched.count(there));
  EXPECT_FALSE(vouched.count(absent));
  EXPECT_EQ(a.registry.count("HEAD /v2/t/blobs/" + there.str()), 1);
  EXPECT_EQ(a.registry.count("HEAD /v2/t/blobs/" + absent.str()), 1);
}
