#pragma once
// Bytecode as `pip install` leaves it (pip compiles by default: compileall.compile_file(path, force=True,
// quiet=True) for every installed .py; failures ignored). Marshal data can only come from a CPython of the same
// X.Y as the image's, so trainpack runs the *host's* python3.X (never a program from the image) over copies of the
// sources. Each .pyc is timestamp-invalidated (what pip writes when SOURCE_DATE_EPOCH is unset, as in a Docker
// RUN) with the header mtime equal to the mtime the layer gives its .py, so the runtime finds it valid; its
// co_filename is the path in the image, as pip's compileall records it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::python {

struct HostPython {
  std::string path;     // "/usr/bin/python3.11"
  std::string version;  // "3.11.2"
};

// A host CPython whose X.Y is `major_minor` ("3.11"): python3.X on PATH, /usr/bin or /usr/local/bin, checked by
// asking it; the one whose full version is `preferred_version` (the image's) when there is one, else the first.
// nullopt when none.
std::optional<HostPython> find_host_python(std::string_view major_minor, std::string_view preferred_version = {});

struct BytecodeSource {
  std::string image_path;  // the .py in the image, relative to "/": "usr/lib/python3/dist-packages/pkg/m.py"
  // Writes the file's bytes to a host path (called once, before compiling).
  std::function<void(const std::filesystem::path& destination)> write_to;
};

struct Bytecode {
  std::string source_image_path;  // as given
  std::string image_path;         // "usr/lib/python3/dist-packages/pkg/__pycache__/m.cpython-311.pyc"
  std::filesystem::path file;     // the .pyc bytes, inside work_dir
};

// Compiles `sources` in one run of `python`. `mtime` is the sources' mtime in the layer (seconds);
// `optimization` is 0 for plain .pyc, 1 or 2 for the image's PYTHONOPTIMIZE level (.opt-N.pyc). Sources that do
// not compile are left out, as pip leaves them. Throws Error when the interpreter itself fails.
std::vector<Bytecode> compile_bytecode(const HostPython& python, const std::vector<BytecodeSource>& sources,
                                       std::int64_t mtime, int optimization, const std::filesystem::path& work_dir);

}  // namespace trainpack::python
