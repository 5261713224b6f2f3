// The fault matrix of a push (tests/fixtures/fault_server.py holds the base and receives the image): the token
// endpoint, manifest requests, rate limits, a token that expires mid-upload, cross-host redirects, stalls and dead
// registries. Each case either recovers, or fails with one line naming what failed, a non-zero exit, and nothing
// half-written: no tag (so none pointing at missing blobs), no output directory.
#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/push_faults.h"
#include "tests/integration/silent_listener.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class FaultMatrixTest : public PushFaultsFixture {
 protected:
  bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

  // Statuses of the logged requests with this method and path, in order.
  std::vector<long> statuses(const std::string& method, const std::string& path_regex) {
    std::vector<long> out;
    for (const auto& e : server_->requests(method, path_regex))
      out.push_back(e.at("status").is_null() ? -1 : e.at("status").get<long>());
    return out;
  }
};

// ---- the token endpoint ---------------------------------------------------------------------------------------------

TEST_F(FaultMatrixTest, TokenServerErrorsAreRetried) {
  std::string config = bearer_auth_config();
  server_->fault({{"method", "GET"}, {"path", "^/token$"}, {"action", "status"}, {"status", 500}, {"times", 2}});
  server_->fault({{"method", "GET"}, {"path", "^/token$"}, {"action", "status"}, {"status", 503},
                  {"headers", {{"Retry-After", "1"}}}});
  auto r = push("trainer/app", config);
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(tagged_in_state("trainer/app"));
  expect_every_fault_fired();
}

TEST_F(FaultMatrixTest, APersistentTokenServerFailureIsOneLine) {
  std::string config = bearer_auth_config();
  server_->fault({{"method", "GET"}, {"path", "^/token$"}, {"action", "status"}, {"status", 500}, {"times", -1},
                  {"format", "html"}});
  auto r = push("trainer/app", config);
  expect_one_line_error(r);
  EXPECT_TRUE(contains(cause_of(r), "the token server " + server_->host() + " of " + server_->host() + " answered 500"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "<html")) << r.err;
  EXPECT_FALSE(tagged_in_state("trainer/app"));
}

TEST_F(FaultMatrixTest, ATokenRefusalNamesTheCredentialButNotTheSecret) {
  std::string config = bearer_auth_config();
  server_->fault({{"method", "GET"}, {"path", "^/token$"}, {"action", "status"}, {"status", 401}, {"times", -1}});
  auto r = push("trainer/app", config);
  expect_one_line_error(r);
  EXPECT_TRUE(contains(cause_of(r), "authentication as pusher")) << r.err;
  EXPECT_TRUE(contains(cause_of(r), "token server " + server_->host() + " answered 401")) << r.err;
  EXPECT_FALSE(tagged_in_state("trainer/app"));
}

TEST_F(FaultMatrixTest, AMalformedTokenAnswerIsOneLine) {
  std::string config = bearer_auth_config();
  server_->fault({{"method", "GET"}, {"path", "^/token$"}, {"action", "status"}, {"status", 200}, {"times", -1},
                  {"body", "{\"token\": \"tok-trunc"}, {"content_type", "application/json"}});
  auto r = push("trainer/app", config);
  expect_one_line_error(r);
  EXPECT_TRUE(contains(cause_of(r), "token server " + server_->host() + " answered with something that is not a JSON"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "\nhint: ")) << r.err;
  EXPECT_FALSE(tagged_in_state("trainer/app"));
}

TEST_F(FaultMatrixTest, AStalledTokenServerFailsAtTheDeadline) {
  std::string config = bearer_auth_config();
  server_->fault({{"method", "GET"}, {"path", "^/token$"}, {"action", "stall"}, {"seconds", 60}, {"times", -1}});
  auto start = std::chrono::steady_clock::now();
  auto r = push("trainer/app", config, {"--http-timeout=3"});
  expect_one_line_error(r);
  EXPECT_LT(seconds_since(start), 15);
  EXPECT_TRUE(contains(cause_of(r), server_->host() + " stalled for 3 s (GET http://" + server_->host() + "/token"))
      << r.err;
  EXPECT_FALSE(contains(r.err, "scope=")) << "no query strings in errors: " << r.err;
  EXPECT_TRUE(contains(r.err, "--http-timeout")) << r.err;
  EXPECT_FALSE(tagged_in_state("trainer/app"));
}

// ---- manifests --------------------------------------------------------------------------------------------------------

TEST_F(FaultMatrixTest, ManifestServerErrorsAreRetried) {
  server_->fault({{"method", "HEAD"}, {"path", "/manifests/"}, {"action", "status"}, {"status", 503}});
  server_->fault({{"method", "GET"}, {"path", "/manifests/"}, {"action", "status"}, {"status", 500}, {"times", 2}});
  server_->fault({{"method", "PUT"}, {"path", "/manifests/"}, {"action", "status"}, {"status", 504}, {"times", 2},
                  {"format", "html"}});
  auto r = push("trainer/app");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(tagged_in_state("trainer/app"));
  EXPECT_EQ(statuses("PUT", "/v2/trainer/app/manifests/v1"), (std::vector<long>{504, 504, 201}));
  expect_every_fault_fired();
}

TEST_F(FaultMatrixTest, ARefusedManifestPutIsOneLineWithTheRegistrysCode) {
  server_->fault({{"method", "PUT"}, {"path", "/manifests/"}, {"action", "status"}, {"status", 400}, {"times", -1},
                  {"content_type", "application/json"},
                  {"body", R"({"errors": [{"code": "MANIFEST_INVALID", "message": "manifest invalid",
                               "detail": {"reason": "injected\nsecond line"}}]})"}});
  auto r = push("trainer/app");
  expect_one_line_error(r);
  EXPECT_TRUE(contains(cause_of(r), "cannot push the manifest to " + server_->host() +
                                        "/trainer/app:v1: 400 MANIFEST_INVALID: manifest invalid"))
      << r.err;
  EXPECT_FALSE(tagged_in_state("trainer/app"));
  EXPECT_EQ(statuses("PUT", "/manifests/").size(), 1u) << "a 4xx is not retried";
}

// The SBOM and provenance go after the image: a registry that refuses them leaves the image pushed and tagged, and
// the error says so in one line.
TEST_F(FaultMatrixTest, RefusedAttachmentsAreOneLineSayingTheImageStands) {
  server_->fault({{"method", "PUT"}, {"path", "/manifests/sha256:"}, {"action", "status"}, {"status", 400},
                  {"times", -1}, {"content_type", "application/json"},
                  {"body", R"({"errors": [{"code": "MANIFEST_INVALID", "message": "artifacts refused"}]})"}});
  auto r = push("trainer/app", "{}", {"--sbom=spdx", "--provenance=slsa"});
  expect_one_line_error(r);
  EXPECT_TRUE(contains(cause_of(r), "is pushed, but its SBOM and provenance could not be attached")) << r.err;
  EXPECT_TRUE(contains(cause_of(r), "artifacts refused")) << r.err;
  EXPECT_TRUE(tagged_in_state("trainer/app"));
}

TEST_F(FaultMatrixTest, AMissingBaseManifestIsOneLineAndWritesNothing) {
  server_->fault({{"method", {"HEAD", "GET"}}, {"path", "/base/python/manifests/"}, {"action", "status"},
                  {"status", 404}, {"times", -1}});
  fs::path out = dir_->path() / "out";
  auto r = build({"--output=oci:" + out.string()});
  expect_one_line_error(r);
  EXPECT_TRUE(contains(cause_of(r), server_->host() + "/base/python:3.11 not found (404 NOT_FOUND: injected fault)"))
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(FaultMatrixTest, APersistentManifestServerErrorIsOneLine) {
  server_->fault({{"method", "GET"}, {"path", "/base/python/manifests/"}, {"action", "status"}, {"status", 502},
                  {"times", -1}, {"format", "html"}});
  auto r = push("trainer/app");
  expect_one_line_error(r);
  EXPECT_TRUE(contains(cause_of(r), "cannot fetch " + server_->host() + "/base/python@sha256:")) << r.err;
  EXPECT_TRUE(contains(cause_of(r), ": 502 Bad Gateway")) << r.err;
  EXPECT_FALSE(contains(r.err, "<html")) << r.err;
  EXPECT_FALSE(tagged_in_state("trainer/app"));
}

// ---- uploads: rate limits, a token expiring mid-upload, cross-host redirects -------------------------------------

TEST_F(FaultMatrixTest, RateLimitedUploadsWaitAsAsked) {
  server_->fault({{"method", "POST"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "status"}, {"status", 429},
                  {"headers", {{"Retry-After", "1"}}}});
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "status"}, {"status", 429},
                  {"headers", {{"Retry-After", "3"}}}});
  auto r = push("trainer/app", "{}", {"--http-timeout=2"});  // a wait the registry asks for is not silence
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(tagged_in_state("trainer/app"));
  auto puts = server_->requests("PUT", "/trainer/app/blobs/uploads/");
  ASSERT_GE(puts.size(), 2u);
  // Uploads run in parallel, and the server logs a request when it starts but picks a fault after reading the body:
  // the 429 may have gone to any of them.
  auto limited = std::find_if(puts.begin(), puts.end(), [](const json& p) { return p.at("status") == 429; });
  ASSERT_NE(limited, puts.end());
  // the retry of that PUT is the next PUT to the same upload
  for (const auto& p : puts) {
    if (p.at("seq") <= limited->at("seq") || p.at("path") != limited->at("path")) continue;
    EXPECT_GE(p.at("time").get<double>() - limited->at("time").get<double>(), 2.9);
    break;
  }
  expect_every_fault_fired();
}

// The registry answers an upload's PUT with 401 (its token expired meanwhile): a new token, the same PUT again.
TEST_F(FaultMatrixTest, A401MidUploadGetsANewTokenAndTheUploadGoesOn) {
  std::string config = bearer_auth_config();
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "status"}, {"status", 401}});
  auto r = push("trainer/app", config);
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(tagged_in_state("trainer/app"));
  auto log = server_->requests();
  bool refreshed = false;
  for (std::size_t i = 0; i + 2 < log.size() && !refreshed; ++i) {
    if (log[i].at("method") != "PUT" || log[i].at("status") != 401) continue;
    // a token request follows before the same PUT is sent again
    for (std::size_t j = i + 1; j < log.size(); ++j) {
      if (log[j].at("path") == "/token") refreshed = true;
      if (log[j].at("method") == "PUT" && log[j].at("path") == log[i].at("path")) {
        EXPECT_TRUE(refreshed) << "the PUT was repeated without a new token";
        EXPECT_EQ(log[j].at("status"), 201);
        break;
      }
    }
  }
  EXPECT_TRUE(refreshed);
  expect_every_fault_fired();
}

// Uploads redirected to another host (blob storage) carry no Authorization there; so do blob downloads.
TEST_F(FaultMatrixTest, CrossHostRedirectsOfUploadsAndDownloadsGetNoAuthorization) {
  server_->control_one({{"op", "auth"}, {"mode", "basic"}, {"users", {{"pusher", "s3cret-pass"}}}});
  server_->config({{"blob_redirect", "alt"}, {"alt_reject_auth", true}, {"mount", "404"}});
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "redirect"}, {"status", 307},
                  {"to", "alt"}, {"times", -1}});
  auto r = push("trainer/app", R"({"auths": {")" + server_->host() + R"(": {"auth": "cHVzaGVyOnMzY3JldC1wYXNz"}}})");
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(tagged_in_state("trainer/app"));
  int alt_puts = 0, alt_gets = 0;
  for (const auto& e : server_->requests()) {
    if (e.at("server") != "alt") continue;
    EXPECT_TRUE(e.at("auth").is_null()) << "Authorization reached the other host: " << e.dump();
    EXPECT_EQ(e.at("status"), e.at("method") == "PUT" ? 201 : 200) << e.dump();
    (e.at("method") == "PUT" ? alt_puts : alt_gets)++;
  }
  EXPECT_EQ(alt_puts, 4) << "the base layer (relayed: mounts refused), two new layers and the config";
  EXPECT_GE(alt_gets, 2) << "the base's config and its layer (for the relay) come from storage";
}

// ---- stalls -----------------------------------------------------------------------------------------------------------

// A stall once in each phase of a push is overcome by a retry after half the deadline.
TEST_F(FaultMatrixTest, StallsOnceInEachPhaseAreRetried) {
  server_->fault({{"method", "GET"}, {"path", "/base/python/manifests/sha256:"}, {"action", "stall"}, {"bytes", 10}});
  server_->fault({{"method", "GET"}, {"path", base_config_}, {"action", "stall"}, {"bytes", 100}});
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "delay"}, {"seconds", 30}});
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/manifests/"}, {"action", "delay"}, {"seconds", 30}});
  auto start = std::chrono::steady_clock::now();
  auto r = push("trainer/app", "{}", {"--http-timeout=4"});
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_LT(seconds_since(start), 30);
  EXPECT_TRUE(tagged_in_state("trainer/app"));
  expect_every_fault_fired();
}

TEST_F(FaultMatrixTest, AStalledBaseDownloadFailsAtTheDeadlineAndWritesNothing) {
  server_->fault({{"method", "GET"}, {"path", base_config_}, {"action", "stall"}, {"bytes", 100}, {"seconds", 60},
                  {"times", -1}});
  fs::path out = dir_->path() / "out";
  auto start = std::chrono::steady_clock::now();
  auto r = build({"--output=oci:" + out.string(), "--http-timeout=3"});
  expect_one_line_error(r);
  EXPECT_LT(seconds_since(start), 10);
  EXPECT_TRUE(contains(cause_of(r), server_->host() + " stalled for 3 s (GET http://" + server_->host() +
                                        "/v2/base/python/blobs/" + base_config_ + ": "))
      << r.err;
  EXPECT_TRUE(contains(cause_of(r), "the last: response stalled after 100 B)")) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(blob_in_cache(base_config_)));
}

TEST_F(FaultMatrixTest, AnUploadNeverAnsweredFailsAtTheDeadline) {
  server_->fault({{"method", "PUT"}, {"path", "/trainer/app/blobs/uploads/"}, {"action", "delay"}, {"seconds", 60},
                  {"times", -1}});
  auto start = std::chrono::steady_clock::now();
  auto r = push("trainer/app", "{}", {"--http-timeout=3"});
  expect_one_line_error(r);
  EXPECT_LT(seconds_since(start), 15);
  EXPECT_TRUE(contains(cause_of(r), server_->host() + " did not answer within 3 s (PUT http://" + server_->host() +
                                        "/v2/trainer/app/blobs/uploads/"))
      << r.err;
  EXPECT_TRUE(contains(cause_of(r), "the last: no response)")) << r.err;
  EXPECT_FALSE(contains(cause_of(r), "_state")) << "no query strings in errors: " << r.err;
  EXPECT_FALSE(tagged_in_state("trainer/app"));
  EXPECT_TRUE(server_->requests("PUT", "/manifests/").empty());
}

// ---- dead registries ----------------------------------------------------------------------------------------------

// A registry that refuses connections, one that drops them, and one that accepts and never answers: the build
// fails within the deadline (plus the time the build itself takes), naming the host and what happened.
TEST_F(FaultMatrixTest, ADeadRegistryFailsTheBuildWithinTheDeadline) {
  SilentListener silent;
  SilentListener dropped(SilentListener::kDropSyns);
  const std::string refused = "127.0.0.1:" + std::to_string(free_port());
  struct Case {
    std::string host, cause;
  };
  for (const Case& c : {Case{refused, "connection refused"}, Case{dropped.host(), "connection timed out"},
                        Case{silent.host(), "no response"}}) {
    SCOPED_TRACE(c.host);
    auto start = std::chrono::steady_clock::now();
    auto r = build({"--base-source=" + base_oci_ref(), "--output-image-uri=" + c.host + "/trainer/app:v1",
                    "--http-timeout=3"});
    expect_one_line_error(r);
    EXPECT_LT(seconds_since(start), 10);
    EXPECT_TRUE(contains(cause_of(r), c.host + " did not answer within 3 s (")) << r.err;
    EXPECT_TRUE(contains(cause_of(r), "the last: " + c.cause + ")")) << r.err;
    EXPECT_TRUE(contains(r.err, "\nhint: ") && contains(r.err, "--http-timeout=SECONDS (now 3 s)")) << r.err;
  }
}

TEST_F(FaultMatrixTest, TheDeadlineIsCheckedBeforeAnyWork) {
  fs::path out = dir_->path() / "out";
  for (std::string value : {"0", "-5", "86401"}) {
    auto r = build({"--output=oci:" + out.string(), "--http-timeout=" + value});
    expect_one_line_error(r);
    EXPECT_TRUE(contains(cause_of(r), "--http-timeout must be between 1 and 86400 seconds")) << r.err;
  }
  EXPECT_TRUE(server_->requests().empty()) << "no request before the flags are checked";
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
