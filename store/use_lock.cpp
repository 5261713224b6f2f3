#include "store/use_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace trainpack::store {

std::filesystem::path lock_file_in(const std::filesystem::path& root) { return root / "lock"; }

UseLock::UseLock(const std::filesystem::path& file) {
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);  // flock needs no write access
}

UseLock::~UseLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool UseLock::touch(const std::filesystem::path& entry) const {
  bool locked = fd_ >= 0 && ::flock(fd_, LOCK_SH) == 0;
  int rc = ::utimensat(AT_FDCWD, entry.c_str(), nullptr, 0);
  int err = errno;
  if (locked) ::flock(fd_, LOCK_UN);
  if (rc == 0) return true;
  if (err != EACCES && err != EPERM && err != EROFS) return false;
  struct stat st {};
  return ::stat(entry.c_str(), &st) == 0;
}

ExclusiveUse::ExclusiveUse(const std::filesystem::path& file) : fd_(::open(file.c_str(), O_RDONLY | O_CLOEXEC)) {
  if (fd_ >= 0)
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
}

ExclusiveUse::~ExclusiveUse() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace trainpack::store
