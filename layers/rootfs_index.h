#pragma once
// What the image's root filesystem holds, without unpacking it: the merged listing of its layers (paths, types,
// modes, owners, link targets; no contents), whiteouts applied. Steps use it to decide what a Dockerfile
// instruction would change (does /home exist? what are /usr's attributes? is /var/sitecustomize there?).
// Listing a base layer means reading it once; listings are cached per layer digest.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layers/digest.h"
#include "layers/file_entry.h"

namespace trainpack::layers {

struct PathInfo {
  enum class Type : char { kRegular = 'f', kDirectory = 'd', kSymlink = 'l', kHardlink = 'h', kOther = 'o' };
  Type type = Type::kRegular;
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string link_target;  // symlink target, or hardlink target path
};

// One layer's entries as the tar lists them (whiteout files included, as plain entries).
struct LayerListing {
  std::vector<std::pair<std::string, PathInfo>> entries;  // path without leading "./" or "/" or trailing "/"
};

// Reads a layer blob (plain tar or any compression libarchive knows) and lists it.
LayerListing list_layer_blob(const std::filesystem::path& blob, std::string_view what);

// list_layer_blob with a per-digest cache under `cache_dir` (written atomically). `blob` is asked for the layer's
// file only on a cache miss, so a cached listing never fetches or re-hashes the layer.
LayerListing list_layer_cached(const std::function<std::filesystem::path()>& blob, const Digest& digest,
                               const std::filesystem::path& cache_dir, std::string_view what);

class RootfsIndex {
 public:
  // Applies a layer on top: its whiteouts and opaque markers hide lower paths, then its entries land.
  void apply(const LayerListing& layer);
  void apply(const FileEntries& layer);

  const PathInfo* find(std::string_view path) const;  // exact path, no symlink resolution
  // Resolves symlinks in every component (absolute targets re-rooted at the image root), like the kernel
  // would inside the container. Missing components are kept as they are. Throws Error on symlink loops.
  std::string resolve(std::string_view path) const;
  // Names directly under `dir` (exact path, "" = the root), sorted; includes directories only implied by deeper
  // paths. Skips each subdirectory's subtree with one lower_bound, so the cost follows the number of children.
  std::vector<std::string> children(std::string_view dir) const;
  std::size_t size() const { return entries_.size(); }

 private:
  void erase_tree(const std::string& path);
  void put(const std::string& path, const PathInfo& info);
  std::map<std::string, PathInfo, std::less<>> entries_;
};

}  // namespace trainpack::layers
