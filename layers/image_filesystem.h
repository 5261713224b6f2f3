#pragma once
// Read-only view of an image's merged root filesystem (all layers applied, whiteouts honoured). Paths are
// relative to the root, without leading "/". Implementations: over layer blobs (the builder's), in memory (tests).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layers/rootfs_index.h"

namespace trainpack::layers {

class ImageFilesystem {
 public:
  virtual ~ImageFilesystem() = default;
  virtual const PathInfo* find(std::string_view path) const = 0;          // exact path, no symlink resolution (layers/rootfs_index.h PathInfo)
  virtual std::string resolve(std::string_view path) const = 0;           // every symlink resolved inside the root (absolute targets re-rooted; never escapes)
  virtual std::vector<std::string> children(std::string_view dir) const = 0;  // names directly under dir (already resolved), sorted
  virtual std::optional<std::string> read(std::string_view path, std::size_t max_bytes) const = 0;  // bytes of a regular file after resolve(); nullopt if missing / not regular; Error if larger than max_bytes
};

}  // namespace trainpack::layers
