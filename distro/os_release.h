#pragma once
// os-release(5): the image's distribution, from /etc/os-release or else /usr/lib/os-release.
#include <map>
#include <string>
#include <string_view>

#include "layers/image_filesystem.h"

namespace trainpack::distro {

struct OsRelease {
  std::string id;          // ID: "debian", "ubuntu", "alpine", "fedora"
  std::string version_id;  // VERSION_ID: "12"
  std::string id_like;     // ID_LIKE: "rhel centos fedora"
};

// KEY=value lines with shell quoting ('...' literal, "..." with backslash escapes); comments and blank lines skipped.
std::map<std::string, std::string> parse_os_release(std::string_view text);

// The first of /etc/os-release and /usr/lib/os-release the image has; all empty when it has neither.
OsRelease read_os_release(const layers::ImageFilesystem& fs);

}  // namespace trainpack::distro
