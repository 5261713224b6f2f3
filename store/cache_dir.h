#pragma once
// The cache directory (--cache-dir, TRAINPACK_CACHE_DIR, ~/.cache/trainpack) and everything in it. Each kind of
// entry has a directory of entries named by key; an entry is one file or one directory tree, and goes whole:
//
//   blobs/sha256/HEX       content-addressed blobs (BlobStore)
//   layers/KEY             a layer's input fingerprint → its blob (layers::LayerCache)
//   pip-steps/KEY          a pip step's layers and listings (builder/pip_step_cache.h)
//   scans/SELECTION/KEY    files kept from one base layer (layers::ScannedImage)
//   checked-layers/HEX     base layers whose tar entries were checked safe (layers/entry_safety.h)
//   interpreters/KEY       a base's Python extracted to run it (python/image_interpreter.h)
//   site-packages/KEY      a base's build packages extracted for it
//   built-wheels/KEY       wheels built from sdists (builder/source_builds.h)
//   blob-locations/KEY     repositories known to hold a blob (registry::BlobLocations)
//   index-pages/KEY        package index pages with their validators (python::IndexPageCache)
//   sboms/KEY              SBOMs generated for an image
//   tmp/, run/             staging, work directories and local-run bundles: never pruned, leftovers swept
//   users/                 one locked file per process that has the cache open
//   lock                   taken shared to use an entry, exclusively by prune to remove one
//
// An entry's last use is its modification time: using an entry touches it while holding `lock` shared, and prune
// checks and removes an entry while holding it exclusively, so no entry goes between a use's check and the use.
// Prune keeps every entry used since the oldest process in users/ started: what a running build holds stays.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/blob_store.h"
#include "store/cache_warnings.h"
#include "store/use_lock.h"

namespace trainpack::store {

enum class CacheKind {
  kBlobs, kLayers, kPipSteps, kScans, kCheckedLayers, kInterpreters, kSitePackages, kBuiltWheels, kBlobLocations,
  kIndexPages, kSboms
};

struct KindLayout {
  CacheKind kind;
  std::string_view dir;  // under the cache root
  int depth;             // directory levels from `dir` to an entry
};

// Every kind, in the order `trainpack cache du` lists them.
const std::vector<KindLayout>& cache_layout();
const KindLayout& layout_of(CacheKind kind);

// Where the cache at `root` keeps `kind`'s entries, and its work directories: for code that looks into a cache
// without opening it (tests).
std::filesystem::path kind_dir(const std::filesystem::path& root, CacheKind kind);
std::filesystem::path temp_dir_of(const std::filesystem::path& root);

// One kind's directory of entries.
class CacheArea {
 public:
  CacheArea(std::filesystem::path dir, std::shared_ptr<const UseLock> lock,
            std::shared_ptr<CacheWarnings> warnings = nullptr);
  const std::filesystem::path& dir() const { return dir_; }
  // The entry named `key` ("SELECTION/KEY" for scans).
  std::filesystem::path path_of(std::string_view key) const { return dir_ / key; }
  // Records a use of the entry `key` and says whether it is there.
  bool use(std::string_view key) const;
  // The entry `key` was read back damaged (`why`: "its listing does not parse"): it is removed whole, so the
  // caller makes it again, with a warning naming its file (`file`: the file below the entry that was read, or the
  // entry itself when empty).
  void discard(std::string_view key, std::string_view why, const std::filesystem::path& file = {}) const;
  // Only the warning: for a file of an entry that its owner replaces by itself.
  void report_damaged(const std::filesystem::path& file, std::string_view why) const;

 private:
  std::filesystem::path dir_;
  std::shared_ptr<const UseLock> lock_;
  std::shared_ptr<CacheWarnings> warnings_;
};

// The cache at `root`, open: creating it registers this process in users/ until destruction.
class CacheDir {
 public:
  explicit CacheDir(std::filesystem::path root);
  // Ends the registration: what this process used may be pruned from then on.
  ~CacheDir();
  CacheDir(const CacheDir&) = delete;
  CacheDir& operator=(const CacheDir&) = delete;

  const std::filesystem::path& root() const { return root_; }
  const BlobStore& blobs() const { return blobs_; }
  // Where the warnings about damaged entries go from now on (CacheWarnings): a build's progress.
  void on_warning(CacheWarnings::Sink sink) const { warnings_->set_sink(std::move(sink)); }
  CacheArea area(CacheKind kind) const;
  std::filesystem::path temp_dir() const;  // staging and work directories (tmp/)
  std::filesystem::path run_dir() const;   // local-run bundles (run/)
  std::filesystem::path users_dir() const;
  std::filesystem::path lock_file() const;

  // The entry `path` lies in ("<root>/scans/python/KEY" for a file below it), or nullopt outside every entry.
  std::optional<std::filesystem::path> entry_of(const std::filesystem::path& path) const;
  // Records a use of the entry holding `path` and says whether `path` is there; a path outside the cache is only
  // checked (a user's file is never touched).
  bool use_path(const std::filesystem::path& path) const;

  // Removes what processes killed with SIGKILL left in the cache's directories (support/fs.h's owner tags).
  int sweep_leftovers() const;

 private:
  std::filesystem::path root_;
  std::shared_ptr<const UseLock> lock_;
  std::shared_ptr<CacheWarnings> warnings_ = std::make_shared<CacheWarnings>();
  BlobStore blobs_;
  std::filesystem::path registration_;
  int registration_fd_ = -1;
};

}  // namespace trainpack::store
