#pragma once
// Helpers for the tests of store/: entries named as trainpack names them, made to look used some time ago.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "image/digest.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/error_of.h"

namespace trainpack::test_support {

// Sets `path`'s modification time, an entry's last use, `seconds` into the past.
inline void age(const std::filesystem::path& path, int seconds) {
  struct timespec times[2] = {{::time(nullptr) - seconds, 0}, {::time(nullptr) - seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// A file with `bytes` at `path` (its directories made), last used `seconds` ago.
inline void write_aged(const std::filesystem::path& path, const std::string& bytes, int seconds) {
  std::filesystem::create_directories(path.parent_path());
  trainpack::write_file_atomic(path, bytes);
  age(path, seconds);
}

// Every path below `dir`, with its size for files: what a refused open must leave as it was.
inline std::set<std::string> tree_of(const std::filesystem::path& dir) {
  std::set<std::string> tree;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    tree.insert(e.path().lexically_relative(dir).string() +
                (e.is_regular_file() ? " " + std::to_string(e.file_size()) : ""));
  return tree;
}

// A key shaped as trainpack names entries (a digest's hex), made from `seed`.
inline std::string key_of(const std::string& seed) { return image::sha256_of(seed).hex(); }

}  // namespace trainpack::test_support
