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

std::optional<CachedPage> IndexPageCache::lookup(const std::string& url) const {
  try {
    fs::path path = entry_path(url);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    json entry = json::parse(read_file(path, kMaxEntryBytes), nullptr, false);
    if (!entry.is_object() || entry.value("url", "") != url) return std::nullopt;
    std::optional<image::Digest> body = image::Digest::parse(entry.value("body", ""));
    if (!body || !fs::is_regular_file(body_path(*body), ec)) return std::nullopt;
    CachedPage page;
    page.body = read_file(body_path(*body), 1ull << 30);
    if (image::sha256_of(page.body) != *body) return std::nullopt;  // damaged: ask for the page afresh
    page.content_type = entry.value("content_type", "");
    page.url = entry.value("final_url", url);
    page.etag = entry.value("etag", "");
    page.last_modified = entry.value("last_modified", "");
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
    std::optional<image::Digest> replaced;
    if (std::optional<CachedPage> old = lookup(url)) replaced = image::sha256_of(old->body);
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
