#pragma once
// URLs (RFC 3986): splitting a reference into its components (appendix B), splitting an authority (§3.2),
// resolving a reference against a base (§5.2), and the origin (scheme, host, port) that decides where credentials
// may go. One module for every caller: the HTTP client (redirects, Location headers), registry auth (token realms),
// the Python index client (credentials in index URLs) and index pages (links, file:// URLs).
//
// Hand-written rather than libcurl's URL API (curl_url): curl_url is an http(s) URL parser that normalises as it
// goes, and libcurl 7.88 resolves RFC 3986 §5.4's own examples differently ("#s" against "http://a/b/c/d;p?q" gives
// "http://a/b/c/#s", "" gives "http://a/b/c/", "//g" gives "http://g/", and "g:h" is refused), while pip's links and
// registries' Location headers need the RFC's answers, byte for byte.
#include <optional>
#include <string>
#include <string_view>

namespace trainpack::net {

// The five components of a URI reference, split without validation (RFC 3986 appendix B). A scheme is recognised
// only when it has §3.1's form (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
struct UrlParts {
  std::string scheme, authority, path, query, fragment;  // without their delimiters (":", "//", "?", "#")
  bool has_scheme = false, has_authority = false, has_query = false, has_fragment = false;

  // The reference again (§5.3), with its delimiters.
  std::string str() const;
};

UrlParts split_url(std::string_view url);

// Resolves `reference` (absolute, scheme-relative, absolute-path or relative) against `base` (§5.2); surrounding
// whitespace of both is ignored.
std::string resolve_url(const std::string& base, const std::string& reference);

// An authority's parts (§3.2): userinfo as written (still percent-encoded), host lower-cased and without the
// brackets of an IP literal, port as written (empty when absent). nullopt for "[" without "]", text after "]" that
// is not ":port", or an empty host.
struct Authority {
  std::optional<std::string> userinfo;
  std::string host;
  std::string port;

  // host[:port], an IPv6 literal in brackets again.
  std::string host_port() const;
};

std::optional<Authority> split_authority(std::string_view authority);

// Where an absolute URL points: scheme and host lower-cased, the port made explicit ("https://h" and
// "https://h:443" are the same origin). nullopt without a scheme or an authority.
struct Origin {
  std::string scheme;
  std::string host;       // without brackets
  std::string port;       // as written, else 443 for https, 80 for http, else empty
  std::string authority;  // host[:port] as written (no userinfo), host lower-cased: e.g. a certs.d directory name
  std::optional<std::string> userinfo;  // as written

  bool operator==(const Origin& other) const {
    return scheme == other.scheme && host == other.host && port == other.port;
  }
  // "scheme://host:port" (an IPv6 host in brackets).
  std::string str() const;
};

std::optional<Origin> origin_of(std::string_view url);

// The URL for messages: no userinfo, no query, no fragment (they may carry passwords, signatures, tokens).
std::string url_for_display(std::string_view url);

}  // namespace trainpack::net
