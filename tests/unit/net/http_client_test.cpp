// Pure parts of the HTTP client: Retry-After, scheme selection, header lookup, request validation.
// The transfer behaviour is covered by tests/integration/http_client_test.cpp against fault_server.py.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "net/http_client.h"
#include "support/error.h"

using namespace std::chrono_literals;
using trainpack::net::HttpClient;
using trainpack::net::HttpOptions;
using trainpack::net::HttpRequest;
using trainpack::net::HttpResponse;
using trainpack::net::parse_retry_after;

TEST(HttpClientRetryAfter, DeltaSeconds) {
  auto now = std::chrono::system_clock::now();
  EXPECT_EQ(parse_retry_after("120", now), std::chrono::milliseconds(120000));
  EXPECT_EQ(parse_retry_after("0", now), std::chrono::milliseconds(0));
  EXPECT_EQ(parse_retry_after(" 5 ", now), std::chrono::milliseconds(5000));
  EXPECT_TRUE(parse_retry_after("99999999999999999999999", now).has_value());  // clamped, not overflowed
  EXPECT_GT(*parse_retry_after("99999999999999999999999", now), std::chrono::milliseconds(0));
  for (const char* bad : {"", "  ", "-1", "1.5", "abc", "5s", "+5", "0x10", "12 13"}) {
    EXPECT_FALSE(parse_retry_after(bad, now).has_value()) << bad;
  }
}

TEST(HttpClientRetryAfter, HttpDates) {
  // Sun, 06 Nov 1994 08:49:37 GMT = 784111777
  auto at = std::chrono::system_clock::from_time_t(784111777);
  auto now = at - 10s;
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), std::chrono::milliseconds(10000));
  EXPECT_EQ(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now), std::chrono::milliseconds(10000));
  EXPECT_EQ(parse_retry_after("Sun Nov  6 08:49:37 1994", now), std::chrono::milliseconds(10000));
  // in the past: retry now
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at + 1h), std::chrono::milliseconds(0));
  EXPECT_FALSE(parse_retry_after("tomorrow-ish", now).has_value());
  EXPECT_FALSE(parse_retry_after("Sun, 99 Foo 1994 99:99:99 GMT", now).has_value());
}

TEST(HttpClientScheme, LoopbackAndInsecureHosts) {
  HttpOptions o;
  o.insecure_hosts = {"myreg:5000", "plain.example", "[fd00::1]:5000"};
  HttpClient c(o);
  for (const char* h : {"localhost", "localhost:5000", "LOCALHOST:5000", "127.0.0.1", "127.0.0.1:5100",
                        "127.255.1.2:80", "::1", "[::1]", "[::1]:5000", "myreg:5000", "plain.example",
                        "plain.example:8080", "[fd00::1]:5000"}) {
    EXPECT_EQ(c.scheme_for(h), "http") << h;
  }
  for (const char* h : {"example.com", "128.0.0.1:5000", "10.0.0.1", "127.0.0.1.example.com", "1127.0.0.1",
                        "myreg", "myreg:5001", "gcr.io", "[fd00::1]:5001", "localhost.example.com"}) {
    EXPECT_EQ(c.scheme_for(h), "https") << h;
  }
}

TEST(HttpClientHeaders, CaseInsensitiveLookup) {
  HttpResponse r;
  r.headers = {{"docker-content-digest", "sha256:1"}, {"link", "<a>"}, {"link", "<b>"}};
  EXPECT_EQ(r.header("Docker-Content-Digest"), "sha256:1");
  EXPECT_EQ(r.header("LINK"), "<a>");
  EXPECT_EQ(r.header("missing"), "");
  EXPECT_EQ(r.header_values("Link"), (std::vector<std::string>{"<a>", "<b>"}));
}

TEST(HttpClientValidation, RejectsBadRequestsBeforeAnyNetwork) {
  HttpOptions o;
  o.max_attempts = 1;
  HttpClient c(o);
  auto expect_error = [&](HttpRequest req, const std::string& fragment) {
    try {
      c.send(req);
      ADD_FAILURE() << "no error for " << req.method << " " << req.url;
    } catch (const trainpack::Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
    }
  };
  auto req = [](std::string method, std::string url) {
    HttpRequest r;
    r.method = std::move(method);
    r.url = std::move(url);
    return r;
  };
  expect_error(req("GET", "http://registry.example.com/v2/?token=secret"),
               "refusing plain HTTP to registry.example.com");
  expect_error(req("GET", "ftp://registry.example.com/x"), "invalid URL");
  expect_error(req("GET", "/v2/relative"), "invalid URL");
  HttpRequest get_with_body = req("GET", "https://registry.example.com/v2/");
  get_with_body.body = "x";
  expect_error(get_with_body, "carry no body");
  HttpRequest both = req("PUT", "https://registry.example.com/v2/");
  both.body = "x";
  both.body_file = "/dev/null";
  expect_error(both, "one body");
  HttpRequest injected = req("GET", "https://registry.example.com/v2/");
  injected.headers = {{"X-Test", "a\r\nAuthorization: Bearer secret"}};
  expect_error(injected, "invalid request header");
}

TEST(HttpClientValidation, MissingCaFileIsAnError) {
  HttpOptions o;
  o.ca_file = "/nonexistent/ca.pem";
  EXPECT_THROW(HttpClient c(o), trainpack::Error);
}
