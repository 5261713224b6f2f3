#pragma once
// An SBOM as a CycloneDX 1.6 JSON BOM (cyclonedx.org/docs/1.6/json; schema/bom-1.6.schema.json of
// CycloneDX/specification): the image is metadata.component (a container), its base a container component, every
// package a library component with its purl, hashes and licenses, every file a file component; `dependencies`
// holds the image's and each package's. The same Document gives the same bytes.
#include <string>

#include "sbom/document.h"

namespace trainpack::sbom {

std::string cyclonedx_json(const Document& document);

}  // namespace trainpack::sbom
