#include "store/cache_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "support/error.h"
#include "support/fs.h"

namespace trainpack::store {
namespace fs = std::filesystem;

// Beside the kinds' directories: temp files, local-run's run directories, the registrations of open caches.
constexpr std::string_view kTempDir = "tmp";
constexpr std::string_view kRunDir = "run";
constexpr std::string_view kUsersDir = "users";

const std::vector<KindLayout>& cache_layout() {
  static const std::vector<KindLayout> layout{
      {CacheKind::kBlobs, "blobs", 2},           {CacheKind::kLayers, "layers", 1},
      {CacheKind::kPipSteps, "pip-steps", 1},    {CacheKind::kScans, "scans", 2},
      {CacheKind::kCheckedLayers, "checked-layers", 1}, {CacheKind::kInterpreters, "interpreters", 1},
      {CacheKind::kSitePackages, "site-packages", 1},   {CacheKind::kBuiltWheels, "built-wheels", 1},
      {CacheKind::kBlobLocations, "blob-locations", 1}, {CacheKind::kIndexPages, "index-pages", 1},
      {CacheKind::kSboms, "sboms", 1},
  };
  return layout;
}

const KindLayout& layout_of(CacheKind kind) {
  for (const KindLayout& k : cache_layout())
    if (k.kind == kind) return k;
  throw Error("internal: a cache kind without a directory");
}

fs::path kind_dir(const fs::path& root, CacheKind kind) { return root / layout_of(kind).dir; }

fs::path temp_dir_of(const fs::path& root) { return root / kTempDir; }

CacheArea::CacheArea(fs::path dir, std::shared_ptr<const UseLock> lock, std::shared_ptr<CacheWarnings> warnings)
    : dir_(std::move(dir)), lock_(std::move(lock)), warnings_(std::move(warnings)) {
  if (!warnings_) warnings_ = std::make_shared<CacheWarnings>();
}

bool CacheArea::use(std::string_view key) const { return lock_->touch(path_of(key)); }

void CacheArea::report_damaged(const fs::path& file, std::string_view why) const {
  warnings_->warn("the cache file " + file.string() + " is damaged (" + std::string(why) +
                  "); it is ignored and made again");
}

void CacheArea::discard(std::string_view key, std::string_view why, const fs::path& file) const {
  const fs::path entry = path_of(key);
  report_damaged(file.empty() ? entry : file, why);
  // Renamed away first, as prune removes entries: an entry is there whole or not at all.
  fs::path away = staging_path_for(entry);
  std::error_code ec;
  fs::rename(entry, away, ec);
  if (!ec) remove_tree_quietly(away);
}

CacheDir::CacheDir(fs::path root)
    : root_(std::move(root)),
      lock_([this] {
        std::error_code ec;
        fs::create_directories(root_, ec);
        return std::make_shared<const UseLock>(lock_file_in(root_));
      }()),
      blobs_(root_, lock_, warnings_) {
  std::error_code ec;
  fs::create_directories(users_dir(), ec);
  if (ec) return;  // a read-only cache: nothing here is pruned while it is in use, so nothing is at stake
  // Locked before it appears in users/, so prune never takes a registration being made for a dead one.
  std::string made = (temp_dir() / ("user-" + temp_owner_tag() + "-XXXXXX")).string();
  registration_fd_ = ::mkostemp(made.data(), O_CLOEXEC);
  if (registration_fd_ < 0) return;
  registration_ = users_dir() / fs::path(made).filename();
  if (::flock(registration_fd_, LOCK_EX) != 0 || ::rename(made.c_str(), registration_.c_str()) != 0) {
    ::unlink(made.c_str());
    ::close(registration_fd_);
    registration_fd_ = -1;
    registration_.clear();
  }
}

CacheDir::~CacheDir() {
  if (registration_fd_ < 0) return;
  ::unlink(registration_.c_str());
  ::close(registration_fd_);
}

CacheArea CacheDir::area(CacheKind kind) const { return CacheArea(kind_dir(root_, kind), lock_, warnings_); }

fs::path CacheDir::temp_dir() const { return temp_dir_of(root_); }

fs::path CacheDir::run_dir() const { return root_ / kRunDir; }

fs::path CacheDir::users_dir() const { return root_ / kUsersDir; }

fs::path CacheDir::lock_file() const { return lock_file_in(root_); }

std::optional<fs::path> CacheDir::entry_of(const fs::path& path) const {
  fs::path rel = path.lexically_normal().lexically_relative(root_);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  for (const KindLayout& k : cache_layout()) {
    if (*rel.begin() != k.dir) continue;
    fs::path entry = root_ / k.dir;
    auto part = std::next(rel.begin());
    for (int level = 0; level < k.depth; ++level, ++part) {
      if (part == rel.end()) return std::nullopt;
      entry /= *part;
    }
    return entry;
  }
  return std::nullopt;
}

bool CacheDir::use_path(const fs::path& path) const {
  std::optional<fs::path> entry = entry_of(path);
  if (entry && !lock_->touch(*entry)) return false;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

int CacheDir::sweep_leftovers() const {
  int removed = sweep_orphaned_temps(temp_dir()) + sweep_orphaned_temps(users_dir());
  for (const KindLayout& k : cache_layout()) {
    fs::path dir = root_ / k.dir;
    removed += sweep_orphaned_temps(dir);
    std::error_code ec;
    if (k.depth == 2)  // staging beside an entry one level down (scans/SELECTION/.KEY.tmp-…)
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec)) removed += sweep_orphaned_temps(it->path());
  }
  return removed;
}

}  // namespace trainpack::store
