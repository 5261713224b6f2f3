// Docker's reference grammar (github.com/distribution/reference, as used by `docker pull`), normalised the way
// ParseDockerRef does it:
//
//   reference        := name [ ":" tag ] [ "@" digest ]
//   name             := [domain "/"] path-component ["/" path-component]*
//   domain           := host [":" port-number]
//   host             := domain-name | "[" IPv6 "]"
//   domain-name      := domain-component ["." domain-component]*
//   domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
//   port-number      := /[0-9]+/
//   path-component   := alpha-numeric [separator alpha-numeric]*
//   alpha-numeric    := /[a-z0-9]+/
//   separator        := /[_.]|__|[-]+/
//   tag              := /[\w][\w.-]{0,127}/
//   digest           := algorithm ":" hex   (algorithm /[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*/, hex >= 32)
//
// The first "/"-separated component is a registry host when it contains "." or ":", is "localhost", or has an
// uppercase letter (Docker Hub namespaces are lowercase); otherwise the registry is docker.io and one-component
// names get "library/". "index.docker.io" is docker.io. The whole name (registry + "/" + repository) is capped at
// 255 characters. Without tag and digest the tag is "latest"; with both, the digest wins and the tag is dropped.
#include "registry/reference.h"

#include <algorithm>
#include <cctype>

#include "image/digest.h"
#include "support/error.h"
#include "support/redact.h"
#include "support/text.h"

namespace trainpack::registry {
namespace {

constexpr std::size_t kNameTotalLengthMax = 255;
constexpr const char* kDefaultDomain = "docker.io";
constexpr const char* kLegacyDefaultDomain = "index.docker.io";
constexpr const char* kOfficialRepoPrefix = "library/";

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return is_alnum(c) || c == '_'; }
bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// path-component: [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)*
bool valid_path_component(std::string_view s) {
  std::size_t i = 0, n = s.size();
  auto alnum_run = [&] {
    std::size_t start = i;
    while (i < n && is_lower_alnum(s[i])) ++i;
    return i > start;
  };
  if (!alnum_run()) return false;
  while (i < n) {
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < n && s[i] == '_') ++i;
    } else if (s[i] == '-') {
      while (i < n && s[i] == '-') ++i;
    } else {
      return false;
    }
    if (!alnum_run()) return false;
  }
  return true;
}

bool valid_path(std::string_view path) {
  if (path.empty()) return false;
  auto comps = split_at(path, '/');
  return std::all_of(comps.begin(), comps.end(), valid_path_component);
}

bool valid_domain_component(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '-'; });
}

// host [":" port], host = domain-name | "[" IPv6 "]" (hex digits and colons, as Docker's regexp).
bool valid_domain(std::string_view d) {
  if (d.empty()) return false;
  std::string_view host = d, port;
  if (d.front() == '[') {
    std::size_t close = d.find(']');
    if (close == std::string_view::npos || close < 2) return false;
    std::string_view inner = d.substr(1, close - 1);
    if (!std::all_of(inner.begin(), inner.end(), [](char c) { return is_hex(c) || c == ':'; })) return false;
    std::string_view rest = d.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
      if (port.empty()) return false;
    }
  } else {
    std::size_t colon = d.find(':');
    if (colon != std::string_view::npos) {
      host = d.substr(0, colon);
      port = d.substr(colon + 1);
      if (port.empty()) return false;
    }
    auto comps = split_at(host, '.');
    if (!std::all_of(comps.begin(), comps.end(), valid_domain_component)) return false;
  }
  return std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// [\w][\w.-]{0,127}
bool valid_tag(std::string_view t) {
  if (t.empty() || t.size() > 128 || !is_word(t.front())) return false;
  return std::all_of(t.begin(), t.end(), [](char c) { return is_word(c) || c == '.' || c == '-'; });
}

// The grammar's digest shape; the algorithm and encoding are checked separately (like go-digest's Validate).
bool digest_shape(std::string_view d) {
  std::size_t colon = d.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view alg = d.substr(0, colon), hex = d.substr(colon + 1);
  if (hex.size() < 32 || !std::all_of(hex.begin(), hex.end(), is_hex)) return false;
  std::size_t i = 0;
  while (true) {
    if (i >= alg.size() || !std::isalpha(static_cast<unsigned char>(alg[i]))) return false;
    while (i < alg.size() && is_alnum(alg[i])) ++i;
    if (i == alg.size()) return true;
    if (alg[i] != '-' && alg[i] != '_' && alg[i] != '+' && alg[i] != '.') return false;
    ++i;
  }
}

bool all_lower_hex(std::string_view s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

constexpr const char* kFormatHint =
    "references look like [registry[:port]/]repository[:tag][@sha256:<64 hex>], e.g. "
    "us-docker.pkg.dev/my-project/my-repo/trainer:v1 or python:3.11";

// The message never shows a password given as "user:password@host/..." (Docker references have no userinfo).
[[noreturn]] void fail(std::string_view text, const std::string& why, std::string hint = kFormatHint) {
  throw Error(mask_userinfo("invalid image reference \"" + std::string(text) + "\": " + why), std::move(hint));
}

}  // namespace

bool starts_with_registry(std::string_view name) {
  std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view first = name.substr(0, slash);
  return first == "localhost" || first.find_first_of(".:") != std::string_view::npos || ascii_lower(first) != first;
}

namespace {

// splitDockerDomain: the registry part and the rest.
std::pair<std::string, std::string> split_docker_domain(std::string_view name) {
  std::string domain, remainder;
  if (starts_with_registry(name)) {
    std::size_t slash = name.find('/');
    domain = std::string(name.substr(0, slash));
    remainder = std::string(name.substr(slash + 1));
  } else {
    domain = kDefaultDomain;
    remainder = std::string(name);
  }
  if (domain == kLegacyDefaultDomain) domain = kDefaultDomain;
  if (domain == kDefaultDomain && remainder.find('/') == std::string::npos) remainder = kOfficialRepoPrefix + remainder;
  return {domain, remainder};
}

std::string host_without_port(std::string_view registry) {
  std::string h = ascii_lower(registry);
  if (!h.empty() && h.front() == '[') {
    std::size_t close = h.find(']');
    return close == std::string::npos ? h : h.substr(0, close + 1);
  }
  std::size_t colon = h.find(':');
  return colon == std::string::npos ? h : h.substr(0, colon);
}


}  // namespace

Reference Reference::parse(std::string_view text) {
  if (text.empty()) fail(text, "the reference is empty");
  if (all_lower_hex(text, 64)) {
    fail(text, "a 64-character hexadecimal string is an image ID, not a repository name",
         "name the image by repository (e.g. python:3.11) or by digest (repository@sha256:<hex>)");
  }

  auto [domain, remainder] = split_docker_domain(text);
  std::string remote_name = remainder.substr(0, remainder.find(':'));
  if (ascii_lower(remote_name) != remote_name) {
    fail(text, "repository name (" + remote_name + ") must be lowercase",
         "Docker repository names are lowercase: use " + ascii_lower(remote_name));
  }

  std::string full = domain + "/" + remainder;
  Reference ref;
  std::string name_part = full;
  if (std::size_t at = full.find('@'); at != std::string::npos) {
    ref.digest = full.substr(at + 1);
    name_part = full.substr(0, at);
    if (!digest_shape(ref.digest)) fail(text, "invalid digest \"" + ref.digest + "\"");
    std::string alg = ref.digest.substr(0, ref.digest.find(':'));
    if (alg != "sha256" && alg != "sha512") {
      fail(text, "unsupported digest algorithm \"" + alg + "\"", "use a sha256:<64 lowercase hex> digest");
    }
    if (!image::Digest::parse(ref.digest)) {
      fail(text, "invalid " + alg + " digest (wrong length or not lowercase hex)",
           "use a sha256:<64 lowercase hex> digest");
    }
  }

  std::size_t last_slash = name_part.rfind('/');
  std::size_t colon = name_part.rfind(':');
  std::string name = name_part;
  if (colon != std::string::npos && colon > last_slash) {
    ref.tag = name_part.substr(colon + 1);
    name = name_part.substr(0, colon);
    if (!valid_tag(ref.tag)) {
      fail(text, ref.tag.empty() ? "empty tag" : "invalid tag \"" + ref.tag + "\"",
           "tags are 1-128 characters of letters, digits, '_', '.' and '-', not starting with '.' or '-'");
    }
  }

  std::size_t slash = name.find('/');
  ref.registry = name.substr(0, slash);
  ref.repository = name.substr(slash + 1);
  if (!valid_domain(ref.registry)) fail(text, "invalid registry host \"" + ref.registry + "\"");
  if (!valid_path(ref.repository)) {
    fail(text, "invalid repository name \"" + ref.repository + "\"",
         "repository path components are lowercase letters and digits separated by '.', '_', '__' or dashes");
  }
  if (name.size() > kNameTotalLengthMax) {
    fail(text, "repository name must not be more than 255 characters (has " + std::to_string(name.size()) + ")",
         "shorten the repository path");
  }

  if (!ref.digest.empty()) ref.tag.clear();  // the digest wins
  else if (ref.tag.empty()) ref.tag = "latest";
  return ref;
}

std::string Reference::api_host() const { return registry == "docker.io" ? "registry-1.docker.io" : registry; }

std::string Reference::identifier() const { return digest.empty() ? tag : digest; }

std::string Reference::name() const { return registry + "/" + repository; }

std::string Reference::str() const { return digest.empty() ? name() + ":" + tag : name() + "@" + digest; }

std::string Reference::with_digest(std::string_view d) const { return name() + "@" + std::string(d); }

bool Reference::is_google() const {
  std::string h = host_without_port(registry);
  constexpr std::string_view ar = "-docker.pkg.dev", rep_prefix = "docker.", rep_suffix = ".rep.pkg.dev";
  bool artifact_registry = h.ends_with(ar) && h.size() > ar.size() && h.find('.') == h.size() - ar.size() + 7;
  bool regional = h.starts_with(rep_prefix) && h.ends_with(rep_suffix) &&
                  h.size() > rep_prefix.size() + rep_suffix.size();
  return h == "gcr.io" || h.ends_with(".gcr.io") || artifact_registry || regional;
}

bool is_valid_tag(std::string_view tag) { return valid_tag(tag); }

bool is_registry_reference(std::string_view text) {
  return !(text.starts_with("oci:") || text.starts_with("docker-archive:"));
}

}  // namespace trainpack::registry
