#pragma once
// Installs one wheel the way pip's `_install_wheel` does (pip/_internal/operations/install/wheel.py; PEP 427,
// "Recording installed projects"), but into layer entries instead of a filesystem, in the shape of pypa/installer:
// the wheel file (python/wheel_file.h), its RECORD (python/records.h), entry point launchers (python/scripts.h) and
// where each file goes (python/destinations.h). Bytecode (.pyc) is a later step; RECORD leaves room for its rows.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layers/file_entry.h"
#include "python/records.h"
#include "python/scheme.h"
#include "python/version.h"

namespace trainpack::python {

struct WheelInstallRequest {
  std::filesystem::path wheel;  // the .whl on the host
  std::string name;             // project name from the filename ("Demo_Pkg"); must prefix the .dist-info dir
  std::string version;          // version from the filename
  InstallScheme scheme;         // absolute in-image paths
  std::string sys_executable;   // the image's interpreter for shebangs: "/usr/bin/python3", "/opt/venv/bin/python"
  Version pip_version = Version::parse("23.0.1");  // the image's pip: launcher template
  std::string python_version = "3";  // "X.Y" of the image's interpreter: names pip's own pipX / pipX.Y launchers
  bool requested = false;            // a user-supplied requirement: write REQUESTED
  std::optional<nlohmann::json> direct_url;  // PEP 610 object for URL/path requirements, written as pip formats it
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

struct InstalledWheel {
  layers::FileEntries files;                 // regular files only, paths relative to "/", one per path
  std::vector<std::string> installed_paths;  // the same paths, sorted (what an uninstall removes)
  std::set<std::string> directories;         // every ancestor directory of those files, relative to "/"
  std::string dist_info_dir;                 // as spelled in the wheel: "Demo_Pkg-1.0.dist-info"
  std::string lib_dir;                       // purelib or platlib (Root-Is-Purelib), absolute
  std::vector<RecordRow> record_rows;        // what RECORD holds, sorted
  std::vector<std::string> warnings;         // what pip would log as warnings (newer Wheel-Version, odd RECORD rows)

  // The bytecode hook: adds rows with empty hash and size for files installed after the fact (compiled .pyc,
  // given relative to lib_dir like "pkg/__pycache__/m.cpython-311.pyc") and re-renders the RECORD entry.
  void add_unhashed_record_paths(const std::vector<std::string>& lib_relative_paths);
};

// Validates the wheel (PEP 427 layout, path safety, zip-bomb ratio) and returns what pip would install.
// Throws Error for wheels pip rejects and for unsafe ones.
InstalledWheel install_wheel(const WheelInstallRequest& request);

// json.dumps(value, sort_keys=True) with Python's default separators and ensure_ascii (direct_url.json, PEP 610).
std::string python_json_dumps(const nlohmann::json& value);

}  // namespace trainpack::python
