#include "store/cache_prune.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/fs.h"
#include "tests/unit/cache_test_support.h"

namespace {

namespace fs = std::filesystem;
using trainpack::store::cache_cap;
using trainpack::store::CacheArea;
using trainpack::store::CacheDir;
using trainpack::store::CacheKind;
using trainpack::store::PruneLimits;
using trainpack::store::PruneReport;
using trainpack::test_support::age;
using trainpack::test_support::key_of;

// The name of the pip-step entry for `seed`: a key as trainpack makes one.
std::string step_name(const std::string& seed) { return key_of(seed) + ".entries"; }

// A pip-step entry of `kib` KiB, last used `seconds` ago.
fs::path step_entry(const CacheDir& cache, const std::string& seed, int kib, int seconds) {
  CacheArea steps = cache.area(CacheKind::kPipSteps);
  fs::create_directories(steps.dir());
  trainpack::write_file_atomic(steps.path_of(step_name(seed)), std::string(kib * 1024, 'x'));
  age(steps.path_of(step_name(seed)), seconds);
  return steps.path_of(step_name(seed));
}

// The registration of the only other open CacheDir, made to look `seconds` old: a build running that long.
void started_ago(const CacheDir& cache, int seconds) {
  for (const auto& e : fs::directory_iterator(cache.users_dir())) age(e.path(), seconds);
}

const trainpack::store::KindUsage& usage_of(const trainpack::store::CacheUsage& usage, CacheKind kind) {
  for (const trainpack::store::KindUsage& k : usage.kinds)
    if (k.kind == kind) return k;
  throw std::logic_error("no such kind");
}

PruneLimits max_bytes(std::uint64_t bytes) {
  PruneLimits limits;
  limits.max_bytes = bytes;
  return limits;
}

PruneLimits all() {
  PruneLimits limits;
  limits.all = true;
  return limits;
}

TEST(CachePrune, LeastRecentlyUsedEntriesGoFirstUntilTheCacheFitsItsCap) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir cache(dir.path());
  fs::path oldest = step_entry(cache, "a", 100, 400);
  trainpack::store::StoredBlob blob = cache.blobs().put(std::string(100 * 1024, 'b'));
  age(cache.blobs().path_of(blob.digest), 300);
  fs::path newer = step_entry(cache, "c", 100, 200);
  fs::path newest = step_entry(cache, "d", 100, 100);

  std::uint64_t before = trainpack::store::measure_cache(cache).total();
  PruneReport report = trainpack::store::prune_cache(cache, max_bytes(before - 150 * 1024));
  EXPECT_EQ(report.removed_entries, 2u);
  EXPECT_FALSE(fs::exists(oldest));
  EXPECT_FALSE(cache.blobs().has(blob.digest));
  EXPECT_TRUE(fs::exists(newer));
  EXPECT_TRUE(fs::exists(newest));
  EXPECT_LE(report.remaining_bytes, before - 150 * 1024);
  EXPECT_EQ(report.remaining_bytes, trainpack::store::measure_cache(cache).total());
  EXPECT_EQ(trainpack::store::prune_cache(cache, max_bytes(before)).removed_entries, 0u) << "it fits already";
}

TEST(CachePrune, OlderThanRemovesOnlyEntriesUnusedThatLong) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir cache(dir.path());
  fs::path old = step_entry(cache, "old", 1, 8 * 86400);
  fs::path recent = step_entry(cache, "recent", 1, 3600);
  PruneLimits week;
  week.older_than = std::chrono::hours(24 * 7);
  EXPECT_EQ(trainpack::store::prune_cache(cache, week).removed_entries, 1u);
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(recent));
}

TEST(CachePrune, WhatARunningBuildUsedSinceItStartedStaysAndAGoneBuildHoldsNothing) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  fs::path before_it, since_it;
  {
    CacheDir running(dir.path());
    started_ago(running, 150);
    before_it = step_entry(running, "before", 1, 300);
    since_it = step_entry(running, "since", 1, 100);
    // A registration nobody holds: a build killed before it could remove it, however long ago it started.
    trainpack::write_file_atomic(running.users_dir() / "user-stale", "");
    age(running.users_dir() / "user-stale", 100000);

    CacheDir pruner(dir.path());
    PruneReport report = trainpack::store::prune_cache(pruner, all());
    EXPECT_EQ(report.removed_entries, 1u);
    EXPECT_EQ(report.held_entries, 1u);
    EXPECT_FALSE(fs::exists(before_it));
    EXPECT_TRUE(fs::exists(since_it)) << "used after the running build started";
    EXPECT_TRUE(fs::exists(running.users_dir() / "user-stale")) << "left for a build to sweep after";
  }
  CacheDir later(dir.path());
  EXPECT_EQ(trainpack::store::prune_cache(later, all()).removed_entries, 1u) << "the build is gone: it holds nothing";
  EXPECT_FALSE(fs::exists(since_it));
}

TEST(CachePrune, ADirectoryEntryGoesWholeAndNothingIsLeftBehind) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir cache(dir.path());
  fs::path entry = cache.area(CacheKind::kScans).path_of("python/" + key_of("layer") + "-" + key_of("diff"));
  fs::create_directories(entry / "files" / "usr" / "lib");
  trainpack::write_file_atomic(entry / "listing.json", "[]");
  trainpack::write_file_atomic(entry / "files" / "usr" / "lib" / "os.py", "import sys\n");
  age(entry, 1000);
  EXPECT_EQ(usage_of(trainpack::store::measure_cache(cache), CacheKind::kScans).entries, 1u);
  PruneReport report = trainpack::store::prune_cache(cache, all());
  EXPECT_EQ(report.removed_entries, 1u);
  EXPECT_FALSE(fs::exists(entry));
  EXPECT_TRUE(fs::is_empty(cache.temp_dir())) << "the renamed entry is deleted";
}

TEST(CachePrune, AFileWithTwoNamesIsCountedOnce) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir cache(dir.path());
  trainpack::store::StoredBlob blob = cache.blobs().put(std::string(64 * 1024, 'z'));
  std::uint64_t once = usage_of(trainpack::store::measure_cache(cache), CacheKind::kBlobs).bytes;
  fs::path copy = cache.area(CacheKind::kBuiltWheels).path_of(key_of("k"));
  fs::create_directories(copy);
  fs::create_hard_link(cache.blobs().path_of(blob.digest), copy / "x.whl");
  trainpack::store::CacheUsage usage = trainpack::store::measure_cache(cache);
  EXPECT_EQ(usage_of(usage, CacheKind::kBlobs).bytes, once);
  EXPECT_LT(usage_of(usage, CacheKind::kBuiltWheels).bytes, 64u * 1024)
      << "only the directory: its file was counted among the blobs";
}

// The guarantee builds rely on: an entry whose use succeeded is never removed after it, however a prune interleaves.
TEST(CachePrune, AnEntryWhoseUseSucceededIsNeverRemovedAfterIt) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir running(dir.path());
  started_ago(running, 500);
  constexpr int kEntries = 300;
  for (int i = 0; i < kEntries; ++i) step_entry(running, "k" + std::to_string(i), 1, 1000);
  CacheArea steps = running.area(CacheKind::kPipSteps);
  std::vector<char> used(kEntries, 0);
  std::thread user([&] {
    for (int i = 0; i < kEntries; i += 2) used[i] = steps.use(step_name("k" + std::to_string(i)));
  });
  CacheDir pruner(dir.path());
  trainpack::store::prune_cache(pruner, all());
  user.join();
  for (int i = 0; i < kEntries; ++i) {
    bool there = fs::exists(steps.path_of(step_name("k" + std::to_string(i))));
    if (used[i]) {
      EXPECT_TRUE(there) << "k" << i << " was removed after a use found it";
    } else if (i % 2 == 1) {
      EXPECT_FALSE(there) << "k" << i << " was never used";
    }
  }
}

// A file trainpack did not make (a note, an editor's backup, someone's directory) is no entry, whatever it is called
// and wherever it lies: prune leaves it, and measuring lists it apart.
TEST(CachePrune, OnlyNamesTrainpackMakesArePrunedAndEverythingElseIsLeftAlone) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir cache(dir.path());
  fs::path step = step_entry(cache, "a", 1, 1000);
  trainpack::store::StoredBlob blob = cache.blobs().put("blob");
  age(cache.blobs().path_of(blob.digest), 1000);
  const fs::path root = cache.root();
  const std::vector<fs::path> strays{root / "sboms" / "notes.txt",
                                     root / "blobs" / "sha256" / "notes.txt",
                                     root / "layers" / "notes.txt",
                                     root / "layers" / "mine" / "x.json",
                                     root / "pip-steps" / (step_name("b") + "~"),
                                     root / "scans" / "notes.txt",
                                     root / "blobs" / "notes.txt",
                                     root / "checked-layers" / key_of("c").substr(1)};
  for (const fs::path& s : strays) {
    fs::create_directories(s.parent_path());
    trainpack::write_file_atomic(s, "mine");
    age(s, 1000);
  }
  PruneReport report = trainpack::store::prune_cache(cache, all());
  EXPECT_EQ(report.removed_entries, 2u);
  EXPECT_FALSE(fs::exists(step));
  EXPECT_FALSE(fs::exists(cache.blobs().path_of(blob.digest)));
  for (const fs::path& s : strays) EXPECT_TRUE(fs::exists(s)) << s;

  trainpack::store::CacheUsage usage = trainpack::store::measure_cache(cache);
  EXPECT_EQ(usage_of(usage, CacheKind::kLayers).entries, 0u);
  std::vector<fs::path> listed = usage.strays;
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, (std::vector<fs::path>{"blobs/notes.txt", "blobs/sha256/notes.txt",
                                           "checked-layers/" + key_of("c").substr(1), "layers/mine",
                                           "layers/notes.txt", "pip-steps/" + step_name("b") + "~", "sboms/notes.txt",
                                           "scans/notes.txt"}));
}

// The SBOM area holds its kinds of entry (an SBOM's blob digest or text, an image's package list, a layer's file
// list): each is pruned
// as an entry, none is taken for a stray.
TEST(CachePrune, EveryKindOfSbomEntryIsAnEntry) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir cache(dir.path());
  const fs::path sboms = cache.area(CacheKind::kSboms).dir();
  fs::create_directories(sboms);
  const std::vector<fs::path> entries{sboms / (key_of("sbom") + ".blob"), sboms / (key_of("text") + ".json"),
                                      sboms / ("packages-" + key_of("p") + ".json"),
                                      sboms / ("files-" + key_of("f") + ".json")};
  for (const fs::path& e : entries) {
    trainpack::write_file_atomic(e, "[]");
    age(e, 1000);
  }
  trainpack::store::CacheUsage usage = trainpack::store::measure_cache(cache);
  EXPECT_EQ(usage_of(usage, CacheKind::kSboms).entries, 4u);
  EXPECT_TRUE(usage.strays.empty());
  PruneReport report = trainpack::store::prune_cache(cache, all());
  EXPECT_EQ(report.removed_entries, 4u);
  for (const fs::path& e : entries) EXPECT_FALSE(fs::exists(e)) << e;
}

// A kind's directory, a directory inside one or an entry that is a symbolic link leads out of the cache: prune never
// follows one, so what it points at stays whole, and says which it passed by.
TEST(CachePrune, ASymbolicLinkInTheCacheIsNeverFollowed) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-prune-"));
  CacheDir cache(dir.path() / "cache");
  const fs::path outside = dir.path() / "outside";
  fs::create_directories(outside);
  const std::vector<fs::path> held{outside / (key_of("layer") + ".json"), outside / key_of("blob"),
                                   outside / (key_of("layer") + "-" + key_of("diff")), outside / step_name("s")};
  for (const fs::path& f : held) {
    trainpack::write_file_atomic(f, "not the cache's");
    age(f, 1000);
  }
  const fs::path root = cache.root();
  fs::remove_all(root / "layers");
  fs::create_directory_symlink(outside, root / "layers");
  fs::remove_all(root / "blobs" / "sha256");
  fs::create_directory_symlink(outside, root / "blobs" / "sha256");
  fs::create_directories(root / "scans");
  fs::create_directory_symlink(outside, root / "scans" / "python");
  fs::create_directories(root / "pip-steps");
  fs::create_symlink(outside / step_name("s"), root / "pip-steps" / step_name("s"));

  PruneReport report = trainpack::store::prune_cache(cache, all());
  EXPECT_EQ(report.removed_entries, 0u);
  for (const fs::path& f : held) EXPECT_TRUE(fs::exists(f)) << f;
  for (const char* link : {"layers", "blobs/sha256", "scans/python", "pip-steps"})
    EXPECT_TRUE(fs::exists(root / link)) << link;
  std::string said;
  for (const std::string& w : report.warnings) said += w + "\n";
  for (const char* link : {"layers", "blobs/sha256", "scans/python"})
    EXPECT_NE(said.find((root / link).string() + " is a symbolic link"), std::string::npos) << said;
  trainpack::store::CacheUsage usage = trainpack::store::measure_cache(cache);
  EXPECT_EQ(usage_of(usage, CacheKind::kLayers).entries, 0u);
  EXPECT_EQ(usage_of(usage, CacheKind::kBlobs).entries, 0u);
}

// The record keep_under_cap reads (store/cache_prune.h): "BYTES FREE SECONDS", made as a walk `seconds` ago on a
// filesystem that has lost `lost` bytes of free space since would have written it.
void record_usage(const CacheDir& cache, std::uint64_t bytes, std::uint64_t lost, int seconds) {
  const std::uint64_t free = fs::space(cache.root()).available;
  trainpack::write_file_atomic(cache.root() / "usage", std::to_string(bytes) + " " + std::to_string(free + lost) +
                                                           " " + std::to_string(::time(nullptr) - seconds) + "\n");
}

constexpr std::uint64_t kMiB = 1u << 20;

bool walks(const CacheDir& cache, std::uint64_t cap) { return trainpack::store::keep_under_cap(cache, cap).has_value(); }

// Other processes write to the same filesystem while a test runs (the suite runs in parallel): every amount a skip
// depends on is far larger than what they could write or free in between.
TEST(CacheKeepUnderCap, AWalkIsSkippedWhileTheLastOneLeftTheCacheWellUnderTheCap) {
  constexpr std::uint64_t kLargeCap = std::uint64_t(100) << 30;
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-keep-"));
  CacheDir cache(dir.path());
  step_entry(cache, "kept", 1, 60);
  ASSERT_TRUE(walks(cache, kLargeCap)) << "no record yet: it walks";
  EXPECT_FALSE(walks(cache, kLargeCap)) << "its own record says the cache is small";
  record_usage(cache, 0, 0, 60);
  EXPECT_FALSE(walks(cache, kLargeCap)) << "a record of an empty cache, nothing lost since: no walk";

  fs::path over = step_entry(cache, "over", 64, 600);
  record_usage(cache, 30 * 1024, 0, 60);
  EXPECT_TRUE(walks(cache, 32 * 1024)) << "over 90% of the cap";
  EXPECT_FALSE(fs::exists(over)) << "the walk pruned to the cap";
  record_usage(cache, 0, std::uint64_t(1) << 40, 60);
  EXPECT_TRUE(walks(cache, kLargeCap)) << "the filesystem lost more free space than the cap since the walk";
  record_usage(cache, std::numeric_limits<std::uint64_t>::max(), 4096, 60);
  EXPECT_TRUE(walks(cache, kLargeCap)) << "a size that overflows with what was lost since";
  record_usage(cache, 0, 0, 2 * 86400);
  EXPECT_TRUE(walks(cache, kLargeCap)) << "a record two days old";
  record_usage(cache, 0, 0, -3600);
  EXPECT_TRUE(walks(cache, kLargeCap)) << "a record from the future";
}

TEST(CacheKeepUnderCap, ADamagedRecordIsAWalkAndNoCapIsNoWalk) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-keep-"));
  CacheDir cache(dir.path());
  for (const std::string& damaged : {std::string("12 34"), std::string("12 34 56 78"), std::string("a b c"),
                                     std::string("-1 0 0"), std::string("1 2 +3"), std::string(300, '1')}) {
    trainpack::write_file_atomic(cache.root() / "usage", damaged);
    EXPECT_TRUE(walks(cache, 100 * kMiB)) << damaged;
  }
  fs::remove(cache.root() / "usage");
  fs::create_directory(cache.root() / "usage");
  EXPECT_TRUE(walks(cache, 100 * kMiB)) << "a directory where the record goes";
  fs::remove(cache.root() / "usage");
  EXPECT_FALSE(walks(cache, std::numeric_limits<std::uint64_t>::max())) << "--cache-max-size=none";
}

TEST(CacheKeepUnderCap, TheRecordCountsItselfSoAPruneReportsWhatDuMeasures) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-keep-"));
  CacheDir cache(dir.path());
  step_entry(cache, "kept", 8, 60);
  std::optional<PruneReport> report = trainpack::store::keep_under_cap(cache, 100 * kMiB);
  ASSERT_TRUE(report);
  EXPECT_TRUE(fs::is_regular_file(cache.root() / "usage"));
  EXPECT_EQ(report->remaining_bytes, trainpack::store::measure_cache(cache).total());
}

}  // namespace

// A chosen cap is the cap; without one it is the smaller of 20 GiB and a quarter of the cache's filesystem.
TEST(CachePrune, TheCapIsTheChosenOneElseAtMostAQuarterOfTheFilesystem) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "cache-cap-"));
  EXPECT_EQ(cache_cap(dir.path(), 12345), 12345u);
  std::uint64_t quarter = std::filesystem::space(dir.path()).capacity / 4;
  std::uint64_t cap = cache_cap(dir.path(), std::nullopt);
  EXPECT_EQ(cap, std::min<std::uint64_t>(20ull << 30, quarter));
}
