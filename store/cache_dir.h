#pragma once
// The cache directory (--cache-dir, TRAINPACK_CACHE_DIR, ~/.cache/trainpack) and everything in it. Each kind of
// entry has a directory of entries named by key; an entry is one file or one directory tree, and goes whole:
//
//   blobs/sha256/HEX       content-addressed blobs (BlobStore)
//   layers/KEY             a layer's input fingerprint → its blob (layers::LayerCache)
//   pip-steps/KEY          a pip step's layers and listings (imagebuild/pip_step_cache.h)
//   scans/SELECTION/KEY    files kept from one base layer (layers::ScannedImage)
//   checked-layers/HEX     base layers whose tar entries were checked safe (layers/entry_safety.h)
//   interpreters/KEY       a base's Python extracted to run it (python/image_interpreter.h)
//   site-packages/KEY      a base's build packages extracted for it
//   built-wheels/KEY       wheels built from sdists (imagebuild/source_builds.h)
//   blob-locations/KEY     repositories known to hold a blob (registry::BlobLocations)
//   index-pages/KEY        package index pages with their validators (python::IndexPageCache)
//   sboms/KEY              the SBOM made for an image (KEY.blob: its blob's digest; KEY.json, an SBOM kept as
//                          text, stays an entry kind so that prune removes such files), and the package and file
//                          lists it is made from
//   layer-trees/CHAINID    a layer unpacked for local-run's overlayfs root (localrun/layer_trees.h)
//   tmp/, run/             staging, work directories and local-run bundles: never pruned, leftovers swept
//   users/                 one locked file per process that has the cache open
//   lock                   taken shared to use an entry, exclusively by prune to remove one
//   usage                  the size the last prune measured: builds skip the walk while well under the cap
//   CACHEDIR.TAG           the mark: this directory is trainpack's cache (CacheAccess)
//
// Each kind's entries have names of the shapes trainpack gives them (KindLayout::names): anything else in the cache is
// not trainpack's and is never pruned, and nothing is reached through a symbolic link inside the cache.
//
// An entry's last use is its modification time: using an entry touches it while holding `lock` shared, and prune
// checks and removes an entry while holding it exclusively, so no entry goes between a use's check and the use.
// Prune keeps every entry used since the oldest process in users/ started: what a running build holds stays.
#include <cstdint>
#include <filesystem>
#include <iosfwd>
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
  kIndexPages, kSboms, kLayerTrees
};

struct KindLayout {
  CacheKind kind;
  std::string_view dir;    // under the cache root
  int depth;               // directory levels from `dir` to an entry
  std::string_view group;  // with depth 2, the names of the level between (blobs/ALGORITHM, scans/SELECTION)
  // The names trainpack gives entries: text with <digest> (64 or 128 lowercase hex digits, a digest's hex), <hex32>
  // and <word> (letters, digits, '.', '_', '-'); alternatives split by '|'.
  std::string_view names;
};

// Every kind, in the order `trainpack cache du` lists them.
const std::vector<KindLayout>& cache_layout();
const KindLayout& layout_of(CacheKind kind);

// Whether `name` is one trainpack gives an entry of `kind`, or (depth 2) a directory between.
bool is_entry_name(const KindLayout& kind, std::string_view name);
bool is_group_name(const KindLayout& kind, std::string_view name);

// Where the cache at `root` keeps `kind`'s entries, and its work directories: for code that looks into a cache
// without opening it (tests).
std::filesystem::path kind_dir(const std::filesystem::path& root, CacheKind kind);
std::filesystem::path temp_dir_of(const std::filesystem::path& root);

// How a CacheDir opens its directory. A cache is marked when it is made (CACHEDIR.TAG, the Cache Directory Tagging
// Specification's file, https://bford.info/cachedir/, saying trainpack made it), so a --cache-dir naming another
// directory (a typo, $HOME) is refused before anything in it is read, made or removed. A cache of an earlier trainpack
// has no mark but its layout (`lock`, blobs/sha256/, tmp/): it is taken for one, and a build marks it.
enum class CacheAccess {
  kUse,      // a build, local-run, sbom: a missing or empty directory is made a cache
  kInspect,  // cache du and prune: the directory must be a cache; nothing is made but this process's registration
};

// The default cache directory: $TRAINPACK_CACHE_DIR, else $XDG_CACHE_HOME/trainpack, else ~/.cache/trainpack
// (created here). Without HOME, or when ~/.cache/trainpack cannot be created or written (a container run as an
// arbitrary user has HOME=/), <temp>/trainpack-cache-<uid> (0700, this user's), said on `note` when HOME was set.
std::filesystem::path default_cache_dir(std::ostream* note = nullptr);

// Whether `dir` is missing or empty (temporary names aside): no cache yet, and nothing else either.
bool is_missing_or_empty(const std::filesystem::path& dir);

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

// The cache at `root`, open: creating it registers this process in users/ until destruction. Throws Error when `root`
// is no cache (CacheAccess) or one of its directories is a file.
class CacheDir {
 public:
  explicit CacheDir(std::filesystem::path root, CacheAccess access = CacheAccess::kUse);
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

  // Whether a process that had the cache open ended without closing it: a registration in users/ nobody holds (its
  // process was killed). Only such a process leaves anything to sweep, so a build sweeps only then.
  bool has_dead_users() const;
  // Removes what processes killed with SIGKILL left in the cache's directories (support/fs.h's owner tags), then the
  // registrations nobody holds.
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
