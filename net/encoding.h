#pragma once
// Small encodings HTTP and auth code need: base64 (docker config "auth" fields, Basic headers), base64url without
// padding (JWTs, wheel RECORD hashes), percent-encoding (RFC 3986 §2.1) for URLs, query strings and
// application/x-www-form-urlencoded bodies, and RFC 3339 timestamps (token "issued_at", impersonation "expireTime").
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainpack::net {

std::string base64_encode(std::string_view bytes);
// Standard alphabet; also accepts the URL-safe alphabet, missing padding and surrounding whitespace. nullopt when
// the text is not base64.
std::optional<std::string> base64_decode(std::string_view text);
// RFC 4648 §5 alphabet, no padding (JWT segments).
std::string base64url_encode(std::string_view bytes);

// RFC 3986 unreserved characters stay, and those in `also_safe` (e.g. "/" for a URL path), everything else
// becomes %XX (so a space is "%20").
std::string percent_encode(std::string_view text, std::string_view also_safe = {});
// %XX with two hex digits decoded, anything else kept as written (Python's urllib.parse.unquote for ASCII escapes).
std::string percent_decode(std::string_view text);
// "a=1&b=x%20y" from pairs, in order.
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

// "2024-05-01T12:00:00Z", "2024-05-01T12:00:00.123456+02:00"; nullopt when unparsable.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

}  // namespace trainpack::net
