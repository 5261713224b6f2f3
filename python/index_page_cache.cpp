#include "python/index_page_cache.h"

#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "support/fs.h"

namespace trainpack::python {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
constexpr std::uint64_t kMaxEntryBytes = 64u << 10;
}

IndexPageCache::IndexPageCache(fs::path dir) : dir_(std::move(dir)) {}

fs::path IndexPageCache::entry_path(const std::string& url) const {
  return dir_ / (image::sha256_of(url).hex() + ".json");
}

fs::path IndexPageCache::body_path(const image::Digest& body) const { return dir_ / ("body-" + body.hex()); }

// The entry for `url`, if there is a readable one.
std::optional<nlohmann::json> IndexPageCache::entry(const std::string& url) const {
  fs::path path = entry_path(url);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  json parsed = json::parse(read_file(path, kMaxEntryBytes), nullptr, false);
  if (!parsed.is_object() || parsed.value("url", "") != url) return std::nullopt;
  return parsed;
}

std::optional<image::Digest> IndexPageCache::kept_body(const std::string& url) const {
  try {
    std::optional<json> kept = entry(url);
    return kept ? image::Digest::parse(kept->value("body", "")) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<CachedPage> IndexPageCache::lookup(const std::string& url) const {
  try {
    std::optional<json> kept = entry(url);
    if (!kept) return std::nullopt;
    std::optional<image::Digest> body = image::Digest::parse(kept->value("body", ""));
    std::error_code ec;
    if (!body || !fs::is_regular_file(body_path(*body), ec)) return std::nullopt;
    CachedPage page;
    page.body = read_file(body_path(*body), 1ull << 30);
    if (image::sha256_of(page.body) != *body) return std::nullopt;  // damaged: ask for the page afresh
    page.content_type = kept->value("content_type", "");
    page.url = kept->value("final_url", url);
    page.etag = kept->value("etag", "");
    page.last_modified = kept->value("last_modified", "");
    if (page.etag.empty() && page.last_modified.empty()) return std::nullopt;
    return page;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: a miss
  }
}

// The body first, then the entry naming it; the body the entry named before goes (another URL's entry that named
// the same bytes then misses once).
void IndexPageCache::remember(const std::string& url, const CachedPage& page) const {
  if (page.etag.empty() && page.last_modified.empty()) return;
  try {
    fs::create_directories(dir_);
    image::Digest body = image::sha256_of(page.body);
    std::optional<image::Digest> replaced = kept_body(url);
    write_file_atomic(body_path(body), page.body);
    json entry{{"url", url},
               {"body", body.str()},
               {"content_type", page.content_type},
               {"final_url", page.url},
               {"etag", page.etag},
               {"last_modified", page.last_modified}};
    write_file_atomic(entry_path(url), entry.dump());
    std::error_code ec;
    if (replaced && *replaced != body) fs::remove(body_path(*replaced), ec);
  } catch (const std::exception&) {
    // Only a cache: the next build downloads the page again.
  }
}

}  // namespace trainpack::python
