#include "layers/stacked_filesystem.h"

#include "layers/layer_writer.h"

namespace trainpack::layers {

StackedFilesystem::StackedFilesystem(const ImageFilesystem& base, RootfsIndex base_index,
                                     const std::vector<const FileEntries*>& layers)
    : base_(base), index_(std::move(base_index)) {
  for (const FileEntries* layer : layers) {
    index_.apply(*layer);
    for (const FileEntry& e : *layer) own_[e.path] = &e;
  }
}

const FileEntry* StackedFilesystem::own_entry(std::string_view path) const {
  auto it = own_.find(path);
  return it == own_.end() ? nullptr : it->second;
}

std::optional<std::string> StackedFilesystem::read(std::string_view path, std::size_t max_bytes) const {
  std::string resolved = index_.resolve(path);
  const PathInfo* info = index_.find(resolved);
  if (!info) return std::nullopt;
  if (info->type != PathInfo::Type::kRegular) return base_.read(resolved, max_bytes);  // hardlinks: the base's
  // A file one of this build's layers wrote last (a later whiteout would have removed it from the index).
  if (const FileEntry* own = own_entry(resolved); own && own->type == FileEntry::Type::kRegular)
    return EntryContentReader().read(*own, max_bytes);
  return base_.read(resolved, max_bytes);
}

}  // namespace trainpack::layers
