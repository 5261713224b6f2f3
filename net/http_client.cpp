// HttpClient on libcurl (see http_client.h for the contract and the reasons).
//
// Structure: send() = attempts (retries with backoff) × hops (manual redirects) × one curl_easy_perform each.
// A retry always starts again from the request's own URL, never from a redirect target: presigned storage URLs are
// short-lived and method-bound, the registry hands out a fresh one.
//
// Sharing: the CURLSH shares the DNS cache and TLS sessions between all transfers, with one mutex per lock kind
// (transfers run on several threads). Connections are reused through a pool of easy handles rather than through
// CURL_LOCK_DATA_CONNECT, which libcurl documents as unsupported across concurrent threads; an idle handle keeps its
// live connections across curl_easy_reset().
#include "net/http_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>

#include "net/request_deadline.h"
#include "net/url.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/human.h"
#include "support/text.h"

#if LIBCURL_VERSION_NUM < 0x074d00
#error "trainpack needs libcurl >= 7.77 (CURLOPT_CAINFO_BLOB)"
#endif

namespace trainpack::net {
namespace {

// For messages: the URL without query and fragment (presigned URLs carry their signature there).
std::string redact(const std::string& url) {
  UrlParts u = split_url(url);
  if (!u.has_query && !u.has_fragment) return url;
  u.has_query = u.has_fragment = false;
  return u.str() + "?…";
}

std::string host_only(const std::string& host_port) {
  if (!host_port.empty() && host_port.front() == '[') {
    std::size_t close = host_port.find(']');
    return close == std::string::npos ? host_port : host_port.substr(1, close - 1);
  }
  std::size_t colon = host_port.find(':');
  if (colon != std::string::npos && host_port.find(':', colon + 1) != std::string::npos) return host_port;  // bare IPv6
  return colon == std::string::npos ? host_port : host_port.substr(0, colon);
}

bool is_loopback(const std::string& host) {
  std::string h = ascii_lower(host);
  if (h == "localhost" || h == "::1") return true;
  // 127.0.0.0/8 written as a dotted quad
  int parts = 0;
  std::size_t start = 0;
  std::string first;
  while (true) {
    std::size_t dot = h.find('.', start);
    std::string part = h.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty() || part.size() > 3 || !std::all_of(part.begin(), part.end(), ::isdigit) || std::stoi(part) > 255) {
      return false;
    }
    if (parts == 0) first = part;
    ++parts;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts == 4 && first == "127";
}

// The GCE metadata server: always reached directly, never through a proxy.
bool is_metadata_host(const std::string& host) {
  std::string h = ascii_lower(host);
  if (h == "metadata.google.internal" || h == "metadata.google.internal." || h == "169.254.169.254") return true;
  for (const char* var : {"GCE_METADATA_HOST", "GCE_METADATA_IP"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0' && ascii_lower(host_only(v)) == h) return true;
  }
  return false;
}

bool retryable_status(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

bool retryable_curl_code(CURLcode code) {
  switch (code) {
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_GOT_NOTHING:
      return true;
    default:
      return false;
  }
}

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// A PEM file of CA certificates, a client certificate or its key. Read here, never by libcurl (which would read a
// FIFO or /dev/zero without end), so that such a file is refused in one line. The largest system bundles are
// about 250 KiB.
constexpr std::uintmax_t kPemFileLimit = 16u << 20;

std::string read_pem_file(const std::filesystem::path& p, const char* what) { return read_file(p, kPemFileLimit, what); }

bool debug_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TRAINPACK_DEBUG_HTTP");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
  }();
  return on;
}

// ---------------------------------------------------------------------------------------------------------------
// One transfer (one hop of one attempt).

enum class BodyMode { kNone, kMemory, kFile, kStream };

struct Transfer {
  // request body
  BodyMode body_mode = BodyMode::kNone;
  const std::string* memory = nullptr;
  std::FILE* file = nullptr;
  HttpRequest::BodyStream* stream = nullptr;
  std::exception_ptr stream_error;  // what the stream threw; the request fails with it
  std::uint64_t body_size = 0;
  std::uint64_t offset = 0;

  // response
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::uint64_t body_bytes = 0;
  std::uint64_t cap = 0;
  bool over_cap = false;

  // what to do with the body: decided once the headers are in
  const std::function<void(const char*, std::size_t)>* sink = nullptr;
  bool follow_redirects = true;
  bool sink_used = false;
  std::exception_ptr sink_error;

  // progress: what libcurl reported so far in this hop, fed to the request's deadline
  RequestDeadline* deadline = nullptr;
  const std::function<void(std::uint64_t)>* upload_progress = nullptr;  // only for requests with a body
  std::uint64_t sent = 0, received = 0;
  bool body_done = false;
  bool stalled = false;  // aborted by the deadline
  const std::atomic<bool>* stop = nullptr;  // the request's stop flag
  bool stopped = false;                     // aborted because it was set
};

std::size_t read_cb(char* buffer, std::size_t size, std::size_t nitems, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  std::size_t want = size * nitems;
  if (t->offset >= t->body_size) return 0;
  std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(want, t->body_size - t->offset));
  if (t->body_mode == BodyMode::kMemory) {
    std::memcpy(buffer, t->memory->data() + t->offset, n);
  } else if (t->body_mode == BodyMode::kFile) {
    std::size_t got = std::fread(buffer, 1, n, t->file);
    if (got == 0) return CURL_READFUNC_ABORT;  // the file shrank or failed: never send a short body
    n = got;
  } else if (t->body_mode == BodyMode::kStream) {
    std::size_t got = 0;
    try {
      got = t->stream->read(buffer, n);
    } catch (...) {
      t->stream_error = std::current_exception();
      return CURL_READFUNC_ABORT;
    }
    if (got == 0 || got > n) return CURL_READFUNC_ABORT;  // never send a short (or overlong) body
    n = got;
  } else {
    return 0;
  }
  t->offset += n;
  return n;
}

// libcurl calls this often while bytes move and about once a second otherwise: body bytes out and 2xx body bytes in
// feed the deadline, and an attempt that went without progress for its share of it is aborted.
int progress_cb(void* userdata, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
  auto* t = static_cast<Transfer*>(userdata);
  auto now = RequestDeadline::Clock::now();
  auto sent = static_cast<std::uint64_t>(ulnow), received = static_cast<std::uint64_t>(dlnow);
  if (sent > t->sent) t->deadline->moved(sent - t->sent, now);
  if (received > t->received && t->status >= 200 && t->status < 300) t->deadline->moved(received - t->received, now);
  t->sent = std::max(t->sent, sent);
  t->received = std::max(t->received, received);
  if (t->body_size > 0 && sent == t->body_size && !t->body_done) {
    t->body_done = true;
    t->deadline->body_sent(sent);
  }
  if (t->upload_progress != nullptr && *t->upload_progress && sent > 0) (*t->upload_progress)(sent);
  if (t->stop && t->stop->load()) {
    t->stopped = true;
    return 1;  // abort: CURLE_ABORTED_BY_CALLBACK
  }
  if (!t->deadline->attempt_stalled(now)) return 0;
  t->stalled = true;
  return 1;  // abort: CURLE_ABORTED_BY_CALLBACK
}

int seek_cb(void* userdata, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(userdata);
  if (origin != SEEK_SET || offset < 0 || static_cast<std::uint64_t>(offset) > t->body_size) return CURL_SEEKFUNC_FAIL;
  if (t->body_mode == BodyMode::kFile && ::fseeko(t->file, static_cast<off_t>(offset), SEEK_SET) != 0) {
    return CURL_SEEKFUNC_FAIL;
  }
  // A stream cannot go back; libcurl then fails the hop and the next attempt opens a new stream.
  if (t->body_mode == BodyMode::kStream && static_cast<std::uint64_t>(offset) != t->offset) return CURL_SEEKFUNC_CANTSEEK;
  t->offset = static_cast<std::uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
}

std::size_t header_cb(char* buffer, std::size_t size, std::size_t nitems, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  std::size_t n = size * nitems;
  std::string_view line(buffer, n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A status line: a new response (after 1xx interim ones): start over.
    t->headers.clear();
    std::size_t sp = line.find(' ');
    t->status = sp == std::string_view::npos ? 0 : std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
    return n;
  }
  std::string_view content = ascii_trim(line);
  if (content.empty()) return n;
  if ((line.front() == ' ' || line.front() == '\t') && !t->headers.empty()) {  // obs-fold continuation
    t->headers.back().second += " " + std::string(content);
    return n;
  }
  std::size_t colon = content.find(':');
  if (colon == std::string_view::npos) return n;
  t->headers.emplace_back(ascii_lower(ascii_trim(content.substr(0, colon))), std::string(ascii_trim(content.substr(colon + 1))));
  return n;
}

// The first value of a header (names are lower-cased), or empty.
std::string first_header(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return {};
}

bool has_location(const Transfer& t) {
  return std::any_of(t.headers.begin(), t.headers.end(),
                     [](const auto& h) { return h.first == "location" && !h.second.empty(); });
}

std::size_t write_cb(char* data, std::size_t size, std::size_t nmemb, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  std::size_t n = size * nmemb;
  if (t->status >= 200 && t->status < 300 && t->sink != nullptr && *t->sink) {
    try {
      t->sink_used = true;
      (*t->sink)(data, n);
    } catch (...) {
      t->sink_error = std::current_exception();
      return 0;  // abort the transfer
    }
    t->body_bytes += n;
    return n;
  }
  if (t->follow_redirects && is_redirect(t->status) && has_location(*t)) return n;  // drained, not kept
  if (t->body_bytes + n > t->cap) {
    t->over_cap = true;
    return 0;
  }
  t->body.append(data, n);
  t->body_bytes += n;
  return n;
}

// A curl_slist owner.
struct HeaderList {
  curl_slist* list = nullptr;
  ~HeaderList() { curl_slist_free_all(list); }
  void add(const std::string& line) {
    curl_slist* l = curl_slist_append(list, line.c_str());
    if (l == nullptr) throw Error("out of memory building an HTTP request");
    list = l;
  }
};

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};

struct HopResult {
  CURLcode code = CURLE_OK;
  std::string curl_error;  // what went wrong, for messages: a short cause or libcurl's error text
  bool stalled = false;    // aborted by the deadline
  bool moved = false;      // it got a status line or sent part of its body: a stall rather than no answer
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool sink_used = false;  // the sink received bytes
  int http_version = 0;
};

// What one attempt (the request and the redirects it leads to) ended with.
struct Attempt {
  HopResult hop;
  std::string url;  // the last hop's
  bool network_failure = false;
};

struct TlsConfig {
  std::string ca_blob;  // system bundle + extra CAs; empty: libcurl's defaults
  std::string client_cert, client_key;  // PEM bytes
};

// The system CA bundle: $SSL_CERT_FILE (OpenSSL's variable; trainpack's step image sets it when its base has no
// bundle), else libcurl's built-in path if it is a readable file, else the first readable file of the places
// distributions keep theirs (libcurl's path is that of the system it was built for, which may not be this one's).
// Empty when there is none: libcurl's default stands, and TLS fails with a hint.
std::string system_ca_file() {
  if (const char* env = std::getenv("SSL_CERT_FILE"); env != nullptr && *env != '\0') return env;
  std::vector<std::string> candidates;
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  if (info != nullptr && info->age >= CURLVERSION_SEVENTH && info->cainfo != nullptr) candidates.push_back(info->cainfo);
  for (const char* p : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem",
                        "/etc/ssl/cert.pem"})
    candidates.push_back(p);
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec) && std::filesystem::file_size(c, ec) > 0 && !ec &&
        ::access(c.c_str(), R_OK) == 0)
      return c;
  }
  return "";
}

// One certs.d/<host[:port]> directory (Docker's layout): *.crt are CAs (appended to `extra_cas`), *.cert with its
// same-named *.key the client certificate (the first pair wins); one without the other is an Error.
void read_certs_dir(const std::filesystem::path& dir, std::string& extra_cas, TlsConfig& cfg) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string ext = f.extension().string();
    fs::path partner = f;
    partner.replace_extension(ext == ".cert" ? ".key" : ".cert");
    if (ext == ".crt") {
      extra_cas += "\n" + read_pem_file(f, "a CA certificate file");
    } else if (ext == ".cert" && !fs::exists(partner, ec)) {
      throw Error("missing key " + partner.string() + " for client certificate " + f.string(),
                  "put the client certificate's private key next to it, or remove the certificate");
    } else if (ext == ".cert" && cfg.client_cert.empty()) {
      cfg.client_cert = read_pem_file(f, "a client certificate file");
      cfg.client_key = read_pem_file(partner, "a client key file");
    } else if (ext == ".key" && !fs::exists(partner, ec)) {
      throw Error("missing client certificate " + partner.string() + " for key " + f.string(),
                  "put the client certificate next to its key, or remove the key");
    }
  }
}

}  // namespace

// -----------------------------------------------------------------------------------------------------------------

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (ascii_iequals(k, name)) return v;
  }
  return {};
}

std::vector<std::string> HttpResponse::header_values(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers) {
    if (ascii_iequals(k, name)) out.push_back(v);
  }
  return out;
}

std::optional<std::chrono::milliseconds> parse_retry_after(const std::string& value,
                                                           std::chrono::system_clock::time_point now) {
  std::string_view v = ascii_trim(value);
  if (v.empty()) return std::nullopt;
  if (std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // delta-seconds; absurd values are clamped (callers cap the wait anyway)
    constexpr std::uint64_t kMaxSeconds = 365ull * 24 * 3600;
    std::uint64_t secs = 0;
    for (char c : v) {
      secs = secs * 10 + static_cast<std::uint64_t>(c - '0');
      if (secs > kMaxSeconds) {
        secs = kMaxSeconds;
        break;
      }
    }
    return std::chrono::milliseconds(secs * 1000);
  }
  // An HTTP-date (IMF-fixdate, RFC 850 or asctime): it starts with a day name, which also keeps curl_getdate's
  // leniency from turning garbage into a date.
  if (!std::isalpha(static_cast<unsigned char>(v.front()))) return std::nullopt;
  std::string text(v);
  time_t when = curl_getdate(text.c_str(), nullptr);
  if (when == -1) return std::nullopt;
  auto at = std::chrono::system_clock::from_time_t(when);
  if (at <= now) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(at - now);
}

// -----------------------------------------------------------------------------------------------------------------

struct HttpClient::Impl {
  const HttpClient& owner;
  const HttpOptions& options;
  CURLSH* share = nullptr;
  std::array<std::mutex, CURL_LOCK_DATA_LAST> share_locks;

  std::mutex pool_mutex;
  std::vector<CURL*> idle;  // easy handles with their live connections

  std::mutex tls_mutex;
  std::map<std::string, std::shared_ptr<const TlsConfig>> tls_by_authority;
  std::string extra_ca;  // options.ca_file's contents
  std::optional<std::string> system_bundle;
  const std::string system_ca_path = system_ca_file();

  Impl(const HttpClient& c, const HttpOptions& o) : owner(c), options(o) {}

  ~Impl() {
    for (CURL* h : idle) curl_easy_cleanup(h);
    if (share != nullptr) curl_share_cleanup(share);
  }

  static void lock_cb(CURL*, curl_lock_data data, curl_lock_access, void* userptr) {
    static_cast<Impl*>(userptr)->share_locks[static_cast<std::size_t>(data) % CURL_LOCK_DATA_LAST].lock();
  }
  static void unlock_cb(CURL*, curl_lock_data data, void* userptr) {
    static_cast<Impl*>(userptr)->share_locks[static_cast<std::size_t>(data) % CURL_LOCK_DATA_LAST].unlock();
  }

  CURL* acquire() {
    {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (!idle.empty()) {
        CURL* h = idle.back();
        idle.pop_back();
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (h == nullptr) throw Error("cannot initialise libcurl");
    return h;
  }
  void release(CURL* h) {
    curl_easy_reset(h);  // keeps live connections
    std::lock_guard<std::mutex> lock(pool_mutex);
    idle.push_back(h);
  }

  const std::string& system_ca_bundle() {
    if (!system_bundle) {
      try {
        system_bundle = system_ca_path.empty() ? "" : read_pem_file(system_ca_path, "the system CA bundle");
      } catch (const Error&) {
        system_bundle = "";  // as a missing bundle: TLS fails later, with its hint
      }
    }
    return *system_bundle;
  }

  // CA and client certificate for one host[:port]: the system bundle plus --ca-file plus certs.d/<authority>/*.crt,
  // and certs.d/<authority>/*.cert with its .key (Docker's layout). Computed once per authority.
  std::shared_ptr<const TlsConfig> tls_for(const std::string& authority) {
    std::lock_guard<std::mutex> lock(tls_mutex);
    auto it = tls_by_authority.find(authority);
    if (it != tls_by_authority.end()) return it->second;
    auto cfg = std::make_shared<TlsConfig>();
    std::string extras = extra_ca;
    for (const auto& root : options.certs_dirs) {
      std::error_code ec;
      std::filesystem::path dir = root / authority;
      if (!root.empty() && std::filesystem::is_directory(dir, ec)) read_certs_dir(dir, extras, *cfg);
    }
    if (!extras.empty()) cfg->ca_blob = system_ca_bundle() + "\n" + extras + "\n";
    tls_by_authority.emplace(authority, cfg);
    return cfg;
  }

  void set_connection(CURL* h, const std::string& url, const Origin& origin, const HttpRequest& req, bool http1,
                      const RequestDeadline& deadline, char* errbuf);
  void set_tls(CURL* h, const std::string& authority);
  HopResult perform(const HttpRequest& req, const std::string& url, const std::string& method, bool send_body,
                    bool send_authorization, bool http1, RequestDeadline& deadline);
  Attempt attempt(const HttpRequest& request, const std::string& method, const Origin& first_origin, bool http1,
                  RequestDeadline& deadline, int number);
  std::string redirect_target(const HttpRequest& request, const std::string& method, const std::string& url,
                              const std::string& location) const;
  // Throws unless plain http to `o` is allowed (loopback, --insecure-registry, the metadata server).
  void check_plain_http(const Origin& o, const std::string& url, const std::string& method) const;
};

namespace {

std::string curl_error_text(CURLcode code, const char* errbuf) {
  std::string text = curl_easy_strerror(code);
  if (errbuf != nullptr && *errbuf != '\0') {
    std::string detail = std::string(ascii_trim(errbuf));
    if (detail != text) text += ": " + detail;
  }
  return text;
}

// Why a hop failed, in a few words where we know better than libcurl's text.
std::string failure_cause(CURL* h, CURLcode code, const Transfer& t, const char* errbuf) {
  curl_off_t pretransfer = 0;  // 0: the request never got past connecting (TCP and TLS)
  curl_easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
  if ((t.stalled || code == CURLE_OPERATION_TIMEDOUT) && pretransfer == 0) return "connection timed out";
  if (t.stalled) {
    if (t.status == 0 && t.sent < t.body_size)
      return "upload stalled after " + human_bytes(t.sent) + " of " + human_bytes(t.body_size);
    if (t.status == 0) return "no response";
    return "response stalled after " + human_bytes(t.received);
  }
  long os_errno = 0;
  curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
  if (code == CURLE_COULDNT_CONNECT && os_errno == ECONNREFUSED) return "connection refused";
  if (code == CURLE_COULDNT_CONNECT && os_errno != 0) return std::string("cannot connect: ") + std::strerror(int(os_errno));
  return curl_error_text(code, errbuf);
}

// The body of one hop, opened afresh (a stream is opened again, a file reopened at its start).
struct BodySource {
  std::unique_ptr<std::FILE, FileCloser> file;
  std::unique_ptr<HttpRequest::BodyStream> stream;
};

BodySource open_body(const HttpRequest& req, Transfer& t) {
  BodySource source;
  if (req.body_stream) {
    source.stream = req.body_stream();
    t.body_mode = BodyMode::kStream;
    t.stream = source.stream.get();
    t.body_size = req.body_stream_size;
  } else if (req.body_file) {
    std::error_code ec;
    auto size = std::filesystem::file_size(*req.body_file, ec);
    if (ec) throw Error("cannot read request body " + req.body_file->string() + ": " + ec.message());
    source.file.reset(std::fopen(req.body_file->c_str(), "rb"));
    if (!source.file) throw Error("cannot open request body " + req.body_file->string() + ": " + std::strerror(errno));
    t.body_mode = BodyMode::kFile;
    t.file = source.file.get();
    t.body_size = size;
  } else {
    t.body_mode = BodyMode::kMemory;
    t.memory = &req.body;
    t.body_size = req.body.size();
  }
  return source;
}

// The caller's headers as sent: framing is ours (curl sets Content-Length from the body; chunked encoding is
// never used), Authorization only where it may go, identity encoding unless asked otherwise, no 100-continue.
void add_request_headers(HeaderList& headers, const HttpRequest& req, bool send_authorization, bool& has_content_type) {
  bool has_accept_encoding = false;
  for (const auto& [name, value] : req.headers) {
    if (ascii_iequals(name, "authorization") && !send_authorization) continue;
    if (ascii_iequals(name, "content-length") || ascii_iequals(name, "transfer-encoding") || ascii_iequals(name, "expect")) continue;
    if (ascii_iequals(name, "content-type")) has_content_type = true;
    if (ascii_iequals(name, "accept-encoding")) has_accept_encoding = true;
    headers.add(value.empty() ? name + ";" : name + ": " + value);
  }
  if (!has_accept_encoding) headers.add("Accept-Encoding: identity");
  headers.add("Expect:");  // no 100-continue round trip (and no waiting on servers that ignore it)
}

// Method and body. Every body has an explicit length; PUT/POST/PATCH without a body send Content-Length: 0.
void set_method(CURL* h, const std::string& method, bool send_body, Transfer& t, HeaderList& headers,
                bool has_content_type) {
  bool uploads = send_body || method == "PUT" || method == "POST" || method == "PATCH";
  if (method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (method == "GET" && !send_body) {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (method == "POST") {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.body_size));
    if (!has_content_type) headers.add("Content-Type:");  // no default form type
  } else if (uploads) {
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(t.body_size));
    if (method != "PUT") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  if (uploads) {
    curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
    curl_easy_setopt(h, CURLOPT_READDATA, &t);
    curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, seek_cb);
    curl_easy_setopt(h, CURLOPT_SEEKDATA, &t);
  }
}

// The callbacks that fill `t`: status and headers, the body (to memory or the sink), progress for the deadline.
void set_callbacks(CURL* h, Transfer& t) {
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress_cb);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
}

int http_version_of(CURL* h) {
  long version = 0;
  curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
  return version == CURL_HTTP_VERSION_1_0   ? 10
         : version == CURL_HTTP_VERSION_1_1 ? 11
         : version == CURL_HTTP_VERSION_2_0 ? 20
         : version == CURL_HTTP_VERSION_3   ? 30
                                            : 0;
}

// What the hop ended with. Errors from the body's sink or stream, and a body over the cap, are thrown.
HopResult hop_result(CURL* h, CURLcode code, Transfer& t, const char* errbuf, const HttpRequest& req,
                     const std::string& method, const std::string& url) {
  if (t.sink_error) std::rethrow_exception(t.sink_error);
  if (t.stream_error) std::rethrow_exception(t.stream_error);
  if (t.stopped) throw Error(method + " " + redact(url) + ": stopped before it was done");
  if (t.over_cap) {
    throw Error(method + " " + redact(url) + ": response body exceeds " + std::to_string(req.max_response_bytes) +
                    " bytes",
                "the server sent far more than expected for this request; check the registry URL");
  }
  HopResult result;
  result.code = t.stalled ? CURLE_OPERATION_TIMEDOUT : code;
  result.stalled = t.stalled;
  result.moved = t.status != 0 || (t.sent > 0 && t.sent < t.body_size);
  if (code != CURLE_OK) result.curl_error = failure_cause(h, code, t, errbuf);
  result.sink_used = t.sink_used;
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  result.http_version = http_version_of(h);
  result.status = code == CURLE_OK ? status : t.status;
  result.headers = std::move(t.headers);
  result.body = std::move(t.body);
  return result;
}

}  // namespace

// Where and how to connect: the URL, protocols, proxy, timeouts, HTTP version, and TLS for https.
void HttpClient::Impl::set_connection(CURL* h, const std::string& url, const Origin& origin, const HttpRequest& req,
                                      bool http1, const RequestDeadline& deadline, char* errbuf) {
  curl_easy_setopt(h, CURLOPT_SHARE, share);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, http1 ? CURL_HTTP_VERSION_1_1 : CURL_HTTP_VERSION_2TLS);
  auto connect_timeout = deadline.connect_timeout(RequestDeadline::Clock::now());
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout.count()));
  if (req.total_timeout) {
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.total_timeout->count() * 1000));
  }
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, 256L * 1024);
  if (is_metadata_host(origin.host)) curl_easy_setopt(h, CURLOPT_PROXY, "");
  if (origin.scheme == "https") set_tls(h, origin.authority);
}

void HttpClient::Impl::set_tls(CURL* h, const std::string& authority) {
  auto tls = tls_for(authority);
  if (!tls->ca_blob.empty()) {
    curl_blob blob{const_cast<char*>(tls->ca_blob.data()), tls->ca_blob.size(), CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
  } else if (!system_ca_path.empty()) {
    curl_easy_setopt(h, CURLOPT_CAINFO, system_ca_path.c_str());
  }
  if (!tls->client_cert.empty()) {
    curl_blob cert{const_cast<char*>(tls->client_cert.data()), tls->client_cert.size(), CURL_BLOB_COPY};
    curl_blob key{const_cast<char*>(tls->client_key.data()), tls->client_key.size(), CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
}

HopResult HttpClient::Impl::perform(const HttpRequest& req, const std::string& url, const std::string& method,
                                    bool send_body, bool send_authorization, bool http1, RequestDeadline& deadline) {
  auto origin = origin_of(url);
  if (!origin || (origin->scheme != "http" && origin->scheme != "https")) {
    throw Error("unsupported URL " + redact(url) + " in " + method + " request", "registry URLs are http:// or https://");
  }
  Transfer t;
  t.cap = req.max_response_bytes;
  t.sink = &req.sink;
  t.follow_redirects = req.follow_redirects;
  t.deadline = &deadline;
  BodySource body = send_body ? open_body(req, t) : BodySource{};

  CURL* h = acquire();
  struct Releaser {
    Impl* impl;
    CURL* h;
    ~Releaser() { impl->release(h); }
  } releaser{this, h};

  char errbuf[CURL_ERROR_SIZE] = {0};
  HeaderList headers;
  bool has_content_type = false;
  add_request_headers(headers, req, send_authorization, has_content_type);
  set_connection(h, url, *origin, req, http1, deadline, errbuf);
  set_method(h, method, send_body, t, headers, has_content_type);
  if (send_body) t.upload_progress = &req.on_upload_progress;
  t.stop = req.stop;
  set_callbacks(h, t);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
  CURLcode code = curl_easy_perform(h);
  return hop_result(h, code, t, errbuf, req, method, url);
}

// -----------------------------------------------------------------------------------------------------------------

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>(*this, options_)) {
  static std::once_flag global_init;
  std::call_once(global_init, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("cannot initialise libcurl");
  });
  if (options_.max_attempts < 1) options_.max_attempts = 1;
  if (!options_.ca_file.empty()) impl_->extra_ca = read_pem_file(options_.ca_file, "a CA file");
  // libcurl reads the system bundle itself (CURLOPT_CAINFO, which it caches), and only for https; one the
  // environment names is checked by our rules first, so that SSL_CERT_FILE=/dev/zero is refused rather than read
  // without end. A missing one is left to libcurl: TLS then fails with its hint.
  if (const char* env = std::getenv("SSL_CERT_FILE"); env != nullptr && *env != '\0' && std::filesystem::exists(env))
    check_readable_file(env, kPemFileLimit, "a CA file");

  impl_->share = curl_share_init();
  if (impl_->share == nullptr) throw Error("cannot initialise libcurl");
  curl_share_setopt(impl_->share, CURLSHOPT_LOCKFUNC, &Impl::lock_cb);
  curl_share_setopt(impl_->share, CURLSHOPT_UNLOCKFUNC, &Impl::unlock_cb);
  curl_share_setopt(impl_->share, CURLSHOPT_USERDATA, impl_.get());
  curl_share_setopt(impl_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(impl_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
}

HttpClient::~HttpClient() = default;

std::string HttpClient::scheme_for(const std::string& host) const {
  std::string h = ascii_lower(host);
  if (is_loopback(host_only(h))) return "http";
  for (const auto& entry : options_.insecure_hosts) {
    std::string e = ascii_lower(entry);
    if (e == h) return "http";
    // "host" without a port covers every port of that host
    bool entry_has_port = host_only(e) != e && !(e.front() == '[' && e.back() == ']');
    if (!entry_has_port && host_only(e) == host_only(h)) return "http";
  }
  return "https";
}

namespace {

// The request's method, upper-cased, once the request is known to be well-formed (before any network).
std::string checked_method(const HttpRequest& request) {
  std::string method = request.method.empty() ? "GET" : request.method;
  std::transform(method.begin(), method.end(), method.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (int(request.body_file.has_value()) + int(!request.body.empty()) + int(bool(request.body_stream)) > 1) {
    throw Error(method + " " + redact(request.url) + ": a request has one body: in memory, a file or a stream");
  }
  if ((method == "GET" || method == "HEAD") && (request.body_file || request.body_stream || !request.body.empty())) {
    throw Error(method + " " + redact(request.url) + ": " + method + " requests carry no body");
  }
  for (const auto& [name, value] : request.headers) {
    auto bad = [](const std::string& s) { return s.find_first_of("\r\n") != std::string::npos; };
    if (name.empty() || bad(name) || bad(value) || name.find(':') != std::string::npos) {
      throw Error(method + " " + redact(request.url) + ": invalid request header name or value (header \"" +
                  (bad(name) ? std::string("?") : name) + "\")");
    }
  }
  return method;
}

std::string network_failure_hint(CURLcode code, const std::string& authority) {
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
      return "the server's TLS certificate is not trusted: pass its CA with --ca-file, or put it in "
             "/etc/docker/certs.d/" + authority + "/ca.crt";
    case CURLE_SSL_CONNECT_ERROR:
      return "the TLS handshake failed; if " + authority + " speaks plain HTTP, list it with --insecure-registry " +
             authority;
    case CURLE_SSL_CERTPROBLEM:
      return "check the client certificate and key in the certs.d directory for " + authority;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return "check the host name, DNS and the proxy settings (https_proxy, HTTPS_PROXY, NO_PROXY)";
    case CURLE_COULDNT_CONNECT:
      return "check that " + authority + " is reachable, and the proxy settings (https_proxy, HTTPS_PROXY, NO_PROXY)";
    case CURLE_OPERATION_TIMEDOUT:
      return "the transfer timed out; check the network and retry";
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return "the HTTP/2 connection failed; retry with --http1.1";
    default:
      return {};
  }
}

std::string attempts_text(int attempts) { return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts"); }

std::string seconds_text(std::chrono::milliseconds d) { return std::to_string((d.count() + 500) / 1000) + " s"; }

// A failure no retry may mend (TLS, DNS, a request that must not be repeated): what libcurl says.
Error network_error(const std::string& method, const HttpRequest& request, const Origin& origin, const Attempt& last,
                    int attempts) {
  std::string hint = last.hop.code == CURLE_SSL_CONNECT_ERROR && !request.tls_failure_hint.empty()
                         ? request.tls_failure_hint
                         : network_failure_hint(last.hop.code, origin.authority);
  return Error(method + " " + redact(request.url) + " failed after " + attempts_text(attempts) + ": " +
                   last.hop.curl_error,
               hint);
}

// Retries ran out without an answer: at the deadline (`timeout` set), or after the last attempt (`took` so far).
Error no_answer_error(const std::string& method, const std::string& url, const Attempt& last, int attempts,
                      std::optional<std::chrono::milliseconds> timeout, std::chrono::milliseconds took) {
  auto o = origin_of(last.url);
  std::string host = o ? o->authority : redact(last.url);
  bool stalled = last.hop.moved && last.hop.stalled;
  std::string what = !last.hop.moved ? " did not answer" : stalled ? " stalled" : " sent no complete answer";
  if (timeout) what += (stalled ? " for " : " within ") + seconds_text(*timeout);
  std::string tries = attempts_text(attempts) + (timeout ? "" : " in " + seconds_text(took));
  std::string hint = "check that " + host + " is up and reachable (and https_proxy, HTTPS_PROXY, NO_PROXY)";
  if (timeout) hint += "; if it is only slow, allow it more time with --http-timeout=SECONDS (now " + seconds_text(*timeout) + ")";
  return Error(host + what + " (" + method + " " + redact(url) + ": " + tries + ", the last: " + last.hop.curl_error + ")",
               hint);
}

// The wait before attempt `attempt` + 1: exponential with jitter, or what Retry-After asks, never beyond max_backoff.
std::chrono::milliseconds retry_delay(const HttpOptions& options, int attempt, const Attempt& last) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::chrono::milliseconds delay = options.initial_backoff;
  for (int i = 1; i < attempt && delay < options.max_backoff; ++i) delay *= 2;
  if (delay > options.max_backoff) delay = options.max_backoff;
  if (delay.count() > 0) {
    std::uniform_int_distribution<long long> jitter(0, delay.count() / 4);
    delay += std::chrono::milliseconds(jitter(rng));
  }
  if (!last.network_failure) {
    auto asked = parse_retry_after(first_header(last.hop.headers, "retry-after"), std::chrono::system_clock::now());
    if (asked) delay = *asked;
  }
  return std::min(delay, options.max_backoff);
}

// An answer whose Retry-After (RFC 9110 section 10.2.3) asks for a longer wait than trainpack makes between tries
// (max_backoff): the server says it will not be ready in that time, and asking again sooner only adds load. A shorter
// one is waited for, past the deadline too: an asked wait is not silence. Throws Error naming the server's Retry-After.
void refuse_retry_after_past_longest_wait(const std::string& method, const std::string& url, const Attempt& last,
                                          std::chrono::milliseconds longest_wait) {
  std::string value = first_header(last.hop.headers, "retry-after");
  auto asked = parse_retry_after(value, std::chrono::system_clock::now());
  if (!asked || *asked <= longest_wait) return;
  auto o = origin_of(last.url);
  std::string host = o ? o->authority : redact(last.url);
  throw Error(host + " answered " + std::to_string(last.hop.status) + " asking to retry after " +
                  seconds_text(*asked) + " (Retry-After: " + std::string(ascii_trim(value)) +
                  "), longer than the " + seconds_text(longest_wait) + " trainpack waits between tries (" + method +
                  " " + redact(url) + ")",
              "try again when " + host + " is ready");
}

HttpResponse response_of(Attempt& last) {
  HttpResponse response;
  response.status = last.hop.status;
  response.url = last.url;
  response.headers = std::move(last.hop.headers);
  response.body = std::move(last.hop.body);
  response.http_version = last.hop.http_version;
  return response;
}

}  // namespace

Attempt HttpClient::Impl::attempt(const HttpRequest& request, const std::string& method, const Origin& first_origin,
                                  bool http1, RequestDeadline& deadline, int number) {
  Attempt a;
  a.url = request.url;
  std::string hop_method = method;
  bool send_body = request.body_file.has_value() || bool(request.body_stream) || !request.body.empty();
  for (int redirects = 0;; ++redirects) {
    auto o = origin_of(a.url);
    a.hop = perform(request, a.url, hop_method, send_body, o && *o == first_origin, http1, deadline);
    if (a.hop.code != CURLE_OK) {
      a.network_failure = true;
      return a;
    }
    if (debug_enabled()) {
      std::fprintf(stderr, "trainpack http: %s %s -> %ld (attempt %d)\n", hop_method.c_str(), redact(a.url).c_str(),
                   a.hop.status, number);
    }
    std::string location = first_header(a.hop.headers, "location");
    if (!request.follow_redirects || !is_redirect(a.hop.status) || location.empty()) return a;
    if (redirects == 10) {
      throw Error(method + " " + redact(request.url) + ": too many redirects (more than 10)",
                  "the registry or a proxy is redirecting in a loop");
    }
    a.url = redirect_target(request, method, a.url, location);
    // 303 means "see other": fetch it with GET. 301/302 keep the method like 307/308: registries never want a
    // POST/PUT turned into a GET, and for GET/HEAD it makes no difference.
    if (a.hop.status == 303 && hop_method != "HEAD" && hop_method != "GET") {
      hop_method = "GET";
      send_body = false;
    }
  }
}

// Where a redirect from `url` to `location` leads: an http(s) URL, never from https down to a plain-http host
// that may not be spoken to.
std::string HttpClient::Impl::redirect_target(const HttpRequest& request, const std::string& method,
                                              const std::string& url, const std::string& location) const {
  std::string next = resolve_url(url, location);
  auto next_origin = origin_of(next);
  if (!next_origin || (next_origin->scheme != "http" && next_origin->scheme != "https")) {
    throw Error(method + " " + redact(request.url) + ": redirect to an unsupported URL " + redact(next));
  }
  auto o = origin_of(url);
  if (next_origin->scheme == "http" && o && o->scheme == "https") check_plain_http(*next_origin, next, method);
  return next;
}

void HttpClient::Impl::check_plain_http(const Origin& o, const std::string& url, const std::string& method) const {
  if (o.scheme == "http" && owner.scheme_for(o.authority) != "http" && owner.scheme_for(o.host) != "http" &&
      !is_metadata_host(o.host)) {
    throw Error("refusing plain HTTP to " + o.authority + " (" + method + " " + redact(url) + ")",
                "plain HTTP is only used for localhost and hosts listed with --insecure-registry " + o.authority);
  }
}

namespace {

// The origin of the request's own URL, once it is known to be an http(s) URL.
Origin checked_origin(const HttpRequest& request, const std::string& method) {
  auto origin = origin_of(request.url);
  if (!origin || (origin->scheme != "http" && origin->scheme != "https")) {
    throw Error("invalid URL " + redact(request.url) + " in " + method + " request",
                "registry URLs are absolute http:// or https:// URLs");
  }
  return *origin;
}

// Whether what `last` ended with may be mended by another attempt (without regard to time and attempts left). A
// non-idempotent request is retried only when its connection was refused: it was never sent.
bool retryable(const HttpRequest& request, const Attempt& last) {
  if (!last.network_failure) return request.idempotent && retryable_status(last.hop.status);
  return retryable_curl_code(last.hop.code) && (request.idempotent || last.hop.code == CURLE_COULDNT_CONNECT);
}

void debug_retry(const std::string& method, const HttpRequest& request, const Attempt& last,
                 std::chrono::milliseconds delay) {
  if (!debug_enabled()) return;
  std::string why = last.network_failure ? last.hop.curl_error : "status " + std::to_string(last.hop.status);
  std::fprintf(stderr, "trainpack http: %s %s: %s; retrying in %lld ms\n", method.c_str(), redact(request.url).c_str(),
               why.c_str(), static_cast<long long>(delay.count()));
}

// The end of a request whose last attempt is `last`: its answer, or the Error that says why there is none.
HttpResponse finish_request(const HttpRequest& request, const std::string& method, const Origin& origin, Attempt& last,
                            int attempts, const RequestDeadline& deadline, std::chrono::milliseconds took,
                            bool out_of_time) {
  if (!last.network_failure) return response_of(last);
  if (out_of_time) throw no_answer_error(method, request.url, last, attempts, deadline.timeout(), took);
  if (retryable(request, last)) throw no_answer_error(method, request.url, last, attempts, std::nullopt, took);
  throw network_error(method, request, origin, last, attempts);
}

}  // namespace

HttpResponse HttpClient::send(const HttpRequest& request) {
  using Clock = RequestDeadline::Clock;
  const std::string method = checked_method(request);
  const Origin origin = checked_origin(request, method);
  impl_->check_plain_http(origin, request.url, method);
  const int max_attempts = std::clamp(request.max_attempts.value_or(options_.max_attempts), 1, options_.max_attempts);
  const auto start = Clock::now();
  RequestDeadline deadline(request.timeout ? std::min(*request.timeout, options_.timeout) : options_.timeout,
                           options_.min_bytes_per_second, start);
  bool http1 = options_.http1_only;
  for (int attempt = 1;; ++attempt) {
    if (request.stop && request.stop->load())
      throw Error(method + " " + redact(request.url) + ": stopped before it was done");
    deadline.start_attempt(Clock::now(), attempt >= max_attempts || !request.idempotent);
    Attempt last = impl_->attempt(request, method, origin, http1, deadline, attempt);
    if (last.hop.stalled) deadline.abandoned_stalled_attempt();
    bool out_of_time = last.network_failure && deadline.expired(Clock::now());
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (!retryable(request, last) || out_of_time || attempt >= max_attempts)
      return finish_request(request, method, origin, last, attempt, deadline, took, out_of_time);
    if (!last.network_failure) refuse_retry_after_past_longest_wait(method, request.url, last, options_.max_backoff);
    std::chrono::milliseconds delay = retry_delay(options_, attempt, last);
    // After a network failure the wait counts against the deadline; after an answer it was asked for.
    if (last.network_failure && !deadline.allows_retry_after(delay, Clock::now()))
      throw no_answer_error(method, request.url, last, attempt, deadline.timeout(), took);
    if (last.network_failure && (last.hop.code == CURLE_HTTP2 || last.hop.code == CURLE_HTTP2_STREAM)) http1 = true;
    debug_retry(method, request, last, delay);
    std::this_thread::sleep_for(delay);
    if (!last.network_failure) deadline.restart(Clock::now());
    if (last.hop.sink_used && request.on_restart) request.on_restart();
  }
}

}  // namespace trainpack::net
