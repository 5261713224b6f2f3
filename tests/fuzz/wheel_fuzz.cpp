// Wheels (python/wheel_installer install_wheel, and the METADATA read of python/index_candidates): a zip as an
// index or --extra-packages hands it over. What the installer accepts lands only under the scheme's directories:
// every path is relative, below usr/local/, with no "..", "." or empty component.
#include "python/index_candidates.h"
#include "python/wheel_file.h"
#include "python/wheel_installer.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::fuzz::require;
using namespace trainpack::python;

bool inside_scheme(const std::string& path) {
  if (!path.starts_with("usr/local/")) return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = std::min(path.find('/', start), path.size());
    std::string_view c = std::string_view(path).substr(start, end - start);
    if (c.empty() || c == "." || c == "..") return false;
    start = end + 1;
  }
  return true;
}

WheelInstallRequest request_for(const std::filesystem::path& wheel) {
  WheelInstallRequest req;
  req.wheel = wheel;
  req.name = "";  // every .dist-info directory starts with it: the input names its own project
  req.version = "1.0";
  req.scheme = {"/usr/local/lib/python3.11/dist-packages", "/usr/local/lib/python3.11/dist-packages",
                "/usr/local/include/python3.11/demo", "/usr/local/bin", "/usr/local"};
  req.sys_executable = "/usr/bin/python3";
  req.python_version = "3.11";
  req.requested = true;
  return req;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static trainpack::fuzz::MemoryFile file;
  std::filesystem::path wheel = file.write(trainpack::fuzz::as_text(data, size));
  try {
    InstalledWheel installed = install_wheel(request_for(wheel));
    for (const auto& entry : installed.files) require(inside_scheme(entry.path));
    installed.add_unhashed_record_paths({"demo/__pycache__/x.cpython-311.pyc"});
  } catch (const trainpack::Error&) {
  }
  try {
    trainpack::python::candidate_metadata(trainpack::python::read_wheel_metadata(wheel, "fuzz.whl"));
  } catch (const trainpack::Error&) {
  }
  return 0;
}
