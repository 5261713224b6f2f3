// trainpack build pushing through a registry that misbehaves on purpose (tests/fixtures/fault_server.py): every
// fault either recovers or fails with a one-line cause, and a tag never points at a manifest with missing blobs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "store/cache_dir.h"
#include "tests/integration/push_faults.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class PushFaultsTest : public PushFaultsFixture {};

TEST_F(PushFaultsTest, ServerErrorsResetsAndRateLimitsAreRetried) {
  server_->fault({{"method", "PUT"}, {"path", "/blobs/uploads/"}, {"action", "status"}, {"status", 500}, {"times", 2}});
  server_->fault({{"method", "POST"}, {"path", "/blobs/uploads/"}, {"action", "status"}, {"status", 503},
                  {"headers", {{"Retry-After", "1"}}}});
  server_->fault({{"method", "HEAD"}, {"path", "/blobs/"}, {"action", "status"}, {"status", 429},
                  {"headers", {{"Retry-After", "1"}}}});
  server_->fault({{"method", "PUT"}, {"path", "/blobs/uploads/"}, {"action", "reset"}, {"after", 2}});
  server_->fault({{"method", "PUT"}, {"path", "/manifests/"}, {"action", "status"}, {"status", 502}});
  auto r = push("trainer/app");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(r.out.starts_with(server_->host() + "/trainer/app@sha256:")) << r.out;
  EXPECT_TRUE(tagged("trainer/app"));
  expect_every_fault_fired();
}

// With mounts refused, the base layer is relayed from the registry's blob GET into the upload. A GET truncated
// once starts the upload over; one truncated every time fails with one line and no tag, and the local store never
// holds the base layer.
TEST_F(PushFaultsTest, TruncatedRelayedBaseLayerIsRetriedAndAPersistentOneFailsCleanly) {
  server_->config({{"mount", "404"}});
  server_->fault({{"method", "GET"}, {"path", base_layer_}, {"action", "truncate"}, {"bytes", 4096}});
  auto ok = push("trainer/app");
  ASSERT_EQ(ok.exit_code, 0) << describe({"trainpack build"}, ok);
  EXPECT_TRUE(tagged("trainer/app"));
  EXPECT_EQ(server_->requests("GET", base_layer_).size(), 2u) << "the truncated relay was not retried once";

  server_->fault({{"method", "GET"}, {"path", base_layer_}, {"action", "truncate"}, {"bytes", 4096}, {"times", -1}});
  auto bad = push("trainer/other");
  expect_one_line_error(bad);
  EXPECT_NE(bad.err.find(base_layer_), std::string::npos) << bad.err;
  EXPECT_FALSE(tagged("trainer/other"));
  EXPECT_TRUE(server_->requests("PUT", "/v2/trainer/other/manifests/").empty());
  const fs::path blobs = trainpack::store::kind_dir(dir_->path() / "cache", trainpack::store::CacheKind::kBlobs) / "sha256";
  EXPECT_FALSE(fs::exists(blobs / base_layer_.substr(7)));
}

TEST_F(PushFaultsTest, RefusedMountsFallBackToUploads) {
  for (std::string mode : {"401", "403", "404", "202", "500"}) {
    server_->config({{"mount", mode}});
    server_->clear_log();
    const std::string repo = "trainer/mount-" + mode;
    auto r = push(repo);
    ASSERT_EQ(r.exit_code, 0) << "mount " << mode << ": " << describe({"trainpack build"}, r);
    EXPECT_FALSE(server_->requests("POST", "/v2/" + repo + "/blobs/uploads/").empty());
    EXPECT_EQ(server_->requests("PUT", "/v2/" + repo + "/blobs/uploads/").size(), 4u)
        << "mount " << mode << ": the base layer, the two new layers and the config are uploaded";
    EXPECT_TRUE(tagged(repo)) << "mount " << mode;
  }
}

TEST_F(PushFaultsTest, MountWorksWithinTheRegistry) {
  auto r = push("trainer/app");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  auto mounts = server_->requests("POST", "/v2/trainer/app/blobs/uploads/");
  int mounted = 0;
  for (const auto& m : mounts) mounted += m.at("query").get<std::string>().find("mount=") != std::string::npos;
  EXPECT_EQ(mounted, 1);
  for (const auto& put : server_->requests("PUT", "/blobs/uploads/"))
    EXPECT_EQ(put.at("query").get<std::string>().find(base_layer_.substr(7)), std::string::npos)
        << "the base layer was uploaded instead of mounted";
}

TEST_F(PushFaultsTest, UploadsAreMonolithicWithContentLengthAndNeverChunked) {
  server_->config({{"patch", "refuse"}});
  auto r = push("trainer/app");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(server_->requests("PATCH", ".").empty());
  for (const auto& e : server_->requests()) {
    EXPECT_FALSE(e.at("chunked").get<bool>()) << e.dump();
    if (e.at("method") == "PUT") {
      EXPECT_FALSE(e.at("content_length").is_null()) << e.dump();
    }
  }
}

TEST_F(PushFaultsTest, TokenExpiryMidPushIsRefreshed) {
  server_->control_one({{"op", "auth"}, {"mode", "bearer"}, {"users", {{"pusher", "s3cret-pass"}}},
                        {"anonymous", "pull"}, {"token_uses", 4}});
  std::string auth = "cHVzaGVyOnMzY3JldC1wYXNz";  // base64("pusher:s3cret-pass")
  auto r = push("trainer/app", R"({"auths": {")" + server_->host() + R"(": {"auth": ")" + auth + R"("}}})");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_GT(server_->requests("GET", "^/token").size(), 1u) << "expected token refreshes";
  EXPECT_TRUE(tagged("trainer/app"));
}

TEST_F(PushFaultsTest, WrongPasswordNamesTheCredentialButNotTheSecret) {
  server_->control_one({{"op", "auth"}, {"mode", "bearer"}, {"users", {{"pusher", "s3cret-pass"}}},
                        {"anonymous", "pull"}});
  std::string auth = "cHVzaGVyOndyb25nLXBhc3N3b3Jk";  // base64("pusher:wrong-password")
  auto r = push("trainer/app", R"({"auths": {")" + server_->host() + R"(": {"auth": ")" + auth + R"("}}})");
  expect_one_line_error(r);
  EXPECT_NE(r.err.find("pusher"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("wrong-password"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(auth), std::string::npos) << r.err;
  EXPECT_FALSE(tagged("trainer/app"));
}

TEST_F(PushFaultsTest, CrossHostBlobRedirectsGetNoAuthorization) {
  server_->control_one({{"op", "auth"}, {"mode", "basic"}, {"users", {{"pusher", "s3cret-pass"}}}});
  server_->config({{"blob_redirect", "alt"}, {"alt_reject_auth", true}});
  std::string auth = "cHVzaGVyOnMzY3JldC1wYXNz";
  auto r = push("trainer/app", R"({"auths": {")" + server_->host() + R"(": {"auth": ")" + auth + R"("}}})");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  int alt = 0;
  for (const auto& e : server_->requests()) {
    if (e.at("server") != "alt") continue;
    ++alt;
    EXPECT_TRUE(e.at("auth").is_null()) << "Authorization leaked to another host: " << e.dump();
  }
  EXPECT_GT(alt, 0) << "the base download should have been redirected";
}

// An upload Location on another host (the registry's storage) receives the blobs without the registry's
// credentials, as docker, containerd and go-containerregistry send them.
TEST_F(PushFaultsTest, CrossHostUploadLocationsGetNoAuthorization) {
  for (std::string mode : {"basic", "bearer"}) {
    server_->control_one({{"op", "auth"}, {"mode", mode}, {"users", {{"pusher", "s3cret-pass"}}}, {"anonymous", "pull"}});
    server_->config({{"upload_host", "alt"}});
    server_->clear_log();
    const std::string repo = "trainer/" + mode;
    std::string auth = "cHVzaGVyOnMzY3JldC1wYXNz";
    auto r = push(repo, R"({"auths": {")" + server_->host() + R"(": {"auth": ")" + auth + R"("}}})");
    ASSERT_EQ(r.exit_code, 0) << mode << ": " << describe({"trainpack build"}, r);
    int alt = 0;
    for (const auto& e : server_->requests()) {
      if (e.at("server") != "alt") continue;
      ++alt;
      EXPECT_TRUE(e.at("auth").is_null()) << mode << ": Authorization sent to another host: " << e.dump();
    }
    EXPECT_GT(alt, 0) << mode << ": the new blobs are uploaded there";
    EXPECT_TRUE(tagged_in_state(repo)) << mode;
  }
}

TEST_F(PushFaultsTest, PersistentUploadFailureLeavesNoTag) {
  server_->fault({{"method", "PUT"}, {"path", "/blobs/uploads/"}, {"action", "status"}, {"status", 500},
                  {"times", -1}, {"format", "html"}});
  auto r = push("trainer/app");
  expect_one_line_error(r);
  EXPECT_EQ(r.err.find("<html"), std::string::npos) << "HTML error pages must not reach the user: " << r.err;
  EXPECT_FALSE(tagged("trainer/app"));
  EXPECT_TRUE(server_->requests("PUT", "/manifests/").empty());
}

}  // namespace
