#pragma once
// What the image's package manager recorded as installed: dpkg's status database (deb-control(5) stanzas in
// /var/lib/dpkg/status, or one file per package under /var/lib/dpkg/status.d in distroless images) and apk's
// /lib/apk/db/installed ("P:" name, "V:" version lines, one block per package).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layers/image_filesystem.h"

namespace trainpack::distro {

// The Version of `package` in a dpkg status text, installed stanzas only; "" when absent.
std::string dpkg_version(std::string_view status, std::string_view package);

// The V: of package P: in an apk installed database; "" when absent.
std::string apk_version(std::string_view db, std::string_view package);

// Distribution version → upstream: the epoch, the Debian revision / apk "-rN" and "~" before pre-releases dropped
// ("1:2.36-9+deb12u4" → "2.36").
std::string upstream_version(std::string_view version);

// One package a database records as installed.
struct InstalledPackage {
  std::string name;
  std::string version;
  std::string architecture;  // dpkg's Architecture ("amd64", "all"), apk's A: ("x86_64"); "" when not recorded
  std::string license;       // apk's L: (an SPDX-like expression); dpkg records none: ""
  std::string manager;       // "dpkg" or "apk": whose database records it
  bool operator==(const InstalledPackage&) const = default;
};

// Every installed package of a dpkg status text (stanzas whose Status says "installed"; one without Status, as
// distroless's status.d files are, counts), in the text's order.
std::vector<InstalledPackage> dpkg_installed(std::string_view status);
// Every package of an apk installed database, in its order.
std::vector<InstalledPackage> apk_installed(std::string_view db);
// Every installed package the image's databases record: /var/lib/dpkg/status, then status.d/ (sorted by file
// name), then /lib/apk/db/installed.
std::vector<InstalledPackage> installed_packages(const layers::ImageFilesystem& fs);

// /var/lib/dpkg/status; nullopt when the image has none.
std::optional<std::string> read_dpkg_status(const layers::ImageFilesystem& fs);
// The versions of `package` in distroless's /var/lib/dpkg/status.d/<package>[_*] files, in directory order.
std::vector<std::string> dpkg_status_d_versions(const layers::ImageFilesystem& fs, const std::string& package);
// /lib/apk/db/installed; nullopt when the image has none.
std::optional<std::string> read_apk_installed(const layers::ImageFilesystem& fs);

}  // namespace trainpack::distro
