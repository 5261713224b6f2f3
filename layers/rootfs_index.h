#pragma once
// What the image's root filesystem holds, without unpacking it: the merged listing of its layers (paths, types,
// modes, owners, link targets; no contents), whiteouts applied. The build keeps one over its own layers (what an
// earlier step created); the Python steps list the base too (where is pip, what is installed). Listing a base
// layer means reading it once; listings are cached per layer digest.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "image/digest.h"
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

// Called for each entry while a layer is listed; `read` gives the entry's data (regular files), in pieces, 0 at the end.
using LayerEntryVisitor = std::function<void(const std::string& path, const PathInfo& info, std::uint64_t size,
                                             const std::function<std::size_t(char* buffer, std::size_t max)>& read)>;

// Reads a layer blob (plain tar or any compression libarchive knows) and lists it, showing each entry to `visit`.
// The uncompressed tar is checked against `diff_id` (the config's) in the same pass (layers/layer_tar_reader.h);
// nullopt lists a blob no config describes.
LayerListing list_layer_blob(const std::filesystem::path& blob, const std::optional<image::Digest>& diff_id,
                             std::string_view what, const LayerEntryVisitor& visit = {});

// The listing cache's file format (one JSON array of rows); parse gives nullopt for anything else.
std::string serialize_listing(const LayerListing& listing);
std::optional<LayerListing> parse_listing(std::string_view text);

class RootfsIndex {
 public:
  // Applies a layer on top: its whiteouts and opaque markers hide lower paths, then its entries land.
  void apply(const LayerListing& layer);
  void apply(const FileEntries& layer);
  // A layer whose entries deeper than kDeferredDepth path components are applied only when something needs them
  // (a reused pip step's listing, tens of thousands of entries, read from disk only then); its shallower entries
  // (usr, usr/local, usr/local/lib, ...) are applied at once. Deeper entries are known by their keys, their first
  // kDeferredDepth components (deferred_keys). A query of a path below a key, or applying a layer that reaches
  // below one (an entry there, or a whiteout or non-directory above it), applies the deferred entries first, with
  // every deferred layer before them, in order. `load` gives the whole layer and may throw; the query then does.
  static constexpr std::size_t kDeferredDepth = 3;
  struct DeferredLayer {
    FileEntries shallow;                // the entries of at most kDeferredDepth components
    std::set<std::string> keys;         // deferred_keys of the layer
    std::function<FileEntries()> load;  // the whole layer
  };
  void apply_deferred(DeferredLayer layer);
  static std::set<std::string> deferred_keys(const FileEntries& layer);
  static bool is_shallow(std::string_view path);

  const PathInfo* find(std::string_view path) const;  // exact path, no symlink resolution
  // Names directly under directory `dir` ("" for the root), sorted bytewise.
  std::vector<std::string> children(std::string_view dir) const;
  // Resolves symlinks in every component (absolute targets re-rooted at the image root), like the kernel
  // would inside the container. Missing components are kept as they are. Throws Error on symlink loops.
  // `symlinks_passed`, when given, receives the path of each symlink the walk went through, in order.
  std::string resolve(std::string_view path, std::vector<std::string>* symlinks_passed = nullptr) const;
  std::size_t size() const;

 private:
  struct Deferred {
    std::set<std::string> keys;
    std::function<FileEntries()> load;
  };
  void apply_now(const LayerListing& layer) const;
  // Applies the deferred layers up to the last one with a key `reached` accepts.
  void apply_deferred_through(const std::function<bool(const std::set<std::string>& keys)>& reached) const;
  void apply_deferred_below(std::string_view path) const;
  void erase_tree(const std::string& path) const;
  void put(const std::string& path, const PathInfo& info) const;
  void imply_parents(std::string_view path) const;
  // Queries are const, and may apply deferred layers: what the index holds does not change by that.
  mutable std::map<std::string, PathInfo, std::less<>> entries_;
  mutable std::vector<Deferred> deferred_;
};

}  // namespace trainpack::layers
