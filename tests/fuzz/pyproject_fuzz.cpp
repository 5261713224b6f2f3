// pyproject.toml's [build-system] (python/pyproject), as an sdist or the project brings it. Whatever it accepts
// holds PEP 508 build requirements only.
#include "python/pyproject.h"
#include "python/requirement.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;
using namespace trainpack::python;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  BuildSystem build;
  try {
    build = read_build_system(trainpack::fuzz::as_text(data, size), "fuzz project");
  } catch (const trainpack::Error&) {
    return 0;
  }
  for (const std::string& r : build.build_requires) Requirement::parse(r);
  require(build.has_table || build.build_requires.empty());
  return 0;
}
