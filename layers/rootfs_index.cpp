#include "layers/rootfs_index.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "layers/entry_safety.h"
#include "layers/layer_tar_reader.h"
#include "layers/whiteouts.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"

namespace trainpack::layers {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Docker's rules (layers/entry_safety.h): a layer that breaks them is refused, whether its files are read or only
// passed on.
void refuse_unsafe_entry(struct archive_entry* e, std::string_view what) {
  const char* name = archive_entry_pathname(e);
  EntryKind kind = EntryKind::kOther;
  const char* target = archive_entry_hardlink(e);
  if (target) kind = EntryKind::kHardlink;
  else if (archive_entry_filetype(e) == AE_IFLNK && (target = archive_entry_symlink(e))) kind = EntryKind::kSymlink;
  std::optional<std::string> reason = unsafe_entry_reason(name ? name : "", kind, target ? target : "");
  if (!reason) return;
  std::string shown = name ? name : "";
  if (target) shown += " -> " + std::string(target);
  throw Error(std::string(what) + ": unsafe entry '" + shown + "' (" + *reason + ")",
              "Docker refuses this layer too; rebuild the base image with a standard tool");
}

}  // namespace

LayerListing list_layer_blob(const fs::path& blob, const std::optional<image::Digest>& diff_id, std::string_view what,
                             const LayerEntryVisitor& visit) {
  LayerTarReader reader(blob, diff_id, std::string(what));
  struct archive* a = reader.tar();
  LayerListing out;
  struct archive_entry* e;
  int rc;
  while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    const char* name = archive_entry_pathname(e);
    refuse_unsafe_entry(e, what);
    std::string path = clean_path(name ? name : "");
    if (path.empty()) continue;
    PathInfo info;
    info.mode = archive_entry_perm(e);
    info.uid = static_cast<std::uint32_t>(archive_entry_uid(e));
    info.gid = static_cast<std::uint32_t>(archive_entry_gid(e));
    if (const char* hl = archive_entry_hardlink(e)) {
      info.type = PathInfo::Type::kHardlink;
      info.link_target = clean_path(hl);
    } else {
      switch (archive_entry_filetype(e)) {
        case AE_IFREG: info.type = PathInfo::Type::kRegular; break;
        case AE_IFDIR: info.type = PathInfo::Type::kDirectory; break;
        case AE_IFLNK:
          info.type = PathInfo::Type::kSymlink;
          info.link_target = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
          break;
        default: info.type = PathInfo::Type::kOther;
      }
    }
    if (visit) {
      auto read = [a, &what](char* buffer, std::size_t max) -> std::size_t {
        la_ssize_t n = archive_read_data(a, buffer, max);
        if (n < 0) throw Error(std::string(what) + ": cannot read layer data: " + archive_error_string(a));
        return static_cast<std::size_t>(n);
      };
      std::uint64_t size = archive_entry_size_is_set(e) ? static_cast<std::uint64_t>(archive_entry_size(e)) : 0;
      visit(path, info, size, read);
    }
    out.entries.emplace_back(std::move(path), std::move(info));
  }
  // Some writers (umoci insert, for one) end a layer without padding the last file's data to 512 bytes. Go's tar
  // reader, and so Docker, accept that; the blob's digest was verified, so the listing read so far is the layer.
  const char* err = archive_error_string(a);
  bool truncated_tail = rc == ARCHIVE_FATAL && !out.entries.empty() && err && std::strstr(err, "Truncated");
  if (rc != ARCHIVE_EOF && !truncated_tail)
    throw Error(std::string(what) + ": layer is not a readable tar: " + (err ? err : "unknown error"),
                "the image is corrupt");
  reader.finish();
  return out;
}

std::string serialize_listing(const LayerListing& listing) {
  json j = json::array();
  for (const auto& [path, info] : listing.entries)
    j.push_back({path, std::string(1, static_cast<char>(info.type)), info.mode, info.uid, info.gid, info.link_target});
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<LayerListing> parse_listing(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_array()) return std::nullopt;
  LayerListing out;
  out.entries.reserve(j.size());
  for (const auto& row : j) {
    if (!row.is_array() || row.size() != 6 || !row[0].is_string() || !row[1].is_string() ||
        row[1].get<std::string>().empty() || !row[5].is_string())
      return std::nullopt;
    for (std::size_t k = 2; k < 5; ++k)
      if (!row[k].is_number_unsigned() || row[k].get<std::uint64_t>() > UINT32_MAX) return std::nullopt;
    const std::string& type = row[1].get_ref<const std::string&>();
    if (type.size() != 1 || std::string_view("fdlho").find(type[0]) == std::string_view::npos) return std::nullopt;
    PathInfo info;
    info.type = static_cast<PathInfo::Type>(type[0]);
    info.mode = row[2].get<std::uint32_t>();
    info.uid = row[3].get<std::uint32_t>();
    info.gid = row[4].get<std::uint32_t>();
    info.link_target = row[5].get<std::string>();
    out.entries.emplace_back(row[0].get<std::string>(), std::move(info));
  }
  return out;
}

void RootfsIndex::erase_tree(const std::string& path) const {
  entries_.erase(path);
  std::string prefix = path + "/";
  auto it = entries_.lower_bound(prefix);
  while (it != entries_.end() && it->first.starts_with(prefix)) it = entries_.erase(it);
}

// A layer that lists a path without its parent directories gets them as the engines make them when they unpack it:
// 0755, owned by root (moby pkg/archive UnpackLayer, containerd archive/tar.go). Every path's parents are present
// once one is (whiteouts remove whole subtrees), so the search stops at the first parent found.
void RootfsIndex::imply_parents(std::string_view path) const {
  std::string_view parent = path_dir(path);
  if (parent.empty() || entries_.find(parent) != entries_.end()) return;
  imply_parents(parent);
  entries_.emplace(std::string(parent), PathInfo{PathInfo::Type::kDirectory, 0755, 0, 0, {}});
}

void RootfsIndex::put(const std::string& path, const PathInfo& info) const {
  imply_parents(path);
  auto it = entries_.find(path);
  // Anything but dir-over-dir replaces the lower path and what was under it.
  if (it != entries_.end() &&
      !(it->second.type == PathInfo::Type::kDirectory && info.type == PathInfo::Type::kDirectory))
    erase_tree(path);
  entries_[path] = info;
}

namespace {

std::size_t depth_of(std::string_view path) {
  return path.empty() ? 0 : static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')) + 1;
}

// The first `depth` components of a path that has at least that many.
std::string_view prefix_of(std::string_view path, std::size_t depth) {
  std::size_t end = std::string_view::npos, from = 0;
  for (std::size_t i = 0; i < depth; ++i) {
    end = path.find('/', from);
    if (end == std::string_view::npos) return path;
    from = end + 1;
  }
  return path.substr(0, end);
}

bool at_or_below(std::string_view path, std::string_view dir) {
  return dir.empty() || path == dir || (path.starts_with(dir) && path.size() > dir.size() && path[dir.size()] == '/');
}

// Whether applying `layer` can change what a deferred layer with `keys` holds, or be changed by it: an entry below
// a key, or a whiteout, opaque marker or non-directory at or above one.
bool reaches(const LayerListing& layer, const std::set<std::string>& keys) {
  auto overlaps = [&keys](std::string_view hidden) {
    for (const std::string& key : keys)
      if (at_or_below(key, hidden) || at_or_below(hidden, key)) return true;
    return false;
  };
  for (const auto& [path, info] : layer.entries) {
    std::string name(path_base(path));
    if (name == kOpaque) {
      if (overlaps(std::string(path_dir(path)))) return true;
    } else if (name.starts_with(kWhiteoutPrefix)) {
      if (overlaps(join_path(path_dir(path), name.substr(kWhiteoutPrefix.size())))) return true;
    } else if (!RootfsIndex::is_shallow(path)) {
      if (keys.count(std::string(prefix_of(path, RootfsIndex::kDeferredDepth)))) return true;
    } else if (info.type != PathInfo::Type::kDirectory && overlaps(path)) {
      return true;
    }
  }
  return false;
}

LayerListing listing_of(const FileEntries& layer) {
  LayerListing listing;
  listing.entries.reserve(layer.size());
  for (const FileEntry& e : layer) {
    PathInfo info;
    info.mode = e.mode;
    info.uid = e.uid;
    info.gid = e.gid;
    info.link_target = e.link_target;
    info.type = e.type == FileEntry::Type::kDirectory ? PathInfo::Type::kDirectory
                : e.type == FileEntry::Type::kSymlink ? PathInfo::Type::kSymlink
                                                      : PathInfo::Type::kRegular;
    listing.entries.emplace_back(e.path, std::move(info));
  }
  return listing;
}

}  // namespace

bool RootfsIndex::is_shallow(std::string_view path) { return depth_of(path) <= kDeferredDepth; }

std::set<std::string> RootfsIndex::deferred_keys(const FileEntries& layer) {
  std::set<std::string> keys;
  for (const FileEntry& e : layer)
    if (!is_shallow(e.path)) keys.emplace(prefix_of(e.path, kDeferredDepth));
  return keys;
}

void RootfsIndex::apply_deferred(DeferredLayer layer) {
  apply(layer.shallow);
  if (!layer.keys.empty()) deferred_.push_back({std::move(layer.keys), std::move(layer.load)});
}

void RootfsIndex::apply_deferred_through(const std::function<bool(const std::set<std::string>&)>& reached) const {
  std::size_t through = deferred_.size();
  for (std::size_t i = deferred_.size(); i-- > 0;) {
    if (reached(deferred_[i].keys)) {
      through = i;
      break;
    }
  }
  if (through == deferred_.size()) return;
  std::vector<Deferred> due(std::make_move_iterator(deferred_.begin()),
                            std::make_move_iterator(deferred_.begin() + static_cast<std::ptrdiff_t>(through) + 1));
  deferred_.erase(deferred_.begin(), deferred_.begin() + static_cast<std::ptrdiff_t>(through) + 1);
  for (const Deferred& layer : due) {
    FileEntries deep = layer.load();
    std::erase_if(deep, [](const FileEntry& e) { return is_shallow(e.path); });
    apply_now(listing_of(deep));
  }
}

// Before a query of `path` (a find, or the children of a directory): the deferred entries below its key.
void RootfsIndex::apply_deferred_below(std::string_view path) const {
  if (deferred_.empty() || depth_of(path) < kDeferredDepth) return;
  std::string key(prefix_of(path, kDeferredDepth));
  apply_deferred_through([&key](const std::set<std::string>& keys) { return keys.count(key) > 0; });
}

std::size_t RootfsIndex::size() const {
  apply_deferred_through([](const std::set<std::string>&) { return true; });
  return entries_.size();
}

void RootfsIndex::apply(const LayerListing& layer) {
  if (!deferred_.empty())
    apply_deferred_through([&layer](const std::set<std::string>& keys) { return reaches(layer, keys); });
  apply_now(layer);
}

void RootfsIndex::apply_now(const LayerListing& layer) const {
  // Whiteouts hide lower layers only, so apply them all before adding this layer's entries.
  for (const auto& [path, info] : layer.entries) {
    std::string name(path_base(path));
    if (name == kOpaque) {
      std::string dir(path_dir(path));
      std::string prefix = dir.empty() ? "" : dir + "/";
      auto it = entries_.lower_bound(prefix);
      while (it != entries_.end() && it->first.starts_with(prefix)) {
        if (it->first == dir) {
          ++it;
          continue;
        }
        it = entries_.erase(it);
      }
    } else if (name.starts_with(kWhiteoutPrefix)) {
      erase_tree(join_path(path_dir(path), name.substr(kWhiteoutPrefix.size())));
    }
  }
  for (const auto& [path, info] : layer.entries) {
    if (path_base(path).starts_with(kWhiteoutPrefix))
      imply_parents(path);  // the engines make a whiteout's directory as they make any entry's
    else
      put(path, info);
  }
}

void RootfsIndex::apply(const FileEntries& layer) { apply(listing_of(layer)); }

std::vector<std::string> RootfsIndex::children(std::string_view dir) const {
  apply_deferred_below(dir);
  std::string prefix = dir.empty() ? std::string() : std::string(dir) + "/";
  std::vector<std::string> out;
  auto it = entries_.lower_bound(prefix);
  while (it != entries_.end() && it->first.starts_with(prefix)) {
    std::string_view rest = std::string_view(it->first).substr(prefix.size());
    auto slash = rest.find('/');
    if (slash == std::string_view::npos) {
      if (!rest.empty()) out.emplace_back(rest);
      ++it;
      continue;
    }
    // A child known only by what is under it still counts; then skip its subtree: "name/..." sorts right before
    // "name0" ('0' follows '/').
    std::string name(rest.substr(0, slash));
    out.push_back(name);
    it = entries_.lower_bound(prefix + name + "0");
  }
  std::sort(out.begin(), out.end());  // "a" may come before "a-b" and again, from "a/x", after it
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const PathInfo* RootfsIndex::find(std::string_view path) const {
  if (!is_shallow(path)) apply_deferred_below(path);
  auto it = entries_.find(path);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string RootfsIndex::resolve(std::string_view path, std::vector<std::string>* symlinks_passed) const {
  std::vector<std::string> todo;  // components still to walk, reversed
  auto push_components = [&todo](std::string_view p) {
    auto parts = path_components(p);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_back(*it);
  };
  push_components(path);
  std::string done;
  int hops = 0;
  while (!todo.empty()) {
    std::string c = todo.back();
    todo.pop_back();
    if (c == "..") {
      done = std::string(path_dir(done));
      continue;
    }
    std::string next = join_path(done, c);
    const PathInfo* info = find(next);
    if (info && info->type == PathInfo::Type::kSymlink) {
      if (++hops > 40) throw Error("too many levels of symbolic links resolving /" + std::string(path));
      if (symlinks_passed) symlinks_passed->push_back(next);
      if (!info->link_target.empty() && info->link_target.front() == '/') done.clear();
      push_components(info->link_target);
      continue;
    }
    done = next;
  }
  return done;
}

}  // namespace trainpack::layers
