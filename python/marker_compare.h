#pragma once
// The PEP 440 VersionCompare that python/markers.h asks callers for: `Specifier(op + rhs).contains(lhs,
// prereleases=True)` as packaging's markers.py _eval_op does, nullopt when either side is not PEP 440.
#include <optional>
#include <string_view>

#include "python/markers.h"

namespace trainpack::python {

std::optional<bool> pep440_version_compare(std::string_view op, std::string_view lhs, std::string_view rhs);

}  // namespace trainpack::python
