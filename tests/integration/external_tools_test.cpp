// Images trainpack writes, read by other OCI tools (skopeo, oci-image-tool, umoci), and images they write, read by
// trainpack. Integration tests: unlike the unit tests they need those tools installed (scripts/install-deps.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "../unit/image_test_support.h"
#include "store/blob_store.h"
#include "support/fs.h"
#include "transports/docker_archive.h"
#include "transports/oci_layout.h"

using namespace trainpack::image;
using namespace trainpack::store;
using namespace trainpack::transports;
using namespace trainpack::test_support;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const Platform kAmd64 = Platform::parse("linux/amd64");

class ExternalTools : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = trainpack::make_temp_dir({}, "external-tools-test-");
    store_ = std::make_unique<BlobStore>(tmp_ / "import-store");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  fs::path tmp_;
  std::unique_ptr<BlobStore> store_;
};
using ExternalToolsDockerArchive = ExternalTools;
using ExternalToolsOciLayout = ExternalTools;

}  // namespace

// --- docker-archive ---

TEST_F(ExternalToolsDockerArchive, SkopeoCopiesWrittenArchive) {
  TRAINPACK_REQUIRE_TOOL("skopeo");
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  fs::path file = tmp_ / "image.tar";
  write_docker_archive(*b.image, file, "trainer:latest");
  auto r = run_shell("skopeo --insecure-policy copy " + quote("docker-archive:" + file.string()) + " " +
                       quote("oci:" + (tmp_ / "out").string() + ":x"));
  ASSERT_EQ(r.status, 0) << r.output;
  auto img = open_oci_layout(tmp_ / "out", "x", kAmd64);
  // skopeo reads manifest.json; converting to OCI re-serialises the config, but its content is ours.
  json theirs = img->config().document(), ours = b.image->config().document();
  EXPECT_EQ(theirs["rootfs"], ours["rootfs"]);
  EXPECT_EQ(theirs["architecture"], "amd64");
  EXPECT_EQ(theirs["config"]["Cmd"], ours["config"]["Cmd"]);
  ASSERT_EQ(img->manifest().layers.size(), 2u);

  // Copying to a dir: keeps the config bytes (the image ID) exactly.
  r = run_shell("skopeo --insecure-policy copy " + quote("docker-archive:" + file.string()) + " " +
                  quote("dir:" + (tmp_ / "dir").string()));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(trainpack::read_file(tmp_ / "dir" / b.config_digest.hex()), b.image->raw_config());

  auto inspect = run_shell("skopeo inspect " + quote("docker-archive:" + file.string()));
  ASSERT_EQ(inspect.status, 0) << inspect.output;
  json j = json::parse(inspect.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << inspect.output;
  EXPECT_EQ(j["Architecture"], "amd64");
  EXPECT_EQ(j["Layers"], json::array({b.layers[0].diff_id.str(), b.layers[1].diff_id.str()})) << inspect.output;
}

TEST_F(ExternalToolsDockerArchive, OciImageToolValidatesTheLayoutInside) {
  TRAINPACK_REQUIRE_TOOL("oci-image-tool");
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}});
  fs::path file = tmp_ / "image.tar";
  write_docker_archive(*b.image, file, "trainer:v2");
  // oci-image-tool 1.0.0-rc1 cannot walk any tar ("find failed: unable to walk: end of walk", also for skopeo's
  // oci-archive), so validate the extracted layout: every member but manifest.json.
  fs::path dir = tmp_ / "extracted";
  fs::create_directories(dir);
  auto r = run_shell("tar -xf " + quote(file) + " -C " + quote(dir) + " --exclude=manifest.json");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_shell("oci-image-tool validate --type image --ref name=v2 " + quote(dir));
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(ExternalToolsDockerArchive, OpensArchivesWrittenBySkopeo) {
  TRAINPACK_REQUIRE_TOOL("skopeo");
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  write_oci_layout(*b.image, tmp_ / "layout", "v1", nullptr);
  fs::path file = tmp_ / "skopeo.tar";
  auto r = run_shell("skopeo --insecure-policy copy " + quote("oci:" + (tmp_ / "layout").string() + ":v1") + " " +
                       quote("docker-archive:" + file.string() + ":example.com/team/trainer:v1"));
  ASSERT_EQ(r.status, 0) << r.output;
  auto img = open_docker_archive(file, "example.com/team/trainer:v1", kAmd64, *store_);
  EXPECT_EQ(img->raw_config(), b.image->raw_config());
  Manifest m = img->manifest();
  ASSERT_EQ(m.layers.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    // skopeo stores layers uncompressed; we take them as plain tar, digest = diff_id.
    EXPECT_EQ(m.layers[i].digest, b.layers[i].diff_id);
    EXPECT_EQ(trainpack::read_file(img->blob_path(m.layers[i].digest)), b.layers[i].tar);
  }
  EXPECT_EQ(open_docker_archive(file, "", kAmd64, *store_)->manifest_digest(), img->manifest_digest());
}

// --- OCI image layout ---

TEST_F(ExternalToolsOciLayout, OciImageToolValidatesWrittenLayout) {
  TRAINPACK_REQUIRE_TOOL("oci-image-tool");
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  fs::path p = tmp_ / "layout";
  write_oci_layout(*a.image, p, "v1", json{{"org.opencontainers.image.title", "test"}});
  auto r = run_shell("oci-image-tool validate --type image --ref name=v1 " + quote(p));
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST_F(ExternalToolsOciLayout, SkopeoInspectsWrittenLayout) {
  TRAINPACK_REQUIRE_TOOL("skopeo");
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}});
  fs::path p = tmp_ / "layout";
  write_oci_layout(*a.image, p, "v1", nullptr);
  auto raw = run_shell("skopeo inspect --raw " + quote("oci:" + p.string() + ":v1"));
  ASSERT_EQ(raw.status, 0) << raw.output;
  EXPECT_EQ(raw.output, a.image->raw_manifest());
  auto r = run_shell("skopeo inspect " + quote("oci:" + p.string() + ":v1"));
  ASSERT_EQ(r.status, 0) << r.output;
  json j = json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["Digest"], a.image->manifest_digest().str());
  EXPECT_EQ(j["Architecture"], "amd64");
  ASSERT_EQ(j["Layers"].size(), 1u);
  EXPECT_EQ(j["Layers"][0], a.layers[0].digest.str());
}

TEST_F(ExternalToolsOciLayout, UmociUnpacksWrittenLayout) {
  TRAINPACK_REQUIRE_TOOL("umoci");
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  fs::path p = tmp_ / "layout";
  write_oci_layout(*a.image, p, "v1", nullptr);
  auto r = run_shell("umoci unpack --rootless --image " + quote(p.string() + ":v1") + " " + quote(tmp_ / "bundle"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(trainpack::read_file(tmp_ / "bundle" / "rootfs" / "app" / "a.txt"), "alpha");
  EXPECT_EQ(trainpack::read_file(tmp_ / "bundle" / "rootfs" / "app" / "b.txt"), "bravo");
}

TEST_F(ExternalToolsOciLayout, OpensLayoutsWrittenBySkopeo) {
  TRAINPACK_REQUIRE_TOOL("skopeo");
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}});
  write_oci_layout(*a.image, tmp_ / "ours", "v1", nullptr);
  auto r = run_shell("skopeo --insecure-policy copy " + quote("oci:" + (tmp_ / "ours").string() + ":v1") + " " +
                       quote("oci:" + (tmp_ / "theirs").string() + ":copied"));
  ASSERT_EQ(r.status, 0) << r.output;
  auto img = open_oci_layout(tmp_ / "theirs", "copied", kAmd64);
  EXPECT_EQ(img->raw_config(), a.image->raw_config());
  Manifest m = img->manifest();
  ASSERT_EQ(m.layers.size(), 1u);
  EXPECT_EQ(trainpack::read_file(img->blob_path(m.layers[0].digest)), a.layers[0].blob);
}
