#pragma once
// Parsing of Python package index project pages into file lists (pure: no I/O except find_links_directory).
// Follows the Simple Repository API: PEP 503 HTML (+ PEP 592 yanked, PEP 629 repository version, PEP 658/714 core
// metadata) and PEP 691 JSON (+ PEP 700 size), the way pip's index/collector.py and models/link.py read them:
//  - href resolved against <base href> (the first one; itself resolved against the page) or the page URL; the URL
//    path cleaned like pip's _clean_link (each part unquoted then quoted, "@" and "%2F" kept) so the filename, the
//    last path segment, is percent-decoded exactly once;
//  - fragment #<algo>=<hex> for md5, sha1, sha224, sha256, sha384, sha512, plus egg= and subdirectory=, joined by &;
//  - JSON yanked: true → yanked without reason, a non-empty string → its reason, false/""/absent → not yanked.
// A small HTML tokenizer reads only start tags (<a>, <base>, <meta>) and their attributes; comments, doctype and
// <script>/<style> contents are skipped. No HTML library.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::python {

struct IndexFile {
  std::string filename;  // percent-decoded once; never contains '/' or NUL
  std::string url;       // absolute, without fragment (may carry userinfo when the page wrote one)
  std::map<std::string, std::string> hashes;  // algorithm (lower case) → lower-case hex
  std::optional<std::string> requires_python;
  std::optional<std::string> yanked;  // the reason when yanked; "" when yanked without one
  // HTML `<a data-yanked>` with no value at all: yanked for pip <= 21.3 (html5lib gives ""), not yanked for pip >= 22
  // (html.parser gives None, and pip tests `is not None`).
  bool yanked_without_value = false;
  struct Metadata {
    bool available = false;                     // PEP 658: <url>.metadata exists
    std::map<std::string, std::string> hashes;  // algorithm → hex, possibly empty
  } metadata;
  std::optional<std::uint64_t> size;
  std::optional<std::string> upload_time;  // PEP 700, JSON only
  std::string egg;           // #egg= (legacy)
  std::string subdirectory;  // #subdirectory=
  std::string origin;        // where it was listed: the page URL (without credentials) or the directory

  bool is_yanked() const { return yanked.has_value(); }
  // The sha256 from the page, or empty.
  std::string sha256() const;
};

struct IndexPage {
  std::string url;                 // the page URL the links were resolved against
  std::string repository_version;  // "1.0", "1.1", ...; empty when the page says nothing
  std::vector<IndexFile> files;
  std::vector<std::string> warnings;  // e.g. a newer minor API version than we know
};

enum class PageFormat { kHtml, kJson };

// Highest API version understood; a page with a greater minor gets a warning, a greater major an Error.
inline constexpr int kSupportedApiMajor = 1;
inline constexpr int kSupportedApiMinor = 4;

// By the Content-Type's media type (parameters ignored, case-insensitive): application/vnd.pypi.simple.v1+json →
// kJson; text/html and application/vnd.pypi.simple.v1+html → kHtml; anything else → nullopt.
std::optional<PageFormat> page_format_for(std::string_view content_type);

// Parses by Content-Type; an unsupported type is an Error naming it and the page.
IndexPage parse_index_page(std::string_view body, std::string_view content_type, const std::string& page_url);
IndexPage parse_html_page(std::string_view html, const std::string& page_url);
IndexPage parse_json_page(std::string_view json, const std::string& page_url);

// find-links directory: every wheel or sdist (pip's archive extensions) directly in `dir`, sorted by name, with
// file:// URLs and no hashes. A missing directory is an Error.
std::vector<IndexFile> find_links_directory(const std::filesystem::path& dir);

// True for names pip would consider archives: .whl, .zip, .tar.gz, .tgz, .tar, .tar.bz2, .tbz, .tar.xz, .txz,
// .tlz, .tar.lz, .tar.lzma.
bool is_archive_filename(std::string_view filename);

// ---- Helpers (exposed for the client and tests) ------------------------------------------------------------------

// Python's urllib.parse.quote(text, safe="/"): everything but A-Z a-z 0-9 _ . - ~ / is %XX (upper-case hex).
std::string percent_encode_path(std::string_view text);
// HTML character references: &amp; &lt; &gt; &quot; &apos; &nbsp; and numeric &#NN; &#xHH; (the ';' optional for
// numeric ones); unknown names are kept as written. Code points are written as UTF-8.
std::string html_unescape(std::string_view text);
// Joins a link to its base (RFC 3986) and cleans its path like pip's _clean_link.
std::string resolve_link(const std::string& base, std::string_view href);
// file:// URL for a local absolute path, its path percent-encoded.
std::string file_url_for(const std::filesystem::path& path);
// The local path of a file:// URL (percent-decoded), or nullopt for other URLs.
std::optional<std::filesystem::path> path_from_file_url(std::string_view url);

}  // namespace trainpack::python
