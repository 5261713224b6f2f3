// The blob-locations index read back from the cache (registry::parse_blob_locations): any text gives at most
// kKeptPerBlob locations, each a registry and a repository without spaces, never a crash.
#include "registry/blob_locations.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;
using trainpack::registry::BlobLocation;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<BlobLocation> locations = trainpack::registry::parse_blob_locations(trainpack::fuzz::as_text(data, size));
  require(locations.size() <= trainpack::registry::BlobLocations::kKeptPerBlob);
  for (const BlobLocation& l : locations)
    require(!l.registry.empty() && !l.repository.empty() && l.registry.find(' ') == std::string::npos &&
            l.repository.find(' ') == std::string::npos);
  return 0;
}
