#include "python/index_page.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <system_error>

#include "net/encoding.h"
#include "net/url.h"
#include "support/error.h"
#include "support/text.h"
#include "support/utf8.h"

namespace trainpack::python {
namespace fs = std::filesystem;

namespace {

// pip's Link hash fragment algorithms (_SUPPORTED_HASHES) and the hashlib-guaranteed ones it keeps for metadata.
constexpr std::array<std::string_view, 6> kFragmentHashes = {"sha512", "sha384", "sha256", "sha224", "sha1", "md5"};

bool is_supported_hash(std::string_view algo) {
  return std::find(kFragmentHashes.begin(), kFragmentHashes.end(), algo) != kFragmentHashes.end();
}

bool is_html_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A character reference's code point, replaced as html.unescape does when it names no character.
void append_character(std::string& out, std::uint32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  append_utf8(out, static_cast<char32_t>(cp));
}

// pip's _clean_url_path: each part between "@" and "%2F" (kept, upper-cased) is unquoted then quoted.
std::string clean_url_path(std::string_view path) {
  std::string out;
  std::size_t start = 0, i = 0;
  auto flush = [&](std::size_t end) { out += percent_encode_path(net::percent_decode(path.substr(start, end - start))); };
  while (i < path.size()) {
    if (path[i] == '@') {
      flush(i);
      out += '@';
      start = ++i;
    } else if (path[i] == '%' && i + 2 < path.size() && path[i + 1] == '2' && (path[i + 2] == 'F' || path[i + 2] == 'f')) {
      flush(i);
      out += "%2F";
      i += 3;
      start = i;
    } else {
      ++i;
    }
  }
  flush(path.size());
  return out;
}

// ---- HTML start tags ---------------------------------------------------------------------------------------------

struct Tag {
  std::string name;                                       // lower case
  std::vector<std::pair<std::string, std::string>> attrs;  // names lower case, values unescaped
  std::vector<bool> has_value;                             // per attribute: written with "=value"

  // The last value, as pip's dict(attrs) keeps; nullopt when absent ("" when written without a value).
  std::optional<std::string> get(std::string_view name) const {
    std::optional<std::string> v;
    for (const auto& [k, val] : attrs)
      if (k == name) v = val;
    return v;
  }
  // Whether the last `name` attribute was written bare (`<a data-yanked>`): html.parser reports None for it.
  bool valueless(std::string_view name) const {
    bool bare = false;
    for (std::size_t i = 0; i < attrs.size(); ++i)
      if (attrs[i].first == name) bare = !has_value[i];
    return bare;
  }
};

bool istarts_with(std::string_view s, std::size_t at, std::string_view prefix) {
  return s.size() - at >= prefix.size() && ascii_iequals(s.substr(at, prefix.size()), prefix);
}

// Calls on_tag for every start tag; skips comments, declarations, end tags and raw-text (script, style) contents.
template <typename F>
void for_each_start_tag(std::string_view html, F&& on_tag) {
  std::size_t i = 0;
  const std::size_t n = html.size();
  while ((i = html.find('<', i)) != std::string_view::npos) {
    if (html.compare(i, 4, "<!--") == 0) {
      std::size_t end = html.find("-->", i + 4);
      if (end == std::string_view::npos) return;
      i = end + 3;
      continue;
    }
    if (i + 1 >= n) return;
    char next = html[i + 1];
    if (next == '!' || next == '?' || next == '/') {
      std::size_t end = html.find('>', i + 1);
      if (end == std::string_view::npos) return;
      i = end + 1;
      continue;
    }
    if (!ascii_alpha(next)) {
      ++i;
      continue;
    }
    std::size_t p = i + 1;
    Tag tag;
    while (p < n && !is_html_space(html[p]) && html[p] != '/' && html[p] != '>') tag.name.push_back(ascii_lower(html[p++]));
    while (true) {
      while (p < n && (is_html_space(html[p]) || html[p] == '/')) ++p;
      if (p >= n || html[p] == '>') break;
      std::string name;
      do {
        name.push_back(ascii_lower(html[p++]));
      } while (p < n && !is_html_space(html[p]) && html[p] != '/' && html[p] != '>' && html[p] != '=');
      while (p < n && is_html_space(html[p])) ++p;
      std::string value;
      tag.has_value.push_back(p < n && html[p] == '=');
      if (p < n && html[p] == '=') {
        ++p;
        while (p < n && is_html_space(html[p])) ++p;
        if (p < n && (html[p] == '"' || html[p] == '\'')) {
          char quote = html[p++];
          std::size_t end = html.find(quote, p);
          if (end == std::string_view::npos) end = n;
          value = html_unescape(html.substr(p, end - p));
          p = end == n ? n : end + 1;
        } else {
          std::size_t start = p;
          while (p < n && !is_html_space(html[p]) && html[p] != '>') ++p;
          value = html_unescape(html.substr(start, p - start));
        }
      }
      tag.attrs.emplace_back(std::move(name), std::move(value));
    }
    i = p < n ? p + 1 : n;
    if (tag.name == "script" || tag.name == "style") {
      std::string close = "</" + tag.name;
      std::size_t end = i;
      while (end < n && !istarts_with(html, end, close)) {
        end = html.find('<', end + 1);
        if (end == std::string_view::npos) end = n;
      }
      i = end;
    }
    on_tag(tag);
    if (i >= n) return;
  }
}

// PEP 629 / PEP 691 version check: greater major → Error; greater minor → warning.
void check_repository_version(IndexPage& page) {
  const std::string& v = page.repository_version;
  if (v.empty()) return;
  std::size_t dot = v.find('.');
  std::string_view major_text = std::string_view(v).substr(0, dot);
  std::string_view minor_text = dot == std::string::npos ? std::string_view("0") : std::string_view(v).substr(dot + 1);
  auto number = [](std::string_view s) -> std::optional<long> {
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), ascii_digit)) return std::nullopt;
    return std::stol(std::string(s));
  };
  auto major = number(major_text), minor = number(minor_text);
  if (!major || !minor) {
    page.warnings.push_back("index page " + page.url + " has an unparsable repository version '" + v + "'");
    return;
  }
  if (*major > kSupportedApiMajor) {
    throw Error("index page " + page.url + " uses repository API version " + v + ", which is not supported (only " +
                    std::to_string(kSupportedApiMajor) + ".x)",
                "use an index that serves the version 1 Simple Repository API");
  }
  if (*major == kSupportedApiMajor && *minor > kSupportedApiMinor) {
    page.warnings.push_back("index page " + page.url + " uses repository API version " + v + ", newer than " +
                            std::to_string(kSupportedApiMajor) + "." + std::to_string(kSupportedApiMinor) +
                            "; newer fields are ignored");
  }
}

// Fills url, filename, hashes from the fragment, egg and subdirectory. False when the link has no usable filename.
bool set_location(IndexFile& file, const std::string& absolute_url) {
  net::UrlParts parts = net::split_url(absolute_url);
  if (parts.has_fragment) {
    std::string_view frag = parts.fragment;
    while (!frag.empty()) {
      std::size_t amp = frag.find('&');
      std::string_view item = frag.substr(0, amp);
      frag = amp == std::string_view::npos ? std::string_view() : frag.substr(amp + 1);
      std::size_t eq = item.find('=');
      if (eq == std::string_view::npos) continue;
      std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
      if (is_supported_hash(key)) {
        file.hashes[std::string(key)] = ascii_lower(value);
      } else if (key == "egg") {
        file.egg = std::string(value);
      } else if (key == "subdirectory") {
        file.subdirectory = std::string(value);
      }
    }
  }
  parts.has_fragment = false;
  file.url = parts.str();
  std::string_view path = parts.path;
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::size_t slash = path.rfind('/');
  file.filename = net::percent_decode(slash == std::string_view::npos ? path : path.substr(slash + 1));
  // One decoding only: an encoded '/' stays part of the name and makes it unusable, never a path.
  return !file.filename.empty() && file.filename != "." && file.filename != ".." &&
         file.filename.find('/') == std::string::npos && file.filename.find('\0') == std::string::npos;
}

std::map<std::string, std::string> json_hashes(const nlohmann::json& object, bool only_supported) {
  std::map<std::string, std::string> out;
  for (const auto& [algo, value] : object.items()) {
    if (!value.is_string()) continue;
    std::string name = ascii_lower(algo);
    if (only_supported && !is_supported_hash(name)) continue;
    out[name] = ascii_lower(value.get<std::string>());
  }
  return out;
}

}  // namespace

std::string IndexFile::sha256() const {
  auto it = hashes.find("sha256");
  return it == hashes.end() ? std::string() : it->second;
}

std::string percent_encode_path(std::string_view text) { return net::percent_encode(text, "/"); }

std::string html_unescape(std::string_view text) {
  if (text.find('&') == std::string_view::npos) return std::string(text);
  struct Named {
    std::string_view name;
    std::string_view value;
    bool semicolon_optional;  // HTML5 legacy references
  };
  static constexpr Named kNamed[] = {{"amp", "&", true},     {"lt", "<", true},  {"gt", ">", true},
                                     {"quot", "\"", true},   {"apos", "'", false}, {"nbsp", "\xC2\xA0", true}};
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '&') {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t p = i + 1;
    if (p < text.size() && text[p] == '#') {
      ++p;
      bool hex = p < text.size() && (text[p] == 'x' || text[p] == 'X');
      if (hex) ++p;
      std::size_t start = p;
      std::uint32_t cp = 0;
      bool overflow = false;
      while (p < text.size() && (hex ? hex_value(text[p]) >= 0 : ascii_digit(text[p]))) {
        cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(hex ? hex_value(text[p]) : text[p] - '0');
        if (cp > 0x10FFFF) overflow = true;
        ++p;
      }
      if (p == start) {  // "&#" or "&#x" without digits: literal
        out.push_back(text[i++]);
        continue;
      }
      if (p < text.size() && text[p] == ';') ++p;
      append_character(out, overflow ? 0x110000 : cp);
      i = p;
      continue;
    }
    bool matched = false;
    for (const Named& e : kNamed) {
      if (text.compare(p, e.name.size(), e.name) != 0) continue;
      std::size_t end = p + e.name.size();
      bool semi = end < text.size() && text[end] == ';';
      if (!semi && !e.semicolon_optional) continue;
      out += e.value;
      i = end + (semi ? 1 : 0);
      matched = true;
      break;
    }
    if (!matched) out.push_back(text[i++]);
  }
  return out;
}

std::string resolve_link(const std::string& base, std::string_view href) {
  // Like urllib's urlsplit: surrounding whitespace and embedded tab/CR/LF are dropped.
  std::string ref;
  ref.reserve(href.size());
  for (char c : href)
    if (c != '\t' && c != '\r' && c != '\n') ref.push_back(c);
  std::size_t first = ref.find_first_not_of(" \f\v");
  ref = first == std::string::npos ? std::string() : ref.substr(first, ref.find_last_not_of(" \f\v") - first + 1);
  net::UrlParts p = net::split_url(net::resolve_url(base, ref));
  // urllib.parse.urlparse keeps ";params" of the last segment out of the path pip cleans.
  std::size_t last_slash = p.path.rfind('/');
  std::size_t semi = p.path.find(';', last_slash == std::string::npos ? 0 : last_slash);
  std::string params = semi == std::string::npos ? std::string() : p.path.substr(semi);
  p.path = clean_url_path(p.path.substr(0, semi)) + params;
  return p.str();
}

std::string file_url_for(const fs::path& path) { return "file://" + percent_encode_path(path.lexically_normal().string()); }

std::optional<fs::path> path_from_file_url(std::string_view url) {
  if (!istarts_with(url, 0, "file:")) return std::nullopt;
  net::UrlParts p = net::split_url(url);
  if (!p.authority.empty() && !ascii_iequals(p.authority, "localhost")) return std::nullopt;  // remote file URLs
  return fs::path(net::percent_decode(p.path));
}

std::optional<PageFormat> page_format_for(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && is_html_space(media.back())) media.remove_suffix(1);
  while (!media.empty() && is_html_space(media.front())) media.remove_prefix(1);
  if (ascii_iequals(media, "application/vnd.pypi.simple.v1+json")) return PageFormat::kJson;
  if (ascii_iequals(media, "text/html") || ascii_iequals(media, "application/vnd.pypi.simple.v1+html")) {
    return PageFormat::kHtml;
  }
  return std::nullopt;
}

IndexPage parse_index_page(std::string_view body, std::string_view content_type, const std::string& page_url) {
  std::optional<PageFormat> format = page_format_for(content_type);
  if (!format) {
    throw Error("index page " + net::url_for_display(page_url) + " has unsupported Content-Type '" + std::string(content_type) + "'",
                "the index must serve the Simple Repository API (text/html or application/vnd.pypi.simple.v1+json)");
  }
  return *format == PageFormat::kJson ? parse_json_page(body, page_url) : parse_html_page(body, page_url);
}

IndexPage parse_html_page(std::string_view html, const std::string& page_url) {
  IndexPage page;
  page.url = net::url_for_display(page_url);
  std::optional<std::string> base;
  std::vector<Tag> anchors;
  for_each_start_tag(html, [&](const Tag& tag) {
    if (tag.name == "a") {
      if (tag.get("href")) anchors.push_back(tag);
    } else if (tag.name == "base") {
      // The first <base> with an href wins (pip, HTML); a relative one is taken against the page.
      if (!base) {
        if (auto href = tag.get("href")) base = resolve_link(page_url, *href);
      }
    } else if (tag.name == "meta") {
      if (tag.get("name") == std::optional<std::string>("pypi:repository-version")) {
        page.repository_version = tag.get("content").value_or("");
      }
    }
  });
  check_repository_version(page);
  const std::string& base_url = base ? *base : page_url;
  for (const Tag& a : anchors) {
    IndexFile file;
    if (!set_location(file, resolve_link(base_url, *a.get("href")))) continue;
    file.origin = page.url;
    if (auto rp = a.get("data-requires-python"); rp && !rp->empty()) file.requires_python = *rp;
    file.yanked = a.get("data-yanked");
    file.yanked_without_value = a.valueless("data-yanked");
    std::optional<std::string> meta = a.get("data-core-metadata");
    if (!meta) meta = a.get("data-dist-info-metadata");
    if (meta) {
      file.metadata.available = true;
      std::size_t eq = meta->find('=');
      if (*meta != "true" && eq != std::string::npos) {
        std::string algo = ascii_lower(meta->substr(0, eq));
        if (is_supported_hash(algo)) file.metadata.hashes[algo] = ascii_lower(meta->substr(eq + 1));
      }
    }
    page.files.push_back(std::move(file));
  }
  return page;
}

IndexPage parse_json_page(std::string_view text, const std::string& page_url) {
  IndexPage page;
  page.url = net::url_for_display(page_url);
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw Error("index page " + page.url + " is not valid JSON", "the index answered with a broken PEP 691 page");
  }
  auto bad = [&](const std::string& what) {
    return Error("index page " + page.url + ": " + what, "the index answered with a malformed PEP 691 page");
  };
  if (auto meta = doc.find("meta"); meta != doc.end() && meta->is_object()) {
    if (auto v = meta->find("api-version"); v != meta->end() && v->is_string()) page.repository_version = v->get<std::string>();
  }
  check_repository_version(page);
  auto files = doc.find("files");
  if (files == doc.end()) return page;
  if (!files->is_array()) throw bad("'files' is not a list");
  for (const auto& f : *files) {
    if (!f.is_object()) throw bad("an entry of 'files' is not an object");
    auto name = f.find("filename");
    auto url = f.find("url");
    if (name == f.end() || !name->is_string() || url == f.end() || !url->is_string()) {
      throw bad("a file entry lacks 'filename' or 'url'");
    }
    IndexFile file;
    if (!set_location(file, resolve_link(page_url, url->get<std::string>()))) continue;
    // PEP 691: the filename field is authoritative; the URL's last segment need not be the name.
    std::string listed = name->get<std::string>();
    if (listed.empty() || listed.find('/') != std::string::npos || listed.find('\0') != std::string::npos) continue;
    std::map<std::string, std::string> fragment_hashes = std::move(file.hashes);
    file.filename = std::move(listed);
    file.origin = page.url;
    if (auto h = f.find("hashes"); h != f.end() && h->is_object()) file.hashes = json_hashes(*h, false);
    for (auto& [k, v] : fragment_hashes) file.hashes[k] = v;  // pip: fragment hashes win
    if (auto rp = f.find("requires-python"); rp != f.end() && rp->is_string() && !rp->get<std::string>().empty()) {
      file.requires_python = rp->get<std::string>();
    }
    if (auto y = f.find("yanked"); y != f.end()) {
      if (y->is_boolean() && y->get<bool>()) file.yanked = "";
      else if (y->is_string() && !y->get<std::string>().empty()) file.yanked = y->get<std::string>();
    }
    auto meta = f.find("core-metadata");
    if (meta == f.end() || meta->is_null()) meta = f.find("dist-info-metadata");
    if (meta != f.end()) {
      if (meta->is_object()) {
        file.metadata.available = true;
        file.metadata.hashes = json_hashes(*meta, true);
      } else if (meta->is_boolean() && meta->get<bool>()) {
        file.metadata.available = true;
      }
    }
    if (auto s = f.find("size"); s != f.end() && s->is_number_unsigned()) file.size = s->get<std::uint64_t>();
    if (auto t = f.find("upload-time"); t != f.end() && t->is_string()) file.upload_time = t->get<std::string>();
    page.files.push_back(std::move(file));
  }
  return page;
}

bool is_archive_filename(std::string_view filename) {
  static constexpr std::string_view kExtensions[] = {".whl",     ".zip", ".tar.gz", ".tgz",    ".tar",
                                                     ".tar.bz2", ".tbz", ".tar.xz", ".txz",    ".tlz",
                                                     ".tar.lz",  ".tar.lzma"};
  std::string lower = ascii_lower(filename);
  return std::any_of(std::begin(kExtensions), std::end(kExtensions), [&](std::string_view ext) {
    return lower.size() > ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0;
  });
}

std::vector<IndexFile> find_links_directory(const fs::path& dir) {
  std::error_code ec;
  fs::path absolute = fs::absolute(dir, ec);
  if (ec || !fs::is_directory(absolute, ec)) {
    throw Error("find-links directory " + dir.string() + " does not exist", "check the --find-links path");
  }
  std::vector<IndexFile> out;
  for (fs::directory_iterator it(absolute, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!is_archive_filename(name) || !it->is_regular_file(ec)) continue;
    IndexFile file;
    file.filename = name;
    file.url = file_url_for(it->path());
    file.origin = absolute.string();
    out.push_back(std::move(file));
  }
  if (ec) throw Error("cannot list find-links directory " + dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const IndexFile& a, const IndexFile& b) { return a.filename < b.filename; });
  return out;
}

}  // namespace trainpack::python
