#pragma once
// HTTP for registries and token endpoints, on libcurl (registry.md §3, §10):
//  - one share handle per process (DNS, TLS sessions, connections), HTTP/2 where offered (off with http1_only);
//  - proxies from the environment (libcurl's rules: https_proxy/HTTPS_PROXY, http_proxy, ALL_PROXY, NO_PROXY);
//  - the system CA bundle, plus per-host CA and client certs from certs.d dirs ("<dir>/<host[:port]>/ca.crt",
//    "client.cert", "client.key") and an extra CA file;
//  - plain http only for localhost, 127.0.0.0/8, ::1 and the --insecure-registry list;
//  - stall detection (bytes/second over a window) instead of a total timeout for blob transfers;
//  - retries of idempotent requests on network errors and 408/429/500/502/503/504 with exponential backoff and
//    jitter, honouring Retry-After (seconds or HTTP-date);
//  - redirects followed by hand (max 10), relative Location resolved against the current URL, 307/308 keep method
//    and body, and the Authorization header is never sent to another scheme, host or port.
// Secrets in headers never appear in errors or logs.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainpack::registry {

struct HttpOptions {
  std::vector<std::string> insecure_hosts;  // "host" or "host:port": spoken to over plain http
  std::filesystem::path ca_file;            // extra CA bundle (PEM), added to the system's
  std::vector<std::filesystem::path> certs_dirs{"/etc/docker/certs.d", "/etc/containers/certs.d"};
  bool http1_only = false;
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  std::chrono::seconds connect_timeout{30};
  long stall_bytes_per_second = 1024;  // below this for stall_window → the transfer is abandoned and retried
  std::chrono::seconds stall_window{60};
  std::string user_agent = "trainpack";
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // "Authorization" is stripped across hosts
  std::string body;                                   // in-memory body (manifests, forms)
  std::optional<std::filesystem::path> body_file;     // or a file body (blobs): rewindable, Content-Length set
  bool follow_redirects = true;
  bool idempotent = true;                             // retried on failures; POST should say false
  std::uint64_t max_response_bytes = 4u << 20;        // cap for in-memory bodies; exceeding it is an Error
  // When set, a 2xx response body is streamed here instead of kept in memory (blob downloads); on_restart is
  // called before a retried attempt streams again, so the receiver can start over.
  std::function<void(const char* data, std::size_t size)> sink;
  std::function<void()> on_restart;
  std::optional<std::chrono::seconds> total_timeout;  // token and metadata calls; none for blobs
};

struct HttpResponse {
  long status = 0;
  std::string url;  // the final URL after redirects
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order received
  std::string body;                                           // empty when streamed to a sink

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
  // means); throws Error only when no response could be had (network failure after the last attempt, TLS error,
  // too many redirects, body over the cap).
  HttpResponse send(const HttpRequest& request);

  // "http" for localhost, 127.0.0.0/8, ::1 and insecure hosts, else "https".
  std::string scheme_for(const std::string& host) const;
  const HttpOptions& options() const { return options_; }

 private:
  struct Impl;
  HttpOptions options_;
  std::unique_ptr<Impl> impl_;
};

// Resolves `location` (absolute, scheme-relative, absolute-path or relative) against `base` per RFC 3986.
std::string resolve_url(const std::string& base, const std::string& location);

// Parses Retry-After: delta-seconds or an HTTP-date; nullopt when absent or unparsable.
std::optional<std::chrono::milliseconds> parse_retry_after(const std::string& value,
                                                           std::chrono::system_clock::time_point now);

}  // namespace trainpack::registry
