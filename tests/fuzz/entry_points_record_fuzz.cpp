// A wheel's entry_points.txt (python/metadata) and RECORD (python/wheel_installer), as the installer reads them:
// the input is read as both. A valid entry point has a module; a RECORD row of three fields that the installer
// writes back (format_record) reads back as the same row.
#include "python/metadata.h"
#include "python/records.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;
using namespace trainpack::python;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  try {
    for (const EntryPoint& ep : parse_entry_points(text)) {
      if (ep.valid) require(!ep.module.empty());
      else require(ep.module.empty() && !ep.attr && ep.extras.empty());
    }
  } catch (const trainpack::Error&) {
  }
  for (std::string_view line : trainpack::fuzz::split_lines(text)) {
    std::size_t fields = 0;
    RecordRow row = parse_record_line(line, fields);
    std::string written = format_record({row});
    require(written.ends_with("\r\n"));
    written.resize(written.size() - 2);
    std::size_t fields_again = 0;
    require(parse_record_line(written, fields_again) == row);
  }
  return 0;
}
