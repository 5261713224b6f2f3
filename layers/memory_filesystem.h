#pragma once
// An ImageFilesystem held in memory: a RootfsIndex for the tree plus the bytes of each regular file. For tests and
// small synthetic roots; parents are created as 0755 root directories when missing.
#include <cstdint>
#include <map>
#include <string>

#include "layers/image_filesystem.h"
#include "layers/rootfs_index.h"

namespace trainpack::layers {

class MemoryFilesystem : public ImageFilesystem {
 public:
  void add_file(std::string_view path, std::string bytes, std::uint32_t mode = 0644, std::uint32_t uid = 0,
                std::uint32_t gid = 0);
  void add_dir(std::string_view path, std::uint32_t mode = 0755, std::uint32_t uid = 0, std::uint32_t gid = 0);
  void add_symlink(std::string_view path, std::string target);
  // Any entry as it is, e.g. a FIFO or a device (PathInfo::Type::kOther).
  void add(std::string_view path, PathInfo info);
  // Removes path and everything under it, as a whiteout in an upper layer would.
  void remove(std::string_view path);

  const PathInfo* find(std::string_view path) const override;
  std::string resolve(std::string_view path) const override;
  std::vector<std::string> children(std::string_view dir) const override;
  std::optional<std::string> read(std::string_view path, std::size_t max_bytes) const override;

 private:
  RootfsIndex index_;
  std::map<std::string, std::string, std::less<>> contents_;
};

}  // namespace trainpack::layers
