#include "imagebuild/pip_step_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "imagebuild/python_installer.h"
#include "image/digest.h"
#include "support/error.h"
#include "support/fs.h"

namespace fs = std::filesystem;
using trainpack::imagebuild::PipLayer;
using trainpack::imagebuild::InstalledArtifact;
using trainpack::imagebuild::PipStepResult;
using trainpack::imagebuild::PipStepCache;
using trainpack::imagebuild::PipStepInputs;
using trainpack::imagebuild::PythonOptions;
using trainpack::layers::DeflateEngine;
using trainpack::layers::FileEntries;
using trainpack::layers::FileEntry;
using trainpack::layers::LayerCompression;

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
    cache.remember("key", PipStepResult{{{"the step", blob, entries, nullptr}}, installed});
  }

  fs::path entry_file() const { return cache_dir.area(trainpack::store::CacheKind::kPipSteps).path_of("key.entries"); }
  // Rewrites the entry's format line and header as `damage` changes them; the listing after them stays.
  void damage_entry(const std::function<void(std::string& format, std::string& header)>& damage) const {
    std::string text = trainpack::read_file(entry_file());
    std::size_t format_end = text.find('\n'), header_end = text.find('\n', format_end + 1);
    std::string format = text.substr(0, format_end), header = text.substr(format_end + 1, header_end - format_end - 1);
    damage(format, header);
    trainpack::write_file_atomic(entry_file(), format + "\n" + header + text.substr(header_end));
  }
  void damage_header(const std::function<void(nlohmann::json& header)>& damage) const {
    damage_entry([&](std::string&, std::string& header) {
      nlohmann::json parsed = nlohmann::json::parse(header);
      damage(parsed);
      header = parsed.dump();
    });
  }
};

// The inputs of a pip step, and the python options they point at.
struct StepInputs {
  PythonOptions python;
  PipStepInputs inputs{"sha256:" + std::string(64, 'a'), {"COPY . /app sha256:" + std::string(64, 'd')},
                       "RUN pip install tp_beta", &python, {}};
  std::string key() const { return trainpack::imagebuild::pip_step_key(inputs); }
};

}  // namespace

TEST(PipStepCache, AHitReadsTheListingOnlyWhenAskedAndGivesBackWhatWasRemembered) {
  CachedStep step;
  std::optional<PipStepResult> hit = step.cache.lookup("key");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->installed, step.installed) << "a reused step names what it installed, for the SBOM";
  ASSERT_EQ(hit->layers.size(), 1u);
  PipLayer& layer = hit->layers.front();
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
  std::optional<PipStepResult> hit = step.cache.lookup("key");
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

TEST(PipStepCache, AStepThatChangedNothingIsAHitWithoutABlob) {
  CachedStep step;
  FileEntries none;
  step.cache.remember("nothing", PipStepResult{{{"the step", std::nullopt, none, nullptr}}, {}});
  std::optional<PipStepResult> hit = step.cache.lookup("nothing");
  ASSERT_TRUE(hit.has_value());
  ASSERT_EQ(hit->layers.size(), 1u);
  EXPECT_FALSE(hit->layers.front().blob.has_value());
  EXPECT_EQ(hit->layers.front().entry_count(), 0u);
}

TEST(PipStepCache, AKeyNeverRememberedIsAMiss) {
  CachedStep step;
  EXPECT_FALSE(step.cache.lookup("another key").has_value());
  EXPECT_TRUE(step.cache.lookup("key").has_value());
}

TEST(PipStepCache, AnEntryOfAnotherFormatIsAMiss) {
  CachedStep step;
  step.damage_entry([](std::string& format, std::string&) { format = "trainpack-pip-step-v3"; });
  EXPECT_FALSE(step.cache.lookup("key").has_value());
}

TEST(PipStepCache, AnEntryWhoseHeaderDoesNotParseIsAMiss) {
  CachedStep step;
  step.damage_entry([](std::string&, std::string& header) { header.resize(header.size() / 2); });
  EXPECT_FALSE(step.cache.lookup("key").has_value());
}

TEST(PipStepCache, AnEntryWhoseHeaderLacksAFieldIsAMiss) {
  CachedStep step;
  step.damage_header([](nlohmann::json& header) { header["layers"][0].erase("offset"); });
  EXPECT_FALSE(step.cache.lookup("key").has_value());
}

TEST(PipStepCache, AnEntryCutAfterItsFormatLineIsAMiss) {
  CachedStep step;
  trainpack::write_file_atomic(step.entry_file(), "trainpack-pip-step-v4\n");
  EXPECT_FALSE(step.cache.lookup("key").has_value());
}

TEST(PipStepCache, AnEntryNamingNoDigestIsAMiss) {
  CachedStep step;
  step.damage_header([](nlohmann::json& header) { header["layers"][0]["digest"] = "sha256:short"; });
  EXPECT_FALSE(step.cache.lookup("key").has_value());
}

TEST(PipStepCache, AnEntryWhoseLayerBlobHasAnotherSizeIsAMiss) {
  CachedStep step;
  fs::resize_file(step.store.path_of(step.blob.digest), step.blob.size - 1);
  EXPECT_FALSE(step.cache.lookup("key").has_value());
}

TEST(PipStepCache, ADamagedEntryIsReplacedByTheNextRemember) {
  CachedStep step;
  step.damage_entry([](std::string&, std::string& header) { header = "{"; });
  ASSERT_FALSE(step.cache.lookup("key").has_value());
  step.cache.remember("key", PipStepResult{{{"the step", step.blob, step.entries, nullptr}}, step.installed});
  EXPECT_TRUE(step.cache.lookup("key").has_value());
}

TEST(PipStepKey, TheSameInputsGiveTheSameKey) {
  StepInputs a, b;
  EXPECT_EQ(a.key(), b.key());
  EXPECT_EQ(a.key().size(), 64u);
}

// Each change names what it changes; every key differs from the unchanged inputs' and from every other.
TEST(PipStepKey, AChangeToAnyInputThatShapesTheLayersChangesTheKey) {
  const std::vector<std::pair<std::string, std::function<void(StepInputs&)>>> changes{
      {"base", [](StepInputs& s) { s.inputs.base_manifest_digest = "sha256:" + std::string(64, 'b'); }},
      {"earlier step added", [](StepInputs& s) { s.inputs.earlier_steps.push_back("RUN pip install tp_alpha"); }},
      {"earlier step's layer", [](StepInputs& s) { s.inputs.earlier_steps[0].back() = 'e'; }},
      {"instruction", [](StepInputs& s) { s.inputs.instruction += " tp_gamma"; }},
      {"index", [](StepInputs& s) { s.python.index_url = "https://pypi.example/simple"; }},
      {"extra index", [](StepInputs& s) { s.python.extra_index_urls = {"https://extra.example/simple"}; }},
      {"find-links", [](StepInputs& s) { s.python.find_links = {"https://links.example/"}; }},
      {"no-compile", [](StepInputs& s) { s.python.no_compile = true; }},
      {"break-system-packages", [](StepInputs& s) { s.python.break_system_packages = true; }},
      {"build python", [](StepInputs& s) { s.python.build_python = trainpack::imagebuild::BuildPython::kHost; }},
      {"own layer size", [](StepInputs& s) { s.python.separate_layer_bytes /= 2; }},
      {"mtime", [](StepInputs& s) { s.inputs.layer_options.mtime = 1700000000; }},
      {"gzip level", [](StepInputs& s) { s.inputs.layer_options.gzip.level = 3; }},
      {"gzip engine", [](StepInputs& s) { s.inputs.layer_options.gzip.engine = DeflateEngine::kZlib; }},
      {"gzip block size", [](StepInputs& s) { s.inputs.layer_options.gzip.block_size *= 2; }},
      {"zstd", [](StepInputs& s) { s.inputs.layer_options.compression = LayerCompression::kZstd; }},
      {"zstd level", [](StepInputs& s) {
         s.inputs.layer_options.compression = LayerCompression::kZstd;
         s.inputs.layer_options.zstd.level = 9;
       }}};
  std::set<std::string> keys{StepInputs().key()};
  for (const auto& [what, change] : changes) {
    StepInputs changed;
    change(changed);
    EXPECT_TRUE(keys.insert(changed.key()).second) << what << " left the key as another input's";
  }
}

TEST(PipStepKey, OptionsThatDoNotShapeTheLayersLeaveTheKeyAlone) {
  StepInputs plain, changed;
  changed.python.jobs = 16;
  changed.python.build_timeout = std::chrono::seconds(1);
  changed.inputs.layer_options.gzip.threads = 7;
  changed.inputs.layer_options.zstd.level = 19;  // gzip is the compression: zstd's level is not used
  changed.inputs.layer_options.on_progress = [](std::uint64_t, std::uint64_t) {};
  EXPECT_EQ(changed.key(), plain.key());
}

// pip picks from a local --find-links directory by what is in it: a wheel added there is another step.
TEST(PipStepKey, AFileAddedToALocalFindLinksDirectoryChangesTheKey) {
  trainpack::ScopedDir links(trainpack::make_temp_dir({}, "find-links-"));
  StepInputs step;
  step.python.find_links = {links.path().string()};
  std::string before = step.key();
  trainpack::write_file_atomic(links.path() / "tp_beta-1.1-py3-none-any.whl", "a wheel");
  EXPECT_NE(step.key(), before);
}
