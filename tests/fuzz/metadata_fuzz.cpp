// Core metadata and WHEEL files (python/metadata), as wheels and index pages (PEP 658) carry them: the input is
// read as METADATA/PKG-INFO and as WHEEL. Every Requires-Dist accepted prints text that parses to itself (see
// marker_literals.h), and a version accepted prints its normal form.
#include "python/metadata.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/marker_literals.h"

using trainpack::fuzz::require;
using namespace trainpack::python;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  EmailMessage message = EmailMessage::parse(text);
  for (const auto& [name, value] : message.headers) require(message.get(name) != nullptr);
  try {
    CoreMetadata md = CoreMetadata::parse(text);
    for (const Requirement& r : md.requires_dist)
      if (!r.marker || trainpack::fuzz::prints_back(r.marker->list()))
        require(Requirement::parse(r.str()).str() == r.str());
    if (md.version) require(Version::parse(md.version->str()) == *md.version);
    md.is_dynamic("Requires-Dist");
  } catch (const trainpack::Error&) {
  }
  try {
    WheelInfo wheel = WheelInfo::parse(text);
    require(!wheel.wheel_version.empty() && wheel.wheel_version[0] <= 1);
  } catch (const trainpack::Error&) {
  }
  return 0;
}
