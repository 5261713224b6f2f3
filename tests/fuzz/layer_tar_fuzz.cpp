// Base layers as the Python steps read them (layers/rootfs_index list_layer_blob, behind ScannedImage): a tar in
// any compression libarchive knows. Every entry's data is read as the scan reads it; the listing is applied to a
// RootfsIndex, and symlink resolution of every listed path stays inside the root (no "..", not absolute) and is
// idempotent. The listing also survives the cache's serialisation.
#include "layers/rootfs_index.h"
#include "support/error.h"
#include "support/paths.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::fuzz::require;
using namespace trainpack::layers;

void read_all(const std::string&, const PathInfo&, std::uint64_t,
              const std::function<std::size_t(char*, std::size_t)>& read) {
  char buffer[4096];
  while (read(buffer, sizeof buffer) > 0) {
  }
}

void check_resolution(const RootfsIndex& index, const std::string& path) {
  std::string resolved;
  try {
    resolved = index.resolve(path);
  } catch (const trainpack::Error&) {
    return;  // a symlink loop
  }
  require(!trainpack::has_parent_reference(resolved) && !resolved.starts_with('/'));
  std::vector<std::string> passed;
  require(index.resolve(resolved, &passed) == resolved && passed.empty());
  index.children(resolved);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static trainpack::fuzz::MemoryFile file;
  std::filesystem::path blob = file.write(trainpack::fuzz::as_text(data, size));
  LayerListing listing;
  try {
    listing = list_layer_blob(blob, std::nullopt, "fuzz layer", read_all);
  } catch (const trainpack::Error&) {
    return 0;
  }
  std::optional<LayerListing> cached = parse_listing(serialize_listing(listing));
  require(cached && cached->entries.size() == listing.entries.size());
  RootfsIndex index;
  index.apply(listing);
  index.apply(listing);
  for (const auto& [path, info] : listing.entries) check_resolution(index, path);
  return 0;
}
