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

// Each installed stanza's fields, in order.
template <typename Visit>
void for_each_installed_stanza(std::string_view status, Visit&& visit) {
  std::size_t pos = 0;
  while (pos < status.size()) {
    std::size_t end = status.find("\n\n", pos);
    std::string_view stanza = status.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? status.size() : end + 2;
    auto f = stanza_fields(stanza);
    if (f["package"].empty()) continue;
    if (f.count("status") && f["status"].find(" installed") == std::string::npos) continue;
    if (!visit(f)) return;
  }
}

}  // namespace

std::string dpkg_version(std::string_view status, std::string_view package) {
  std::string version;
  for_each_installed_stanza(status, [&](std::map<std::string, std::string>& f) {
    if (f["package"] != package) return true;
    version = f["version"];
    return false;
  });
  return version;
}

std::vector<InstalledPackage> dpkg_installed(std::string_view status) {
  std::vector<InstalledPackage> out;
  for_each_installed_stanza(status, [&](std::map<std::string, std::string>& f) {
    out.push_back({f["package"], f["version"], f["architecture"], "", "dpkg"});
    return true;
  });
  return out;
}

std::vector<InstalledPackage> apk_installed(std::string_view db) {
  std::vector<InstalledPackage> out;
  bool open = false;
  for (std::string_view line : split_lines(db)) {
    if (line.empty()) {
      open = false;
      continue;
    }
    if (line.size() < 2 || line[1] != ':') continue;
    std::string value(line.substr(2));
    if (line.front() == 'P') {
      out.push_back({value, "", "", "", "apk"});
      open = true;
    } else if (open && line.front() == 'V') {
      out.back().version = value;
    } else if (open && line.front() == 'A') {
      out.back().architecture = value;
    } else if (open && line.front() == 'L') {
      out.back().license = value;
    }
  }
  return out;
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

std::vector<InstalledPackage> installed_packages(const layers::ImageFilesystem& fs) {
  std::vector<InstalledPackage> out;
  if (std::optional<std::string> status = read_dpkg_status(fs)) out = dpkg_installed(*status);
  for (const std::string& n : fs.children("var/lib/dpkg/status.d"))
    if (!n.ends_with(".md5sums"))  // distroless keeps each package's file list beside its stanza
      if (auto text = fs.read("var/lib/dpkg/status.d/" + n, kMaxStatusFile))
        for (InstalledPackage& p : dpkg_installed(*text)) out.push_back(std::move(p));
  if (std::optional<std::string> db = read_apk_installed(fs))
    for (InstalledPackage& p : apk_installed(*db)) out.push_back(std::move(p));
  return out;
}

}  // namespace trainpack::distro
