#include "distro/package_db.h"

#include <algorithm>
#include <map>

#include "support/text.h"

namespace trainpack::distro {
namespace {

constexpr std::size_t kMaxDatabase = 64u << 20;
constexpr std::size_t kMaxStatusFile = 1u << 20;

// A deb-control(5) stanza → the first value of each field (lower-cased name); continuation lines skipped.
std::map<std::string, std::string> stanza_fields(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : split_lines(text)) {
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') continue;
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    out.emplace(ascii_lower(line.substr(0, colon)), std::string(ascii_trim(line.substr(colon + 1))));
  }
  return out;
}

}  // namespace

std::string dpkg_version(std::string_view status, std::string_view package) {
  std::size_t pos = 0;
  while (pos < status.size()) {
    std::size_t end = status.find("\n\n", pos);
    std::string_view stanza = status.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? status.size() : end + 2;
    auto f = stanza_fields(stanza);
    if (f["package"] != package) continue;
    if (f.count("status") && f["status"].find(" installed") == std::string::npos) continue;
    return f["version"];
  }
  return {};
}

std::string apk_version(std::string_view db, std::string_view package) {
  bool in_package = false;
  for (std::string_view line : split_lines(db)) {
    if (line.empty()) {
      in_package = false;
    } else if (line.starts_with("P:")) {
      in_package = line.substr(2) == package;
    } else if (in_package && line.starts_with("V:")) {
      return std::string(line.substr(2));
    }
  }
  return {};
}

std::string upstream_version(std::string_view v) {
  std::string s(v);
  if (auto colon = s.find(':'); colon != std::string::npos && all_digits(s.substr(0, colon))) s.erase(0, colon + 1);
  if (auto dash = s.rfind('-'); dash != std::string::npos) s.erase(dash);
  s.erase(std::remove(s.begin(), s.end(), '~'), s.end());
  return s;
}

std::optional<std::string> read_dpkg_status(const layers::ImageFilesystem& fs) {
  return fs.read("var/lib/dpkg/status", kMaxDatabase);
}

std::vector<std::string> dpkg_status_d_versions(const layers::ImageFilesystem& fs, const std::string& package) {
  std::vector<std::string> out;
  for (const std::string& n : fs.children("var/lib/dpkg/status.d"))
    if (n == package || n.starts_with(package + "_"))
      if (auto text = fs.read("var/lib/dpkg/status.d/" + n, kMaxStatusFile)) out.push_back(dpkg_version(*text, package));
  return out;
}

std::optional<std::string> read_apk_installed(const layers::ImageFilesystem& fs) {
  return fs.read("lib/apk/db/installed", kMaxDatabase);
}

}  // namespace trainpack::distro
