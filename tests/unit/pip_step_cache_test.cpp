#include "builder/pip_step_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "image/digest.h"
#include "support/error.h"
#include "support/fs.h"

namespace fs = std::filesystem;
using trainpack::builder::CachedPipLayer;
using trainpack::builder::CachedPipStep;
using trainpack::builder::InstalledArtifact;
using trainpack::builder::PipLayerMade;
using trainpack::builder::PipStepCache;
using trainpack::layers::FileEntries;
using trainpack::layers::FileEntry;

namespace {

const char* const kDeep = "usr/local/lib/python3.11/dist-packages/tp_beta/__init__.py";

// A store holding one layer blob, and a step that made it: a directory, a shallow file and a deep one whose
// bytes (inline, as bytecode is) the cache keeps as a blob of their own.
struct CachedStep {
  trainpack::ScopedDir dir{trainpack::make_temp_dir({}, "pip-step-cache-")};
  trainpack::store::CacheDir cache_dir{dir.path() / "cache"};
  const trainpack::store::BlobStore& store = cache_dir.blobs();
  PipStepCache cache{cache_dir};
  trainpack::layers::LayerBlob blob;
  std::vector<InstalledArtifact> installed{
      {"tp_beta", "1.0", "tp_beta-1.0-py3-none-any.whl", "https://files.example/tp_beta-1.0-py3-none-any.whl",
       std::string(64, 'b'), false, false},
      {"tp-local", "0.1", "tp-local-0.1.tar.gz", "", std::string(64, 'c'), true, true}};
  FileEntries entries{FileEntry::directory("usr", 0755), FileEntry::inline_file("usr/marker", "m"),
                      FileEntry::inline_file(kDeep, "print('beta')\n")};

  CachedStep() {
    trainpack::store::StoredBlob stored = store.put("the layer's bytes");
    blob = {trainpack::image::sha256_of("the layer's tar"), stored.digest, stored.size};
    cache.remember("key", std::vector<PipLayerMade>{{"the step", blob, &entries}}, installed);
  }
};

}  // namespace

TEST(PipStepCache, AHitReadsTheListingOnlyWhenAskedAndGivesBackWhatWasRemembered) {
  CachedStep step;
  std::optional<CachedPipStep> hit = step.cache.lookup("key");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->installed, step.installed) << "a reused step names what it installed, for the SBOM";
  ASSERT_EQ(hit->layers.size(), 1u);
  CachedPipLayer& layer = hit->layers.front();
  ASSERT_NE(layer.deferred, nullptr) << "a hit reads the listing at once";
  EXPECT_TRUE(layer.entries.empty());
  EXPECT_EQ(layer.entry_count(), 3u);
  ASSERT_TRUE(layer.blob.has_value());
  EXPECT_EQ(layer.blob->digest, step.blob.digest);

  layer.read_entries();
  ASSERT_EQ(layer.entries.size(), 3u);
  EXPECT_EQ(layer.entries[2].path, kDeep);
  ASSERT_FALSE(layer.entries[2].source.empty()) << "inline bytes are kept as a blob";
  EXPECT_EQ(trainpack::read_file(layer.entries[2].source), "print('beta')\n");
}

// A file an entry reads, removed after the hit (by hand, or by another build's cleanup): reading the listing fails
// with a hint, rather than giving a layer whose file has no bytes.
TEST(PipStepCache, AListingWhoseFileIsGoneFailsWithAHintWhenRead) {
  CachedStep step;
  std::optional<CachedPipStep> hit = step.cache.lookup("key");
  ASSERT_TRUE(hit.has_value());
  fs::remove(step.store.path_of(trainpack::image::sha256_of("print('beta')\n")));
  try {
    hit->layers.front().read_entries();
    FAIL() << "a listing naming a removed file was read";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("which is gone"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("--refresh-pip-steps"), std::string::npos) << e.hint();
  }
}

TEST(PipStepCache, AnEntryWhoseLayerBlobIsGoneIsAMiss) {
  CachedStep step;
  fs::remove(step.store.path_of(step.blob.digest));
  EXPECT_FALSE(step.cache.lookup("key").has_value());
  EXPECT_FALSE(step.cache.lookup("another key").has_value());
}

// Pruning (store/cache_prune.h) removes a file an entry reads without touching the entry: the entry is then a miss,
// never a hit whose listing fails later.
TEST(PipStepCache, AnEntryWhoseKeptFileIsGoneIsAMiss) {
  CachedStep step;
  fs::remove(step.store.path_of(trainpack::image::sha256_of("print('beta')\n")));
  EXPECT_FALSE(step.cache.lookup("key").has_value());
}
