#pragma once
// PEP 503 / packaging.utils project names.
#include <string>
#include <string_view>

namespace trainpack::python {

// packaging.utils.canonicalize_name: lower-case, every run of '-', '_', '.' becomes one '-'.
std::string canonicalize_name(std::string_view name);

// ^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$, case-insensitive, ASCII only.
bool is_valid_name(std::string_view name);

}  // namespace trainpack::python
