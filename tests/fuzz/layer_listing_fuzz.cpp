// The layer-listing cache file (layers/rootfs_index parse_listing), read back from the cache directory: anything
// but a well-formed listing is nullopt (the layer is then listed again), and a listing it accepts serialises to
// text that parses to the same rows.
#include "layers/rootfs_index.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;
using namespace trainpack::layers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<LayerListing> listing = parse_listing(trainpack::fuzz::as_text(data, size));
  if (!listing) return 0;
  std::string text = serialize_listing(*listing);
  std::optional<LayerListing> again = parse_listing(text);
  require(again && again->entries.size() == listing->entries.size());
  require(serialize_listing(*again) == text);
  RootfsIndex index;
  index.apply(*listing);
  return 0;
}
