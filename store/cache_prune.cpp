#include "store/cache_prune.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "support/error.h"
#include "support/fs.h"

namespace trainpack::store {
namespace fs = std::filesystem;

namespace {

using Inodes = std::set<std::pair<dev_t, ino_t>>;

// A descriptor closed with its holder.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

// The directory `name` in `parent`, never through a symbolic link (O_NOFOLLOW): what a cache directory holds is
// walked, renamed and measured where it is, so a link cannot lead prune to another directory's files.
Fd open_dir_at(int parent, const std::string& name) {
  return Fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// The names in the directory `dir` ("." and ".." aside).
std::vector<std::string> names_in(int dir) {
  std::vector<std::string> names;
  int own = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // closedir closes it, not `dir`
  DIR* d = own >= 0 ? ::fdopendir(own) : nullptr;
  if (!d) {
    if (own >= 0) ::close(own);
    return names;
  }
  while (const dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(d);
  return names;
}

struct Entry {
  std::vector<std::string> parts;  // from the root: the kind's directory, for scans its selection, the entry
  std::size_t kind;                // index in cache_layout()
  std::uint64_t bytes;
  timespec used;
};

// What a walk of the kinds' directories found.
struct Listing {
  std::vector<Entry> entries;
  std::vector<fs::path> strays;       // relative to the root
  std::vector<std::string> warnings;  // symbolic links passed by
};

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

// Bytes allocated to `name` in `dir`, a file or a tree, counting each inode once across one measurement.
std::uint64_t allocated(int dir, const std::string& name, Inodes& seen) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  std::uint64_t bytes = seen.insert({st.st_dev, st.st_ino}).second ? std::uint64_t(st.st_blocks) * 512 : 0;
  if (!S_ISDIR(st.st_mode)) return bytes;
  Fd sub = open_dir_at(dir, name);
  if (!sub.ok()) return bytes;
  for (const std::string& child : names_in(sub.get())) bytes += allocated(sub.get(), child, seen);
  return bytes;
}

std::string link_passed_by(const fs::path& link) {
  return link.string() + " is a symbolic link: not followed, nothing in it pruned";
}

std::string relative_path(const std::vector<std::string>& parts) {
  fs::path p;
  for (const std::string& part : parts) p /= part;
  return p.string();
}

// Walks the directory `parts` names (opened as `dir`) `depth` levels down to the entries of `kind`: a name of the
// kind's shape is an entry (or a selection), a temporary name is skipped, anything else is a stray.
void collect(const fs::path& root, int dir, std::vector<std::string>& parts, int depth, std::size_t kind,
             Inodes& seen, Listing& out) {
  const KindLayout& layout = cache_layout()[kind];
  for (const std::string& name : names_in(dir)) {
    if (name.starts_with('.') || has_owner_tag(name)) continue;  // staging and temporaries: swept, never pruned
    parts.push_back(name);
    struct stat st {};
    bool there = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    bool made = depth > 1 ? is_group_name(layout, name) && S_ISDIR(st.st_mode)
                          : is_entry_name(layout, name) && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
    if (there && depth > 1 && S_ISLNK(st.st_mode) && is_group_name(layout, name)) {
      out.warnings.push_back(link_passed_by(root / relative_path(parts)));
    } else if (there && !made) {
      out.strays.push_back(relative_path(parts));
    } else if (there && depth > 1) {
      Fd sub = open_dir_at(dir, name);
      if (sub.ok()) collect(root, sub.get(), parts, depth - 1, kind, seen, out);
    } else if (there) {
      out.entries.push_back({parts, kind, allocated(dir, name, seen), st.st_mtim});
    }
    parts.pop_back();
  }
}

Listing list_cache(const CacheDir& cache, Inodes& seen) {
  Listing listing;
  Fd root(::open(cache.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.ok()) return listing;
  const std::vector<KindLayout>& layout = cache_layout();
  for (std::size_t k = 0; k < layout.size(); ++k) {
    std::vector<std::string> parts{std::string(layout[k].dir)};
    Fd dir = open_dir_at(root.get(), parts[0]);
    struct stat st {};
    if (dir.ok()) {
      collect(cache.root(), dir.get(), parts, layout[k].depth, k, seen, listing);
    } else if (::fstatat(root.get(), parts[0].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      listing.warnings.push_back(link_passed_by(cache.root() / parts[0]));
    }
  }
  return listing;
}

// Bytes allocated to the cache that no entry counted: directories, tmp/, run/, users/, the lock, strays.
std::uint64_t other_bytes(const CacheDir& cache, Inodes& seen) {
  Fd root(::open(cache.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat st {};
  if (!root.ok() || ::fstat(root.get(), &st) != 0) return 0;
  std::uint64_t bytes = seen.insert({st.st_dev, st.st_ino}).second ? std::uint64_t(st.st_blocks) * 512 : 0;
  for (const std::string& name : names_in(root.get())) bytes += allocated(root.get(), name, seen);
  return bytes;
}

// When the oldest process that has the cache open started: the modification time of the oldest registration whose
// lock is held; nullopt when users/ is a symbolic link (what it holds is not known to be registrations). Registrations
// nobody holds (their process is gone) are left for the next build, which sweeps what their process left first
// (CacheDir::has_dead_users).
std::optional<timespec> oldest_user_start(const CacheDir& cache) {
  timespec oldest{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &oldest);
  Fd users(::open(cache.users_dir().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  std::error_code ec;
  if (!users.ok()) return fs::is_symlink(cache.users_dir(), ec) ? std::nullopt : std::optional(oldest);
  for (const std::string& name : names_in(users.get())) {
    Fd user(::openat(users.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!user.ok()) continue;
    if (::flock(user.get(), LOCK_EX | LOCK_NB) != 0 && ::fstat(user.get(), &st) == 0 && before(st.st_mtim, oldest)) {
      oldest = st.st_mtim;
    }
  }
  return oldest;
}

enum class Removal { kRemoved, kHeld, kGone };

// The directory holding `entry`, opened from the root without following a link on the way.
Fd parent_of(const CacheDir& cache, const Entry& entry) {
  Fd dir(::open(cache.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (std::size_t i = 0; i + 1 < entry.parts.size() && dir.ok(); ++i) dir = open_dir_at(dir.get(), entry.parts[i]);
  return dir;
}

// Renames the entry into tmp/ unless a use since `horizon` holds it, then deletes it there.
Removal remove_entry(const CacheDir& cache, const Entry& entry, const timespec& horizon) {
  static std::atomic<unsigned> counter{0};
  const std::string trash = "pruned-" + temp_owner_tag() + "-" + std::to_string(counter++);
  const std::string& name = entry.parts.back();
  Fd parent = parent_of(cache, entry);
  Fd temp(::open(cache.temp_dir().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!parent.ok() || !temp.ok()) return Removal::kGone;
  {
    ExclusiveUse hold(cache.lock_file());
    struct stat st {};
    if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Removal::kGone;
    if (!before(st.st_mtim, horizon)) return Removal::kHeld;
    if (::renameat(parent.get(), name.c_str(), temp.get(), trash.c_str()) != 0) return Removal::kGone;
  }
  std::error_code ec;
  fs::remove_all(cache.temp_dir() / trash, ec);
  return Removal::kRemoved;
}

bool wanted(const Entry& e, const PruneLimits& limits, std::uint64_t remaining, const timespec& now) {
  if (limits.all) return true;
  if (limits.max_bytes && remaining > *limits.max_bytes) return true;
  return limits.older_than && e.used.tv_sec < now.tv_sec - limits.older_than->count();
}

// The size a walk measured, with its filesystem's free space and the time then (the cache's `usage` file, one line
// "BYTES FREE SECONDS"): how automatic pruning knows the cache is under its cap without walking it.
struct UsageRecord {
  std::uint64_t bytes = 0;
  std::uint64_t free = 0;
  std::int64_t measured = 0;  // seconds since the epoch
};

constexpr std::string_view kUsageFile = "usage";
constexpr std::int64_t kWalkAtLeastEvery = 24 * 3600;

std::optional<std::uint64_t> free_bytes(const fs::path& root) {
  struct statvfs vfs {};
  if (::statvfs(root.c_str(), &vfs) != 0) return std::nullopt;
  return std::uint64_t(vfs.f_bavail) * vfs.f_frsize;
}

std::int64_t seconds_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec;
}

// The record, or nullopt when it is missing or not of its shape (the cache is input: a walk is the answer).
std::optional<UsageRecord> read_usage(const CacheDir& cache) {
  struct stat st {};
  const fs::path file = cache.root() / kUsageFile;
  if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  try {
    const std::string text = read_file(file, 256, "the cache's usage record");
    if (text.find_first_not_of("0123456789 \n") != std::string::npos) return std::nullopt;  // no sign, no junk
    std::istringstream in(text);
    UsageRecord r;
    std::string rest;
    if (!(in >> r.bytes >> r.free >> r.measured) || (in >> rest)) return std::nullopt;
    return r;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::uint64_t usage_file_bytes(const CacheDir& cache) {
  struct stat st {};
  return ::lstat((cache.root() / kUsageFile).c_str(), &st) == 0 ? std::uint64_t(st.st_blocks) * 512 : 0;
}

// Records `bytes` and returns them with the record's own change in size (its first block). Best effort: a record
// that cannot be written only means the next build walks.
std::uint64_t write_usage(const CacheDir& cache, std::uint64_t bytes) {
  std::optional<std::uint64_t> free = free_bytes(cache.root());
  if (!free) return bytes;
  const std::uint64_t before = usage_file_bytes(cache);
  try {
    write_file_atomic(cache.root() / kUsageFile, std::to_string(bytes) + " " + std::to_string(*free) + " " +
                                                     std::to_string(seconds_now()) + "\n");
  } catch (const std::exception&) {
    return bytes;
  }
  return bytes - std::min(bytes, before) + usage_file_bytes(cache);
}

bool walk_due(const CacheDir& cache, std::uint64_t cap) {
  std::optional<UsageRecord> last = read_usage(cache);
  std::optional<std::uint64_t> free = free_bytes(cache.root());
  const std::int64_t now = seconds_now();
  if (!last || !free || now < last->measured || now - last->measured >= kWalkAtLeastEvery) return true;
  const std::uint64_t grown = last->free > *free ? last->free - *free : 0;
  return grown > cap || last->bytes >= cap / 10 * 9 - std::min(grown, cap / 10 * 9);
}

}  // namespace

std::uint64_t CacheUsage::total() const {
  std::uint64_t sum = other_bytes;
  for (const KindUsage& k : kinds) sum += k.bytes;
  return sum;
}

CacheUsage measure_cache(const CacheDir& cache) {
  Inodes seen;
  CacheUsage usage;
  for (const KindLayout& k : cache_layout()) usage.kinds.push_back({k.kind});
  Listing listing = list_cache(cache, seen);
  for (const Entry& e : listing.entries) {
    usage.kinds[e.kind].bytes += e.bytes;
    ++usage.kinds[e.kind].entries;
  }
  usage.other_bytes = other_bytes(cache, seen);
  usage.strays = std::move(listing.strays);
  std::sort(usage.strays.begin(), usage.strays.end());
  usage.warnings = std::move(listing.warnings);
  return usage;
}

PruneReport prune_cache(const CacheDir& cache, const PruneLimits& limits) {
  std::optional<timespec> horizon = oldest_user_start(cache);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  Inodes seen;
  Listing listing = list_cache(cache, seen);
  PruneReport report;
  report.warnings = std::move(listing.warnings);
  report.remaining_bytes = other_bytes(cache, seen);
  for (const Entry& e : listing.entries) report.remaining_bytes += e.bytes;
  if (!horizon) {
    report.warnings.push_back(cache.users_dir().string() + " is a symbolic link: which builds use the cache is "
                              "unknown, nothing pruned");
    return report;
  }
  std::vector<Entry>& entries = listing.entries;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return before(a.used, b.used); });
  for (const Entry& e : entries) {
    if (!wanted(e, limits, report.remaining_bytes, now)) continue;
    switch (remove_entry(cache, e, *horizon)) {
      case Removal::kRemoved:
        ++report.removed_entries;
        report.freed_bytes += e.bytes;
        report.remaining_bytes -= e.bytes;
        break;
      case Removal::kHeld: ++report.held_entries; break;
      case Removal::kGone: report.remaining_bytes -= e.bytes; break;
    }
  }
  report.remaining_bytes = write_usage(cache, report.remaining_bytes);
  return report;
}

std::optional<PruneReport> keep_under_cap(const CacheDir& cache, std::uint64_t cap) {
  if (cap == std::numeric_limits<std::uint64_t>::max() || !walk_due(cache, cap)) return std::nullopt;
  PruneLimits limits;
  limits.max_bytes = cap;
  return prune_cache(cache, limits);
}

std::uint64_t cache_cap(const fs::path& root, std::optional<std::uint64_t> chosen) {
  if (chosen) return *chosen;
  constexpr std::uint64_t kMostBytes = 20ull << 30;
  struct statvfs vfs {};
  if (::statvfs(root.c_str(), &vfs) != 0) return kMostBytes;
  return std::min(kMostBytes, std::uint64_t(vfs.f_blocks) * vfs.f_frsize / 4);
}

}  // namespace trainpack::store
