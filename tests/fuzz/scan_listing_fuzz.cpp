// A base scan's listing.json read back from the cache (layers::ScannedImage::parse_scan_listing): anything but a
// sealed, well-formed listing is nullopt (the layer is scanned again), never a crash. The input is tried as the
// file itself and sealed (store/sealed_text.h), so the listing parser behind the seal is reached too; an accepted
// listing seals and parses back to the same rows.
#include "layers/scanned_image.h"
#include "store/sealed_text.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;
using namespace trainpack::layers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  ScannedImage::parse_scan_listing(text);
  std::optional<LayerListing> listing = ScannedImage::parse_scan_listing(trainpack::store::seal(text));
  if (!listing) return 0;
  std::string again = trainpack::store::seal(serialize_listing(*listing));
  std::optional<LayerListing> reread = ScannedImage::parse_scan_listing(again);
  require(reread && reread->entries.size() == listing->entries.size());
  return 0;
}
