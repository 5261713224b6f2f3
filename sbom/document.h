#pragma once
// What an image holds, as a software bill of materials describes it: the image, the image it was built from, the
// packages in it (the base's OS and Python packages, the distributions the pip steps installed, local archives
// and sdists built) with their dependencies, and the trainer's files. One model, written as SPDX 2.3 JSON
// (sbom/spdx.h) or CycloneDX 1.6 JSON (sbom/cyclonedx.h); package identities are Package URLs
// (github.com/package-url/purl-spec: PURL-SPECIFICATION.rst and PURL-TYPES.rst).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::sbom {

// Where a package in the image comes from.
enum class Origin {
  kBaseOs,          // the base's OS package database (dpkg, apk)
  kBasePython,      // a Python distribution the base already had (dist-info, egg-info, conda-meta)
  kInstalled,       // installed by a pip step from an index or --find-links
  kLocalArchive,    // installed from a local file (--extra-packages, a path in requirements.txt)
  kBuiltFromSource  // built from an sdist or a project (setup.py, PEP 517), then installed
};
std::string_view origin_name(Origin origin);  // "base-os", "base-python", "installed", "local-archive", "built"

struct Package {
  std::string name;
  std::string version;
  std::string purl;                // pkg:pypi/numpy@1.24.2, pkg:deb/debian/curl@7.88.1-10?arch=amd64&distro=debian-12
  Origin origin = Origin::kInstalled;
  std::string license_expression;  // an SPDX license expression when the metadata gives one, else ""
  std::string license_text;        // the license as the metadata words it otherwise ("BSD"), else ""
  std::string download_url;        // where the artifact came from, without credentials; "" unknown
  std::string sha256;              // of that artifact (wheel, sdist), hex; "" unknown
  std::vector<std::string> depends_on;  // purls of the packages in this document it requires
};

struct File {
  std::string path;  // in the image, without a leading "/": "usr/app/trainer/task.py"
  std::string sha1, sha256;  // hex
};

struct Document {
  std::string image_name;    // the repository or reference the image was written to ("" for none)
  std::string image_digest;  // "sha256:…", the manifest's
  std::string base_name;     // --executor-image-uri as given
  std::string base_digest;   // "sha256:…"
  std::string created;       // RFC 3339 UTC, the image's creation time (reproducible builds give the same)
  std::string tool_version;  // "0.1.0 (commit abc123)"
  std::vector<Package> packages;
  std::vector<File> files;
};

// Package URLs for the kinds of package an image holds. Names and versions are percent-encoded as the purl spec
// says (a Debian epoch's ":" too); qualifiers are sorted by key, empty ones left out.
std::string pypi_purl(std::string_view name, std::string_view version);  // name lower-cased, "_" as "-"
std::string deb_purl(std::string_view vendor, std::string_view name, std::string_view version,
                     std::string_view arch, std::string_view distro);
std::string apk_purl(std::string_view vendor, std::string_view name, std::string_view version, std::string_view arch);
std::string conda_purl(std::string_view name, std::string_view version, std::string_view build,
                       std::string_view channel, std::string_view subdir);
// pkg:oci/NAME@sha256%3A…?repository_url=REGISTRY/REPOSITORY (NAME: the repository's last component) for an image
// named REGISTRY/REPOSITORY, with or without a :TAG or @DIGEST.
std::string oci_purl(std::string_view reference, std::string_view digest);

// The hex of a "sha256:…" digest (the documents' checksums and identifiers).
std::string digest_hex(std::string_view digest);

// Whether `text` is an SPDX license expression (SPDX 2.3 Annex D): license ids and LicenseRef-…, with AND, OR,
// WITH, "+" and parentheses. Ids are not checked against the license list.
bool is_license_expression(std::string_view text);

}  // namespace trainpack::sbom
