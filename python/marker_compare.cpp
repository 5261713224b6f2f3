#include "python/marker_compare.h"

#include <string>

#include "python/specifier.h"
#include "support/error.h"

namespace trainpack::python {

std::optional<bool> pep440_version_compare(std::string_view op, std::string_view lhs, std::string_view rhs) {
  std::optional<Specifier> spec;
  try {
    spec.emplace(std::string(op) + std::string(rhs));
  } catch (const Error&) {
    return std::nullopt;
  }
  if (op == "===") return spec->matches(lhs);
  std::optional<Version> version = Version::try_parse(lhs);
  if (!version) return std::nullopt;
  return spec->contains(*version, true);
}

}  // namespace trainpack::python
