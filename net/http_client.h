#pragma once
// HTTP for registries and token endpoints, on libcurl (OCI distribution-spec; RFC 9110 for redirects and Retry-After):
//  - one share handle per client (make one HttpClient per process) sharing DNS and TLS sessions between threads;
//    connections are reused through a pool of easy handles (libcurl does not support sharing its connection cache
//    between concurrent threads). HTTP/2 where offered over TLS (off with http1_only; after an HTTP/2 error the
//    remaining attempts of that request use HTTP/1.1). send() may be called from several threads at once;
//  - proxies from the environment (libcurl's rules: https_proxy/HTTPS_PROXY, lower-case http_proxy only, ALL_PROXY,
//    NO_PROXY), never for the GCE metadata server (metadata.google.internal, 169.254.169.254, $GCE_METADATA_HOST,
//    $GCE_METADATA_IP);
//  - the system CA bundle ($SSL_CERT_FILE, else libcurl's path or the first of the usual distribution paths that
//    is a readable file), plus an extra CA file, plus per-host entries of certs.d dirs (Docker's layout):
//    "<dir>/<host[:port]>/*.crt" are CAs, "*.cert" + same-named "*.key" a client certificate (one without the
//    other is an Error). <host[:port]> is the URL's authority as written ("127.0.0.1:5000", "gcr.io");
//  - plain http only for localhost, 127.0.0.0/8, ::1 and the --insecure-registry list (and the metadata server):
//    send() refuses other http:// URLs, and redirects from https to such a URL;
//  - one deadline per request instead of a total timeout (net/request_deadline.h): `timeout` without progress
//    (connecting, waiting for an answer, a stalled or trickling body, backoffs after network failures) fails the
//    request; a transfer that keeps moving is never cut. An attempt that may be retried gets half of it;
//  - retries of idempotent requests on network errors (connection refused/reset, send/receive errors, HTTP/2
//    stream errors, short bodies, stalls, empty replies) and 408/429/500/502/503/504, with exponential backoff
//    (initial_backoff doubling, + up to 25% jitter, capped by max_backoff) or Retry-After (seconds or HTTP-date,
//    one asking for longer than max_backoff fails the request at once), up to
//    max_attempts and, after network errors, within the deadline. A
//    non-idempotent request is only retried when its connection was refused (it was never sent). Every retry starts
//    again from the request's URL, never from a redirect target;
//  - redirects followed by hand (max 10): Location resolved (RFC 3986) against the URL that answered; 301, 302,
//    307 and 308 keep method and body (a POST never becomes a GET), 303 turns anything but HEAD into a body-less
//    GET; Authorization is sent only while scheme, host and port equal the request's own URL;
//  - bodies: Content-Length always (0 for PUT/POST/PATCH without a body), never chunked, no "Expect: 100-continue";
//    file bodies are streamed and rewound as needed. Caller headers Content-Length, Transfer-Encoding and Expect are
//    ignored; "Accept-Encoding: identity" is sent unless the caller gives one; POST gets no default Content-Type.
// Errors are one line, with a hint. When retries end without an answer: "<host> did not answer within T s
// (<METHOD> <url without query>: N attempts, the last: <cause>)" at the deadline, "<host> did not answer
// (<METHOD> <url>: N attempts in S s, the last: <cause>)" after the last attempt ("stalled" once an answer or part
// of the body moved, "sent no complete answer" when answers broke off). Failures no retry may mend (TLS, DNS, a
// non-idempotent request): "<METHOD> <url> failed after N attempts: <cause>".
// Secrets never appear in errors or logs: no header values, no query strings. TRAINPACK_DEBUG_HTTP=1 prints one
// line per request and retry to stderr (method, URL without query, status).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainpack::net {

struct HttpOptions {
  std::vector<std::string> insecure_hosts;  // "host" or "host:port": spoken to over plain http
  std::filesystem::path ca_file;            // extra CA bundle (PEM), added to the system's; unreadable: Error
  std::vector<std::filesystem::path> certs_dirs{"/etc/docker/certs.d", "/etc/containers/certs.d"};
  bool http1_only = false;
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  // The request deadline: this long without progress fails a request (--http-timeout).
  std::chrono::seconds timeout{60};
  std::uint64_t min_bytes_per_second = 1024;  // moving slower than this is no progress
  std::string user_agent = "trainpack";
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // "Authorization" is stripped across hosts
  std::string body;                                   // in-memory body (manifests, forms)
  std::optional<std::filesystem::path> body_file;     // or a file body (blobs): rewindable, Content-Length set
  // Or a body streamed from elsewhere (a blob relayed from another registry), exactly body_stream_size bytes.
  // body_stream is called to open a fresh stream for every hop and attempt, so redirects, auth resends and retries
  // work as with a file. read() fills up to `max` bytes and returns how many; 0 only at the end. An exception from
  // read() fails the request with that exception (no retry: the stream's source has retried already).
  struct BodyStream {
    virtual ~BodyStream() = default;
    virtual std::size_t read(char* buffer, std::size_t max) = 0;
  };
  std::function<std::unique_ptr<BodyStream>()> body_stream;
  std::uint64_t body_stream_size = 0;
  bool follow_redirects = true;
  bool idempotent = true;                             // retried on failures; POST should say false
  std::optional<int> max_attempts;                    // fewer tries than the client's max_attempts (index requests)
  std::uint64_t max_response_bytes = 4u << 20;        // cap for in-memory bodies; exceeding it is an Error
  // When set, a 2xx response body is streamed here instead of kept in memory (blob downloads; no cap applies);
  // other statuses keep their body in memory. on_restart is called before a retried attempt when the sink already
  // received bytes, so the receiver can start over. An exception thrown by the sink aborts send() and propagates.
  std::function<void(const char* data, std::size_t size)> sink;
  std::function<void()> on_restart;
  // Called now and then while a body goes out, with the bytes of it sent so far in this attempt (progress display).
  std::function<void(std::uint64_t sent)> on_upload_progress;
  std::optional<std::chrono::seconds> total_timeout;  // a cap per attempt: Google's OAuth and metadata calls only
  std::optional<std::chrono::seconds> timeout;        // a shorter deadline than the client's (best-effort calls)
  // When this becomes true the request is abandoned (within about a second, between two reads or writes) and send()
  // throws Error, without a retry: a build that failed stops the uploads it began.
  const std::atomic<bool>* stop = nullptr;
  // The hint when the TLS handshake fails, for a URL whose scheme the user wrote (a package index's): the default
  // one names --insecure-registry, which makes registry URLs plain HTTP but cannot change a URL written https://.
  std::string tls_failure_hint;
};

struct HttpResponse {
  long status = 0;
  std::string url;  // the final URL after redirects
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order received
  std::string body;                                           // empty when streamed to a sink
  int http_version = 0;                                       // 10, 11, 20: the protocol of the final response

  // First value of a header (case-insensitive), or empty.
  std::string header(std::string_view name) const;
  std::vector<std::string> header_values(std::string_view name) const;
};

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends with retries and redirects. Returns the final response whatever its status (callers decide what a 4xx
  // means; after the last attempt a retryable status is returned too); throws Error only when no response could be
  // had (network failure after the last attempt, TLS error, too many redirects, body over the cap, refused plain
  // http, unreadable body file or certs.d entry).
  HttpResponse send(const HttpRequest& request);

  // "http" for localhost, 127.0.0.0/8, ::1 and insecure hosts, else "https". `host` is "host" or "host:port"
  // ("[v6]:port"); an insecure_hosts entry without a port covers every port of that host.
  std::string scheme_for(const std::string& host) const;
  const HttpOptions& options() const { return options_; }

 private:
  struct Impl;
  HttpOptions options_;
  std::unique_ptr<Impl> impl_;
};

// Parses Retry-After: delta-seconds or an HTTP-date; nullopt when absent or unparsable.
std::optional<std::chrono::milliseconds> parse_retry_after(const std::string& value,
                                                           std::chrono::system_clock::time_point now);

}  // namespace trainpack::net
