// A push that fails after it opened blob upload sessions cancels them (OCI distribution-spec "Canceling an upload":
// DELETE <location>), best effort and with the push's credentials, and still reports its own error: against the
// fault server (which logs the DELETEs and lists open sessions) and against the real registry (where a cancelled
// session's Location answers 404 BLOB_UPLOAD_UNKNOWN).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

#include "transports/oci_layout.h"
#include "net/http_client.h"
#include "net/url.h"
#include "registry/pusher.h"
#include "registry/registry_client.h"
#include "support/error.h"
#include "tests/integration/push_faults.h"

using namespace trainpack::testing;
using trainpack::Error;
using trainpack::net::HttpClient;
using trainpack::net::HttpOptions;
using trainpack::net::HttpRequest;
using trainpack::net::HttpResponse;
using trainpack::registry::Keychain;
using trainpack::registry::Reference;
using trainpack::registry::RegistryClient;
using trainpack::net::resolve_url;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class UploadCancelTest : public PushFaultsFixture {
 protected:
  // Upload paths a PUT was sent to and those that got a DELETE answered 204, per the log.
  std::set<std::string> opened_sessions() {
    std::set<std::string> out;
    for (const auto& e : server_->requests("PUT", "/trainer/app/blobs/uploads/.")) out.insert(e.at("path"));
    return out;
  }
  std::set<std::string> cancelled_sessions(const std::string& auth = "") {
    std::set<std::string> out;
    for (const auto& e : server_->requests("DELETE", "/trainer/app/blobs/uploads/.")) {
      EXPECT_EQ(e.at("status"), 204) << e.dump();
      if (!auth.empty()) {
        EXPECT_EQ(e.at("auth"), auth) << "the DELETE goes with the push's credentials";
      }
      out.insert(e.at("path"));
    }
    return out;
  }
  std::size_t open_uploads() { return server_->state().at("uploads").size(); }
  // Sessions the registry opened (POSTs answered 202).
  std::size_t sessions_answered() {
    std::size_t n = 0;
    for (const auto& e : server_->requests("POST", "/trainer/app/blobs/uploads/")) n += e.at("status") == 202;
    return n;
  }
};

TEST_F(UploadCancelTest, AFailedUploadIsCancelledAndItsErrorReported) {
  std::string config = bearer_auth_config();
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "status"}, {"status", 400},
                  {"times", -1}, {"content_type", "application/json"},
                  {"body", R"({"errors": [{"code": "SIZE_INVALID", "message": "injected"}]})"}});
  auto r = push("trainer/app", config);
  expect_one_line_error(r);
  EXPECT_NE(cause_of(r).find("400 SIZE_INVALID: injected"), std::string::npos) << r.err;
  std::set<std::string> used = opened_sessions();
  ASSERT_FALSE(used.empty());
  // Every session is cancelled: those the failed uploads used, and those opened ahead that none used.
  std::set<std::string> cancelled = cancelled_sessions("bearer");
  for (const std::string& path : used) EXPECT_TRUE(cancelled.count(path)) << path << " not cancelled";
  EXPECT_EQ(cancelled.size(), sessions_answered()) << "a session opened and not cancelled";
  EXPECT_EQ(open_uploads(), 0u) << server_->state().dump();
  EXPECT_FALSE(tagged_in_state("trainer/app"));
}

// The relay of a base layer breaks off every time: each of the three sessions it opened is cancelled.
TEST_F(UploadCancelTest, AnAbortedRelayIsCancelled) {
  server_->config({{"mount", "404"}});
  server_->fault({{"method", "GET"}, {"path", base_layer_}, {"action", "truncate"}, {"bytes", 4096}, {"times", -1}});
  auto r = push("trainer/app");
  expect_one_line_error(r);
  EXPECT_NE(cause_of(r).find(base_layer_), std::string::npos) << r.err;
  EXPECT_FALSE(cancelled_sessions().empty());
  EXPECT_EQ(open_uploads(), 0u) << server_->state().dump();
}

// A cancel that fails (the registry refuses DELETE) changes nothing about the push's own error.
TEST_F(UploadCancelTest, AFailingCancelDoesNotMaskTheError) {
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "status"}, {"status", 400},
                  {"times", -1}});
  server_->fault({{"method", "DELETE"}, {"action", "reset"}, {"times", -1}});
  auto r = push("trainer/app", "{}", {"--http-timeout=5"});
  expect_one_line_error(r);
  EXPECT_NE(cause_of(r).find("cannot upload sha256:"), std::string::npos) << r.err;
  EXPECT_NE(cause_of(r).find(": 400 BAD_REQUEST: injected fault"), std::string::npos) << r.err;
  EXPECT_FALSE(server_->requests("DELETE", "/blobs/uploads/").empty());
}

// A push that succeeds cancels nothing.
TEST_F(UploadCancelTest, ASuccessfulPushSendsNoDelete) {
  auto r = push("trainer/app");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(server_->requests("DELETE", ".").empty());
  EXPECT_EQ(open_uploads(), 0u);
}

// ---- the real registry -------------------------------------------------------------------------------------------

HttpOptions quick_options() {
  HttpOptions o;
  o.max_attempts = 2;
  o.initial_backoff = std::chrono::milliseconds(50);
  o.certs_dirs = {};
  return o;
}

HttpResponse get(HttpClient& http, const std::string& url) {
  HttpRequest r;
  r.url = url;
  return http.send(r);
}

// The base image pushed to the real registry through a transport that passes everything on and records each upload
// session's Location (with its _state, which the registry needs to find it again), but fails every blob PUT as if the
// connection broke mid-body. Then each recorded Location answers 404 BLOB_UPLOAD_UNKNOWN: the sessions are gone.
// A session this test opens and leaves alone answers 204, so the check can tell the difference.
TEST(UploadCancelRegistry, AFailedPushLeavesNoUploadSessionBehind) {
  const std::string registry = env_or_fail("TRAINPACK_TEST_REGISTRY");
  const std::string repo = "cancel/app" + std::to_string(::getpid());
  auto image = trainpack::transports::open_oci_layout(base_oci_dir(), "3.11", trainpack::image::Platform{});
  HttpClient http(quick_options());
  Keychain keychain({});
  std::mutex mutex;
  std::vector<std::string> locations;
  int deletes = 0;
  auto transport = [&](const HttpRequest& r) -> HttpResponse {
    if (r.method == "PUT" && r.url.find("/blobs/uploads/") != std::string::npos)
      throw Error("PUT " + r.url.substr(0, r.url.find('?')) + " failed: connection reset by peer (injected)");
    HttpResponse response = http.send(r);
    std::lock_guard<std::mutex> lock(mutex);
    if (r.method == "POST" && response.status == 202) locations.push_back(resolve_url(response.url, response.header("location")));
    if (r.method == "DELETE") ++deletes;
    return response;
  };
  RegistryClient client(transport, keychain, registry, "http");
  Reference target = Reference::parse(registry + "/" + repo + ":v1");
  try {
    trainpack::registry::push_image(*image, target, [&](const std::string&) -> RegistryClient& { return client; }, {});
    FAIL() << "the push succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(injected)"), std::string::npos) << "the push's own error: " << e.what();
  }
  ASSERT_FALSE(locations.empty());
  EXPECT_EQ(deletes, static_cast<int>(locations.size()));
  for (const auto& location : locations) {
    HttpResponse status = get(http, location);
    EXPECT_EQ(status.status, 404) << location << ": " << status.body;
    EXPECT_NE(status.body.find("BLOB_UPLOAD_UNKNOWN"), std::string::npos) << status.body;
  }
  // control: a session nobody cancels is still there
  HttpRequest post;
  post.method = "POST";
  post.url = "http://" + registry + "/v2/" + repo + "/blobs/uploads/";
  HttpResponse opened = http.send(post);
  ASSERT_EQ(opened.status, 202);
  std::string location = resolve_url(opened.url, opened.header("location"));
  EXPECT_EQ(get(http, location).status, 204);
  HttpRequest del;
  del.method = "DELETE";
  del.url = location;
  EXPECT_EQ(http.send(del).status, 204);
}

}  // namespace
