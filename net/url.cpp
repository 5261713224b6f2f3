#include "net/url.h"

#include <algorithm>

#include "support/text.h"

namespace trainpack::net {
namespace {

bool is_scheme(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  return !s.empty() && alpha(s.front()) && std::all_of(s.begin(), s.end(), [&](char c) {
    return alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
  });
}

// RFC 3986 §5.2.4
std::string remove_dot_segments(std::string in) {
  std::string out;
  while (!in.empty()) {
    if (in.rfind("../", 0) == 0) {
      in.erase(0, 3);
    } else if (in.rfind("./", 0) == 0) {
      in.erase(0, 2);
    } else if (in.rfind("/./", 0) == 0) {
      in.erase(0, 2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.rfind("/../", 0) == 0 || in == "/..") {
      in = in.size() == 3 ? "/" : in.substr(3);
      std::size_t slash = out.rfind('/');
      out.erase(slash == std::string::npos ? 0 : slash);
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      std::size_t start = in.front() == '/' ? 1 : 0;
      std::size_t next = in.find('/', start);
      if (next == std::string::npos) next = in.size();
      out += in.substr(0, next);
      in.erase(0, next);
    }
  }
  return out;
}

// §5.2.3
std::string merge_paths(const UrlParts& base, const std::string& reference_path) {
  if (base.has_authority && base.path.empty()) return "/" + reference_path;
  std::size_t slash = base.path.rfind('/');
  return (slash == std::string::npos ? std::string() : base.path.substr(0, slash + 1)) + reference_path;
}

// §5.2.2 for a reference without scheme or authority: the path and query, the rest from the base.
void resolve_path(const UrlParts& base, const UrlParts& ref, UrlParts& t) {
  if (ref.path.empty()) {
    t.path = base.path;
    t.has_query = ref.has_query || base.has_query;
    t.query = ref.has_query ? ref.query : base.query;
    return;
  }
  t.path = remove_dot_segments(ref.path.front() == '/' ? ref.path : merge_paths(base, ref.path));
  t.has_query = ref.has_query;
  t.query = ref.query;
}

}  // namespace

UrlParts split_url(std::string_view s) {
  UrlParts u;
  std::size_t colon = s.find_first_of(":/?#");
  if (colon != std::string_view::npos && s[colon] == ':' && is_scheme(s.substr(0, colon))) {
    u.has_scheme = true;
    u.scheme = std::string(s.substr(0, colon));
    s.remove_prefix(colon + 1);
  }
  if (s.substr(0, 2) == "//") {
    s.remove_prefix(2);
    std::size_t end = std::min(s.find_first_of("/?#"), s.size());
    u.has_authority = true;
    u.authority = std::string(s.substr(0, end));
    s.remove_prefix(end);
  }
  std::size_t end = std::min(s.find_first_of("?#"), s.size());
  u.path = std::string(s.substr(0, end));
  s.remove_prefix(end);
  if (!s.empty() && s.front() == '?') {
    end = std::min(s.find('#'), s.size());
    u.has_query = true;
    u.query = std::string(s.substr(1, end - 1));
    s.remove_prefix(end);
  }
  if (!s.empty() && s.front() == '#') {
    u.has_fragment = true;
    u.fragment = std::string(s.substr(1));
  }
  return u;
}

std::string UrlParts::str() const {
  std::string r;
  if (has_scheme) r += scheme + ":";
  if (has_authority) r += "//" + authority;
  r += path;
  if (has_query) r += "?" + query;
  if (has_fragment) r += "#" + fragment;
  return r;
}

std::string resolve_url(const std::string& base_text, const std::string& reference_text) {
  UrlParts base = split_url(ascii_trim(base_text));
  UrlParts ref = split_url(ascii_trim(reference_text));
  UrlParts t;
  if (ref.has_scheme) {
    t = ref;
    t.path = remove_dot_segments(ref.path);
  } else if (ref.has_authority) {
    t = ref;
    t.path = remove_dot_segments(ref.path);
  } else {
    resolve_path(base, ref, t);
    t.has_authority = base.has_authority;
    t.authority = base.authority;
  }
  if (!ref.has_scheme) {
    t.has_scheme = base.has_scheme;
    t.scheme = base.scheme;
  }
  t.has_fragment = ref.has_fragment;
  t.fragment = ref.fragment;
  return t.str();
}

std::optional<Authority> split_authority(std::string_view text) {
  Authority a;
  if (std::size_t at = text.rfind('@'); at != std::string_view::npos) {
    a.userinfo = std::string(text.substr(0, at));
    text.remove_prefix(at + 1);
  }
  if (!text.empty() && text.front() == '[') {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.host = ascii_lower(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return std::nullopt;
    if (!rest.empty()) a.port = std::string(rest.substr(1));
  } else {
    std::size_t colon = text.rfind(':');
    a.host = ascii_lower(text.substr(0, colon));
    if (colon != std::string_view::npos) a.port = std::string(text.substr(colon + 1));
  }
  if (a.host.empty()) return std::nullopt;
  return a;
}

std::string Authority::host_port() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return port.empty() ? h : h + ":" + port;
}

std::optional<Origin> origin_of(std::string_view url) {
  UrlParts u = split_url(url);
  if (!u.has_scheme || !u.has_authority) return std::nullopt;
  std::optional<Authority> a = split_authority(u.authority);
  if (!a) return std::nullopt;
  Origin o;
  o.scheme = ascii_lower(u.scheme);
  o.host = a->host;
  o.authority = a->host_port();
  o.port = !a->port.empty() ? a->port : o.scheme == "https" ? "443" : o.scheme == "http" ? "80" : "";
  o.userinfo = a->userinfo;
  return o;
}

std::string Origin::str() const {
  return scheme + "://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

std::string url_for_display(std::string_view url) {
  UrlParts u = split_url(url);
  if (std::size_t at = u.authority.rfind('@'); at != std::string::npos) u.authority.erase(0, at + 1);
  u.has_query = u.has_fragment = false;
  return u.str();
}

}  // namespace trainpack::net
