#pragma once
// An image's root filesystem read from its layer blobs without unpacking them: each layer is listed in one pass
// that also keeps copies of the files a caller selects (the Python steps keep pip's launcher, pyvenv.cfg,
// sysconfigdata, dist-info metadata and the like: a few MB of a multi-GB base). Listing and copies are cached per
// layer digest and selection, written atomically, so a base is scanned once. Reading a file nobody selected scans
// its layer again for that one file (and keeps it).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "image/image.h"
#include "layers/image_filesystem.h"
#include "layers/rootfs_index.h"
#include "store/cache_dir.h"

namespace trainpack::layers {

struct ScanSelection {
  std::string name;  // part of the cache key: change it whenever `keep` changes
  std::function<bool(std::string_view path, std::uint64_t size)> keep;
};

// The SHA-256 (hex) of each file a layer's scan kept, by path.
using KeptSums = std::map<std::string, std::string, std::less<>>;

class ScannedImage : public ImageFilesystem {
 public:
  // Scans every layer of `image` (downloading a layer only when its scan is not cached; up to kScanWorkers at once),
  // checking each one it reads against the config's diff_id.
  ScannedImage(std::shared_ptr<const image::Image> image, const store::CacheDir& cache, ScanSelection selection);

  // Where the scan of `layer` under `selection_name` is kept: listing.json, kept.json, files/<path>. Keyed by the layer's
  // digest and the diff_id its uncompressed tar was found to have: a scan vouches only for the diff_id it checked.
  static std::string scan_key(const std::string& selection_name, const image::Digest& layer,
                              const image::Digest& diff_id);

  // A scan's listing.json as scan_layer() writes it (a listing, sealed: store/sealed_text.h); nullopt for anything
  // else.
  static std::optional<LayerListing> parse_scan_listing(std::string_view file);

  const PathInfo* find(std::string_view path) const override { return index_.find(path); }
  std::string resolve(std::string_view path) const override { return index_.resolve(path); }
  std::vector<std::string> children(std::string_view dir) const override {
    return index_.children(index_.resolve(dir));
  }
  std::optional<std::string> read(std::string_view path, std::size_t max_bytes) const override;
  // Only the first max_bytes of the kept copy (ELF headers of a multi-MB interpreter).
  std::optional<std::string> read_prefix(std::string_view path, std::size_t max_bytes) const override;

  const RootfsIndex& index() const { return index_; }
  const image::Image& image() const { return *image_; }
  std::size_t layer_count() const { return layers_.size(); }
  const image::Digest& layer_digest(std::size_t i) const { return layers_.at(i).digest; }
  // The layer (manifest order) whose entry is the merged regular file or hardlink at `path`; nullopt otherwise.
  std::optional<std::size_t> provider(std::string_view path) const;
  // Reads layer i's blob once more (downloading it when the image is remote), showing each entry to `visit`.
  void read_layer(std::size_t i, const LayerEntryVisitor& visit) const;

 private:
  struct Layer {
    image::Digest digest;
    image::Digest diff_id;      // the config's
    std::filesystem::path dir;  // its scan_key() entry: listing.json, kept.json, files/<path>
    KeptSums kept;              // what files/ held when the scan kept it
  };
  static constexpr std::size_t kScanWorkers = 4;  // layers downloaded and listed at once on a cold cache
  // Lists layer i (downloading it when remote) and stores the listing and kept files under its dir.
  LayerListing scan_layer(std::size_t i);
  // The listing the scan entry `key` holds, and the sums of the files it kept; nullopt when it is damaged (then
  // removed, with a warning).
  std::optional<LayerListing> read_cached_listing(const std::string& key, KeptSums& kept) const;
  // Whether the kept copy `file` of layer `layer`'s `path` has the bytes the scan kept (hashed once per run).
  bool kept_whole(std::size_t layer, const std::string& path, const std::filesystem::path& file) const;
  std::filesystem::path kept_file(std::size_t layer, const std::string& path) const;
  // The cached copy of a regular file (resolved, hardlinks followed), scanning its layer again when it was not kept.
  std::optional<std::filesystem::path> local_copy(std::string_view path) const;

  std::shared_ptr<const image::Image> image_;
  store::CacheArea scans_;
  store::CacheArea checked_layers_;
  ScanSelection selection_;
  std::vector<Layer> layers_;
  RootfsIndex index_;
  std::map<std::string, std::size_t, std::less<>> provider_;  // regular file path -> the layer that wrote it last
  mutable std::mutex mutex_;
  mutable std::set<std::filesystem::path> verified_;  // kept copies found whole
};

}  // namespace trainpack::layers
