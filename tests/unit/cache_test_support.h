#pragma once
// Helpers for the tests of store/: entries made to look used some time ago.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>

namespace trainpack::test_support {

// Sets `path`'s modification time, an entry's last use, `seconds` into the past.
inline void age(const std::filesystem::path& path, int seconds) {
  struct timespec times[2] = {{::time(nullptr) - seconds, 0}, {::time(nullptr) - seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

}  // namespace trainpack::test_support
