#pragma once
// How much the cache holds, and removing what was used least recently (store/cache_dir.h for what an entry and its
// last use are). BuildKit's garbage collection keeps its cache under a policy the same way (a size cap, least recently
// used first); `trainpack cache prune` is `docker builder prune`.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/cache_dir.h"

namespace trainpack::store {

struct KindUsage {
  CacheKind kind;
  std::uint64_t bytes = 0;  // allocated on disk, each file once however many names it has
  std::uint64_t entries = 0;
};

struct CacheUsage {
  std::vector<KindUsage> kinds;  // in cache_layout()'s order
  std::uint64_t other_bytes = 0;  // tmp/, run/, users/, the lock, the mark and what trainpack did not make
  std::vector<std::filesystem::path> strays;  // what trainpack did not make, relative to the root: never pruned
  std::vector<std::string> warnings;          // directories passed by: symbolic links out of the cache
  std::uint64_t total() const;
};

CacheUsage measure_cache(const CacheDir& cache);

struct PruneLimits {
  std::optional<std::uint64_t> max_bytes;             // remove least recently used entries until the cache fits
  std::optional<std::chrono::seconds> older_than;     // remove entries not used for this long
  bool all = false;                                   // remove every entry no running process holds
};

struct PruneReport {
  std::uint64_t removed_entries = 0;
  std::uint64_t freed_bytes = 0;
  std::uint64_t remaining_bytes = 0;
  std::uint64_t held_entries = 0;  // entries the limits would remove that a running process used: kept
  std::vector<std::string> warnings;  // directories passed by: symbolic links out of the cache
};

// Removes entries by the limits, least recently used first, never one used since the oldest running user of the
// cache started. An entry is renamed into tmp/ (holding the lock exclusively, after checking its last use again)
// before it is deleted, so no later build sees half of one.
PruneReport prune_cache(const CacheDir& cache, const PruneLimits& limits);

// Automatic pruning after a build: prune_cache to `cap`, unless the cache is known to be well under it. A walk stats
// every entry (milliseconds per thousand, on every build otherwise), so each walk records the cache's size and its
// filesystem's free space (`usage` in the root), and the next build walks again only when that size plus the free
// space lost since could reach 90% of the cap, when the record is a day old, or when it is missing or unreadable.
// nullopt when no walk was due, or when the cap is none (the largest value).
std::optional<PruneReport> keep_under_cap(const CacheDir& cache, std::uint64_t cap);

// The cap automatic pruning keeps the cache at `root` under: `chosen` when set (--cache-max-size,
// TRAINPACK_CACHE_MAX_SIZE), else the smaller of 20 GiB and a quarter of its filesystem.
std::uint64_t cache_cap(const std::filesystem::path& root, std::optional<std::uint64_t> chosen);

}  // namespace trainpack::store
