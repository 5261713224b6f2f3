// The cache is input, not truth: every kind of cache file read back damaged (empty, "x", "[", "{}", "null", cut
// short, one byte flipped) is a miss, made or fetched again, with one warning naming the file; a blob whose bytes
// changed in the cache never reaches an output.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "imagebuild/pip_step_cache.h"
#include "image/appended_image.h"
#include "layers/entry_safety.h"
#include "layers/layer_cache.h"
#include "layers/scanned_image.h"
#include "registry/remote_image.h"
#include "store/cache_dir.h"
#include "store/sealed_text.h"
#include "support/error.h"
#include "support/fs.h"
#include "transports/docker_archive.h"
#include "transports/oci_layout.h"
#include "tests/unit/push_test_support.h"

namespace fs = std::filesystem;
using namespace trainpack;
using image::Digest;
using layers::FileEntry;

namespace {

// The ways a cache file is found damaged; each must read as a miss.
std::vector<std::pair<std::string, std::function<std::string(const std::string&)>>> damages() {
  return {{"empty", [](const std::string&) { return std::string(); }},
          {"x", [](const std::string&) { return std::string("x"); }},
          {"[", [](const std::string&) { return std::string("["); }},
          {"{}", [](const std::string&) { return std::string("{}"); }},
          {"null", [](const std::string&) { return std::string("null"); }},
          {"truncated", [](const std::string& s) { return s.substr(0, s.size() / 2); }},
          {"first byte flipped", [](std::string s) { return s[0] ^= 1, s; }},
          {"middle byte flipped", [](std::string s) { return s[s.size() / 2] ^= 1, s; }},
          {"last byte flipped", [](std::string s) { return s.back() ^= 1, s; }}};
}

// Rewrites `file` as `damage` makes it (a new file: a blob's hard links elsewhere keep their bytes).
void damage_file(const fs::path& file, const std::function<std::string(const std::string&)>& damage) {
  write_file_atomic(file, damage(read_file(file)));
}

// A byte in the middle of `file` flipped, its size unchanged.
void flip_byte(const fs::path& file) {
  damage_file(file, [](std::string s) { return s[s.size() / 2] ^= 0x20, s; });
}

// A cache whose warnings are collected.
struct WatchedCache {
  ScopedDir dir{make_temp_dir({}, "cache-damage-")};
  store::CacheDir cache{dir.path() / "cache"};
  std::vector<std::string> warnings;
  WatchedCache() {
    cache.on_warning([this](const std::string& text) { warnings.push_back(text); });
  }
  bool warned_about(const fs::path& file) const {
    for (const std::string& w : warnings)
      if (w.find(file.string()) != std::string::npos && w.find("damaged") != std::string::npos) return true;
    return false;
  }
};

// Every blob of an OCI layout hashes to its name.
void expect_blobs_match_names(const fs::path& layout) {
  int blobs = 0;
  for (const auto& entry : fs::directory_iterator(layout / "blobs" / "sha256")) {
    ++blobs;
    EXPECT_EQ(image::sha256_of_file(entry.path()).hex(), entry.path().filename().string()) << entry.path();
  }
  EXPECT_GT(blobs, 0);
}

}  // namespace

TEST(SealedText, GivesBackWhatWasSealedAndNothingForAnyFlippedByte) {
  const std::string text = R"({"diff_id":"sha256:00","size":3})";
  std::string sealed = store::seal(text);
  ASSERT_EQ(store::unseal(sealed), std::optional<std::string_view>(text));
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    std::string flipped = sealed;
    flipped[i] ^= 1;
    EXPECT_FALSE(store::unseal(flipped)) << "byte " << i;
  }
  for (const auto& [name, damage] : damages()) EXPECT_FALSE(store::unseal(damage(text))) << name;
  EXPECT_FALSE(store::unseal(sealed.substr(0, sealed.size() - 1)));
}

// A text kept sealed in an area comes back as kept; damaged in any way it is a miss, removed, with a warning.
TEST(SealedText, AKeptTextComesBackAndADamagedOneIsAMissSaidInAWarning) {
  for (const auto& [name, damage] : damages()) {
    WatchedCache w;
    const store::CacheArea area = w.cache.area(store::CacheKind::kSboms);
    EXPECT_FALSE(store::read_sealed(area, "a.json", "an SBOM"));
    store::keep_sealed(area, "a.json", "{\"kept\":1}");
    EXPECT_EQ(store::read_sealed(area, "a.json", "an SBOM"), std::optional<std::string>("{\"kept\":1}"));
    damage_file(area.path_of("a.json"), damage);
    EXPECT_FALSE(store::read_sealed(area, "a.json", "an SBOM")) << name;
    EXPECT_TRUE(w.warned_about(area.path_of("a.json"))) << name;
    EXPECT_FALSE(fs::exists(area.path_of("a.json"))) << name;
  }
}

// A scan listing that does not parse is a miss: scanned again, never read as a listing.
TEST(CacheDamage, ADamagedScanListingIsScannedAgainWithAWarningNamingIt) {
  for (const auto& [name, damage] : damages()) {
    WatchedCache w;
    auto built = test_support::make_image_of_layers(
        w.dir.path() / "base", "amd64",
        {{{"usr/", "", "", true}, {"usr/lib/python3/six-1.16.0.dist-info/METADATA", "Name: six\n", "", false}}});
    std::shared_ptr<const image::Image> base(std::move(built.image));
    layers::ScanSelection selection{"test", [](std::string_view, std::uint64_t) { return true; }};
    { layers::ScannedImage first(base, w.cache, selection); }
    const fs::path listing = w.cache.area(store::CacheKind::kScans).path_of(
        layers::ScannedImage::scan_key("test", built.layers[0].digest, built.layers[0].diff_id)) / "listing.json";
    damage_file(listing, damage);

    layers::ScannedImage again(base, w.cache, selection);
    EXPECT_EQ(again.read("usr/lib/python3/six-1.16.0.dist-info/METADATA", 1 << 20), "Name: six\n") << name;
    EXPECT_TRUE(w.warned_about(listing)) << name;
    EXPECT_EQ(w.warnings.size(), 1u) << name;
    ASSERT_TRUE(fs::exists(listing)) << name;
    EXPECT_TRUE(layers::ScannedImage::parse_scan_listing(read_file(listing))) << name << ": stored again whole";
  }
}

TEST(CacheDamage, ADamagedLayerRecordIsAMissTheLayerWrittenAgainWithAWarning) {
  for (const auto& [name, damage] : damages()) {
    WatchedCache w;
    layers::LayerCache cache(w.cache.blobs(), w.cache.area(store::CacheKind::kLayers));
    auto build = [&] {
      return layers::build_layer(w.cache.blobs(), cache, {FileEntry::directory("app", 0755), FileEntry::inline_file("app/task.py", "print(1)\n")}, {});
    };
    layers::BuiltLayer first = build();
    ASSERT_FALSE(first.from_cache);
    ASSERT_TRUE(build().from_cache);
    fs::path record = fs::directory_iterator(w.cache.area(store::CacheKind::kLayers).dir())->path();
    damage_file(record, damage);

    layers::BuiltLayer again = build();
    EXPECT_FALSE(again.from_cache) << name;
    EXPECT_EQ(again.blob.digest, first.blob.digest) << name;
    EXPECT_EQ(again.blob.diff_id, first.blob.diff_id) << name;
    EXPECT_TRUE(w.warned_about(record)) << name << ": " << (w.warnings.empty() ? "" : w.warnings[0]);
    EXPECT_TRUE(build().from_cache) << name << ": remembered again";
  }
}

TEST(CacheDamage, ADamagedPipStepEntryIsAMissWithAWarningAndIsRememberedAgain) {
  const std::vector<imagebuild::InstalledArtifact> installed{
      {"tp_beta", "1.0", "tp_beta-1.0-py3-none-any.whl", "https://files.example/tp_beta-1.0-py3-none-any.whl",
       std::string(64, 'b'), false, false}};
  for (const auto& [name, damage] : damages()) {
    WatchedCache w;
    imagebuild::PipStepCache cache(w.cache);
    store::StoredBlob stored = w.cache.blobs().put("the layer's bytes");
    layers::LayerBlob blob{image::sha256_of("the layer's tar"), stored.digest, stored.size};
    layers::FileEntries entries{FileEntry::directory("usr", 0755),
                                FileEntry::inline_file("usr/local/lib/python3.11/site-packages/b/__init__.py", "b\n")};
    auto remember = [&] {
      cache.remember("key", imagebuild::PipStepResult{{{"the step", blob, entries, nullptr}}, installed});
    };
    remember();
    ASSERT_TRUE(cache.lookup("key"));
    const fs::path file = w.cache.area(store::CacheKind::kPipSteps).path_of("key.entries");
    damage_file(file, damage);

    EXPECT_FALSE(cache.lookup("key")) << name;
    EXPECT_TRUE(w.warned_about(file)) << name;
    remember();
    std::optional<imagebuild::PipStepResult> hit = cache.lookup("key");
    ASSERT_TRUE(hit) << name;
    hit->layers.front().read_entries();
    EXPECT_EQ(hit->layers.front().entries.size(), 2u) << name;
  }
}

// Any byte of an entry flipped: a miss, never a hit whose listing fails later ("a bad number").
TEST(CacheDamage, APipStepEntryWithAnyByteFlippedParsesAsNothing) {
  WatchedCache w;
  imagebuild::PipStepCache cache(w.cache);
  store::StoredBlob stored = w.cache.blobs().put("bytes");
  layers::LayerBlob blob{image::sha256_of("tar"), stored.digest, stored.size};
  layers::FileEntries entries{FileEntry::directory("usr", 0755), FileEntry::inline_file("usr/x", "x")};
  cache.remember("key", imagebuild::PipStepResult{{{"the step", blob, entries, nullptr}}, {}});
  const std::string text = read_file(w.cache.area(store::CacheKind::kPipSteps).path_of("key.entries"));
  std::optional<imagebuild::PipStepResult> whole = imagebuild::parse_pip_step_entry(text);
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->layers.size(), 1u);
  EXPECT_EQ(whole->layers[0].entries.size(), 2u);
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string flipped = text;
    flipped[i] ^= 1;
    EXPECT_FALSE(imagebuild::parse_pip_step_entry(flipped)) << "byte " << i;
  }
}

// A mark with a flipped byte once named another diff_id, and the base was refused as not its config's.
TEST(CacheDamage, ADamagedCheckedLayerMarkIsReadAgainNotTakenForAnotherDiffId) {
  for (const auto& [name, damage] : damages()) {
    WatchedCache w;
    auto built = test_support::make_image_of_layers(w.dir.path() / "base", "amd64", {{{"etc/", "", "", true}}});
    const store::CacheArea marks = w.cache.area(store::CacheKind::kCheckedLayers);
    const std::vector<Digest> layers{built.layers[0].digest};
    layers::check_layers_are_safe(*built.image, layers, marks);
    const fs::path mark = marks.path_of(built.layers[0].digest.hex());
    damage_file(mark, damage);
    EXPECT_NO_THROW(layers::check_layers_are_safe(*built.image, layers, marks)) << name;
    // Cut to its first line, a mark reads as an older trainpack's (the diff_id alone): read again, without a word.
    if (name != "truncated") {
      EXPECT_TRUE(w.warned_about(mark)) << name;
    }
    EXPECT_EQ(read_file(mark), store::seal(built.layers[0].diff_id.str())) << name << ": marked again";
  }
}

// A config or manifest the image keeps: a copy damaged in the cache is written again, not left for a push to read.
TEST(CacheDamage, AKeptBlobDamagedInTheCacheIsWrittenAgain) {
  WatchedCache w;
  const std::string config = R"({"architecture":"amd64"})";
  store::StoredBlob kept = w.cache.blobs().keep(config);
  flip_byte(w.cache.blobs().path_of(kept.digest));
  w.cache.blobs().keep(config);
  EXPECT_EQ(read_file(w.cache.blobs().path_of(kept.digest)), config);
  EXPECT_TRUE(w.warned_about(w.cache.blobs().path_of(kept.digest)));
}

namespace {

// A build's image on a registry base: the base's layers downloaded into the build's cache, one layer made there.
struct BuiltOnRemoteBase : test_support::PushFixture {
  WatchedCache w;
  std::shared_ptr<registry::RemoteImage> base;
  layers::LayerBlob layer;
  std::shared_ptr<image::AppendedImage> image;

  BuiltOnRemoteBase() {
    hold_image(source, "base", "1");
    base = registry::RemoteImage::open(source_client, {"src.test", "base", "1", ""}, {}, w.cache.blobs());
    for (const Digest& d : {large, small}) base->blob_path(d);
    layer = layers::write_layer(w.cache.blobs(), {FileEntry::directory("app", 0755), FileEntry::inline_file("app/task.py", "print(1)\n")}, {});
    image::AppendSpec spec;
    spec.steps = {{"COPY . /app", layer}};
    spec.config = base->config();
    spec.created = image::rfc3339_utc(0);
    image = std::make_shared<image::AppendedImage>(base, std::make_shared<store::BlobStore>(w.cache.blobs()), spec);
  }
  fs::path cached(const Digest& d) const { return w.cache.blobs().path_of(d); }
  int downloads_of(const Digest& d) const { return source.count("GET /v2/base/blobs/" + d.str()); }
};

}  // namespace

TEST(CacheDamage, ABaseLayerDamagedInTheCacheIsFetchedAgainForAnOciLayout) {
  BuiltOnRemoteBase b;
  flip_byte(b.cached(b.large));
  const fs::path out = b.w.dir.path() / "out";
  transports::write_oci_layout(*b.image, out, "v1");
  expect_blobs_match_names(out);
  EXPECT_EQ(b.downloads_of(b.large), 2) << "downloaded again";
  EXPECT_TRUE(b.w.warned_about(b.cached(b.large)));
  EXPECT_EQ(image::sha256_of_file(b.cached(b.large)), b.large) << "the cache holds the right bytes again";
}

TEST(CacheDamage, ABaseLayerDamagedInTheCacheIsFetchedAgainForADockerArchive) {
  BuiltOnRemoteBase b;
  flip_byte(b.cached(b.large));
  const fs::path out = b.w.dir.path() / "out.tar";
  transports::write_docker_archive(*b.image, out, "trainer:v1");
  EXPECT_EQ(b.downloads_of(b.large), 2);
  EXPECT_TRUE(b.w.warned_about(b.cached(b.large)));
  // Read back: each layer member is checked against its digest as the archive is opened.
  store::BlobStore readback(b.w.dir.path() / "readback");
  auto opened = transports::open_docker_archive(out, "trainer:v1", image::Platform::parse("linux/amd64"), readback);
  for (const image::Descriptor& l : opened->manifest().layers)
    EXPECT_EQ(image::sha256_of_file(opened->blob_path(l.digest)), l.digest);
}

TEST(CacheDamage, ALayerMadeHereDamagedInTheCacheFailsTheOutputLeavingNothing) {
  BuiltOnRemoteBase b;
  flip_byte(b.cached(b.layer.digest));
  const fs::path layout = b.w.dir.path() / "out", archive = b.w.dir.path() / "out.tar";
  try {
    transports::write_oci_layout(*b.image, layout, "v1");
    FAIL() << "a damaged layer was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blob " + b.layer.digest.str() + " is damaged"), std::string::npos)
        << e.what();
    EXPECT_NE(e.hint().find("run the build again"), std::string::npos) << e.hint();
  }
  EXPECT_FALSE(fs::exists(layout));
  EXPECT_FALSE(b.w.cache.blobs().has(b.layer.digest)) << "removed: the next build's layer cache misses";
  EXPECT_TRUE(b.w.warned_about(b.cached(b.layer.digest)));

  layers::write_layer(b.w.cache.blobs(), {FileEntry::directory("app", 0755), FileEntry::inline_file("app/task.py", "print(1)\n")}, {});
  flip_byte(b.cached(b.layer.digest));
  EXPECT_THROW(transports::write_docker_archive(*b.image, archive, "trainer:v1"), Error);
  EXPECT_FALSE(fs::exists(archive));
  for (const auto& entry : fs::directory_iterator(b.w.dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".out.tar"), std::string::npos) << "no staging file left";
}

// A base's config damaged in the cache was once blamed on the image ("image config is not valid JSON").
TEST(CacheDamage, ABaseConfigDamagedInTheCacheIsFetchedAgain) {
  BuiltOnRemoteBase b;
  const std::string config = b.base->raw_config();
  for (const auto& [name, damage] : damages()) {
    damage_file(b.cached(b.config), damage);
    auto again = registry::RemoteImage::open(b.source_client, {"src.test", "base", "1", ""}, {}, b.w.cache.blobs());
    EXPECT_EQ(again->raw_config(), config) << name;
    EXPECT_TRUE(b.w.warned_about(b.cached(b.config))) << name;
    b.w.warnings.clear();
  }
}
