#pragma once
// Fetching from Python package indexes (Simple Repository API, PEP 503/691/658) and find-links sources, and
// downloading distribution files into the content-addressed blob store, verified against the page's hashes.
// Follows pip's network/auth.py, index/collector.py and package_finder.py where they decide behaviour:
//  - project pages at <index>/<canonical-name>/, negotiated with PEP 691's Accept header, parsed by Content-Type;
//    404/410 mean "no such project here" (empty), as pip skips them; other failures are Errors (pip would log and
//    go on, hiding e.g. a 401 behind "no matching distribution");
//  - every index is asked and the results concatenated in order (find-links first, then --index-url, then each
//    --extra-index-url): pip's merge without priority;
//  - credentials: userinfo in an index URL (percent-decoded) for that scheme+host+port only → .netrc ($NETRC or
//    ~/.netrc; by host) → for Artifact Registry Python hosts (*-python.pkg.dev), Basic oauth2accesstoken:<token>
//    from a caller-supplied token source. Userinfo is always stripped from request URLs, so neither the HTTP
//    client's debug lines nor any Error carries it; the Authorization header never crosses hosts (HttpClient);
//  - downloads stream into BlobStore::Writer while hashed; a mismatch with the page's hash is an Error naming the
//    file and both digests and leaves nothing in the store; a sha256 already in the store is not fetched again,
//    nor is PEP 658 metadata with a sha256; pages are revalidated with the validators they were kept with
//    (python/index_page_cache.h).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/google_credentials.h"
#include "net/http_client.h"
#include "net/http_range_reader.h"
#include "python/index_page.h"
#include "python/index_page_cache.h"
#include "store/cache_dir.h"


namespace trainpack::python {

// Supplies an OAuth2 access token for a host (e.g. "us-python.pkg.dev"); throws Error when none can be had.
using AccessTokenSource = std::function<std::string(const std::string& host)>;

// A token source backed by Google Application Default Credentials (GoogleCredentials::token(), cached there).
AccessTokenSource google_access_token_source(std::shared_ptr<net::GoogleCredentials> credentials);

// "<location>-python.pkg.dev" (a port, if any, ignored).
bool is_artifact_registry_python_host(std::string_view host);

// Called from the downloading thread as a distribution file's bytes arrive (`finished` false), and once when its
// download ends, however it ends (`finished` true): what a progress display needs.
using DownloadReporter = std::function<void(const std::string& filename, std::uint64_t bytes, bool finished)>;

struct IndexClientOptions {
  std::vector<std::string> index_urls{"https://pypi.org/simple"};  // first: --index-url; rest: --extra-index-url
  std::vector<std::string> find_links;  // directories, local .html files or http(s) URLs of link pages
  bool use_netrc = true;
  std::filesystem::path netrc_file;  // empty: $NETRC, else ~/.netrc
  AccessTokenSource access_token;    // for Artifact Registry Python hosts; empty: none
  // Which hosts get the access token; empty: is_artifact_registry_python_host.
  std::function<bool(const std::string& host)> token_hosts;
  std::uint64_t max_page_bytes = 64u << 20;
  std::optional<int> max_attempts;  // tries per request; empty: the HTTP client's
  DownloadReporter on_download;
};

// Basic credentials for one host, from .netrc. Exposed for tests.
struct NetrcEntry {
  std::string login;
  std::string password;
};
// Parses .netrc text: machine/default, login, password, account, macdef (skipped). "default" is keyed "".
std::map<std::string, NetrcEntry> parse_netrc(std::string_view text);

class IndexClient {
 public:
  // `http` and `store` must outlive the client. Thread-safe after construction.
  // Downloads go to the cache's blob store, index pages to its index-pages entries.
  IndexClient(net::HttpClient& http, const store::CacheDir& cache, IndexClientOptions options);
  ~IndexClient();
  IndexClient(const IndexClient&) = delete;
  IndexClient& operator=(const IndexClient&) = delete;

  // All files of a project from find-links (those whose name is the project's; each location listed once per
  // client) then every index, in that order. Warnings from pages are collected.
  std::vector<IndexFile> project_files(std::string_view project);

  // One index's page for a project (name canonicalized): empty when the index answers 404/410.
  IndexPage fetch_project_page(const std::string& index_url, std::string_view project);
  // The files a find-links entry lists (a directory, a local HTML file, or a page URL).
  std::vector<IndexFile> fetch_find_links(const std::string& location);

  // PEP 658 metadata: the text of <file url>.metadata, verified against the page's metadata hash when one is given.
  // nullopt when the page does not announce it or the index answers 404.
  std::optional<std::string> fetch_metadata(const IndexFile& file);
  // A wheel's METADATA read from the end of the file with HTTP Range requests, for indexes without PEP 658: the
  // end records, the central directory and the one member (pip's fast-deps, uv). Unverified: the caller compares
  // it with the downloaded wheel's. nullopt for a file that is not a remote wheel, one already in the store, an
  // origin that has ignored Range once (asked once per client), and bytes that are no zip with a METADATA (the
  // verified download then says what is wrong). Network failures are Errors.
  std::optional<std::string> read_metadata_by_range(const IndexFile& file);

  // Downloads (or copies, for file:// URLs) a file into the blob store, verifying its page hash; returns the blob.
  store::StoredBlob download(const IndexFile& file);
  // Downloads several files with at most `jobs` at once; results in input order. The first failure (in input
  // order) is thrown after the running downloads end; no new ones start after a failure.
  std::vector<store::StoredBlob> download_all(const std::vector<IndexFile>& files, int jobs);

  // Warnings collected from pages so far (newer API minor versions, ...).
  std::vector<std::string> warnings() const;

 private:
  std::optional<store::StoredBlob> already_stored(const IndexFile& file) const;
  // A GET of `url` (userinfo and fragment stripped) with its credentials.
  net::HttpRequest request_for(const std::string& url) const;
  std::string tls_failure_hint(const std::string& authority) const;
  std::optional<IndexPage> fetch_page(const std::string& page_url, bool missing_ok);
  std::optional<CachedPage> fetch_page_over_http(const std::string& page_url, bool missing_ok);
  // download()'s transfer: into the store, checked against `expected` (algorithm, hex); counts `received`.
  store::StoredBlob download_to_store(const IndexFile& file,
                                       const std::optional<std::pair<std::string, std::string>>& expected,
                                       std::uint64_t& received);

  net::HttpClient& http_;
  const store::BlobStore& store_;
  IndexClientOptions options_;
  // "scheme://host:port" (lower case) → "user:password" from index URLs.
  std::map<std::string, std::string> url_credentials_;
  std::map<std::string, NetrcEntry> netrc_;
  mutable std::mutex mutex_;
  std::vector<std::string> warnings_;
  std::map<std::string, std::vector<IndexFile>> find_links_cache_;  // find-links listings serve every project
  // "scheme://host:port" → how its servers answered range requests: no entry (not asked yet), how to ask for a
  // file's tail, or nullopt (they do not answer ranges).
  std::map<std::string, std::optional<net::HttpRangeReader::TailBy>> range_support_;
  IndexPageCache pages_;
};

}  // namespace trainpack::python
