// store::default_cache_dir: the variables it reads, and the per-user temp directory it falls back to when HOME
// cannot hold ~/.cache/trainpack (a container run with --user UID:GID gets HOME=/, which only root may write).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/env_guard.h"

namespace {

namespace fs = std::filesystem;
using trainpack::store::default_cache_dir;
using trainpack::testing::EnvGuard;

fs::path temp_cache() { return fs::temp_directory_path() / ("trainpack-cache-" + std::to_string(::geteuid())); }

TEST(DefaultCacheDir, VariablesComeFirst) {
  EnvGuard env;
  env.set("TRAINPACK_CACHE_DIR", "/x/tp");
  EXPECT_EQ(default_cache_dir(), fs::path("/x/tp"));
  env.unset("TRAINPACK_CACHE_DIR");
  env.set("XDG_CACHE_HOME", "/x/xdg");
  EXPECT_EQ(default_cache_dir(), fs::path("/x/xdg/trainpack"));
}

TEST(DefaultCacheDir, WritableHomeIsUsedAndCreated) {
  fs::path home = trainpack::make_temp_dir({}, "trainpack-home-");
  EnvGuard env;
  env.unset("TRAINPACK_CACHE_DIR");
  env.unset("XDG_CACHE_HOME");
  env.set("HOME", home.string());
  std::ostringstream note;
  EXPECT_EQ(default_cache_dir(&note), home / ".cache" / "trainpack");
  EXPECT_TRUE(fs::is_directory(home / ".cache" / "trainpack"));
  EXPECT_EQ(note.str(), "");
  fs::remove_all(home);
}

TEST(DefaultCacheDir, UnusableHomeFallsBackToTheUsersTempDirAndSaysSo) {
  fs::path home = trainpack::make_temp_dir({}, "trainpack-home-");
  std::ofstream(home / "file") << "not a directory";  // ENOTDIR below it, even for root
  EnvGuard env;
  env.unset("TRAINPACK_CACHE_DIR");
  env.unset("XDG_CACHE_HOME");
  env.set("HOME", (home / "file").string());
  std::ostringstream note;
  EXPECT_EQ(default_cache_dir(&note), temp_cache());
  struct stat st {};
  ASSERT_EQ(::stat(temp_cache().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(note.str(), "trainpack: cannot use the cache directory " + (home / "file/.cache/trainpack").string() +
                            " (Not a directory); using " + temp_cache().string() +
                            " (--cache-dir or TRAINPACK_CACHE_DIR choose another)\n");
  env.unset("HOME");
  EXPECT_EQ(default_cache_dir(), temp_cache());
  fs::remove_all(home);
}

}  // namespace
