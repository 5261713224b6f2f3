#pragma once
// Source trees and sdists built into wheels, as the image's pip would build them, so they can be installed like any
// wheel. The build runs `python -m pip wheel` with a CPython of the image's X.Y (python/interpreter.h: a host
// python3.X, or the image's own run from the cache with its own pip and setuptools): pip applies the same rule as in
// the image (PEP 517 with an isolated environment fetched from the configured index when the project has a
// pyproject.toml, else setup.py with the setuptools installed beside that Python), with the host's own pip
// configuration ignored. Only pure-Python results are accepted: a compiled wheel built here would be linked against
// the host, not the image.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "python/interpreter.h"

namespace trainpack::python {

struct WheelBuildRequest {
  Interpreter python;
  std::filesystem::path source;  // a project directory, or an sdist archive (.tar.gz, .zip)
  std::string display;           // "the project in setup.py", "tp-pure-sdist 1.0": for messages
  std::vector<std::string> index_urls;  // first: --index-url; the rest: --extra-index-url; empty: --no-index
  std::vector<std::string> find_links;
  std::filesystem::path out_dir;  // the wheel is written here (created)
  std::chrono::seconds timeout{600};
};

// Builds the wheel; returns its path. Throws Error naming the package with the build's last output lines, or, for
// a wheel that is not pure Python, naming the package that needs a prebuilt wheel.
std::filesystem::path build_wheel(const WheelBuildRequest& request);

// A wheel file name whose every tag is platform "any" with abi "none".
bool is_pure_wheel_filename(std::string_view filename);

}  // namespace trainpack::python
