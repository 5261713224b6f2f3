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

IndexPageCache::IndexPageCache(store::CacheArea entries) : entries_(std::move(entries)) {}

std::string IndexPageCache::entry_key(const std::string& url) { return image::sha256_of(url).hex() + ".json"; }

std::string IndexPageCache::body_key(const image::Digest& body) { return "body-" + body.hex(); }

// The entry for `url`, if there is a readable one.
std::optional<nlohmann::json> IndexPageCache::entry(const std::string& url) const {
  fs::path path = entries_.path_of(entry_key(url));
  std::error_code ec;
  if (!entries_.use(entry_key(url)) || !fs::is_regular_file(path, ec)) return std::nullopt;
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
    if (!body || !entries_.use(body_key(*body)) || !fs::is_regular_file(entries_.path_of(body_key(*body)), ec))
      return std::nullopt;
    CachedPage page;
    page.body = read_file(entries_.path_of(body_key(*body)), 1ull << 30);
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
    fs::create_directories(entries_.dir());
    image::Digest body = image::sha256_of(page.body);
    std::optional<image::Digest> replaced = kept_body(url);
    write_file_atomic(entries_.path_of(body_key(body)), page.body);
    json entry{{"url", url},
               {"body", body.str()},
               {"content_type", page.content_type},
               {"final_url", page.url},
               {"etag", page.etag},
               {"last_modified", page.last_modified}};
    write_file_atomic(entries_.path_of(entry_key(url)), entry.dump());
    std::error_code ec;
    if (replaced && *replaced != body) fs::remove(entries_.path_of(body_key(*replaced)), ec);
  } catch (const std::exception&) {
    // Only a cache: the next build downloads the page again.
  }
}

}  // namespace trainpack::python
