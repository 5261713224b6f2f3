// A layer-cache record read back from the cache (layers::parse_layer_record): anything but a sealed record naming a
// diff_id, a digest and a size is nullopt (the layer is written again), never a crash or an exception. The input is
// tried as the file itself and sealed (store/sealed_text.h), so the JSON behind the seal is reached too.
#include "layers/layer_cache.h"
#include "store/sealed_text.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  trainpack::layers::parse_layer_record(text);
  std::optional<trainpack::layers::LayerBlob> blob = trainpack::layers::parse_layer_record(trainpack::store::seal(text));
  if (!blob) return 0;
  require(!blob->digest.hex().empty() && !blob->diff_id.hex().empty());
  return 0;
}
