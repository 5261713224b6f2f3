#include "sbom/document.h"

#include <cctype>

#include "net/encoding.h"
#include "support/text.h"

namespace trainpack::sbom {

namespace {

// pkg:TYPE/NAMESPACE/NAME@VERSION?KEY=VALUE&...: each part percent-encoded, qualifiers in key order (the map's).
std::string purl(std::string_view type, std::string_view ns, std::string_view name, std::string_view version,
                 const std::map<std::string, std::string>& qualifiers) {
  std::string out = "pkg:" + std::string(type) + "/";
  if (!ns.empty()) out += net::percent_encode(ns) + "/";
  out += net::percent_encode(name);
  if (!version.empty()) out += "@" + net::percent_encode(version);
  char separator = '?';
  for (const auto& [key, value] : qualifiers) {
    if (value.empty()) continue;
    out += separator + key + "=" + net::percent_encode(value, "/");
    separator = '&';
  }
  return out;
}

}  // namespace

std::string_view origin_name(Origin origin) {
  switch (origin) {
    case Origin::kBaseOs: return "base-os";
    case Origin::kBasePython: return "base-python";
    case Origin::kInstalled: return "installed";
    case Origin::kLocalArchive: return "local-archive";
    case Origin::kBuiltFromSource: return "built";
  }
  return "installed";
}

std::string pypi_purl(std::string_view name, std::string_view version) {
  std::string normalized = ascii_lower(name);
  for (char& c : normalized)
    if (c == '_') c = '-';
  return purl("pypi", "", normalized, version, {});
}

std::string deb_purl(std::string_view vendor, std::string_view name, std::string_view version, std::string_view arch,
                     std::string_view distro) {
  return purl("deb", ascii_lower(vendor), name, version,
              {{"arch", std::string(arch)}, {"distro", std::string(distro)}});
}

std::string apk_purl(std::string_view vendor, std::string_view name, std::string_view version, std::string_view arch) {
  return purl("apk", ascii_lower(vendor), ascii_lower(name), version, {{"arch", std::string(arch)}});
}

std::string conda_purl(std::string_view name, std::string_view version, std::string_view build,
                       std::string_view channel, std::string_view subdir) {
  return purl("conda", "", name, version,
              {{"build", std::string(build)}, {"channel", std::string(channel)}, {"subdir", std::string(subdir)}});
}

std::string oci_purl(std::string_view reference, std::string_view digest) {
  std::string_view repository = reference.substr(0, reference.find('@'));
  std::size_t slash = repository.rfind('/');
  std::size_t colon = repository.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash))
    repository = repository.substr(0, colon);  // a tag, not a registry's port
  std::string_view last = slash == std::string_view::npos ? repository : repository.substr(slash + 1);
  return purl("oci", "", ascii_lower(last), digest, {{"repository_url", std::string(repository)}});
}

std::string digest_hex(std::string_view digest) {
  return std::string(digest.starts_with("sha256:") ? digest.substr(7) : digest);
}

bool is_license_expression(std::string_view text) {
  // Tokens: ids ([A-Za-z0-9.+-] runs, "+" only at the end), AND/OR/WITH, parentheses; an id and an operator
  // alternate, WITH takes an exception id after it.
  int depth = 0;
  bool want_id = true;
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '(') {
      if (!want_id) return false;
      ++depth;
      ++i;
      continue;
    }
    if (c == ')') {
      if (want_id || --depth < 0) return false;
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                               text[i] == '-' || text[i] == '+'))
      ++i;
    if (start == i) return false;
    std::string_view token = text.substr(start, i - start);
    bool op = token == "AND" || token == "OR" || token == "WITH" || token == "and" || token == "or" || token == "with";
    if (op == want_id) return false;
    if (!op && token.find('+') != std::string_view::npos && token.find('+') != token.size() - 1) return false;
    want_id = op;
  }
  return !want_id && depth == 0;
}

}  // namespace trainpack::sbom
