// A pip-step cache entry read back from the cache (imagebuild::parse_pip_step_entry): anything but an entry as
// PipStepCache::remember writes it is nullopt (the step runs again), never a crash or an exception. The input is
// tried as the file itself and with this trainpack's format line and sum in front, so the header and listing
// parsers behind the sum are reached too.
#include "imagebuild/pip_step_cache.h"
#include "support/hash.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view body = trainpack::fuzz::as_text(data, size);
  trainpack::imagebuild::parse_pip_step_entry(body);
  std::string file = "trainpack-pip-step-v5 sha256:" + trainpack::sha256_hex(body) + "\n" + std::string(body);
  std::optional<trainpack::imagebuild::PipStepResult> step = trainpack::imagebuild::parse_pip_step_entry(file);
  if (!step) return 0;
  for (const auto& layer : step->layers) require(layer.deferred == nullptr);
  return 0;
}
