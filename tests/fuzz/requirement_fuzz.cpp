// PEP 508 requirements (python/requirement), as requirement lines and Requires-Dist carry them. A requirement that
// parses prints (str()) text that parses to the same requirement, which prints the same (when its marker's
// literals can print back: marker_literals.h).
#include "python/requirement.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/marker_literals.h"

using trainpack::fuzz::require;
using trainpack::python::Requirement;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Requirement req;
  try {
    req = Requirement::parse(trainpack::fuzz::as_text(data, size));
  } catch (const trainpack::Error&) {
    return 0;
  }
  if (req.marker && !trainpack::fuzz::prints_back(req.marker->list())) return 0;
  Requirement again = Requirement::parse(req.str());
  require(again.str() == req.str());
  require(again.name == req.name && again.extras == req.extras && again.specifier == req.specifier &&
          again.url == req.url && again.marker.has_value() == req.marker.has_value());
  return 0;
}
