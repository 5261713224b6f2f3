#pragma once
// Read-only view of an image's merged root filesystem (all layers applied, whiteouts honoured), for readers that
// inspect a base image without running it (python/base_facts.h). Paths are relative to the root, without a leading
// "/" (one is tolerated). Implementations: over layer blobs (the builder's), in memory (MemoryFilesystem, tests).
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
  // Exact path, no symlink resolution.
  virtual const PathInfo* find(std::string_view path) const = 0;
  // Every symlink resolved inside the root (absolute targets re-rooted; ".." stops at the root, so it never escapes).
  virtual std::string resolve(std::string_view path) const = 0;
  // Names directly under dir (resolved first), sorted; empty when dir is missing or not a directory.
  virtual std::vector<std::string> children(std::string_view dir) const = 0;
  // Bytes of a regular file after resolve() (hardlinks followed); nullopt if missing / not regular; throws Error
  // if the file is larger than max_bytes.
  virtual std::optional<std::string> read(std::string_view path, std::size_t max_bytes) const = 0;
  // At most the first max_bytes of a regular file, never an error for size: for headers of big files (an ELF's
  // program headers). The default reads the whole file under a generous cap; blob-backed views should stop early.
  virtual std::optional<std::string> read_prefix(std::string_view path, std::size_t max_bytes) const;

  // A regular file (or hardlink) after resolve().
  bool is_file(std::string_view path) const;
  bool is_dir(std::string_view path) const;
};

}  // namespace trainpack::layers
