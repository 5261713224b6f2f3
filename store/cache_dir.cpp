#include "store/cache_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ostream>

#include "support/error.h"
#include "support/fs.h"
#include "support/text.h"

namespace trainpack::store {
namespace fs = std::filesystem;

// Beside the kinds' directories: temp files, local-run's run directories, the registrations of open caches.
constexpr std::string_view kTempDir = "tmp";
constexpr std::string_view kRunDir = "run";
constexpr std::string_view kUsersDir = "users";

// The mark (CacheAccess): the Cache Directory Tagging Specification's signature, which backup tools know to skip, and
// the line that says the cache is trainpack's and of which format.
constexpr std::string_view kMarkFile = "CACHEDIR.TAG";
constexpr std::string_view kTagSignature = "Signature: 8a477f597d28d172789f06886806bc55\n";
constexpr std::string_view kMarkedBy = "# This file is a cache directory tag created by trainpack";
constexpr std::string_view kMarkRest =
    " (cache format 1).\n# For information about cache directory tags see https://bford.info/cachedir/\n";

const std::vector<KindLayout>& cache_layout() {
  // The names as the code keeping each kind makes them (BlobStore::path_of, LayerCache, PipStepCache,
  // ScannedImage::scan_key, entry_safety, image_interpreter, source_builds, BlobLocations::key_of, IndexPageCache,
  // imagebuild/attestations: sbom_text, kept_image_packages and copied_files; localrun::layer_trees).
  static const std::vector<KindLayout> layout{
      {CacheKind::kBlobs, "blobs", 2, "sha256|sha512", "<digest>"},
      {CacheKind::kLayers, "layers", 1, "", "<digest>.json"},
      {CacheKind::kPipSteps, "pip-steps", 1, "", "<digest>.entries"},
      {CacheKind::kScans, "scans", 2, "<word>", "<digest>-<digest>"},
      {CacheKind::kCheckedLayers, "checked-layers", 1, "", "<digest>"},
      {CacheKind::kInterpreters, "interpreters", 1, "", "<hex32>"},
      {CacheKind::kSitePackages, "site-packages", 1, "", "<hex32>"},
      {CacheKind::kBuiltWheels, "built-wheels", 1, "", "<digest>"},
      {CacheKind::kBlobLocations, "blob-locations", 1, "", "sha256-<digest>|sha512-<digest>"},
      {CacheKind::kIndexPages, "index-pages", 1, "", "<digest>.json|body-<digest>"},
      {CacheKind::kSboms, "sboms", 1, "", "<digest>.blob|<digest>.json|packages-<digest>.json|files-<digest>.json"},
      {CacheKind::kLayerTrees, "layer-trees", 1, "", "<digest>"},
  };
  return layout;
}

const KindLayout& layout_of(CacheKind kind) {
  for (const KindLayout& k : cache_layout())
    if (k.kind == kind) return k;
  throw Error("internal: a cache kind without a directory");
}

namespace {

// How many of `name`'s first characters are lowercase hex digits, or (for <word>) word characters.
std::size_t run_of(std::string_view name, std::string_view token) {
  std::size_t n = 0;
  auto in_token = [token](char c) {
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (token != "word") return hex;
    return hex || std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  };
  while (n < name.size() && in_token(name[n])) ++n;
  return n;
}

// Whether `name` has `shape`, one alternative of KindLayout::names. A token takes all the characters it can: the
// text after it never begins with one of them.
bool has_shape(std::string_view name, std::string_view shape) {
  while (!shape.empty()) {
    if (shape.front() != '<') {
      if (name.empty() || name.front() != shape.front()) return false;
      name.remove_prefix(1);
      shape.remove_prefix(1);
      continue;
    }
    std::size_t close = shape.find('>');
    std::string_view token = shape.substr(1, close - 1);
    shape.remove_prefix(close + 1);
    std::size_t run = run_of(name, token);
    if (token == "digest" ? run != 64 && run != 128 : token == "hex32" ? run != 32 : run == 0) return false;
    name.remove_prefix(run);
  }
  return name.empty();
}

bool has_one_of(std::string_view name, std::string_view shapes) {
  if (shapes.empty() || name.starts_with('.')) return false;
  for (std::string_view shape : split_at(shapes, '|'))
    if (has_shape(name, shape)) return true;
  return false;
}

}  // namespace

bool is_entry_name(const KindLayout& kind, std::string_view name) { return has_one_of(name, kind.names); }

bool is_group_name(const KindLayout& kind, std::string_view name) { return has_one_of(name, kind.group); }

fs::path kind_dir(const fs::path& root, CacheKind kind) { return root / layout_of(kind).dir; }

fs::path temp_dir_of(const fs::path& root) { return root / kTempDir; }

CacheArea::CacheArea(fs::path dir, std::shared_ptr<const UseLock> lock, std::shared_ptr<CacheWarnings> warnings)
    : dir_(std::move(dir)), lock_(std::move(lock)), warnings_(std::move(warnings)) {
  if (!warnings_) warnings_ = std::make_shared<CacheWarnings>();
}

bool CacheArea::use(std::string_view key) const { return lock_->touch(path_of(key)); }

bool is_missing_or_empty(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return ec == std::errc::no_such_file_or_directory;
  for (; !ec && it != end; it.increment(ec))
    if (!has_owner_tag(it->path().filename().string())) return false;  // another process's mark being written
  return true;
}

namespace {

bool is_marked(const fs::path& root) {
  struct stat st {};
  if (::lstat((root / kMarkFile).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  try {
    std::string text = read_file(root / kMarkFile, 4096, "a cache directory tag");
    return text.starts_with(kTagSignature) && text.find(kMarkedBy) != std::string::npos;
  } catch (const Error&) {
    return false;
  }
}

// What every trainpack made in a cache (BlobStore and UseLock's constructors) before caches were marked.
bool has_earlier_layout(const fs::path& root) {
  struct stat lock {}, blobs {}, temp {};
  return ::lstat(lock_file_in(root).c_str(), &lock) == 0 && S_ISREG(lock.st_mode) &&
         ::lstat((kind_dir(root, CacheKind::kBlobs) / "sha256").c_str(), &blobs) == 0 && S_ISDIR(blobs.st_mode) &&
         ::lstat(temp_dir_of(root).c_str(), &temp) == 0 && S_ISDIR(temp.st_mode);
}

void write_mark(const fs::path& root) {
  write_file_atomic(root / kMarkFile, std::string(kTagSignature) + std::string(kMarkedBy) + std::string(kMarkRest));
}

// Checks that `root` is a cache, or (kUse) makes a missing or empty one a cache, and that none of its directories is
// a file. Throws Error.
void open_root(const fs::path& root, CacheAccess access) {
  if (access == CacheAccess::kUse && is_missing_or_empty(root)) {
    make_directories(root);
    write_mark(root);
  } else {
    check_directory_if_present(root);
    bool marked = is_marked(root);
    if (!marked && !has_earlier_layout(root))
      throw Error(root.string() + " is not a trainpack cache",
                  "it has no CACHEDIR.TAG made by trainpack: pass --cache-dir the cache's own directory, or a new or "
                  "empty one for a build to make a cache in");
    if (!marked && access == CacheAccess::kUse) {
      try {
        write_mark(root);
      } catch (const Error&) {
        // A cache this process cannot write is used as it is; a build that can write it marks it.
      }
    }
  }
  for (const KindLayout& k : cache_layout()) check_directory_if_present(root / k.dir);
  for (std::string_view dir : {kUsersDir, kRunDir}) check_directory_if_present(root / dir);
  make_directories(kind_dir(root, CacheKind::kBlobs) / "sha256");
  make_directories(temp_dir_of(root));
}

}  // namespace

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

CacheDir::CacheDir(fs::path root, CacheAccess access)
    : root_(std::move(root)),
      lock_([this, access] {
        open_root(root_, access);
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

namespace {

// Calls `dead(path)` for each registration in `users` that nobody holds, while holding its lock.
template <class Dead>
void for_each_dead_registration(const fs::path& users, Dead dead) {
  std::error_code ec;
  for (fs::directory_iterator it(users, ec), end; !ec && it != end; it.increment(ec)) {
    int fd = ::open(it->path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) dead(it->path());
    ::close(fd);
  }
}

}  // namespace

bool CacheDir::has_dead_users() const {
  bool any = false;
  for_each_dead_registration(users_dir(), [&any](const fs::path&) { any = true; });
  return any;
}

int CacheDir::sweep_leftovers() const {
  // The root too: the usage record and the mark are written beside themselves.
  int removed = sweep_orphaned_temps(root_) + sweep_orphaned_temps(temp_dir()) + sweep_orphaned_temps(users_dir());
  for (const KindLayout& k : cache_layout()) {
    fs::path dir = root_ / k.dir;
    std::error_code link_ec;
    if (fs::is_symlink(dir, link_ec)) continue;  // what it leads to is not the cache's
    removed += sweep_orphaned_temps(dir);
    std::error_code ec;
    if (k.depth == 2)  // staging beside an entry one level down (scans/SELECTION/.KEY.tmp-…)
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec)) removed += sweep_orphaned_temps(it->path());
  }
  for_each_dead_registration(users_dir(), [&removed](const fs::path& registration) {
    std::error_code ec;
    if (fs::remove(registration, ec)) ++removed;
  });
  return removed;
}

namespace {

// <temp>/trainpack-cache-<uid>, created 0700; one that another user owns is refused (it could be planted).
fs::path temp_cache_dir() {
  fs::path dir = fs::temp_directory_path() / ("trainpack-cache-" + std::to_string(::geteuid()));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw Error("cannot create the cache directory " + dir.string() + ": " + std::strerror(errno),
                "pass --cache-dir=DIR or set TRAINPACK_CACHE_DIR to a writable directory");
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    throw Error(dir.string() + " is not a directory of this user, so it is not used as the cache",
                "pass --cache-dir=DIR or set TRAINPACK_CACHE_DIR to a writable directory");
  return dir;
}

}  // namespace

fs::path default_cache_dir(std::ostream* note) {
  if (const char* d = std::getenv("TRAINPACK_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "trainpack";
  const char* h = std::getenv("HOME");
  if (h == nullptr || *h == '\0') return temp_cache_dir();
  // ~/.cache/trainpack, unless HOME is not writable (a container run as an arbitrary user gets HOME=/).
  fs::path dir = fs::path(h) / ".cache" / "trainpack";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!ec && ::access(dir.c_str(), W_OK | X_OK) == 0) return dir;
  if (!ec) ec = std::error_code(errno, std::generic_category());
  fs::path fallback = temp_cache_dir();
  if (note != nullptr)
    *note << "trainpack: cannot use the cache directory " << dir.string() << " (" << ec.message() << "); using "
          << fallback.string() << " (--cache-dir or TRAINPACK_CACHE_DIR choose another)\n";
  return fallback;
}

}  // namespace trainpack::store
