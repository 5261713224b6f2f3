#pragma once
// urllib.parse's urlsplit as packaging and pip apply it to requirement URLs and links.
#include <string_view>

#include "net/url.h"
#include "support/text.h"

namespace trainpack::python {

// urlsplit: RFC 3986's five parts (net/url.h), the scheme lower-cased as urllib returns it.
inline net::UrlParts urlsplit(std::string_view url) {
  net::UrlParts u = net::split_url(url);
  u.scheme = ascii_lower(u.scheme);
  return u;
}

}  // namespace trainpack::python
