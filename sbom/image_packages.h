#pragma once
// The packages an image's own records name, as SBOM packages: what its OS package databases hold
// (distro/package_db.h), with Package URLs whose vendor and distro come from os-release; and the Python
// distributions along a sys.path (python/installed_dists.h), with their licenses and their Requires-Dist edges to
// one another.
#include <string>
#include <string_view>
#include <vector>

#include "layers/image_filesystem.h"
#include "python/installed_dists.h"
#include "python/markers.h"
#include "sbom/document.h"

namespace trainpack::sbom {

std::vector<Package> os_packages(const layers::ImageFilesystem& fs);

// `origin`: kBasePython for a base's, kInstalled for what a build added (the caller knows). Requires-Dist edges: the
// unconditional ones, and, given the image's marker `environment`, those whose markers it satisfies with no extra
// requested (an installed distribution does not record which extras were asked for).
std::vector<Package> python_packages(const layers::ImageFilesystem& fs,
                                     const std::vector<python::SysPathEntry>& sys_path, Origin origin,
                                     const python::MarkerEnvironment* environment = nullptr);

// What conda installed into `prefix` (sys.prefix of a conda Python): one record per package in
// PREFIX/conda-meta/, as pkg:conda purls with their build, named by the record's file name (NAME-VERSION-BUILD.json:
// a framework's record runs to megabytes, which the base scan does not keep). Python distributions among them appear
// as pkg:pypi packages too (python_packages), as syft lists them.
std::vector<Package> conda_packages(const layers::ImageFilesystem& fs, std::string_view prefix);

// A distribution's license from its core metadata, as Package's two fields take it: PEP 639's
// License-Expression; else License when it is an expression itself ("MIT"), else License as text; else the SPDX id
// of a "License :: OSI Approved :: …" classifier (the common ones), several joined with AND.
void set_license(Package& package, std::string_view metadata);

}  // namespace trainpack::sbom
