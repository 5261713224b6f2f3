#include "image/appended_image.h"

#include <gtest/gtest.h>

#include "image/media_types.h"
#include "layers/layer_writer.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/image_test_support.h"

using namespace trainpack::image;
using namespace trainpack::layers;
using namespace trainpack::store;
using nlohmann::json;
namespace ts = trainpack::test_support;

namespace {
AppendSpec two_steps(const Image& base, const LayerBlob& layer) {
  AppendSpec spec;
  spec.steps = {{"WORKDIR /usr/app", std::nullopt}, {"COPY [\"a\", \"a\"]", layer}};
  spec.config = base.config();
  spec.config.set_working_dir("/usr/app");
  spec.config.set_entrypoint({"python", "a/t.py"});
  spec.created = rfc3339_utc(0);
  spec.manifest_annotations = {{"org.opencontainers.image.base.name", "base:1"}};
  return spec;
}
}  // namespace

TEST(AppendedImage, AppendsLayersHistoryAndConfigOnTopOfTheBase) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "appended-"));
  auto base = ts::make_image(dir.path() / "base", "amd64", {{"one", "1"}});
  BlobStore store(dir.path() / "store");
  LayerBlob layer = write_layer(store, {FileEntry::directory("a", 0755)}, {});
  std::shared_ptr<const Image> base_image(std::move(base.image));
  AppendedImage image(base_image, std::make_shared<BlobStore>(store), two_steps(*base_image, layer));

  Manifest m = image.manifest();
  EXPECT_EQ(m.media_type, media::kOciManifest);
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].digest, base.layers[0].digest);
  EXPECT_EQ(m.layers[1].digest, layer.digest);
  EXPECT_EQ(m.annotations["org.opencontainers.image.base.name"], "base:1");
  EXPECT_EQ(m.config.digest, sha256_of(image.raw_config()));
  EXPECT_TRUE(store.has(m.config.digest));
  EXPECT_TRUE(store.has(image.manifest_digest()));

  json cfg = image.config().document();
  EXPECT_EQ(cfg["architecture"], "amd64") << "base fields pass through";
  EXPECT_EQ(cfg["created"], "1970-01-01T00:00:00Z");
  EXPECT_EQ(cfg["config"]["WorkingDir"], "/usr/app");
  EXPECT_FALSE(cfg["config"].contains("Cmd"));
  ASSERT_EQ(cfg["rootfs"]["diff_ids"].size(), 2u);
  EXPECT_EQ(cfg["rootfs"]["diff_ids"][1], layer.diff_id.str());
  ASSERT_EQ(cfg["history"].size(), 3u);
  EXPECT_EQ(cfg["history"][1]["empty_layer"], true);
  EXPECT_FALSE(cfg["history"][2].contains("empty_layer"));

  EXPECT_EQ(image.blob_path(layer.digest), store.path_of(layer.digest));
  EXPECT_EQ(image.blob_path(base.layers[0].digest), base_image->blob_path(base.layers[0].digest));
}

TEST(AppendedImage, DockerBaseLayersAreRelabelledAndHistoryIsFilledIn) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "appended-"));
  BlobStore store(dir.path() / "store");
  std::string tar = ts::make_tar({{"x", "data", "", false}});
  StoredBlob blob = store.put(ts::gzip(tar));
  // A Docker schema2 base without history.
  json config = {{"architecture", "amd64"}, {"os", "linux"},
                 {"rootfs", {{"type", "layers"}, {"diff_ids", {sha256_of(tar).str()}}}}};
  std::string raw_config = config.dump();
  StoredBlob config_blob = store.put(raw_config);
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", media::kDockerManifest},
                   {"config", {{"mediaType", media::kDockerConfig}, {"digest", config_blob.digest.str()}, {"size", config_blob.size}}},
                   {"layers", {{{"mediaType", media::kDockerLayerGzip}, {"digest", blob.digest.str()}, {"size", blob.size}}}}};
  auto base = std::make_shared<ts::MemoryImage>(dir.path() / "store", manifest.dump(), raw_config, "docker base");
  LayerBlob layer = write_layer(store, {FileEntry::directory("a", 0755)}, {});
  AppendedImage image(base, std::make_shared<BlobStore>(store), two_steps(*base, layer));
  Manifest m = image.manifest();
  EXPECT_EQ(m.layers[0].media_type, media::kOciLayerGzip);
  EXPECT_EQ(m.layers[0].digest, blob.digest) << "relabelling keeps the bytes";
  json cfg = image.config().document();
  int non_empty = 0;
  for (const auto& h : cfg["history"]) non_empty += !h.value("empty_layer", false);
  EXPECT_EQ(non_empty, 2) << "history entries must map onto the two layers";
}

TEST(AppendedImage, RefusesAConfigWhoseDiffIdsDoNotMatchTheLayers) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "appended-"));
  auto base = ts::make_image(dir.path() / "base", "amd64", {{"one", "1"}});
  json cfg = json::parse(base.image->raw_config());
  cfg["rootfs"]["diff_ids"].push_back(sha256_of("extra").str());
  auto broken = std::make_shared<ts::MemoryImage>(dir.path() / "base", base.image->raw_manifest(), cfg.dump(), "broken");
  BlobStore store(dir.path() / "store");
  LayerBlob layer = write_layer(store, {FileEntry::directory("a", 0755)}, {});
  EXPECT_THROW(AppendedImage(broken, std::make_shared<BlobStore>(store), two_steps(*broken, layer)), trainpack::Error);
}

namespace {
// An image that holds one blob remotely (a --cache-repo artifact), in another store.
class RemoteHolder : public Image {
 public:
  RemoteHolder(BlobStore store, Digest held) : store_(std::move(store)), held_(held) {}
  const std::string& raw_manifest() const override { return empty_; }
  const std::string& raw_config() const override { return empty_; }
  std::filesystem::path blob_path(const Digest& d) const override { return store_.path_of(d); }
  bool has_local_blob(const Digest&) const override { return false; }
  std::optional<RemoteOrigin> remote_origin(const Digest& d) const override {
    if (d != held_) return std::nullopt;
    return RemoteOrigin{"127.0.0.1:5000", "ci/cache"};
  }
  std::string describe() const override { return "holder"; }

 private:
  BlobStore store_;
  Digest held_;
  std::string empty_;
};
}  // namespace

// A layer found in a cache repository is not in the store: the image reads, mounts or relays it from its source.
TEST(AppendedImage, ALayerSourceAnswersForTheBlobsItHolds) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "appended-"));
  auto base = ts::make_image(dir.path() / "base", "amd64", {{"one", "1"}});
  BlobStore elsewhere(dir.path() / "elsewhere");
  LayerBlob layer = write_layer(elsewhere, {FileEntry::directory("a", 0755)}, {});
  std::shared_ptr<const Image> base_image(std::move(base.image));
  AppendSpec spec = two_steps(*base_image, layer);
  spec.layer_sources.push_back(std::make_shared<RemoteHolder>(elsewhere, layer.digest));
  AppendedImage image(base_image, std::make_shared<BlobStore>(dir.path() / "store"), spec);

  EXPECT_EQ(image.blob_path(layer.digest), elsewhere.path_of(layer.digest));
  EXPECT_FALSE(image.has_local_blob(layer.digest));
  ASSERT_TRUE(image.remote_origin(layer.digest).has_value());
  EXPECT_EQ(image.remote_origin(layer.digest)->repository, "ci/cache");
  EXPECT_FALSE(image.remote_origin(base.layers[0].digest).has_value());
  EXPECT_TRUE(image.has_local_blob(base.layers[0].digest));
}
