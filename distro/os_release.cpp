#include "distro/os_release.h"

#include "support/text.h"

namespace trainpack::distro {
namespace {

constexpr std::size_t kMaxOsRelease = 1u << 20;

}  // namespace

std::map<std::string, std::string> parse_os_release(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : split_lines(text)) {
    line = ascii_trim(line);
    if (line.empty() || line.front() == '#') continue;
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view v = line.substr(eq + 1);
    std::string value;
    if (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
      char q = v.front();
      for (std::size_t i = 1; i < v.size() && v[i] != q; ++i) {
        if (q == '"' && v[i] == '\\' && i + 1 < v.size()) ++i;
        value += v[i];
      }
    } else {
      value = std::string(v);
    }
    out[std::string(line.substr(0, eq))] = value;
  }
  return out;
}

OsRelease read_os_release(const layers::ImageFilesystem& fs) {
  for (const char* path : {"etc/os-release", "usr/lib/os-release"}) {
    auto text = fs.read(path, kMaxOsRelease);
    if (!text) continue;
    auto fields = parse_os_release(*text);
    return OsRelease{fields["ID"], fields["VERSION_ID"], fields["ID_LIKE"]};
  }
  return {};
}

}  // namespace trainpack::distro
