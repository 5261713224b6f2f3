#include "python/index_client.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>

#include "image/digest.h"
#include "net/encoding.h"
#include "net/url.h"
#include "python/names.h"
#include "python/wheel_file.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/parallel.h"
#include "support/text.h"

namespace trainpack::python {
namespace fs = std::filesystem;

namespace {

constexpr const char* kAccept =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01";

// The parts of an absolute URL the client needs. `url` has no userinfo and no fragment.
struct Endpoint {
  std::string url;
  std::string origin;  // "scheme://host:port", lower case, default port filled in
  std::string host;    // lower case, without port or brackets
  std::string authority;  // host[:port] as written, without userinfo
  std::optional<std::pair<std::string, std::string>> userinfo;  // percent-decoded user, password
};

Endpoint parse_endpoint(std::string_view url) {
  net::UrlParts u = net::split_url(url);
  u.has_fragment = false;
  Endpoint e;
  std::optional<net::Origin> origin = net::origin_of(u.str());
  if (!origin) {
    e.url = u.str();
    return e;
  }
  if (origin->userinfo) {
    std::string_view info = *origin->userinfo;
    std::size_t colon = info.find(':');
    e.userinfo.emplace(net::percent_decode(info.substr(0, colon)),
                       colon == std::string_view::npos ? std::string() : net::percent_decode(info.substr(colon + 1)));
    u.authority.erase(0, u.authority.rfind('@') + 1);
  }
  e.host = origin->host;
  e.authority = origin->authority;
  e.origin = origin->str();
  u.scheme = origin->scheme;
  e.url = u.str();
  return e;
}

// For messages: no userinfo, no query.
std::string display(const std::string& url) { return net::url_for_display(parse_endpoint(url).url); }

// The hash a download is checked against: sha256 when listed, else the strongest other one pip knows.
std::optional<std::pair<std::string, std::string>> expected_hash(const std::map<std::string, std::string>& hashes) {
  for (const char* algo : {"sha256", "sha512", "sha384", "sha224", "sha1", "md5"}) {
    if (auto it = hashes.find(algo); it != hashes.end()) return *it;
  }
  return std::nullopt;
}

bool is_ok(long status) { return status >= 200 && status < 300; }

std::string http_failure_hint(long status) {
  if (status == 401 || status == 403) {
    return "check the index credentials (user:password in the index URL, ~/.netrc, or Google credentials for "
           "Artifact Registry)";
  }
  return "check that the index URL is right and the index is reachable";
}

// Does a find-links file name belong to the project? Wheels: first '-'-field; sdists: any '-'-split prefix
// (names may contain '-'), both compared canonicalized.
bool filename_matches_project(const std::string& filename, const std::string& canonical) {
  std::string lower = ascii_lower(filename);
  if (lower.size() > 4 && lower.compare(lower.size() - 4, 4, ".whl") == 0) {
    return canonicalize_name(filename.substr(0, filename.find('-'))) == canonical;
  }
  for (std::size_t dash = filename.find('-'); dash != std::string::npos; dash = filename.find('-', dash + 1)) {
    if (canonicalize_name(filename.substr(0, dash)) == canonical) return true;
  }
  return false;
}

std::string default_netrc_path() {
  if (const char* v = std::getenv("NETRC"); v != nullptr && *v != '\0') return v;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return std::string(home) + "/.netrc";
  return {};
}

// The Basic credentials for `e`: its own userinfo, else its index URL's, else .netrc's, else an access token.
std::optional<std::string> basic_credentials(const Endpoint& e, const std::map<std::string, std::string>& url_credentials,
                                             const std::map<std::string, NetrcEntry>& netrc,
                                             const IndexClientOptions& options) {
  if (e.userinfo) return e.userinfo->first + ":" + e.userinfo->second;
  if (auto it = url_credentials.find(e.origin); it != url_credentials.end()) return it->second;
  if (auto n = netrc.find(e.host); n != netrc.end()) return n->second.login + ":" + n->second.password;
  if (auto d = netrc.find(""); d != netrc.end() && !e.host.empty()) return d->second.login + ":" + d->second.password;
  if (options.access_token &&
      (options.token_hosts ? options.token_hosts(e.host) : is_artifact_registry_python_host(e.host))) {
    return "oauth2accesstoken:" + options.access_token(e.host);
  }
  return std::nullopt;
}

}  // namespace

// ---- Public helpers ----------------------------------------------------------------------------------------------

bool is_artifact_registry_python_host(std::string_view host) {
  std::string h = ascii_lower(host.substr(0, host.find(':')));
  constexpr std::string_view kSuffix = "-python.pkg.dev";
  return h.size() > kSuffix.size() && h.compare(h.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0 &&
         h.find('.') == h.size() - kSuffix.size() + std::string_view("-python").size();
}

AccessTokenSource google_access_token_source(std::shared_ptr<net::GoogleCredentials> credentials) {
  return [credentials = std::move(credentials)](const std::string&) { return credentials->token().token; };
}

std::map<std::string, NetrcEntry> parse_netrc(std::string_view text) {
  // Whitespace-separated tokens; a quoted token may hold spaces ("..." with \-escapes), as Python's netrc.
  std::vector<std::string> tokens;
  std::size_t i = 0;
  bool at_line_start = true;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\n') {
      at_line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#' && at_line_start) {  // comment line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    std::string tok;
    if (c == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        tok.push_back(text[i++]);
      }
      ++i;
    } else {
      while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '\n') tok.push_back(text[i++]);
    }
    if (tok == "macdef") {
      // The macro body runs to the next empty line.
      std::size_t blank = text.find("\n\n", i);
      i = blank == std::string_view::npos ? text.size() : blank + 2;
      at_line_start = true;
      continue;
    }
    tokens.push_back(std::move(tok));
    at_line_start = false;
  }
  std::map<std::string, NetrcEntry> out;
  std::string* login = nullptr;
  std::string* password = nullptr;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const std::string& tok = tokens[t];
    if (tok == "machine" && t + 1 < tokens.size()) {
      std::string host = ascii_lower(tokens[++t]);
      auto [it, inserted] = out.try_emplace(host);
      it->second = {};  // a repeated machine: the last entry wins, as Python's netrc
      login = &it->second.login;
      password = &it->second.password;
    } else if (tok == "default") {
      auto& e = out[""];
      e = {};
      login = &e.login;
      password = &e.password;
    } else if ((tok == "login" || tok == "user") && t + 1 < tokens.size()) {
      ++t;
      if (login) *login = tokens[t];
    } else if (tok == "password" && t + 1 < tokens.size()) {
      ++t;
      if (password) *password = tokens[t];
    } else if (tok == "account" && t + 1 < tokens.size()) {
      ++t;
    }
  }
  return out;
}

// ---- IndexClient -------------------------------------------------------------------------------------------------

IndexClient::IndexClient(net::HttpClient& http, const store::CacheDir& cache, IndexClientOptions options)
    : http_(http),
      store_(cache.blobs()),
      options_(std::move(options)),
      pages_(cache.area(store::CacheKind::kIndexPages)) {
  for (std::string& url : options_.index_urls) {
    if (path_from_file_url(url)) continue;
    Endpoint e = parse_endpoint(url);
    if (e.userinfo) url_credentials_[e.origin] = e.userinfo->first + ":" + e.userinfo->second;
    url = e.url;  // credentials live only in url_credentials_ from here on
  }
  if (options_.use_netrc) {
    fs::path path = options_.netrc_file.empty() ? fs::path(default_netrc_path()) : options_.netrc_file;
    std::error_code ec;
    // Only a missing one is skipped: a FIFO or a device there is refused by read_file, as a .netrc over 1 MiB is.
    if (!path.empty() && fs::exists(path, ec)) netrc_ = parse_netrc(read_file(path, 1u << 20, "a .netrc file"));
  }
}

IndexClient::~IndexClient() = default;

// When the TLS handshake with an index host fails: an index URL says its own scheme, so the fix is in the URL (pip
// reads an http:// index as written), not --insecure-registry, which only makes registry URLs plain HTTP; a host
// other than this machine then also needs plain HTTP allowed.
std::string IndexClient::tls_failure_hint(const std::string& authority) const {
  std::string hint = "if " + authority + " serves plain HTTP, write its URL with http://" + authority +
                     "/ where it is given (--index-url, --extra-index-url, --find-links or a requirements file)";
  if (http_.scheme_for(authority) != "http") hint += ", and allow plain HTTP to it with --insecure-registry=" + authority;
  return hint;
}

net::HttpRequest IndexClient::request_for(const std::string& url) const {
  Endpoint e = parse_endpoint(url);
  net::HttpRequest request;
  request.url = e.url;
  request.tls_failure_hint = tls_failure_hint(e.authority);
  if (auto basic = basic_credentials(e, url_credentials_, netrc_, options_)) request.headers.emplace_back("Authorization", "Basic " + net::base64_encode(*basic));
  request.max_attempts = options_.max_attempts;
  return request;
}

std::optional<IndexPage> IndexClient::fetch_page(const std::string& page_url, bool missing_ok) {
  IndexPage page;
  if (std::optional<fs::path> local = path_from_file_url(page_url)) {
    // pip reads <dir>/index.html for a directory URL.
    fs::path file = *local;
    std::string base = page_url;
    std::error_code ec;
    if (fs::is_directory(file, ec)) {
      file /= "index.html";
      if (!base.empty() && base.back() != '/') base += '/';
    }
    if (!fs::is_regular_file(file, ec)) {
      if (missing_ok) return std::nullopt;
      throw Error("index page " + file.string() + " does not exist");
    }
    page = parse_html_page(read_file(file, options_.max_page_bytes), base);
  } else {
    std::optional<CachedPage> answer = fetch_page_over_http(page_url, missing_ok);
    if (!answer) return std::nullopt;
    page = parse_index_page(answer->body, answer->content_type, answer->url);
  }
  if (!page.warnings.empty()) {
    std::lock_guard lock(mutex_);
    warnings_.insert(warnings_.end(), page.warnings.begin(), page.warnings.end());
  }
  return page;
}

// A page's body, type and final URL; a kept copy when the index answers 304 to the validators it was kept with
// (python/index_page_cache.h). nullopt for a missing page when `missing_ok`.
std::optional<CachedPage> IndexClient::fetch_page_over_http(const std::string& page_url, bool missing_ok) {
  net::HttpRequest req = request_for(page_url);
  req.headers.emplace_back("Accept", kAccept);
  req.headers.emplace_back("Cache-Control", "max-age=0");  // as pip: the index decides freshness
  req.max_response_bytes = options_.max_page_bytes;
  std::optional<CachedPage> kept = pages_.lookup(req.url);
  if (kept && !kept->etag.empty()) req.headers.emplace_back("If-None-Match", kept->etag);
  if (kept && !kept->last_modified.empty()) req.headers.emplace_back("If-Modified-Since", kept->last_modified);
  net::HttpResponse resp = http_.send(req);
  if (resp.status == 304 && kept) return kept;
  if ((resp.status == 404 || resp.status == 410) && missing_ok) return std::nullopt;
  if (!is_ok(resp.status)) {
    throw Error("GET " + display(page_url) + " returned HTTP " + std::to_string(resp.status),
                http_failure_hint(resp.status));
  }
  CachedPage fresh{std::move(resp.body), resp.header("content-type"), resp.url.empty() ? req.url : resp.url,
                   resp.header("etag"), resp.header("last-modified")};
  if (resp.header("cache-control").find("no-store") == std::string::npos) pages_.remember(req.url, fresh);
  return fresh;
}

IndexPage IndexClient::fetch_project_page(const std::string& index_url, std::string_view project) {
  std::string canonical = canonicalize_name(project);
  net::UrlParts index = net::split_url(index_url);
  index.has_fragment = false;
  std::string url = index.str();
  if (url.empty() || url.back() != '/') url += '/';
  url += net::percent_encode(canonical) + "/";  // a stray '/' in a name must not become a path
  std::optional<IndexPage> page = fetch_page(url, /*missing_ok=*/true);
  if (!page) {
    IndexPage empty;
    empty.url = display(url);
    return empty;
  }
  return std::move(*page);
}

std::vector<IndexFile> IndexClient::fetch_find_links(const std::string& location) {
  net::UrlParts parts = net::split_url(location);
  bool is_url = parts.has_scheme && parts.has_authority;
  std::optional<fs::path> local = is_url ? path_from_file_url(location) : std::optional<fs::path>(location);
  if (!local) {
    std::optional<IndexPage> page = fetch_page(location, /*missing_ok=*/true);
    if (!page) {
      std::lock_guard lock(mutex_);
      warnings_.push_back("find-links page " + display(location) + " was not found (HTTP 404); it is ignored");
      return {};
    }
    return std::move(page->files);
  }
  std::error_code ec;
  if (fs::is_directory(*local, ec)) return find_links_directory(*local);
  if (fs::is_regular_file(*local, ec)) {
    return parse_html_page(read_file(*local, options_.max_page_bytes), file_url_for(fs::absolute(*local))).files;
  }
  throw Error("find-links location " + local->string() + " does not exist", "check the --find-links value");
}

std::vector<IndexFile> IndexClient::project_files(std::string_view project) {
  std::string canonical = canonicalize_name(project);
  std::vector<IndexFile> out;
  for (const std::string& location : options_.find_links) {
    std::vector<IndexFile> listed;
    {
      std::lock_guard lock(mutex_);
      if (auto it = find_links_cache_.find(location); it != find_links_cache_.end()) listed = it->second;
    }
    if (listed.empty()) {  // (an empty listing is simply asked again)
      listed = fetch_find_links(location);
      std::lock_guard lock(mutex_);
      find_links_cache_[location] = listed;
    }
    for (IndexFile& f : listed) {
      if (filename_matches_project(f.filename, canonical)) out.push_back(std::move(f));
    }
  }
  for (const std::string& index : options_.index_urls) {
    IndexPage page = fetch_project_page(index, canonical);
    std::move(page.files.begin(), page.files.end(), std::back_inserter(out));
  }
  return out;
}

std::optional<std::string> IndexClient::fetch_metadata(const IndexFile& file) {
  if (!file.metadata.available) return std::nullopt;
  std::string url = file.url + ".metadata";
  std::string body;
  // Metadata named by its sha256 is the same bytes wherever it comes from: kept in the blob store, asked for once.
  std::optional<image::Digest> known;
  if (auto sha = file.metadata.hashes.find("sha256"); sha != file.metadata.hashes.end())
    known = image::Digest::parse("sha256:" + sha->second);
  if (known && store_.has(*known)) return read_file(store_.path_of(*known), options_.max_page_bytes);
  if (std::optional<fs::path> local = path_from_file_url(url)) {
    std::error_code ec;
    if (!fs::is_regular_file(*local, ec)) return std::nullopt;
    body = read_file(*local, options_.max_page_bytes);
  } else {
    net::HttpRequest req = request_for(url);
    req.max_response_bytes = options_.max_page_bytes;
    net::HttpResponse resp = http_.send(req);
    if (resp.status == 404 || resp.status == 410) return std::nullopt;
    if (!is_ok(resp.status)) {
      throw Error("GET " + display(url) + " returned HTTP " + std::to_string(resp.status), http_failure_hint(resp.status));
    }
    body = std::move(resp.body);
  }
  for (const auto& [algo, want] : file.metadata.hashes) {
    Hasher h(algo);
    h.update(body.data(), body.size());
    std::string got = h.finish_hex();
    if (got != want) {
      throw Error("metadata of " + file.filename + " from " + display(url) + " has " + algo + " " + got +
                      ", but the index lists " + want,
                  "the index or a proxy served corrupted metadata; try again or report it to the index");
    }
  }
  if (known) {
    try {
      store_.put(body);
    } catch (const std::exception&) {
      // Only a cache.
    }
  }
  return body;
}

std::optional<std::string> IndexClient::read_metadata_by_range(const IndexFile& file) {
  if (!file.filename.ends_with(".whl") || path_from_file_url(file.url)) return std::nullopt;
  if (already_stored(file)) return std::nullopt;  // read from the stored wheel instead
  std::string origin = parse_endpoint(file.url).origin;
  auto tail_by = net::HttpRangeReader::TailBy::suffix;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto known = range_support_.find(origin); known != range_support_.end()) {
      if (!known->second) return std::nullopt;
      tail_by = *known->second;
    }
  }
  std::optional<net::HttpRangeReader> remote = net::HttpRangeReader::open(http_, request_for(file.url), tail_by);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    range_support_[origin] = remote ? std::optional(remote->tail_by()) : std::nullopt;
  }
  if (!remote) return std::nullopt;
  std::string metadata;
  try {
    ZipArchive zip(*remote, "the wheel " + file.filename + " at " + display(file.url));
    metadata = read_wheel_metadata(zip, file.filename);
  } catch (const Error&) {
    return std::nullopt;  // not a zip, or ranges answered wrongly: the verified download says what is wrong
  }
  // A small wheel came whole in the first range: kept when the page's sha256 vouches for it, so that the install
  // does not ask for it again.
  auto sha = file.hashes.find("sha256");
  const std::string* bytes = remote->whole();
  if (bytes && sha != file.hashes.end() && image::sha256_of(*bytes).hex() == ascii_lower(sha->second)) {
    try {
      store_.put(*bytes);
    } catch (const std::exception&) {
      // Only a shortcut: the install downloads it.
    }
  }
  return metadata;
}

// A file whose page names the sha256 of a blob already in the store is not fetched again.
std::optional<store::StoredBlob> IndexClient::already_stored(const IndexFile& file) const {
  std::optional<std::pair<std::string, std::string>> expected = expected_hash(file.hashes);
  if (!expected || expected->first != "sha256") return std::nullopt;
  std::optional<image::Digest> d = image::Digest::parse("sha256:" + expected->second);
  if (!d || !store_.has(*d)) return std::nullopt;
  std::error_code ec;
  auto size = fs::file_size(store_.path_of(*d), ec);
  if (ec) return std::nullopt;
  return store::StoredBlob{*d, size};
}

store::StoredBlob IndexClient::download(const IndexFile& file) {
  if (std::optional<store::StoredBlob> stored = already_stored(file)) return *stored;
  std::optional<std::pair<std::string, std::string>> expected = expected_hash(file.hashes);
  std::uint64_t received = 0;
  try {
    store::StoredBlob stored = download_to_store(file, expected, received);
    if (options_.on_download) options_.on_download(file.filename, received, true);
    return stored;
  } catch (...) {
    if (options_.on_download) options_.on_download(file.filename, received, true);
    throw;
  }
}

store::StoredBlob IndexClient::download_to_store(const IndexFile& file,
                                                  const std::optional<std::pair<std::string, std::string>>& expected,
                                                  std::uint64_t& received) {
  // The store hashes with SHA-256 as it writes: a published sha256 is checked with that, any other algorithm with a
  // hasher of its own.
  std::optional<image::Digest> expected_sha256;
  if (expected && expected->first == "sha256") expected_sha256 = image::Digest::parse("sha256:" + expected->second);
  std::optional<Hasher> hasher;
  if (expected && !expected_sha256) hasher.emplace(expected->first);
  std::optional<store::BlobStore::Writer> writer;
  writer.emplace(store_.begin_write());
  auto sink = [&](const char* data, std::size_t size) {
    writer->write(data, size);
    if (hasher) hasher->update(data, size);
    received += size;
    if (options_.on_download) options_.on_download(file.filename, received, false);
  };
  std::string where = display(file.url);
  if (std::optional<fs::path> local = path_from_file_url(file.url)) {
    stream_file(*local, sink);
  } else {
    net::HttpRequest req = request_for(file.url);
    req.sink = sink;
    req.on_restart = [&] {
      received = 0;
      writer.reset();
      writer.emplace(store_.begin_write());
      if (hasher) hasher->reset();
    };
    net::HttpResponse resp = http_.send(req);
    if (!is_ok(resp.status)) {
      throw Error("downloading " + file.filename + " from " + where + " failed: HTTP " + std::to_string(resp.status),
                  http_failure_hint(resp.status));
    }
  }
  auto mismatch = [&](const std::string& got) {
    return Error("hash mismatch for " + file.filename + " from " + where + ": expected " + expected->first + ":" +
                     expected->second + ", got " + expected->first + ":" + got,
                 "the file on the index differs from what its page lists; the index or a proxy may be corrupting it");
  };
  // On a mismatch nothing reaches the store (the writer's destructor removes its temp file).
  if (hasher)
    if (std::string got = hasher->finish_hex(); got != expected->second) throw mismatch(got);
  if (!expected_sha256) return writer->commit();
  image::Digest actual;
  std::optional<store::StoredBlob> stored = writer->commit_if(*expected_sha256, actual);
  if (!stored) throw mismatch(actual.hex());
  return *stored;
}

std::vector<store::StoredBlob> IndexClient::download_all(const std::vector<IndexFile>& files, int jobs) {
  const std::size_t n = files.size();
  std::vector<store::StoredBlob> results(n);
  // The same file listed twice (same hash, or same URL) is fetched once.
  std::vector<std::size_t> first_of(n);
  std::vector<std::size_t> unique;
  {
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < n; ++i) {
      std::string key = files[i].sha256().empty() ? "url:" + files[i].url : "sha256:" + files[i].sha256();
      auto [it, inserted] = seen.emplace(key, i);
      first_of[i] = it->second;
      if (inserted) unique.push_back(i);
    }
  }
  // `unique` is in index order: the first failure rethrown is the first failing file's.
  parallel_for(unique.size(), static_cast<std::size_t>(std::max(jobs, 1)),
               [&](std::size_t k) { results[unique[k]] = download(files[unique[k]]); });
  for (std::size_t i = 0; i < n; ++i) results[i] = results[first_of[i]];
  return results;
}

std::vector<std::string> IndexClient::warnings() const {
  std::lock_guard lock(mutex_);
  return warnings_;
}

}  // namespace trainpack::python
