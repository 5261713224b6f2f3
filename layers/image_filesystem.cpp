#include "layers/image_filesystem.h"

namespace trainpack::layers {

std::optional<std::string> ImageFilesystem::read_prefix(std::string_view path, std::size_t max_bytes) const {
  constexpr std::size_t kWholeFileCap = std::size_t{1} << 30;
  std::optional<std::string> bytes = read(path, kWholeFileCap);
  if (bytes && bytes->size() > max_bytes) bytes->resize(max_bytes);
  return bytes;
}

bool ImageFilesystem::is_file(std::string_view path) const {
  const PathInfo* info = find(resolve(path));
  return info && (info->type == PathInfo::Type::kRegular || info->type == PathInfo::Type::kHardlink);
}

bool ImageFilesystem::is_dir(std::string_view path) const {
  std::string p = resolve(path);
  if (p.empty()) return true;  // the root
  const PathInfo* info = find(p);
  return info && info->type == PathInfo::Type::kDirectory;
}

}  // namespace trainpack::layers
