#include "sbom/image_packages.h"

#include <map>
#include <set>

#include "distro/os_release.h"
#include "distro/package_db.h"
#include "python/marker_compare.h"
#include "python/metadata.h"
#include "python/names.h"
#include "support/error.h"

namespace trainpack::sbom {

namespace {

constexpr std::size_t kMaxMetadata = 4u << 20;

// Trove classifiers (pypi.org/classifiers) of the licenses most distributions name, as SPDX ids.
const std::map<std::string_view, std::string_view> kClassifierLicenses = {
    {"License :: OSI Approved :: MIT License", "MIT"},
    {"License :: OSI Approved :: Apache Software License", "Apache-2.0"},
    {"License :: OSI Approved :: BSD License", "BSD-3-Clause"},
    {"License :: OSI Approved :: ISC License (ISCL)", "ISC"},
    {"License :: OSI Approved :: Python Software Foundation License", "PSF-2.0"},
    {"License :: OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)", "MPL-2.0"},
    {"License :: OSI Approved :: GNU General Public License v2 (GPLv2)", "GPL-2.0-only"},
    {"License :: OSI Approved :: GNU General Public License v3 (GPLv3)", "GPL-3.0-only"},
    {"License :: OSI Approved :: GNU Lesser General Public License v3 (LGPLv3)", "LGPL-3.0-only"},
    {"License :: OSI Approved :: The Unlicense (Unlicense)", "Unlicense"},
    {"License :: OSI Approved :: zlib/libpng License", "Zlib"},
};

// Debian-family purls use os-release's ID as vendor and ID-VERSION_ID as distro ("debian-12", "ubuntu-22.04").
Package os_package(const distro::InstalledPackage& p, const distro::OsRelease& os) {
  bool apk = p.manager == "apk";
  std::string vendor = os.id.empty() ? (apk ? "alpine" : "debian") : os.id;
  std::string distro = os.version_id.empty() ? vendor : vendor + "-" + os.version_id;
  Package out;
  out.name = p.name;
  out.version = p.version;
  out.purl = apk ? apk_purl(vendor, p.name, p.version, p.architecture)
                 : deb_purl(vendor, p.name, p.version, p.architecture, distro);
  out.origin = Origin::kBaseOs;
  if (!p.license.empty()) (is_license_expression(p.license) ? out.license_expression : out.license_text) = p.license;
  return out;
}

}  // namespace

std::vector<Package> os_packages(const layers::ImageFilesystem& fs) {
  distro::OsRelease os = distro::read_os_release(fs);
  std::vector<Package> out;
  for (const distro::InstalledPackage& p : distro::installed_packages(fs)) out.push_back(os_package(p, os));
  return out;
}

void set_license(Package& package, std::string_view metadata) {
  python::EmailMessage message = python::EmailMessage::parse(metadata);
  if (const std::string* expression = message.get("License-Expression"); expression && !expression->empty()) {
    package.license_expression = *expression;
    return;
  }
  if (const std::string* license = message.get("License"); license && !license->empty() && license->size() < 200 &&
                                                            license->find('\n') == std::string::npos) {
    (is_license_expression(*license) ? package.license_expression : package.license_text) = *license;
    return;
  }
  std::set<std::string> ids;
  for (const std::string& classifier : message.get_all("Classifier"))
    if (auto it = kClassifierLicenses.find(classifier); it != kClassifierLicenses.end()) ids.emplace(it->second);
  for (const std::string& id : ids)
    package.license_expression += (package.license_expression.empty() ? "" : " AND ") + id;
}

std::vector<Package> python_packages(const layers::ImageFilesystem& fs,
                                     const std::vector<python::SysPathEntry>& sys_path, Origin origin,
                                     const python::MarkerEnvironment* environment) {
  std::vector<Package> out;
  std::vector<std::vector<std::string>> requires_names;  // canonical names each one requires, unconditionally
  std::map<std::string, std::string> purl_of;             // canonical name → purl
  for (const python::SiteDistribution& d : python::find_installed_distributions(fs, sys_path)) {
    Package p{d.name, d.version, pypi_purl(d.name, d.version), origin, "", "", "", "", {}};
    std::vector<std::string> needs;
    std::string file = d.metadata_dir + (d.form == python::DistributionForm::kDistInfo ? "/METADATA" : "/PKG-INFO");
    if (d.form == python::DistributionForm::kDistutilsEggInfo) file = d.metadata_dir;
    try {
      if (std::optional<std::string> text = fs.read(file, kMaxMetadata)) {
        set_license(p, *text);
        for (const python::Requirement& r : python::CoreMetadata::parse(*text).requires_dist)
          if (!r.marker || (environment && r.marker->evaluate(*environment, python::pep440_version_compare)))
            needs.push_back(python::canonicalize_name(r.name));
      }
    } catch (const Error&) {
      // metadata pip could not read either: the package stays, without license or edges
    }
    purl_of.emplace(python::canonicalize_name(d.name), p.purl);
    requires_names.push_back(std::move(needs));
    out.push_back(std::move(p));
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (const std::string& name : requires_names[i])
      if (auto it = purl_of.find(name); it != purl_of.end()) out[i].depends_on.push_back(it->second);
  return out;
}

std::vector<Package> conda_packages(const layers::ImageFilesystem& fs, std::string_view prefix) {
  std::string dir = std::string(prefix.starts_with('/') ? prefix.substr(1) : prefix) + "/conda-meta";
  std::vector<Package> out;
  for (const std::string& file : fs.children(dir)) {
    // NAME-VERSION-BUILD.json: neither a conda version nor a build string holds a '-'.
    if (!file.ends_with(".json")) continue;
    std::string stem = file.substr(0, file.size() - 5);
    std::size_t build_dash = stem.rfind('-');
    std::size_t version_dash = build_dash == std::string::npos || build_dash == 0 ? std::string::npos
                                                                                  : stem.rfind('-', build_dash - 1);
    if (version_dash == std::string::npos || version_dash == 0) continue;  // history, or no package record
    std::string name = stem.substr(0, version_dash);
    std::string version = stem.substr(version_dash + 1, build_dash - version_dash - 1);
    std::string build = stem.substr(build_dash + 1);
    out.push_back({name, version, conda_purl(name, version, build, "", ""), Origin::kBasePython, "", "", "", "", {}});
  }
  return out;
}

}  // namespace trainpack::sbom
