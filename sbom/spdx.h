#pragma once
// An SBOM as an SPDX 2.3 JSON document (spdx.github.io/spdx-spec/v2.3; schemas/spdx-schema.json of the spec's
// support/2.3 branch): the image is the package the document DESCRIBES, a DESCENDANT_OF its base; it CONTAINS every
// package and file; packages DEPENDS_ON one another. The same Document gives the same bytes.
#include <string>

#include "sbom/document.h"

namespace trainpack::sbom {

std::string spdx_json(const Document& document);

}  // namespace trainpack::sbom
