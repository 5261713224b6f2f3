#pragma once
// Index pages kept with their validators, as pip's HTTP cache keeps them (network/cache.py): pip asks for every page
// with Cache-Control: max-age=0, so a kept page is never used unasked; the next request carries If-None-Match
// (ETag) and If-Modified-Since (Last-Modified), and a 304 answer means the kept page is still the page (RFC 9110
// section 13.1, conditional requests). Pages from PyPI run to megabytes (numpy's, torch's), so a changed requirement
// re-resolves without downloading them again.
//
// An entry is small JSON (the URL it answers, the validators, the final URL and Content-Type) naming the body file
// beside it by its sha256; both are written atomically, and an entry whose body is gone or damaged is a miss. Keys are the
// page URL alone (userinfo stripped): the Accept header is always the same, and the index still checks credentials
// on every request (a 304 goes only to a request it authorised).
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "store/cache_dir.h"

namespace trainpack::python {

struct CachedPage {
  std::string body;
  std::string content_type;
  std::string url;  // the final URL (after redirects) links are resolved against
  std::string etag;
  std::string last_modified;
};

class IndexPageCache {
 public:
  explicit IndexPageCache(store::CacheArea entries);

  std::optional<CachedPage> lookup(const std::string& url) const;
  // Kept only when it has a validator (else it could never be asked about); failures to write are ignored: the
  // cache only saves a download.
  void remember(const std::string& url, const CachedPage& page) const;

 private:
  std::optional<nlohmann::json> entry(const std::string& url) const;
  std::optional<image::Digest> kept_body(const std::string& url) const;  // what remember() replaces
  static std::string entry_key(const std::string& url);
  static std::string body_key(const image::Digest& body);

  store::CacheArea entries_;
};

}  // namespace trainpack::python
