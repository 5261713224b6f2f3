// A base blob that another registry holds goes to the target through registry/blob_relay.h: downloaded while it is
// uploaded, never written to disk, and not committed unless it is the blob its digest names.
#include "registry/blob_relay.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "registry/remote_image.h"
#include "support/error.h"
#include "tests/unit/push_test_support.h"

using namespace trainpack::registry;
using trainpack::test_support::PushFixture;

namespace {

// The fixture's image as a base in src.test's repository "base", opened with an empty store.
struct RelayedBase : PushFixture {
  trainpack::store::BlobStore pulled{dir.path() / "pulled"};
  std::shared_ptr<RemoteImage> base;
  RelayedBase() {
    hold_image(source, "base", "1");
    base = RemoteImage::open(source_client, {"src.test", "base", "1", ""}, {}, pulled);
  }
};

}  // namespace

TEST(BlobRelay, ABlobFromAnotherRegistryIsCopiedWithoutTouchingTheStore) {
  RelayedBase r;
  PushResult result = r.push(*r.base);
  EXPECT_EQ(result.blobs_uploaded, 3);
  EXPECT_EQ(result.blobs_mounted, 0) << "a mount does not cross registries (but Google's)";
  EXPECT_EQ(r.registry.repositories["t"].blobs[r.large.str()], r.bytes_of(r.large));
  EXPECT_EQ(r.source.count("GET /v2/base/blobs/" + r.large.str()), 1);
  EXPECT_FALSE(r.pulled.has(r.large)) << "relayed, not stored";
  EXPECT_EQ(r.registry.requests.back(), "PUT /v2/t/manifests/latest");
}

TEST(BlobRelay, ASourceThatSendsOtherBytesFailsTheUploadAndTheTargetKeepsNothing) {
  RelayedBase r;
  std::string& bytes = r.source.repositories["base"].blobs[r.large.str()];
  bytes[bytes.size() / 2] ^= 1;
  try {
    r.push(*r.base);
    FAIL() << "a corrupt blob was pushed";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("hash to"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(r.registry.repositories["t"].blobs.count(r.large.str()));
  EXPECT_TRUE(r.registry.repositories["t"].manifests.empty());
  EXPECT_TRUE(r.registry.uploads.empty()) << "the upload's session is cancelled";
}
