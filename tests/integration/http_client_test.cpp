// HttpClient against tests/fixtures/fault_server.py (started per test; faults scripted through its control API), a
// TLS variant of it with a throw-away CA, and the real docker-registry fixture ($TRAINPACK_TEST_REGISTRY, plain http)
// plus a TLS docker-registry started here (HTTP/2).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fault_server.h"
#include "silent_listener.h"
#include "image/digest.h"
#include "net/http_client.h"
#include "net/url.h"
#include "support/error.h"
#include "test_support.h"

using namespace std::chrono_literals;
using nlohmann::json;
using trainpack::Error;
using trainpack::image::sha256_of;
using trainpack::net::HttpClient;
using trainpack::net::HttpOptions;
using trainpack::net::HttpRequest;
using trainpack::net::HttpResponse;
using trainpack::net::resolve_url;
using trainpack::testing::FaultServer;
using trainpack::testing::free_port;
using trainpack::testing::TempDir;

namespace {

HttpOptions fast_options() {
  HttpOptions o;
  o.max_attempts = 4;
  o.initial_backoff = 20ms;
  o.max_backoff = 200ms;
  o.timeout = 10s;
  o.certs_dirs = {};
  o.user_agent = "trainpack-test";
  return o;
}

HttpRequest make(std::string method, std::string url,
                 std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpRequest r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.headers = std::move(headers);
  return r;
}

std::string random_bytes(std::size_t n, unsigned seed = 1) {
  std::string s(n, '\0');
  unsigned x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  return s;
}

std::string write_temp(const TempDir& dir, const std::string& name, const std::string& content) {
  std::string path = dir / name;
  trainpack::testing::write_file(path, content);
  return path;
}

std::string blob_path(const std::string& repo, const std::string& digest) {
  return "/v2/" + repo + "/blobs/" + digest;
}

std::vector<long> statuses(const std::vector<json>& entries) {
  std::vector<long> out;
  for (const auto& e : entries) out.push_back(e.at("status").is_null() ? -1 : e.at("status").get<long>());
  return out;
}

double seconds_between(const json& a, const json& b) { return b.at("time").get<double>() - a.at("time").get<double>(); }

class HttpClientFaults : public ::testing::Test {
 protected:
  FaultServer server;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Retries

TEST_F(HttpClientFaults, RetriesServerErrorsThenSucceeds) {
  auto blob = server.seed_blob("test/app", "hello world");
  server.fault({{"method", "GET"}, {"path", "/blobs/"}, {"action", "status"}, {"status", 500}, {"times", 2}});
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"]))));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello world");
  EXPECT_EQ(statuses(server.requests("GET", "/blobs/")), (std::vector<long>{500, 500, 200}));
}

TEST_F(HttpClientFaults, RetriesEveryTransientStatus) {
  auto blob = server.seed_blob("test/app", "payload");
  HttpClient c(fast_options());
  for (int status : {408, 429, 500, 502, 503, 504}) {
    SCOPED_TRACE(status);
    server.clear_log();
    server.fault({{"path", "/blobs/"}, {"action", "status"}, {"status", status}, {"format", "html"}});
    auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"]))));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "payload");
    EXPECT_EQ(statuses(server.requests("GET", "/blobs/")), (std::vector<long>{status, 200}));
  }
}

TEST_F(HttpClientFaults, OtherStatusesAreReturnedAtOnce) {
  HttpClient c(fast_options());
  for (int status : {400, 401, 403, 404, 405, 501}) {
    SCOPED_TRACE(status);
    server.clear_log();
    server.fault({{"path", "^/v2/$"}, {"action", "status"}, {"status", status}});
    auto r = c.send(make("GET", server.url("/v2/")));
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(server.requests("GET", "^/v2/$").size(), 1u);
  }
}

TEST_F(HttpClientFaults, GivesUpAndReturnsTheLastResponse) {
  server.fault({{"path", "^/v2/$"}, {"action", "status"}, {"status", 503}, {"times", -1}});
  auto o = fast_options();
  o.max_attempts = 3;
  HttpClient c(o);
  auto r = c.send(make("GET", server.url("/v2/")));
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("UNAVAILABLE"), std::string::npos) << r.body;
  EXPECT_EQ(server.requests("GET", "^/v2/$").size(), 3u);
}

TEST_F(HttpClientFaults, NonIdempotentRequestsAreNotRetried) {
  server.fault({{"method", "POST"}, {"action", "status"}, {"status", 503}});
  HttpClient c(fast_options());
  auto req = make("POST", server.url("/v2/test/app/blobs/uploads/"));
  req.idempotent = false;
  EXPECT_EQ(c.send(req).status, 503);
  EXPECT_EQ(server.requests("POST", "/uploads/").size(), 1u);
  // the same with idempotent (the default) is retried
  server.fault({{"method", "POST"}, {"action", "status"}, {"status", 503}});
  EXPECT_EQ(c.send(make("POST", server.url("/v2/test/app/blobs/uploads/"))).status, 202);
}

TEST_F(HttpClientFaults, RetryAfterIsHonoured) {
  server.fault({{"path", "^/v2/$"}, {"action", "status"}, {"status", 429}, {"headers", {{"Retry-After", "1"}}}});
  auto o = fast_options();
  o.initial_backoff = 10ms;
  o.max_backoff = 5s;
  HttpClient c(o);
  auto start = std::chrono::steady_clock::now();
  auto r = c.send(make("GET", server.url("/v2/")));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 200);
  EXPECT_GE(elapsed, 950ms);
  EXPECT_LT(elapsed, 4s);
  auto log = server.requests("GET", "^/v2/$");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_GE(seconds_between(log[0], log[1]), 0.9);
}

TEST_F(HttpClientFaults, BackoffGrowsExponentially) {
  server.fault({{"path", "^/v2/$"}, {"action", "status"}, {"status", 502}, {"times", 3}});
  auto o = fast_options();
  o.initial_backoff = 150ms;
  o.max_backoff = 10s;
  HttpClient c(o);
  EXPECT_EQ(c.send(make("GET", server.url("/v2/"))).status, 200);
  auto log = server.requests("GET", "^/v2/$");
  ASSERT_EQ(log.size(), 4u);
  double g1 = seconds_between(log[0], log[1]), g2 = seconds_between(log[1], log[2]),
         g3 = seconds_between(log[2], log[3]);
  EXPECT_GE(g1, 0.14);
  EXPECT_GE(g2, 0.29);
  EXPECT_GE(g3, 0.59);
  EXPECT_LT(g3, 2.0);  // 600 ms + at most 25% jitter, plus scheduling
}

// ---------------------------------------------------------------------------------------------------------------
// Broken connections and bodies

TEST_F(HttpClientFaults, ConnectionResetMidBodyIsRetried) {
  auto blob = server.seed_random_blob("test/app", 200000, 7);
  server.fault({{"path", "/blobs/"}, {"action", "reset"}, {"bytes", 5000}});
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"]))));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), 200000u);
  EXPECT_EQ(sha256_of(r.body).str(), blob["digest"].get<std::string>());
  auto log = server.requests("GET", "/blobs/");
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["fault"], "reset");
}

TEST_F(HttpClientFaults, ResetBeforeAnswerIsRetried) {
  server.fault({{"path", "^/v2/$"}, {"action", "reset"}, {"times", 2}});
  HttpClient c(fast_options());
  EXPECT_EQ(c.send(make("GET", server.url("/v2/"))).status, 200);
  EXPECT_EQ(server.requests("GET", "^/v2/$").size(), 3u);
}

TEST_F(HttpClientFaults, TruncatedBodyIsRetriedNeverReturnedShort) {
  auto blob = server.seed_random_blob("test/app", 100000, 3);
  std::string path = blob_path("test/app", blob["digest"]);
  server.fault({{"path", "/blobs/"}, {"action", "truncate"}, {"bytes", 1000}});
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url(path)));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(sha256_of(r.body).str(), blob["digest"].get<std::string>());
  EXPECT_EQ(server.requests("GET", "/blobs/").size(), 2u);

  // always truncated: an error naming the request and the attempts, never a short body
  server.fault({{"path", "/blobs/"}, {"action", "truncate"}, {"bytes", 1000}, {"times", -1}});
  auto o = fast_options();
  o.max_attempts = 2;
  HttpClient c2(o);
  try {
    auto short_response = c2.send(make("GET", server.url(path + "?X-Signature=secret")));
    ADD_FAILURE() << "got a response of " << short_response.body.size() << " bytes";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(server.host() + " sent no complete answer (GET " + server.url(path)), std::string::npos) << what;
    EXPECT_NE(what.find(": 2 attempts in "), std::string::npos) << what;
    EXPECT_EQ(what.find("secret"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST_F(HttpClientFaults, SinkStartsOverOnRetry) {
  auto blob = server.seed_random_blob("test/app", 300000, 11);
  server.fault({{"path", "/blobs/"}, {"action", "reset"}, {"bytes", 100000}});
  HttpClient c(fast_options());
  std::string received;
  int restarts = 0;
  auto req = make("GET", server.url(blob_path("test/app", blob["digest"])));
  req.sink = [&](const char* data, std::size_t n) { received.append(data, n); };
  req.on_restart = [&] {
    ++restarts;
    received.clear();
  };
  req.max_response_bytes = 1000;  // the cap is for in-memory bodies only
  auto r = c.send(req);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(received.size(), 300000u);
  EXPECT_EQ(sha256_of(received).str(), blob["digest"].get<std::string>());
  EXPECT_EQ(restarts, 1);
}

TEST_F(HttpClientFaults, SinkErrorsPropagate) {
  auto blob = server.seed_random_blob("test/app", 100000, 2);
  HttpClient c(fast_options());
  auto req = make("GET", server.url(blob_path("test/app", blob["digest"])));
  req.sink = [](const char*, std::size_t) { throw Error("disk full"); };
  try {
    c.send(req);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "disk full");
  }
  // error statuses are not streamed to the sink
  std::string received;
  req.url = server.url(blob_path("test/app", "sha256:" + std::string(64, '0')));
  req.sink = [&](const char* d, std::size_t n) { received.append(d, n); };
  auto r = c.send(req);
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(received.empty());
  EXPECT_NE(r.body.find("BLOB_UNKNOWN"), std::string::npos);
}

TEST_F(HttpClientFaults, BodyCapIsEnforced) {
  auto blob = server.seed_random_blob("test/app", 100000, 5);
  HttpClient c(fast_options());
  auto req = make("GET", server.url(blob_path("test/app", blob["digest"])));
  req.max_response_bytes = 10000;
  try {
    c.send(req);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds 10000 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server.requests("GET", "/blobs/").size(), 1u);  // not retried
  req.max_response_bytes = 100000;                           // exactly at the cap is fine
  EXPECT_EQ(c.send(req).body.size(), 100000u);
}

// An attempt that may be retried gets half the deadline: a stalled one is abandoned then and retried.
TEST_F(HttpClientFaults, StalledTransferIsAbandonedAndRetried) {
  auto blob = server.seed_random_blob("test/app", 100000, 9);
  server.fault({{"path", "/blobs/"}, {"action", "stall"}, {"bytes", 100}, {"seconds", 20}});
  auto o = fast_options();
  o.min_bytes_per_second = 1000;
  o.timeout = 2s;
  HttpClient c(o);
  auto start = std::chrono::steady_clock::now();
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"]))));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.size(), 100000u);
  EXPECT_GE(elapsed, 900ms);
  EXPECT_LT(elapsed, 8s);
  EXPECT_EQ(server.requests("GET", "/blobs/").size(), 2u);
}

// A request whose stop flag is set is abandoned mid-transfer with an Error and not retried (a failed build stops
// the uploads it began ahead of its push).
TEST_F(HttpClientFaults, AStoppedRequestIsAbandonedWithAnErrorAndNotRetried) {
  auto blob = server.seed_random_blob("test/app", 100000, 9);
  server.fault({{"path", "/blobs/"}, {"action", "stall"}, {"bytes", 100}, {"seconds", 20}, {"times", -1}});
  HttpClient c(fast_options());
  std::atomic<bool> stop{false};
  HttpRequest req = make("GET", server.url(blob_path("test/app", blob["digest"])));
  req.stop = &stop;
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(300ms);
    stop = true;
  });
  auto start = std::chrono::steady_clock::now();
  try {
    c.send(req);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stopped before it was done"), std::string::npos) << e.what();
  }
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "the stop took effect late";
  EXPECT_EQ(server.requests("GET", "/blobs/").size(), 1u) << "a stopped request was retried";
  try {
    c.send(req);  // still set: nothing is sent
    ADD_FAILURE() << "no error";
  } catch (const Error&) {
  }
  EXPECT_EQ(server.requests("GET", "/blobs/").size(), 1u);
}

TEST_F(HttpClientFaults, StallBeforeHeadersIsDetectedToo) {
  server.fault({{"path", "^/v2/$"}, {"action", "delay"}, {"seconds", 20}, {"times", -1}});
  auto o = fast_options();
  o.max_attempts = 2;
  o.timeout = 2s;
  HttpClient c(o);
  auto start = std::chrono::steady_clock::now();
  try {
    c.send(make("GET", server.url("/v2/")));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(server.host() + " did not answer within 2 s"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 attempts, the last: no response"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("--http-timeout"), std::string::npos) << e.hint();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(server.requests("GET", "^/v2/$").size(), 2u);
}

TEST_F(HttpClientFaults, TotalTimeout) {
  server.fault({{"path", "^/v2/$"}, {"action", "delay"}, {"seconds", 10}, {"times", -1}});
  auto o = fast_options();
  o.max_attempts = 1;
  HttpClient c(o);
  auto req = make("GET", server.url("/v2/"));
  req.total_timeout = 1s;
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(c.send(req), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(HttpClientFaults, ConnectionRefusedIsRetriedThenReported) {
  int port = free_port();
  auto o = fast_options();
  o.max_attempts = 2;
  HttpClient c(o);
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v2/x/blobs/sha256:1?X-Amz-Signature=secret";
  try {
    c.send(make("GET", url));
    FAIL();
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(port) + " did not answer (GET http://127.0.0.1:" +
                        std::to_string(port) + "/v2/x/blobs/sha256:1"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find(": 2 attempts in "), std::string::npos) << what;
    EXPECT_NE(what.find(" s, the last: connection refused)"), std::string::npos) << what;
    EXPECT_NE(what.find("connect"), std::string::npos) << what;
    EXPECT_EQ(what.find("secret"), std::string::npos) << what;
    EXPECT_FALSE(e.hint().empty());
  }
  // a POST whose connection was refused was never sent: it is retried too
  auto post = make("POST", "http://127.0.0.1:" + std::to_string(port) + "/v2/x/blobs/uploads/");
  post.idempotent = false;
  try {
    c.send(post);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did not answer (POST "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 attempts in"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The request deadline (HttpOptions::timeout): time without an answer or progress, across attempts

namespace {

HttpOptions deadline_options(std::chrono::seconds timeout) {
  auto o = fast_options();
  o.max_attempts = 10;  // the deadline, not the attempts, ends these requests
  o.initial_backoff = 200ms;
  o.max_backoff = 1s;
  o.timeout = timeout;
  return o;
}

struct Failure {
  std::string what, hint;
  std::chrono::milliseconds took{0};
};

// A failure of waiting names --http-timeout in its hint; a refusal to wait (a Retry-After past max_backoff) does not.
Failure expect_failure(HttpClient& c, const HttpRequest& r, bool hint_names_timeout = true) {
  auto start = std::chrono::steady_clock::now();
  Failure f;
  try {
    auto response = c.send(r);
    ADD_FAILURE() << "got HTTP " << response.status;
  } catch (const Error& e) {
    f.what = e.what();
    f.hint = e.hint();
  }
  f.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_EQ(f.what.find('\n'), std::string::npos) << f.what;
  if (hint_names_timeout) {
    EXPECT_NE(f.hint.find("--http-timeout"), std::string::npos) << f.hint;
  }
  return f;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(HttpClientDeadline, RefusedConnectionsAreRetriedWithinTheDeadline) {
  int port = free_port();
  std::string host = "127.0.0.1:" + std::to_string(port);
  HttpClient c(deadline_options(3s));
  Failure f = expect_failure(c, make("GET", "http://" + host + "/v2/"));
  EXPECT_TRUE(has(f.what, host + " did not answer within 3 s (GET http://" + host + "/v2/: ")) << f.what;
  EXPECT_TRUE(has(f.what, "attempts, the last: connection refused)")) << f.what;
  // retries stop when the next one would start after the deadline
  EXPECT_GE(f.took, 1500ms);
  EXPECT_LT(f.took, 3500ms);
}

TEST(HttpClientDeadline, AHostThatDropsConnectionsIsGivenUpAtTheDeadline) {
  trainpack::testing::SilentListener dropped(trainpack::testing::SilentListener::kDropSyns);
  HttpClient c(deadline_options(3s));
  Failure f = expect_failure(c, make("GET", "http://" + dropped.host() + "/v2/"));
  EXPECT_TRUE(has(f.what, dropped.host() + " did not answer within 3 s")) << f.what;
  // the first attempt gets half the deadline to connect, the second what is left
  EXPECT_TRUE(has(f.what, "2 attempts, the last: connection timed out")) << f.what;
  EXPECT_GE(f.took, 2900ms);
  EXPECT_LT(f.took, 4500ms);
}

TEST(HttpClientDeadline, AServerThatNeverAnswersIsGivenUpAtTheDeadline) {
  trainpack::testing::SilentListener silent;
  HttpClient c(deadline_options(3s));
  auto put = make("PUT", "http://" + silent.host() + "/v2/x/manifests/v1");
  put.body = "{}";
  Failure f = expect_failure(c, put);
  EXPECT_TRUE(has(f.what, silent.host() + " did not answer within 3 s (PUT ")) << f.what;
  EXPECT_TRUE(has(f.what, "the last: no response)")) << f.what;
  EXPECT_GE(f.took, 2900ms);
  EXPECT_LT(f.took, 4500ms);
}

TEST_F(HttpClientFaults, ABodyThatStallsIsGivenUpAtTheDeadline) {
  auto blob = server.seed_random_blob("test/app", 100000, 12);
  server.fault({{"path", "/blobs/"}, {"action", "stall"}, {"bytes", 100}, {"seconds", 30}, {"times", -1}});
  HttpClient c(deadline_options(3s));
  Failure f = expect_failure(c, make("GET", server.url(blob_path("test/app", blob["digest"]))));
  EXPECT_TRUE(has(f.what, server.host() + " stalled for 3 s (GET ")) << f.what;
  EXPECT_TRUE(has(f.what, "the last: response stalled after 100 B)")) << f.what;
  EXPECT_GE(f.took, 2900ms);
  EXPECT_LT(f.took, 4500ms);
  EXPECT_GE(server.requests("GET", "/blobs/").size(), 2u) << "a stalled attempt is retried while time is left";
}

// Bytes trickling in below min_bytes_per_second are no progress.
TEST_F(HttpClientFaults, ATrickleIsGivenUpAtTheDeadline) {
  auto blob = server.seed_random_blob("test/app", 100000, 13);
  server.fault({{"path", "/blobs/"}, {"action", "throttle"}, {"rate", 200}, {"times", -1}});
  HttpClient c(deadline_options(2s));
  Failure f = expect_failure(c, make("GET", server.url(blob_path("test/app", blob["digest"]))));
  EXPECT_TRUE(has(f.what, server.host() + " stalled for 2 s")) << f.what;
  EXPECT_LT(f.took, 3500ms);
}

// A transfer that keeps moving takes as long as it takes: the deadline is about silence, not size.
TEST_F(HttpClientFaults, ASlowTransferThatKeepsMovingIsNeverCut) {
  auto blob = server.seed_random_blob("test/app", 60000, 14);
  server.fault({{"path", "/blobs/"}, {"action", "throttle"}, {"rate", 15000}});
  HttpClient c(deadline_options(2s));
  auto start = std::chrono::steady_clock::now();
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"]))));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 3500ms);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(sha256_of(r.body).str(), blob["digest"].get<std::string>());
  EXPECT_EQ(server.requests("GET", "/blobs/").size(), 1u);

  // the same for an upload: 40 pieces of 8 KiB, 100 ms apart
  std::string data = random_bytes(40 * 8192, 15);
  struct SlowStream : HttpRequest::BodyStream {
    explicit SlowStream(const std::string& d) : data(d) {}
    std::size_t read(char* buffer, std::size_t max) override {
      std::this_thread::sleep_for(100ms);
      std::size_t n = std::min({max, std::size_t{8192}, data.size() - offset});
      std::memcpy(buffer, data.data() + offset, n);
      offset += n;
      return n;
    }
    const std::string& data;
    std::size_t offset = 0;
  };
  auto post = c.send(make("POST", server.url("/v2/test/app/blobs/uploads/")));
  ASSERT_EQ(post.status, 202);
  auto put = make("PUT", resolve_url(post.url, post.header("Location")) + "&digest=" + sha256_of(data).str());
  put.body_stream = [&] { return std::make_unique<SlowStream>(data); };
  put.body_stream_size = data.size();
  EXPECT_EQ(c.send(put).status, 201);
  EXPECT_EQ(server.requests("PUT", "/blobs/uploads/").size(), 1u);
}

// A wait the server asked for (Retry-After) is not silence: it may be longer than the deadline.
TEST_F(HttpClientFaults, AnAnsweredRetryIsNotCutByTheDeadline) {
  server.fault({{"path", "^/v2/$"}, {"action", "status"}, {"status", 503}, {"headers", {{"Retry-After", "3"}}}});
  auto o = deadline_options(2s);
  o.max_backoff = 5s;
  HttpClient c(o);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c.send(make("GET", server.url("/v2/"))).status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 2900ms);
}

// A Retry-After longer than trainpack waits between tries (max_backoff) is not waited for, nor cut short and asked
// again: the request fails at once, naming what the server asked.
TEST_F(HttpClientFaults, ARetryAfterPastTheLongestWaitFailsAtOnce) {
  using std::chrono::milliseconds;
  for (auto [asked, longest] : {std::pair{"3600", milliseconds(30s)}, std::pair{"30", milliseconds(300ms)}}) {
    SCOPED_TRACE(asked);
    server.clear_log();
    server.fault({{"path", "^/v2/$"}, {"action", "status"}, {"status", 503}, {"headers", {{"Retry-After", asked}}}});
    auto o = deadline_options(10s);
    o.max_backoff = longest;
    HttpClient c(o);
    Failure f = expect_failure(c, make("GET", server.url("/v2/")), false);
    EXPECT_TRUE(has(f.hint, "try again when")) << f.hint;
    EXPECT_TRUE(has(f.what, std::string("answered 503 asking to retry after ") + asked + " s (Retry-After: " + asked +
                                "), longer than the "))
        << f.what;
    EXPECT_TRUE(has(f.what, " trainpack waits between tries (GET ")) << f.what;
    EXPECT_FALSE(f.hint.empty());
    EXPECT_LT(f.took, 1s);
    EXPECT_EQ(server.requests("GET", "^/v2/$").size(), 1u);
  }
}

// A request that must not be retried gets the whole deadline in its one attempt.
TEST(HttpClientDeadline, ARequestThatIsNotRetriedGetsTheWholeDeadline) {
  trainpack::testing::SilentListener silent;
  HttpClient c(deadline_options(2s));
  auto post = make("POST", "http://" + silent.host() + "/v2/x/blobs/uploads/");
  post.idempotent = false;
  Failure f = expect_failure(c, post);
  EXPECT_TRUE(has(f.what, "did not answer within 2 s (POST ")) << f.what;
  EXPECT_TRUE(has(f.what, "1 attempt, the last: no response")) << f.what;
  EXPECT_GE(f.took, 1900ms);
}

// A request's own shorter deadline (best-effort calls) wins over the client's.
TEST(HttpClientDeadline, ARequestCanAskForAShorterDeadline) {
  trainpack::testing::SilentListener silent;
  HttpClient c(deadline_options(30s));
  auto del = make("DELETE", "http://" + silent.host() + "/v2/x/blobs/uploads/u");
  del.timeout = 2s;
  Failure f = expect_failure(c, del);
  EXPECT_TRUE(has(f.what, "did not answer within 2 s")) << f.what;
  EXPECT_LT(f.took, 4s);  // libcurl calls back about once a second while nothing moves
}

// ---------------------------------------------------------------------------------------------------------------
// Redirects

TEST_F(HttpClientFaults, RedirectToAnotherHostDropsAuthorization) {
  auto blob = server.seed_random_blob("test/app", 50000, 4);
  server.config({{"blob_redirect", "alt"}, {"redirect_host", "localhost"}});
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"])),
                       {{"Authorization", "Bearer secret-token"}, {"X-Other", "kept"}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(sha256_of(r.body).str(), blob["digest"].get<std::string>());
  EXPECT_NE(r.url.find("localhost:" + std::to_string(server.alt_port()) + "/_r/"), std::string::npos) << r.url;
  auto log = server.requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["server"], "main");
  EXPECT_EQ(log[0]["auth"], "bearer");
  EXPECT_EQ(log[0]["status"], 307);
  EXPECT_EQ(log[1]["server"], "alt");
  EXPECT_TRUE(log[1]["auth"].is_null()) << log[1].dump();
  EXPECT_NE(log[1]["query"].get<std::string>().find("X-Signature="), std::string::npos);
  auto names = log[1]["header_names"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(names.begin(), names.end(), "x-other"), names.end());
}

TEST_F(HttpClientFaults, SameHostDifferentPortIsAnotherOrigin) {
  auto blob = server.seed_blob("test/app", "abc");
  server.config({{"blob_redirect", "alt"}, {"redirect_host", "127.0.0.1"}});
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"])), {{"authorization", "Basic dTpw"}}));
  EXPECT_EQ(r.status, 200) << r.body;
  auto alt = server.requests();
  ASSERT_EQ(alt.size(), 2u);
  EXPECT_EQ(alt[0]["auth"], "basic");
  EXPECT_TRUE(alt[1]["auth"].is_null());
}

TEST_F(HttpClientFaults, RelativeRedirectOnTheSameHostKeepsAuthorization) {
  auto blob = server.seed_blob("test/app", "same host");
  server.config({{"blob_redirect", "self"}});
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"])), {{"Authorization", "Bearer t"}}));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "same host");
  EXPECT_EQ(r.url.rfind(server.url("/_r/"), 0), 0u) << r.url;
  auto log = server.requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1]["path"].get<std::string>().rfind("/_r/", 0), 0u);
  EXPECT_EQ(log[1]["auth"], "bearer");
}

TEST_F(HttpClientFaults, RedirectsCanBeLeftToTheCaller) {
  auto blob = server.seed_blob("test/app", "x");
  server.config({{"blob_redirect", "alt"}});
  HttpClient c(fast_options());
  auto req = make("GET", server.url(blob_path("test/app", blob["digest"])));
  req.follow_redirects = false;
  auto r = c.send(req);
  EXPECT_EQ(r.status, 307);
  EXPECT_NE(r.header("Location").find("/_r/"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(HttpClientFaults, TemporaryRedirectKeepsMethodAndFileBody) {
  TempDir dir("http-redirect");
  std::string data = random_bytes(1 << 20, 3);
  std::string digest = sha256_of(data).str();
  std::string file = write_temp(dir, "blob", data);
  HttpClient c(fast_options());
  for (int status : {307, 308, 301, 302}) {
    SCOPED_TRACE(status);
    server.clear_log();
    auto post = c.send(make("POST", server.url("/v2/test/app/blobs/uploads/")));
    ASSERT_EQ(post.status, 202);
    std::string put_url = resolve_url(post.url, post.header("Location")) + "&digest=" + digest;
    server.fault({{"method", "PUT"}, {"path", "/uploads/"}, {"action", "redirect"}, {"status", status},
                  {"to", "self"}});
    auto put = make("PUT", put_url, {{"Content-Type", "application/octet-stream"}});
    put.body_file = file;
    auto r = c.send(put);
    EXPECT_EQ(r.status, 201) << r.body;
    auto log = server.requests("PUT", "");
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0]["status"], status);
    EXPECT_EQ(log[1]["path"].get<std::string>().rfind("/_r/", 0), 0u);
    EXPECT_EQ(log[1]["content_length"], data.size());
    EXPECT_EQ(log[1]["body_bytes"], data.size());
  }
}

TEST_F(HttpClientFaults, SeeOtherTurnsPostIntoGet) {
  server.fault({{"method", "POST"}, {"action", "redirect"}, {"status", 303}, {"to", "self"}});
  HttpClient c(fast_options());
  auto req = make("POST", server.url("/v2/test/app/blobs/uploads/"));
  req.body = "ignored";
  auto r = c.send(req);
  EXPECT_EQ(r.status, 405);  // the replayed path does not take GET
  auto log = server.requests();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["method"], "POST");
  EXPECT_EQ(log[1]["method"], "GET");
  EXPECT_EQ(log[1]["body_bytes"], 0);
}

TEST_F(HttpClientFaults, TooManyRedirects) {
  server.fault({{"path", "^/(v2/$|_r/)"}, {"action", "redirect"}, {"to", "self"}, {"times", -1}});
  HttpClient c(fast_options());
  try {
    c.send(make("GET", server.url("/v2/")));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too many redirects"), std::string::npos) << e.what();
  }
  EXPECT_EQ(server.requests().size(), 11u);  // the request and 10 redirects, no retries
}

// ---------------------------------------------------------------------------------------------------------------
// Uploads: framing, Locations

// A streamed body (a relayed blob) goes out with Content-Length, is opened afresh when an attempt is retried, and
// reports upload progress up to its full size.
TEST_F(HttpClientFaults, StreamBodiesAreReopenedOnRetryAndReportProgress) {
  std::string data = random_bytes(2 << 20, 9);
  std::string digest = sha256_of(data).str();
  struct StringStream : HttpRequest::BodyStream {
    explicit StringStream(const std::string& d) : data(d) {}
    std::size_t read(char* buffer, std::size_t max) override {
      std::size_t n = std::min(max, data.size() - offset);
      std::memcpy(buffer, data.data() + offset, n);
      offset += n;
      return n;
    }
    const std::string& data;
    std::size_t offset = 0;
  };
  HttpClient c(fast_options());
  auto post = make("POST", server.url("/v2/test/app/blobs/uploads/"));
  post.idempotent = false;
  auto r = c.send(post);
  ASSERT_EQ(r.status, 202);
  server.fault({{"method", "PUT"}, {"path", "/blobs/uploads/"}, {"action", "status"}, {"status", 503}});
  int opened = 0;
  std::uint64_t most_sent = 0;
  auto put = make("PUT", resolve_url(r.url, r.header("Location")) + "&digest=" + digest);
  put.body_stream = [&] {
    ++opened;
    return std::make_unique<StringStream>(data);
  };
  put.body_stream_size = data.size();
  put.on_upload_progress = [&](std::uint64_t sent) { most_sent = std::max(most_sent, sent); };
  r = c.send(put);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.header("Docker-Content-Digest"), digest);
  EXPECT_EQ(opened, 2) << "the retry must open a new stream";
  EXPECT_EQ(most_sent, data.size());
  auto puts = server.requests("PUT", "/blobs/uploads/");
  ASSERT_FALSE(puts.empty());
  EXPECT_EQ(puts.back()["content_length"], data.size()) << puts.back().dump();
  EXPECT_FALSE(puts.back()["chunked"].get<bool>());
}

TEST_F(HttpClientFaults, FileBodiesHaveContentLengthAndAreNeverChunked) {
  TempDir dir("http-upload");
  std::string data = random_bytes(3 << 20, 5);
  std::string digest = sha256_of(data).str();
  std::string file = write_temp(dir, "blob", data);
  HttpClient c(fast_options());

  auto post = make("POST", server.url("/v2/test/app/blobs/uploads/"));
  post.idempotent = false;
  auto r = c.send(post);
  ASSERT_EQ(r.status, 202);
  // streamed PATCH with the whole file, then PUT with an empty body
  auto patch = make("PATCH", resolve_url(r.url, r.header("Location")), {{"Content-Type", "application/octet-stream"}});
  patch.body_file = file;
  r = c.send(patch);
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.header("Range"), "0-" + std::to_string(data.size() - 1));
  auto put = make("PUT", resolve_url(r.url, r.header("Location")) + "&digest=" + digest);
  r = c.send(put);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.header("Docker-Content-Digest"), digest);

  auto log = server.requests();
  ASSERT_EQ(log.size(), 3u);
  for (const auto& e : log) {
    SCOPED_TRACE(e.dump());
    EXPECT_FALSE(e["chunked"].get<bool>());
    auto names = e["header_names"].get<std::vector<std::string>>();
    EXPECT_EQ(std::find(names.begin(), names.end(), "transfer-encoding"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "expect"), names.end());
  }
  EXPECT_EQ(log[0]["content_length"], 0);  // POST without body: Content-Length: 0 ...
  EXPECT_FALSE(log[0]["headers"].contains("content-type"));  // ... and no form Content-Type
  EXPECT_EQ(log[1]["content_length"], data.size());
  EXPECT_EQ(log[1]["body_bytes"], data.size());
  EXPECT_EQ(log[1]["headers"]["content-type"], "application/octet-stream");
  EXPECT_EQ(log[2]["content_length"], 0);  // PUT without body: Content-Length: 0
  EXPECT_NE(log[2]["query"].get<std::string>().find("_state="), std::string::npos);
  EXPECT_NE(log[2]["query"].get<std::string>().find("digest=sha256"), std::string::npos);

  // HEAD: no body, the real Content-Length
  auto head = c.send(make("HEAD", server.url(blob_path("test/app", digest))));
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(head.header("Content-Length"), std::to_string(data.size()));
  EXPECT_EQ(server.requests("HEAD", "").size(), 1u);
}

TEST_F(HttpClientFaults, FileBodyIsSentAgainOnRetry) {
  TempDir dir("http-retry-upload");
  std::string data = random_bytes(600000, 8);
  std::string digest = sha256_of(data).str();
  std::string file = write_temp(dir, "blob", data);
  HttpClient c(fast_options());
  auto post = c.send(make("POST", server.url("/v2/test/app/blobs/uploads/")));
  ASSERT_EQ(post.status, 202);
  server.fault({{"method", "PUT"}, {"action", "status"}, {"status", 500}});
  server.fault({{"method", "PUT"}, {"action", "reset"}});
  auto put = make("PUT", resolve_url(post.url, post.header("Location")) + "&digest=" + digest);
  put.body_file = file;
  auto r = c.send(put);
  EXPECT_EQ(r.status, 201) << r.body;
  auto log = server.requests("PUT", "");
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[2]["body_bytes"], data.size());
  EXPECT_EQ(log[2]["content_length"], data.size());
}

TEST_F(HttpClientFaults, MemoryBodiesHaveContentLength) {
  auto blob = server.seed_blob("test/app", "{}");
  std::string manifest = json{{"schemaVersion", 2},
                              {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                              {"config", {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                                          {"digest", blob["digest"]}, {"size", 2}}},
                              {"layers", json::array()}}
                             .dump();
  HttpClient c(fast_options());
  auto put = make("PUT", server.url("/v2/test/app/manifests/v1"),
                  {{"Content-Type", "application/vnd.oci.image.manifest.v1+json"}});
  put.body = manifest;
  auto r = c.send(put);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.header("docker-content-digest"), sha256_of(manifest).str());
  auto log = server.requests("PUT", "/manifests/");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["content_length"], manifest.size());
  EXPECT_FALSE(log[0]["chunked"].get<bool>());
  auto get = c.send(make("GET", server.url("/v2/test/app/manifests/v1")));
  EXPECT_EQ(get.body, manifest);
  EXPECT_EQ(get.header("Content-Type"), "application/vnd.oci.image.manifest.v1+json");
}

TEST_F(HttpClientFaults, RelativeLocationsOutsideV2AreResolved) {
  server.config({{"location", "relative"},
                 {"upload_prefix", "/artifacts-uploads/namespaces/{repo}/uploads/"},
                 {"patch", "refuse"}});
  std::string data = "artifact registry style";
  std::string digest = sha256_of(data).str();
  HttpClient c(fast_options());
  auto r = c.send(make("POST", server.url("/v2/proj/repo/img/blobs/uploads/")));
  ASSERT_EQ(r.status, 202);
  std::string location = r.header("Location");
  EXPECT_EQ(location.rfind("/artifacts-uploads/namespaces/proj/repo/img/uploads/", 0), 0u) << location;
  EXPECT_NE(location.find("?_state="), std::string::npos);
  auto put = make("PUT", resolve_url(r.url, location) + "&digest=" + digest);
  put.body = data;
  r = c.send(put);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.header("Location"), "/v2/proj/repo/img/blobs/" + digest);
  auto log = server.requests("PUT", "^/artifacts-uploads/");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0]["query"].get<std::string>().find("_state="), std::string::npos);
  EXPECT_EQ(c.send(make("GET", server.url("/v2/proj/repo/img/blobs/" + digest))).body, data);
}

// ---------------------------------------------------------------------------------------------------------------
// Headers, concurrency

TEST_F(HttpClientFaults, RequestAndResponseHeaders) {
  auto blob = server.seed_blob("test/app", "h");
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"])), {{"Accept", "*/*"}}));
  for (const auto& [k, v] : r.headers) {
    std::string lower = k;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    EXPECT_EQ(k, lower);
  }
  EXPECT_EQ(r.header("Docker-Content-Digest"), blob["digest"].get<std::string>());
  EXPECT_EQ(r.http_version, 11);
  auto log = server.requests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["headers"]["accept-encoding"], "identity");
  EXPECT_EQ(log[0]["headers"]["user-agent"], "trainpack-test");
  EXPECT_EQ(log[0]["headers"]["accept"], "*/*");

  // a caller's own Accept-Encoding replaces ours; omitted response headers stay omitted
  server.clear_log();
  server.fault({{"path", "/blobs/"}, {"action", "omit_headers"}, {"headers", {"Docker-Content-Digest"}}});
  r = c.send(make("GET", server.url(blob_path("test/app", blob["digest"])), {{"Accept-Encoding", "gzip"}}));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("docker-content-digest"), "");
  EXPECT_EQ(server.requests()[0]["headers"]["accept-encoding"], "gzip");
}

TEST_F(HttpClientFaults, ConcurrentRequestsOnOneClient) {
  auto blob = server.seed_random_blob("test/app", 50000, 12);
  std::string url = server.url(blob_path("test/app", blob["digest"]));
  server.fault({{"path", "/blobs/"}, {"action", "reset"}, {"bytes", 1000}, {"times", 6}});
  server.fault({{"path", "/blobs/"}, {"action", "status"}, {"status", 503}, {"times", 6}});
  HttpClient c(fast_options());
  std::atomic<int> ok{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        try {
          auto r = c.send(make("GET", url));
          if (r.status == 200 && sha256_of(r.body).str() == blob["digest"].get<std::string>()) ++ok;
          else ++bad;
        } catch (const std::exception&) {
          ++bad;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
  EXPECT_EQ(bad.load(), 0);
}

// ---------------------------------------------------------------------------------------------------------------
// The fault server itself (others script it for pull/push tests): registry semantics and auth modes.

TEST_F(HttpClientFaults, ServerMountModes) {
  auto blob = server.seed_blob("src/repo", "mounted");
  std::string d = blob["digest"];
  HttpClient c(fast_options());
  auto mount = [&](const std::string& dst) {
    auto req = make("POST", server.url("/v2/" + dst + "/blobs/uploads/?mount=" + d + "&from=src/repo"));
    req.idempotent = false;
    return c.send(req);
  };
  auto r = mount("dst/a");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.header("Docker-Content-Digest"), d);
  EXPECT_EQ(c.send(make("GET", server.url(blob_path("dst/a", d)))).body, "mounted");
  server.config({{"mount", "202"}});
  r = mount("dst/b");
  EXPECT_EQ(r.status, 202);
  EXPECT_NE(r.header("Location").find("/v2/dst/b/blobs/uploads/"), std::string::npos);
  server.config({{"mount", "401"}});
  r = mount("dst/c");
  EXPECT_EQ(r.status, 401);
  EXPECT_FALSE(r.header("WWW-Authenticate").empty());
  server.config({{"mount", "403"}});
  EXPECT_EQ(mount("dst/c").status, 403);
  server.config({{"mount", "404"}});
  EXPECT_EQ(mount("dst/c").status, 404);
}

TEST_F(HttpClientFaults, ServerUploadVariants) {
  HttpClient c(fast_options());
  std::string data = "0123456789";
  std::string digest = sha256_of(data).str();
  // single POST
  auto post = make("POST", server.url("/v2/u/blobs/uploads/?digest=" + digest));
  post.body = data;
  EXPECT_EQ(c.send(post).status, 201);
  server.config({{"single_post", false}});
  EXPECT_EQ(c.send(post).status, 202);
  // chunked PATCH with Content-Range (no "bytes " prefix), out of order -> 416, then PUT
  auto r = c.send(make("POST", server.url("/v2/u/blobs/uploads/")));
  auto patch = make("PATCH", resolve_url(r.url, r.header("Location")), {{"Content-Range", "0-4"}});
  patch.body = data.substr(0, 5);
  r = c.send(patch);
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.header("Range"), "0-4");
  auto wrong = make("PATCH", resolve_url(r.url, r.header("Location")), {{"Content-Range", "6-9"}});
  wrong.body = data.substr(6);
  EXPECT_EQ(c.send(wrong).status, 416);
  patch = make("PATCH", resolve_url(r.url, r.header("Location")), {{"Content-Range", "5-9"}});
  patch.body = data.substr(5);
  r = c.send(patch);
  ASSERT_EQ(r.status, 202) << r.body;
  auto status = c.send(make("GET", resolve_url(r.url, r.header("Location"))));
  EXPECT_EQ(status.status, 204);
  EXPECT_EQ(status.header("Range"), "0-9");
  // a stale _state is refused
  std::string current = resolve_url(r.url, r.header("Location"));
  auto stale = make("PUT", current.substr(0, current.find('?')) + "?_state=old&digest=" + digest);
  EXPECT_EQ(c.send(stale).status, 400);
  // wrong digest -> 400 DIGEST_INVALID; right one -> 201
  auto put = make("PUT", resolve_url(status.url, status.header("Location")) + "&digest=sha256:" + std::string(64, 'a'));
  auto bad = c.send(put);
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("DIGEST_INVALID"), std::string::npos);
  put.url = resolve_url(status.url, status.header("Location")) + "&digest=" + digest;
  EXPECT_EQ(c.send(put).status, 201);
  // registries without chunked uploads
  server.config({{"patch", "stream_only"}});
  r = c.send(make("POST", server.url("/v2/u/blobs/uploads/")));
  patch = make("PATCH", resolve_url(r.url, r.header("Location")), {{"Content-Range", "0-4"}});
  patch.body = data.substr(0, 5);
  EXPECT_EQ(c.send(patch).status, 400);
  server.config({{"patch", "refuse"}});
  EXPECT_EQ(c.send(patch).status, 405);
  // Range requests on blobs
  auto ranged = c.send(make("GET", server.url(blob_path("u", digest)), {{"Range", "bytes=4-"}}));
  EXPECT_EQ(ranged.status, 206);
  EXPECT_EQ(ranged.body, "456789");
  EXPECT_EQ(ranged.header("Content-Range"), "bytes 4-9/10");
  // HTML error bodies
  server.config({{"error_format", "html"}});
  auto missing = c.send(make("GET", server.url(blob_path("u", "sha256:" + std::string(64, 'b')))));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.header("Content-Type").rfind("text/html", 0), 0u);
}

TEST_F(HttpClientFaults, ServerCanOmitDigestHeaders) {
  server.config({{"digest_header", false}});
  auto blob = server.seed_blob("test/app", "no digest");
  HttpClient c(fast_options());
  auto head = c.send(make("HEAD", server.url(blob_path("test/app", blob["digest"]))));
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("Docker-Content-Digest"), "");
  auto put = make("PUT", server.url("/v2/test/app/blobs/uploads/"));
  auto post = c.send(make("POST", server.url("/v2/test/app/blobs/uploads/")));
  put.url = resolve_url(post.url, post.header("Location")) + "&digest=" + sha256_of("x").str();
  put.body = "x";
  auto r = c.send(put);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.header("Docker-Content-Digest"), "");
}

TEST_F(HttpClientFaults, ServerRefusesChunkedRequestBodies) {
  TempDir dir("chunked");
  std::string file = write_temp(dir, "data", "abc");
  auto r = trainpack::testing::run_command(
      {"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Transfer-Encoding: chunked",
       "--data-binary", "@" + file, server.url("/v2/u/blobs/uploads/")});
  EXPECT_EQ(r.out, "411") << r.err;
  auto log = server.requests("POST", "");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_TRUE(log[0]["chunked"].get<bool>());
}

TEST_F(HttpClientFaults, ServerBearerAuthWithExpiringTokens) {
  server.control({{"op", "auth"}, {"mode", "bearer"}, {"users", {{"alice", "s3cret"}}}, {"token_uses", 2}});
  HttpClient c(fast_options());
  auto ping = c.send(make("GET", server.url("/v2/")));
  EXPECT_EQ(ping.status, 401);
  std::string challenge = ping.header("WWW-Authenticate");
  EXPECT_NE(challenge.find("Bearer realm=\"" + server.url("/token") + "\""), std::string::npos) << challenge;
  EXPECT_NE(challenge.find("service=\"fault-registry\""), std::string::npos) << challenge;

  auto token_for = [&](const std::string& basic) {
    auto req = make("GET", server.url("/token?service=fault-registry&scope=repository:team/app:pull,push"));
    if (!basic.empty()) req.headers.push_back({"Authorization", "Basic " + basic});
    auto r = c.send(req);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  };
  auto tok = token_for("YWxpY2U6czNjcmV0");  // alice:s3cret
  EXPECT_EQ(tok["token"], tok["access_token"]);
  std::string bearer = "Bearer " + tok["token"].get<std::string>();
  auto upload = make("POST", server.url("/v2/team/app/blobs/uploads/"), {{"Authorization", bearer}});
  EXPECT_EQ(c.send(upload).status, 202);
  EXPECT_EQ(c.send(upload).status, 202);
  auto expired = c.send(upload);  // third use: the token has expired
  EXPECT_EQ(expired.status, 401);
  EXPECT_NE(expired.header("WWW-Authenticate").find("error=\"invalid_token\""), std::string::npos);
  EXPECT_NE(expired.header("WWW-Authenticate").find("scope=\"repository:team/app:pull,push\""), std::string::npos)
      << expired.header("WWW-Authenticate");

  // anonymous tokens only pull; wrong passwords get no token
  auto anon = token_for("");
  auto denied = c.send(make("POST", server.url("/v2/team/app/blobs/uploads/"),
                            {{"Authorization", "Bearer " + anon["token"].get<std::string>()}}));
  EXPECT_EQ(denied.status, 401);
  EXPECT_NE(denied.header("WWW-Authenticate").find("insufficient_scope"), std::string::npos);
  auto bad = c.send(make("GET", server.url("/token?service=fault-registry&scope=repository:team/app:pull"),
                         {{"Authorization", "Basic YWxpY2U6d3Jvbmc="}}));
  EXPECT_EQ(bad.status, 401);

  // expire_tokens revokes everything at once
  auto fresh = token_for("YWxpY2U6czNjcmV0");
  server.control({{"op", "expire_tokens"}});
  EXPECT_EQ(c.send(make("GET", server.url("/v2/"), {{"Authorization", "Bearer " + fresh["token"].get<std::string>()}}))
                .status,
            401);
  // the log never holds credentials
  for (const auto& e : server.requests()) EXPECT_EQ(e.dump().find("czNjcmV0"), std::string::npos);
}

TEST_F(HttpClientFaults, ServerBasicAuth) {
  server.control({{"op", "auth"}, {"mode", "basic"}, {"users", {{"bob", "pw"}}}});
  HttpClient c(fast_options());
  auto r = c.send(make("GET", server.url("/v2/")));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.header("WWW-Authenticate"), "Basic realm=\"fault-registry\"");
  EXPECT_EQ(c.send(make("GET", server.url("/v2/"), {{"Authorization", "Basic Ym9iOnB3"}})).status, 200);
}

// ---------------------------------------------------------------------------------------------------------------
// TLS with a throw-away CA: fault_server.py over https, CA from ca_file or certs.d, client certificates.

namespace {

struct Pki {
  TempDir dir{"http-tls"};
  std::string ca, ca_key, server_cert, server_key, client_ca, client_cert, client_key;

  Pki() {
    ca = dir / "ca.crt";
    ca_key = dir / "ca.key";
    server_cert = dir / "server.crt";
    server_key = dir / "server.key";
    client_ca = dir / "client-ca.crt";
    client_cert = dir / "client.cert";
    client_key = dir / "client.key";
    std::string ext = write_temp(dir, "server.ext", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
    std::string client_ext = write_temp(dir, "client.ext", "extendedKeyUsage=clientAuth\n");
    run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
         "-subj", "/CN=trainpack-test-ca", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
         "keyUsage=critical,keyCertSign,cRLSign"});
    run({"openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", server_key, "-out", dir / "server.csr",
         "-subj", "/CN=localhost"});
    run({"openssl", "x509", "-req", "-in", dir / "server.csr", "-CA", ca, "-CAkey", ca_key, "-set_serial", "1",
         "-days", "2", "-out", server_cert, "-extfile", ext});
    std::string client_ca_key = dir / "client-ca.key";
    run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", client_ca_key, "-out", client_ca,
         "-days", "2", "-subj", "/CN=trainpack-test-client-ca", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
         "keyUsage=critical,keyCertSign,cRLSign"});
    run({"openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", client_key, "-out", dir / "client.csr",
         "-subj", "/CN=trainpack-test-client"});
    run({"openssl", "x509", "-req", "-in", dir / "client.csr", "-CA", client_ca, "-CAkey", client_ca_key,
         "-set_serial", "2", "-days", "2", "-out", client_cert, "-extfile", client_ext});
  }

  static void run(const std::vector<std::string>& argv) {
    auto r = trainpack::testing::run_command(argv);
    if (r.exit_code != 0) throw std::runtime_error(trainpack::testing::describe(argv, r));
  }

  // A certs.d tree with <authority>/ca.crt (+ optional client pair).
  std::string certs_d(const std::string& name, const std::string& authority, bool with_client = false) {
    std::filesystem::path root = dir.path() / name;
    std::filesystem::create_directories(root / authority);
    std::filesystem::copy_file(ca, root / authority / "ca.crt");
    if (with_client) {
      std::filesystem::copy_file(client_cert, root / authority / "client.cert");
      std::filesystem::copy_file(client_key, root / authority / "client.key");
    }
    return root.string();
  }
};

FaultServer::Options tls_server_options(const Pki& pki, bool require_client_cert = false) {
  FaultServer::Options o;
  o.args = {"--tls-cert", pki.server_cert, "--tls-key", pki.server_key};
  if (require_client_cert) {
    o.args.push_back("--tls-client-ca");
    o.args.push_back(pki.client_ca);
  }
  o.ca_file = pki.ca;
  return o;
}

}  // namespace

TEST(HttpClientTls, UntrustedCertificateFailsWithAHint) {
  Pki pki;
  FaultServer server(tls_server_options(pki));
  ASSERT_EQ(server.scheme(), "https");
  HttpClient c(fast_options());
  try {
    c.send(make("GET", server.url("/v2/")));
    FAIL() << "no TLS error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("after 1 attempt:"), std::string::npos) << what;  // not retried
    EXPECT_NE(what.find("certificate"), std::string::npos) << what;
    EXPECT_NE(e.hint().find("--ca-file"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("/etc/docker/certs.d/127.0.0.1:" + std::to_string(server.port()) + "/ca.crt"),
              std::string::npos)
        << e.hint();
  }
  EXPECT_TRUE(server.requests().empty());
}

TEST(HttpClientTls, CaFileIsTrusted) {
  Pki pki;
  FaultServer server(tls_server_options(pki));
  auto o = fast_options();
  o.ca_file = pki.ca;
  HttpClient c(o);
  auto r = c.send(make("GET", server.url("/v2/")));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(server.requests().size(), 1u);
  // by host name too (the certificate names localhost)
  r = c.send(make("GET", "https://localhost:" + std::to_string(server.port()) + "/v2/"));
  EXPECT_EQ(r.status, 200);
}

TEST(HttpClientTls, RedirectFromHttpsToPublicPlainHttpIsRefused) {
  Pki pki;
  FaultServer server(tls_server_options(pki));
  server.fault({{"path", "^/v2/$"}, {"action", "redirect"}, {"to", "http://storage.example.com/x?sig=secret"}});
  auto o = fast_options();
  o.ca_file = pki.ca;
  o.max_attempts = 1;
  HttpClient c(o);
  try {
    c.send(make("GET", server.url("/v2/")));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refusing plain HTTP to storage.example.com"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
  }
  // to loopback it is allowed (test registries, local storage)
  server.fault({{"path", "^/v2/$"}, {"action", "redirect"}, {"to", "http://127.0.0.1:1/x"}});
  EXPECT_THROW(c.send(make("GET", server.url("/v2/"))), Error);  // followed: connection refused
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(HttpClientTls, CertsDirPerHost) {
  Pki pki;
  FaultServer server(tls_server_options(pki));
  std::string port = std::to_string(server.port());
  {
    auto o = fast_options();
    o.certs_dirs = {"/nonexistent/certs.d", pki.certs_d("certs.d", "127.0.0.1:" + port)};
    HttpClient c(o);
    EXPECT_EQ(c.send(make("GET", server.url("/v2/"))).status, 200);
    // the CA is only for that host:port: localhost:<port> has no directory
    EXPECT_THROW(c.send(make("GET", "https://localhost:" + port + "/v2/")), Error);
  }
  {
    auto o = fast_options();
    o.certs_dirs = {pki.certs_d("certs-localhost", "localhost:" + port)};
    HttpClient c(o);
    EXPECT_EQ(c.send(make("GET", "https://localhost:" + port + "/v2/")).status, 200);
  }
  {
    auto o = fast_options();
    o.certs_dirs = {pki.certs_d("certs-other", "127.0.0.1:1")};
    HttpClient c(o);
    EXPECT_THROW(c.send(make("GET", server.url("/v2/"))), Error);
  }
}

TEST(HttpClientTls, ClientCertificatesFromCertsDir) {
  Pki pki;
  FaultServer server(tls_server_options(pki, /*require_client_cert=*/true));
  std::string authority = "127.0.0.1:" + std::to_string(server.port());
  {
    auto o = fast_options();
    o.certs_dirs = {pki.certs_d("mtls", authority, /*with_client=*/true)};
    HttpClient c(o);
    EXPECT_EQ(c.send(make("GET", server.url("/v2/"))).status, 200);
  }
  {
    auto o = fast_options();
    o.max_attempts = 1;
    o.certs_dirs = {pki.certs_d("no-client", authority)};
    HttpClient c(o);
    EXPECT_THROW(c.send(make("GET", server.url("/v2/"))), Error);
  }
  {
    // a certificate without its key is a configuration error, reported as such
    std::string dir = pki.certs_d("half", authority);
    std::filesystem::copy_file(pki.client_cert, std::filesystem::path(dir) / authority / "client.cert");
    auto o = fast_options();
    o.certs_dirs = {dir};
    HttpClient c(o);
    try {
      c.send(make("GET", server.url("/v2/")));
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("missing key"), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The real registry (docker-registry 2.8): plain http fixture, and a TLS one started here for HTTP/2.

namespace {

std::string unique_repo(const std::string& what) {
  return "trainpack-http/" + what + "-" + std::to_string(::getpid());
}

// A monolithic upload: POST, then PUT <Location>&digest= with the file.
HttpResponse upload_blob(HttpClient& c, const std::string& base, const std::string& repo, const std::string& file,
                         const std::string& digest) {
  auto post = make("POST", base + "/v2/" + repo + "/blobs/uploads/");
  post.idempotent = false;
  auto r = c.send(post);
  EXPECT_EQ(r.status, 202) << r.body;
  std::string location = r.header("Location");
  EXPECT_FALSE(location.empty());
  auto put = make("PUT", resolve_url(r.url, location) + (location.find('?') == std::string::npos ? "?" : "&") +
                             "digest=" + digest,
                  {{"Content-Type", "application/octet-stream"}});
  put.body_file = file;
  return c.send(put);
}

}  // namespace

TEST(HttpClientRegistry, BlobAndManifestRoundTrip) {
  std::string base = "http://" + trainpack::testing::env_or_fail("TRAINPACK_TEST_REGISTRY");
  TempDir dir("http-registry");
  std::string data = random_bytes(2 << 20, 21);
  std::string digest = sha256_of(data).str();
  std::string file = write_temp(dir, "layer", data);
  std::string repo = unique_repo("roundtrip");
  HttpClient c(fast_options());

  auto ping = c.send(make("GET", base + "/v2/"));
  EXPECT_EQ(ping.status, 200);
  EXPECT_EQ(ping.header("Docker-Distribution-Api-Version"), "registry/2.0");

  auto put = upload_blob(c, base, repo, file, digest);
  EXPECT_EQ(put.status, 201) << put.body;
  EXPECT_EQ(put.header("Docker-Content-Digest"), digest);

  auto head = c.send(make("HEAD", base + blob_path(repo, digest)));
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("Content-Length"), std::to_string(data.size()));
  EXPECT_TRUE(head.body.empty());

  std::string received;
  auto get = make("GET", base + blob_path(repo, digest));
  get.sink = [&](const char* d, std::size_t n) { received.append(d, n); };
  get.on_restart = [&] { received.clear(); };
  EXPECT_EQ(c.send(get).status, 200);
  EXPECT_EQ(sha256_of(received).str(), digest);

  // cross-repository mount
  std::string other = unique_repo("mounted");
  auto mount = make("POST", base + "/v2/" + other + "/blobs/uploads/?mount=" + digest + "&from=" + repo);
  mount.idempotent = false;
  EXPECT_EQ(c.send(mount).status, 201);
  EXPECT_EQ(c.send(make("HEAD", base + blob_path(other, digest))).status, 200);

  // manifest by tag
  std::string config = "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}";
  std::string config_file = write_temp(dir, "config", config);
  ASSERT_EQ(upload_blob(c, base, repo, config_file, sha256_of(config).str()).status, 201);
  std::string manifest =
      json{{"schemaVersion", 2},
           {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
           {"config", {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                       {"digest", sha256_of(config).str()}, {"size", config.size()}}},
           {"layers", {{{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"}, {"digest", digest},
                        {"size", data.size()}}}}}
          .dump();
  auto mput = make("PUT", base + "/v2/" + repo + "/manifests/v1",
                   {{"Content-Type", "application/vnd.oci.image.manifest.v1+json"}});
  mput.body = manifest;
  auto m = c.send(mput);
  EXPECT_EQ(m.status, 201) << m.body;
  EXPECT_EQ(m.header("Docker-Content-Digest"), sha256_of(manifest).str());
  auto mget = c.send(make("GET", base + "/v2/" + repo + "/manifests/v1",
                          {{"Accept", "application/vnd.oci.image.manifest.v1+json"}}));
  EXPECT_EQ(mget.status, 200);
  EXPECT_EQ(mget.body, manifest);
  EXPECT_EQ(mget.header("Docker-Content-Digest"), sha256_of(manifest).str());
}

TEST(HttpClientRegistry, StreamedPatchThenEmptyPutAndDigestMismatch) {
  std::string base = "http://" + trainpack::testing::env_or_fail("TRAINPACK_TEST_REGISTRY");
  TempDir dir("http-registry-patch");
  std::string data = random_bytes(1 << 20, 22);
  std::string digest = sha256_of(data).str();
  std::string file = write_temp(dir, "layer", data);
  std::string repo = unique_repo("patch");
  HttpClient c(fast_options());

  auto r = c.send(make("POST", base + "/v2/" + repo + "/blobs/uploads/"));
  ASSERT_EQ(r.status, 202);
  EXPECT_NE(r.header("Location").find("_state="), std::string::npos);  // distribution's absolute ?_state= Location
  auto patch = make("PATCH", resolve_url(r.url, r.header("Location")), {{"Content-Type", "application/octet-stream"}});
  patch.body_file = file;
  r = c.send(patch);
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(r.header("Range"), "0-" + std::to_string(data.size() - 1));
  std::string location = resolve_url(r.url, r.header("Location"));

  auto bad = c.send(make("PUT", location + "&digest=sha256:" + std::string(64, 'a')));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("DIGEST_INVALID"), std::string::npos) << bad.body;

  // after a failed PUT distribution forgets the upload: start again, monolithic this time
  auto put = upload_blob(c, base, repo, file, digest);
  EXPECT_EQ(put.status, 201) << put.body;
  EXPECT_EQ(c.send(make("HEAD", base + blob_path(repo, digest))).status, 200);
}

namespace {

// docker-registry over TLS (Go's server speaks HTTP/2 via ALPN), in-memory storage, on a free port.
class TlsRegistry {
 public:
  explicit TlsRegistry(const Pki& pki) : dir_("tls-registry") {
    port_ = free_port();
    std::string config = dir_ / "config.yml";
    trainpack::testing::write_file(
        config, "version: 0.1\nlog: {level: warn, accesslog: {disabled: true}}\nstorage: {inmemory: {}}\n"
                "http: {addr: 127.0.0.1:" + std::to_string(port_) + ", secret: s, tls: {certificate: " +
                    pki.server_cert + ", key: " + pki.server_key + "}}\n");
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open((dir_ / "registry.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execl("/usr/bin/docker-registry", "docker-registry", "serve", config.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~TlsRegistry() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status;
      ::waitpid(pid_, &status, 0);
    }
  }
  std::string base() const { return "https://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return trainpack::testing::read_file(dir_.path() / "registry.log"); }

 private:
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace

TEST(HttpClientRegistry, Http2OverTlsAndHttp1Fallback) {
  Pki pki;
  TlsRegistry registry(pki);
  auto o = fast_options();
  o.ca_file = pki.ca;
  o.max_attempts = 1;
  HttpClient c(o);
  HttpResponse ping;
  for (int i = 0; i < 100; ++i) {  // up in ~0.5 s
    try {
      ping = c.send(make("GET", registry.base() + "/v2/"));
      break;
    } catch (const Error&) {
      std::this_thread::sleep_for(100ms);
    }
  }
  ASSERT_EQ(ping.status, 200) << registry.log();
  EXPECT_EQ(ping.http_version, 20);

  TempDir dir("http2-upload");
  std::string data = random_bytes(3 << 20, 23);
  std::string digest = sha256_of(data).str();
  std::string file = write_temp(dir, "layer", data);
  auto put = upload_blob(c, registry.base(), "h2/app", file, digest);
  EXPECT_EQ(put.status, 201) << put.body;
  EXPECT_EQ(put.http_version, 20);
  auto get = c.send([&] {
    auto g = make("GET", registry.base() + blob_path("h2/app", digest));
    g.max_response_bytes = 8u << 20;
    return g;
  }());
  EXPECT_EQ(sha256_of(get.body).str(), digest);

  auto o1 = o;
  o1.http1_only = true;
  HttpClient c1(o1);
  auto r = c1.send(make("HEAD", registry.base() + blob_path("h2/app", digest)));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.http_version, 11);
  EXPECT_EQ(r.header("Content-Length"), std::to_string(data.size()));
}
