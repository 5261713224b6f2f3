#pragma once
// One SBOM model with every kind of entry, for the writers' tests and their schema checks.
#include <string>

#include "sbom/document.h"

namespace trainpack::sbom {

inline Document example_document() {
  Document d;
  d.image_name = "127.0.0.1:5000/trainers/mnist";
  d.image_digest = "sha256:" + std::string(64, 'a');
  d.base_name = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest";
  d.base_digest = "sha256:" + std::string(64, 'c');
  d.created = "2026-12-05T00:00:00Z";
  d.tool_version = "0.1.0 (commit abc1234)";
  Package numpy{"numpy", "1.24.2", pypi_purl("numpy", "1.24.2"), Origin::kInstalled, "BSD-3-Clause", "",
                "https://files.example.com/numpy-1.24.2-cp311-cp311-manylinux_2_17_x86_64.whl", std::string(64, 'b'),
                {}};
  Package six{"six", "1.16.0", pypi_purl("six", "1.16.0"), Origin::kBasePython, "", "MIT License", "", "", {}};
  Package libc{"libc6", "2.36-9+deb12u4", deb_purl("debian", "libc6", "2.36-9+deb12u4", "amd64", "debian-12"),
               Origin::kBaseOs, "", "", "", "", {}};
  Package local{"trainer-utils", "0.1", pypi_purl("trainer-utils", "0.1"), Origin::kBuiltFromSource, "Apache-2.0", "",
                "", std::string(64, 'd'), {numpy.purl, six.purl, "pkg:pypi/absent@1"}};
  d.packages = {numpy, six, libc, local};
  d.files = {{"usr/app/trainer/task.py", std::string(40, 'e'), std::string(64, 'f')}};
  return d;
}

}  // namespace trainpack::sbom
