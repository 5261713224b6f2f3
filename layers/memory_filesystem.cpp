#include "layers/memory_filesystem.h"

#include "support/error.h"
#include "support/human.h"
#include "support/paths.h"

namespace trainpack::layers {

namespace {
std::string clean(std::string_view path) {
  std::string out;
  for (std::string_view c : path_components(path)) out = join_path(out, c);
  return out;
}
}  // namespace

void MemoryFilesystem::add(std::string_view path, PathInfo info) {
  std::string p = clean(path);
  LayerListing layer;
  std::string parent;
  for (std::string_view c : path_components(path_dir(p))) {
    parent = join_path(parent, c);
    if (!index_.find(parent)) layer.entries.emplace_back(parent, PathInfo{PathInfo::Type::kDirectory, 0755, 0, 0, {}});
  }
  layer.entries.emplace_back(p, std::move(info));
  index_.apply(layer);
}

void MemoryFilesystem::add_file(std::string_view path, std::string bytes, std::uint32_t mode, std::uint32_t uid,
                                std::uint32_t gid) {
  add(path, PathInfo{PathInfo::Type::kRegular, mode, uid, gid, {}});
  contents_[clean(path)] = std::move(bytes);
}

void MemoryFilesystem::add_dir(std::string_view path, std::uint32_t mode, std::uint32_t uid, std::uint32_t gid) {
  add(path, PathInfo{PathInfo::Type::kDirectory, mode, uid, gid, {}});
}

void MemoryFilesystem::add_symlink(std::string_view path, std::string target) {
  add(path, PathInfo{PathInfo::Type::kSymlink, 0777, 0, 0, std::move(target)});
}

void MemoryFilesystem::remove(std::string_view path) {
  std::string p = clean(path);
  LayerListing layer;
  layer.entries.emplace_back(join_path(path_dir(p), ".wh." + std::string(path_base(p))), PathInfo{});
  index_.apply(layer);
}

const PathInfo* MemoryFilesystem::find(std::string_view path) const { return index_.find(clean(path)); }

std::string MemoryFilesystem::resolve(std::string_view path) const { return index_.resolve(path); }

std::vector<std::string> MemoryFilesystem::children(std::string_view dir) const {
  return index_.children(index_.resolve(dir));
}

std::optional<std::string> MemoryFilesystem::read(std::string_view path, std::size_t max_bytes) const {
  std::string p = index_.resolve(path);
  const PathInfo* info = index_.find(p);
  if (info && info->type == PathInfo::Type::kHardlink) {
    p = info->link_target;
    info = index_.find(p);
  }
  if (!info || info->type != PathInfo::Type::kRegular) return std::nullopt;
  auto it = contents_.find(p);
  if (it == contents_.end()) return std::string();
  if (it->second.size() > max_bytes)
    throw Error("/" + p + " is larger than " + human_bytes(max_bytes),
                "the base image has an unexpectedly large file there");
  return it->second;
}

}  // namespace trainpack::layers
