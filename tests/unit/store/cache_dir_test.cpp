#include "store/cache_dir.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "image/digest.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/cache_test_support.h"

namespace {

namespace fs = std::filesystem;
using trainpack::store::CacheArea;
using trainpack::store::CacheDir;
using trainpack::store::CacheKind;

using trainpack::test_support::age;
using trainpack::test_support::key_of;
using trainpack::test_support::error_of;
using trainpack::test_support::tree_of;

time_t mtime(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mtime;
}

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

TEST(CacheDir, EveryKindHasADirectoryOfItsOwnAndAFileIsTracedToItsEntry) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  CacheDir cache(dir.path());
  std::set<std::string> names;
  for (const trainpack::store::KindLayout& k : trainpack::store::cache_layout()) names.insert(std::string(k.dir));
  EXPECT_EQ(names.size(), trainpack::store::cache_layout().size());

  const fs::path blob = cache.blobs().path_of(trainpack::image::sha256_of("x"));
  const fs::path scans = cache.area(CacheKind::kScans).dir();
  const fs::path steps = cache.area(CacheKind::kPipSteps).dir();
  const fs::path interpreters = cache.area(CacheKind::kInterpreters).dir();
  EXPECT_EQ(cache.entry_of(blob), blob) << "blobs/ holds ALGORITHM/HEX";
  EXPECT_EQ(cache.entry_of(scans / "python" / "k" / "files" / "usr" / "x"), scans / "python" / "k");
  EXPECT_EQ(cache.entry_of(steps / "k.entries"), steps / "k.entries");
  EXPECT_EQ(cache.entry_of(interpreters / "k" / "root" / "bin"), interpreters / "k");
  EXPECT_FALSE(cache.entry_of(scans / "python").has_value()) << "a selection is not an entry";
  EXPECT_FALSE(cache.entry_of(cache.temp_dir() / "pip-x").has_value()) << "work directories are no entries";
  EXPECT_FALSE(cache.entry_of(cache.run_dir() / "bundle").has_value());
  EXPECT_FALSE(cache.entry_of("/etc/passwd").has_value());
  EXPECT_EQ(cache.area(CacheKind::kScans).path_of("python/k"), scans / "python" / "k");
  for (const trainpack::store::KindLayout& k : trainpack::store::cache_layout())
    EXPECT_EQ(cache.area(k.kind).dir(), trainpack::store::kind_dir(cache.root(), k.kind));
}

TEST(CacheDir, AUseRecordsItsTimeAndSaysWhetherTheEntryIsThere) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  CacheDir cache(dir.path());
  CacheArea steps = cache.area(CacheKind::kPipSteps);
  fs::create_directories(steps.dir());
  trainpack::write_file_atomic(steps.path_of("k.entries"), "entry");
  age(steps.path_of("k.entries"), 3600);
  EXPECT_TRUE(steps.use("k.entries"));
  EXPECT_GE(mtime(steps.path_of("k.entries")), ::time(nullptr) - 5) << "the use is its last use";
  EXPECT_FALSE(steps.use("missing.entries"));
  EXPECT_FALSE(fs::exists(steps.path_of("missing.entries"))) << "a use creates nothing";

  trainpack::store::StoredBlob blob = cache.blobs().put("bytes");
  age(cache.blobs().path_of(blob.digest), 3600);
  EXPECT_TRUE(cache.blobs().has(blob.digest));
  EXPECT_GE(mtime(cache.blobs().path_of(blob.digest)), ::time(nullptr) - 5) << "has() is a use";
}

TEST(CacheDir, AFileInsideAnEntryUsesTheEntryAndAFileOutsideIsOnlyChecked) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  CacheDir cache(dir.path() / "cache");
  fs::path entry = cache.area(CacheKind::kScans).path_of("python/k");
  fs::create_directories(entry / "files");
  trainpack::write_file_atomic(entry / "files" / "f", "x");
  age(entry, 3600);
  EXPECT_TRUE(cache.use_path(entry / "files" / "f"));
  EXPECT_GE(mtime(entry), ::time(nullptr) - 5);
  EXPECT_FALSE(cache.use_path(entry / "files" / "gone"));

  fs::path users_file = dir.path() / "wheel.whl";
  trainpack::write_file_atomic(users_file, "zip");
  age(users_file, 3600);
  EXPECT_TRUE(cache.use_path(users_file));
  EXPECT_LT(mtime(users_file), ::time(nullptr) - 3000) << "a file outside the cache is never touched";
  EXPECT_FALSE(cache.use_path(dir.path() / "no-such.whl"));
}

TEST(CacheDir, AnOpenCacheIsRegisteredAsInUseUntilItCloses) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  {
    CacheDir first(dir.path());
    EXPECT_EQ(files_in(first.users_dir()), 1u);
    {
      CacheDir second(dir.path());
      EXPECT_EQ(files_in(first.users_dir()), 2u);
    }
    EXPECT_EQ(files_in(first.users_dir()), 1u);
  }
  EXPECT_EQ(files_in(dir.path() / "users"), 0u);
}

TEST(CacheDir, WhatAKilledProcessLeftIsSweptAndALiveOnesIsNot) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  CacheDir cache(dir.path());
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  std::string mine = trainpack::temp_owner_tag();
  std::string dead = "p" + std::to_string(child) + mine.substr(mine.find('.'));
  fs::path selection = cache.area(CacheKind::kScans).path_of("python");
  fs::create_directories(selection);
  for (const fs::path& leftover : {cache.temp_dir() / ("pip-" + dead + "-x"), selection / (".k.tmp-" + dead + "-0"),
                                   cache.users_dir() / ("user-" + dead + "-x")})
    trainpack::write_file_atomic(leftover, "");
  trainpack::write_file_atomic(cache.temp_dir() / ("pip-" + mine + "-x"), "");
  EXPECT_EQ(cache.sweep_leftovers(), 3);
  EXPECT_TRUE(fs::exists(cache.temp_dir() / ("pip-" + mine + "-x")));
  EXPECT_EQ(files_in(selection), 0u);
  EXPECT_EQ(files_in(cache.users_dir()), 1u) << "this process's own registration stays";
}

// A build sweeps only when a process that had the cache open was killed: its registration is there, held by nobody.
TEST(CacheDirTest, OnlyARegistrationNobodyHoldsCallsForASweepWhichRemovesIt) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  CacheDir cache(dir.path());
  CacheDir other(dir.path());
  EXPECT_FALSE(cache.has_dead_users()) << "both registrations are held";
  trainpack::write_file_atomic(cache.users_dir() / "user-killed", "");
  EXPECT_TRUE(cache.has_dead_users());
  EXPECT_EQ(cache.sweep_leftovers(), 1);
  EXPECT_FALSE(fs::exists(cache.users_dir() / "user-killed"));
  EXPECT_FALSE(cache.has_dead_users());
  EXPECT_EQ(files_in(cache.users_dir()), 2u);
}

// A cache is marked when it is made (a CACHEDIR.TAG, https://bford.info/cachedir/, naming trainpack), so that a
// --cache-dir naming another directory (a typo, $HOME) is told apart: refused in one line before anything in it is
// read, made or removed, even when it holds directories called as the cache's are.
TEST(CacheDir, ANewCacheIsMarkedAndADirectoryThatIsNotOneIsRefusedAsItIs) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  {
    CacheDir cache(dir.path() / "new");
    EXPECT_TRUE(trainpack::read_file(cache.root() / "CACHEDIR.TAG").starts_with(
        "Signature: 8a477f597d28d172789f06886806bc55\n"));
  }
  EXPECT_EQ(error_of([&] { CacheDir again(dir.path() / "new"); }), "(no error)");

  const fs::path project = dir.path() / "project";
  for (const fs::path& f : {project / "layers" / (key_of("mine") + ".json"), project / "users" / "alice",
                            project / "notes.txt"})
    trainpack::test_support::write_aged(f, "mine", 1000);
  // Another program's cache is tagged too, but not as trainpack's.
  trainpack::write_file_atomic(project / "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n");
  const std::set<std::string> before = tree_of(project);
  std::string err = error_of([&] { CacheDir cache(project); });
  EXPECT_EQ(err, project.string() + " is not a trainpack cache");
  EXPECT_EQ(tree_of(project), before);
}

// A cache an earlier trainpack made has no mark: its lock and blob store say what it is, and a build marks it.
TEST(CacheDir, AnUnmarkedCacheWithTheLayoutOfOneIsAdopted) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  const fs::path root = dir.path() / "cache";
  fs::create_directories(root / "blobs" / "sha256");
  fs::create_directories(root / "tmp");
  trainpack::write_file_atomic(root / "lock", "");
  trainpack::test_support::write_aged(root / "layers" / (key_of("l") + ".json"), "{}", 1000);
  CacheDir cache(root);
  EXPECT_TRUE(fs::exists(root / "CACHEDIR.TAG"));
  EXPECT_TRUE(fs::exists(root / "layers" / (key_of("l") + ".json")));
}

// A directory of the cache that is a file is named as such, not reported as "File exists" about the cache.
TEST(CacheDir, ADirectoryOfTheCacheThatIsAFileIsNamed) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-dir-"));
  for (const char* sub : {"blobs", "tmp", "layers", "users"}) {
    const fs::path root = dir.path() / sub;
    { CacheDir made(root); }
    fs::remove_all(root / sub);
    trainpack::write_file_atomic(root / sub, "");
    EXPECT_EQ(error_of([&] { CacheDir cache(root); }), (root / sub).string() + " is a file, not a directory");
  }
  trainpack::write_file_atomic(dir.path() / "file", "");
  EXPECT_EQ(error_of([&] { CacheDir cache(dir.path() / "file"); }),
            (dir.path() / "file").string() + " is a file, not a directory");
}

}  // namespace
