#pragma once
// pyproject.toml's [build-system] table as pip reads it (pip/_internal/pyproject.py load_pyproject_toml; PEP 517,
// PEP 518): whether a source tree must be built through PEP 517, what its build needs and which backend builds it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::python {

struct BuildSystem {
  bool has_table = false;                   // a [build-system] table exists
  std::vector<std::string> build_requires;  // build-system.requires (PEP 508 strings)
  std::optional<std::string> build_backend;  // build-system.build-backend, nullopt when absent
  std::vector<std::string> backend_path;    // build-system.backend-path (in-tree backends)
};

// Parses pyproject.toml text. `display` names the project in errors. Throws Error as pip raises
// InstallationError: invalid TOML, a [build-system] without `requires`, `requires` not a list of strings or not
// PEP 508, a `build-backend` that is not a string.
BuildSystem read_build_system(std::string_view pyproject_toml, const std::string& display);

// The backend pip uses when pyproject.toml names none: setuptools' legacy one, running setup.py.
inline constexpr std::string_view kLegacySetuptoolsBackend = "setuptools.build_meta:__legacy__";

}  // namespace trainpack::python
