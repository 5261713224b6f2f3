#include "store/cache_prune.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <set>
#include <string>
#include <utility>

#include "support/fs.h"

namespace trainpack::store {
namespace fs = std::filesystem;

namespace {

using Inodes = std::set<std::pair<dev_t, ino_t>>;

struct Entry {
  fs::path path;
  std::size_t kind;  // index in cache_layout()
  std::uint64_t bytes;
  timespec used;
};

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

// Bytes allocated to `path`, a file or a tree, counting each inode once across one measurement.
std::uint64_t allocated(const fs::path& path, Inodes& seen) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  std::uint64_t bytes = seen.insert({st.st_dev, st.st_ino}).second ? std::uint64_t(st.st_blocks) * 512 : 0;
  if (!S_ISDIR(st.st_mode)) return bytes;
  std::error_code ec;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
    bytes += allocated(it->path(), seen);
  return bytes;
}

// The entries `depth` levels below `dir`, skipping temporary names (support/fs.h's owner tags) and staging files.
void collect(const fs::path& dir, int depth, std::size_t kind, Inodes& seen, std::vector<Entry>& out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.starts_with('.') || has_owner_tag(name)) continue;
    if (depth > 1) {
      std::error_code type_ec;
      if (it->is_directory(type_ec)) collect(it->path(), depth - 1, kind, seen, out);
      continue;
    }
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    out.push_back({it->path(), kind, allocated(it->path(), seen), st.st_mtim});
  }
}

std::vector<Entry> cache_entries(const CacheDir& cache, Inodes& seen) {
  std::vector<Entry> entries;
  const std::vector<KindLayout>& layout = cache_layout();
  for (std::size_t k = 0; k < layout.size(); ++k)
    collect(cache.root() / layout[k].dir, layout[k].depth, k, seen, entries);
  return entries;
}

// When the oldest process that has the cache open started: the modification time of the oldest registration whose
// lock is held. Registrations nobody holds (their process is gone) are removed.
timespec oldest_user_start(const CacheDir& cache) {
  timespec oldest{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &oldest);
  std::error_code ec;
  for (fs::directory_iterator it(cache.users_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      ::unlink(it->path().c_str());
    } else if (::fstat(fd, &st) == 0 && before(st.st_mtim, oldest)) {
      oldest = st.st_mtim;
    }
    ::close(fd);
  }
  return oldest;
}

enum class Removal { kRemoved, kHeld, kGone };

// Renames the entry into tmp/ unless a use since `horizon` holds it, then deletes it there.
Removal remove_entry(const CacheDir& cache, const Entry& entry, const timespec& horizon) {
  static std::atomic<unsigned> counter{0};
  fs::path trash = cache.temp_dir() / ("pruned-" + temp_owner_tag() + "-" + std::to_string(counter++));
  {
    ExclusiveUse hold(cache.lock_file());
    struct stat st {};
    if (::lstat(entry.path.c_str(), &st) != 0) return Removal::kGone;
    if (!before(st.st_mtim, horizon)) return Removal::kHeld;
    if (::rename(entry.path.c_str(), trash.c_str()) != 0) return Removal::kGone;
  }
  std::error_code ec;
  fs::remove_all(trash, ec);
  return Removal::kRemoved;
}

bool wanted(const Entry& e, const PruneLimits& limits, std::uint64_t remaining, const timespec& now) {
  if (limits.all) return true;
  if (limits.max_bytes && remaining > *limits.max_bytes) return true;
  return limits.older_than && e.used.tv_sec < now.tv_sec - limits.older_than->count();
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
  for (const Entry& e : cache_entries(cache, seen)) {
    usage.kinds[e.kind].bytes += e.bytes;
    ++usage.kinds[e.kind].entries;
  }
  usage.other_bytes = allocated(cache.root(), seen);  // what the entries did not count: directories, tmp/, run/
  return usage;
}

PruneReport prune_cache(const CacheDir& cache, const PruneLimits& limits) {
  timespec horizon = oldest_user_start(cache);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  Inodes seen;
  std::vector<Entry> entries = cache_entries(cache, seen);
  PruneReport report;
  report.remaining_bytes = allocated(cache.root(), seen);
  for (const Entry& e : entries) report.remaining_bytes += e.bytes;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return before(a.used, b.used); });
  for (const Entry& e : entries) {
    if (!wanted(e, limits, report.remaining_bytes, now)) continue;
    switch (remove_entry(cache, e, horizon)) {
      case Removal::kRemoved:
        ++report.removed_entries;
        report.freed_bytes += e.bytes;
        report.remaining_bytes -= e.bytes;
        break;
      case Removal::kHeld: ++report.held_entries; break;
      case Removal::kGone: report.remaining_bytes -= e.bytes; break;
    }
  }
  return report;
}

std::uint64_t cache_cap(const fs::path& root, std::optional<std::uint64_t> chosen) {
  if (chosen) return *chosen;
  constexpr std::uint64_t kMostBytes = 20ull << 30;
  struct statvfs vfs {};
  if (::statvfs(root.c_str(), &vfs) != 0) return kMostBytes;
  return std::min(kMostBytes, std::uint64_t(vfs.f_blocks) * vfs.f_frsize / 4);
}

}  // namespace trainpack::store
