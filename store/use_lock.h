#pragma once
// The cache's `lock` file (store/cache_dir.h): a use of an entry touches it holding the lock shared, prune checks and
// removes entries holding it exclusively, so an entry is never removed between a use's check and the use.
#include <filesystem>

namespace trainpack::store {

// The lock file of the cache at `root`.
std::filesystem::path lock_file_in(const std::filesystem::path& root);

class UseLock {
 public:
  explicit UseLock(const std::filesystem::path& file);  // a cache that cannot hold the file still works, unlocked
  ~UseLock();
  UseLock(const UseLock&) = delete;
  UseLock& operator=(const UseLock&) = delete;

  // Sets `entry`'s modification time to now (its last use); false when it is gone. Where that is not permitted (a
  // read-only cache) the entry is only checked.
  bool touch(const std::filesystem::path& entry) const;

 private:
  int fd_ = -1;
};

// The lock file held exclusively, for prune (blocking until shared holders let go). Its own open file: flock(2) on
// a descriptor this process already locks would convert that lock, not wait for it.
class ExclusiveUse {
 public:
  explicit ExclusiveUse(const std::filesystem::path& file);
  ~ExclusiveUse();
  ExclusiveUse(const ExclusiveUse&) = delete;
  ExclusiveUse& operator=(const ExclusiveUse&) = delete;

 private:
  int fd_;
};

}  // namespace trainpack::store
