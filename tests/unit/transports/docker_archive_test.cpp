#include "transports/docker_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/unit/image_test_support.h"
#include "image/media_types.h"
#include "store/cache_dir.h"
#include "transports/oci_layout.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/error_of.h"

namespace fs = std::filesystem;
using namespace trainpack::image;
using namespace trainpack::store;
using namespace trainpack::transports;
using namespace trainpack::test_support;
using nlohmann::json;
using trainpack::Error;

namespace {

const Platform kAmd64 = Platform::parse("linux/amd64");

struct ArchiveEntry {
  std::string name;
  unsigned type = 0;
  int perm = 0;
  std::int64_t mtime = -1;
  std::int64_t uid = -1, gid = -1;
  bool has_uname = false, has_gname = false;
  std::string data;
};

// Every entry of an uncompressed tar, with its data (test archives are small).
std::vector<ArchiveEntry> list_tar(const fs::path& file) {
  std::vector<ArchiveEntry> out;
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  EXPECT_EQ(archive_read_open_filename(a, file.c_str(), 1 << 16), ARCHIVE_OK);
  archive_entry* e;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    ArchiveEntry x;
    x.name = archive_entry_pathname(e);
    x.type = archive_entry_filetype(e);
    x.perm = archive_entry_perm(e);
    x.mtime = archive_entry_mtime(e);
    x.uid = archive_entry_uid(e);
    x.gid = archive_entry_gid(e);
    x.has_uname = archive_entry_uname(e) && *archive_entry_uname(e);
    x.has_gname = archive_entry_gname(e) && *archive_entry_gname(e);
    char buf[65536];
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, sizeof buf)) > 0) x.data.append(buf, static_cast<std::size_t>(n));
    out.push_back(std::move(x));
  }
  archive_read_free(a);
  return out;
}

void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

class DockerArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = trainpack::make_temp_dir({}, "docker-archive-test-");
    store_ = std::make_unique<BlobStore>(tmp_ / "import-store");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  fs::path tmp_;
  std::unique_ptr<BlobStore> store_;
};

// A legacy `docker save` archive (Docker < 25): <id>/layer.tar, <id>/json, <id>/VERSION, <config-hex>.json,
// manifest.json, repositories. The third layer repeats the first via a symlink, like docker save does.
struct Legacy {
  std::string tar;
  std::vector<std::string> layer_tars;
  Digest config_digest;
  std::string raw_config;
};

Legacy make_legacy_archive(bool gzip_second_layer, const std::string& repo_tag = "trainer:legacy",
                           std::size_t config_diff_ids = 3) {
  Legacy l;
  l.layer_tars = {make_tar({{"etc/", "", "", true}, {"etc/one", "1", "", false}}),
                  make_tar({{"etc/", "", "", true}, {"etc/two", "22", "", false}})};
  json diff_ids = json::array({sha256_of(l.layer_tars[0]).str(), sha256_of(l.layer_tars[1]).str(),
                               sha256_of(l.layer_tars[0]).str()});
  while (diff_ids.size() > config_diff_ids) diff_ids.erase(diff_ids.size() - 1);
  l.raw_config = json{{"architecture", "amd64"},
                      {"os", "linux"},
                      {"config", {{"Cmd", {"sh"}}}},
                      {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
                     .dump();
  l.config_digest = sha256_of(l.raw_config);
  std::string id1(64, 'a'), id2(64, 'b'), id3(64, 'c');
  std::string second = gzip_second_layer ? gzip(l.layer_tars[1]) : l.layer_tars[1];
  json manifest = json::array({{{"Config", l.config_digest.hex() + ".json"},
                                {"RepoTags", {repo_tag}},
                                {"Layers", {id1 + "/layer.tar", id2 + "/layer.tar", id3 + "/layer.tar"}}}});
  l.tar = make_tar({
      {id1 + "/", "", "", true},
      {id1 + "/VERSION", "1.0", "", false},
      {id1 + "/json", "{}", "", false},
      {id1 + "/layer.tar", l.layer_tars[0], "", false},
      {id2 + "/", "", "", true},
      {id2 + "/VERSION", "1.0", "", false},
      {id2 + "/json", "{}", "", false},
      {id2 + "/layer.tar", second, "", false},
      {id3 + "/", "", "", true},
      {id3 + "/layer.tar", "", "../" + id1 + "/layer.tar", false},
      {l.config_digest.hex() + ".json", l.raw_config, "", false},
      {"manifest.json", manifest.dump(), "", false},
      {"repositories", json{{"trainer", {{"legacy", id3}}}}.dump(), "", false},
  });
  return l;
}

}  // namespace

TEST(DockerArchiveRef, ParsesAndNormalises) {
  auto r = parse_docker_archive_ref("trainer");
  EXPECT_EQ(r.familiar, "trainer");
  EXPECT_EQ(r.full, "docker.io/library/trainer");
  EXPECT_EQ(r.tag, "latest");
  r = parse_docker_archive_ref("127.0.0.1:5000/x/y:tag");
  EXPECT_EQ(r.familiar, "127.0.0.1:5000/x/y");
  EXPECT_EQ(r.full, "127.0.0.1:5000/x/y");
  EXPECT_EQ(r.tag, "tag");
  r = parse_docker_archive_ref("docker.io/library/python:3.11");
  EXPECT_EQ(r.familiar, "python");
  r = parse_docker_archive_ref("me/app:v1");
  EXPECT_EQ(r.full, "docker.io/me/app");
  EXPECT_EQ(r.familiar, "me/app");
  r = parse_docker_archive_ref("localhost:5000/app");
  EXPECT_EQ(r.full, "localhost:5000/app");
  EXPECT_EQ(r.tag, "latest");
  EXPECT_THROW(parse_docker_archive_ref("Trainer:latest"), Error);
  EXPECT_THROW(parse_docker_archive_ref("trainer@sha256:" + std::string(64, 'a')), Error);
  EXPECT_THROW(parse_docker_archive_ref("trainer:bad/tag:"), Error);
  EXPECT_THROW(parse_docker_archive_ref(""), Error);
}

TEST_F(DockerArchiveTest, WritesBothLayoutsDeterministically) {
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  fs::path file = tmp_ / "image.tar";
  write_docker_archive(*b.image, file, "127.0.0.1:5000/x/y:tag");

  auto entries = list_tar(file);
  std::map<std::string, std::string> files;
  std::vector<std::string> names;
  for (const auto& e : entries) {
    names.push_back(e.name);
    EXPECT_EQ(e.mtime, 0) << e.name;
    EXPECT_EQ(e.uid, 0) << e.name;
    EXPECT_EQ(e.gid, 0) << e.name;
    EXPECT_FALSE(e.has_uname) << e.name;
    EXPECT_FALSE(e.has_gname) << e.name;
    if (e.type == AE_IFREG) files[e.name] = e.data;
  }
  std::string md = b.image->manifest_digest().hex();
  std::vector<std::string> blob_names = {"blobs/sha256/" + md, "blobs/sha256/" + b.config_digest.hex(),
                                         "blobs/sha256/" + b.layers[0].digest.hex(),
                                         "blobs/sha256/" + b.layers[1].digest.hex()};
  std::sort(blob_names.begin(), blob_names.end());
  std::vector<std::string> want = {"blobs/", "blobs/sha256/"};
  want.insert(want.end(), blob_names.begin(), blob_names.end());
  want.insert(want.end(), {"index.json", "manifest.json", "oci-layout"});
  EXPECT_EQ(names, want);

  EXPECT_EQ(files["oci-layout"], R"({"imageLayoutVersion":"1.0.0"})");
  EXPECT_EQ(files["blobs/sha256/" + md], b.image->raw_manifest());
  EXPECT_EQ(files["blobs/sha256/" + b.config_digest.hex()], b.image->raw_config());
  EXPECT_EQ(files["blobs/sha256/" + b.layers[1].digest.hex()], b.layers[1].blob);

  json index = json::parse(files["index.json"]);
  ASSERT_EQ(index["manifests"].size(), 1u);
  EXPECT_EQ(index["manifests"][0]["digest"], "sha256:" + md);
  EXPECT_EQ(index["manifests"][0]["annotations"]["io.containerd.image.name"], "127.0.0.1:5000/x/y:tag");
  EXPECT_EQ(index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"], "tag");

  json mj = json::parse(files["manifest.json"]);
  ASSERT_TRUE(mj.is_array());
  ASSERT_EQ(mj.size(), 1u);
  EXPECT_EQ(mj[0]["Config"], "blobs/sha256/" + b.config_digest.hex());
  EXPECT_EQ(mj[0]["RepoTags"], json::array({"127.0.0.1:5000/x/y:tag"}));
  EXPECT_EQ(mj[0]["Layers"], json::array({"blobs/sha256/" + b.layers[0].digest.hex(),
                                          "blobs/sha256/" + b.layers[1].digest.hex()}));

  // Same input, same bytes; docker.io names are familiar in RepoTags and full in the annotation.
  write_docker_archive(*b.image, tmp_ / "again.tar", "127.0.0.1:5000/x/y:tag");
  EXPECT_EQ(trainpack::read_file(file), trainpack::read_file(tmp_ / "again.tar"));
  write_docker_archive(*b.image, tmp_ / "hub.tar", "trainer");
  for (const auto& e : list_tar(tmp_ / "hub.tar")) {
    if (e.name == "manifest.json") {
      EXPECT_EQ(json::parse(e.data)[0]["RepoTags"][0], "trainer:latest");
    }
    if (e.name == "index.json") {
      EXPECT_EQ(json::parse(e.data)["manifests"][0]["annotations"]["io.containerd.image.name"],
                "docker.io/library/trainer:latest");
    }
  }
}

TEST_F(DockerArchiveTest, RoundTripThroughTheOciLayoutInside) {
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  fs::path file = tmp_ / "image.tar";
  write_docker_archive(*b.image, file, "trainer:latest");
  for (std::string ref : {"trainer:latest", "trainer", "docker.io/library/trainer:latest", "latest", ""}) {
    SCOPED_TRACE(ref);
    auto img = open_docker_archive(file, ref, kAmd64, *store_);
    EXPECT_EQ(img->manifest_digest(), b.image->manifest_digest());
    EXPECT_EQ(img->raw_config(), b.image->raw_config());
    Manifest m = img->manifest();
    ASSERT_EQ(m.layers.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      fs::path p = img->blob_path(m.layers[i].digest);
      EXPECT_EQ(p, store_->path_of(m.layers[i].digest));
      EXPECT_EQ(trainpack::read_file(p), b.layers[i].blob);
    }
    EXPECT_EQ(trainpack::read_file(img->blob_path(img->manifest_digest())), img->raw_manifest());
  }
  try {
    open_docker_archive(file, "other:tag", kAmd64, *store_);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no image named \"other:tag\""), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("latest"), std::string::npos) << e.hint();
  }
  // `docker save | gzip` is loadable too.
  write_bytes(tmp_ / "image.tar.gz", gzip(trainpack::read_file(file)));
  EXPECT_EQ(open_docker_archive(tmp_ / "image.tar.gz", "trainer", kAmd64, *store_)->manifest_digest(),
            b.image->manifest_digest());
  EXPECT_TRUE(fs::is_empty(trainpack::store::temp_dir_of(store_->root())));
}

TEST_F(DockerArchiveTest, FailedWriteLeavesNothingBehind) {
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  fs::remove(b.image->store().path_of(b.layers[1].digest));
  fs::create_directory(tmp_ / "out");
  std::string err = error_of([&] { write_docker_archive(*b.image, tmp_ / "out" / "image.tar", "trainer:latest"); });
  EXPECT_NE(err.find(b.layers[1].digest.str()), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(tmp_ / "out"));

  // A layer that does not have the size the manifest says is caught, with nothing left either.
  BuiltImage c = make_image(tmp_ / "store2", "amd64", {{"a.txt", "alpha"}});
  fs::path p = c.image->store().path_of(c.layers[0].digest);
  std::string bytes = trainpack::read_file(p);
  fs::remove(p);
  write_bytes(p, bytes + "extra");
  err = error_of([&] { write_docker_archive(*c.image, tmp_ / "out" / "image.tar", "trainer:latest"); });
  EXPECT_NE(err.find("changed size"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(tmp_ / "out"));

  err = error_of([&] { write_docker_archive(*c.image, tmp_ / "out" / "image.tar", "Bad Name"); });
  EXPECT_NE(err.find("invalid image reference"), std::string::npos) << err;
  err = error_of([&] { write_docker_archive(*c.image, tmp_ / "no-such-dir" / "image.tar", "trainer"); });
  EXPECT_NE(err.find("no-such-dir does not exist"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(tmp_ / "out"));
}

TEST_F(DockerArchiveTest, ReadsLegacyDockerSaveArchives) {
  Legacy l = make_legacy_archive(/*gzip_second_layer=*/false);
  write_bytes(tmp_ / "legacy.tar", l.tar);
  for (std::string ref : {"trainer:legacy", "docker.io/library/trainer:legacy", ""}) {
    SCOPED_TRACE(ref);
    auto img = open_docker_archive(tmp_ / "legacy.tar", ref, kAmd64, *store_);
    EXPECT_EQ(img->raw_config(), l.raw_config);
    Manifest m = img->manifest();
    EXPECT_EQ(m.media_type, media::kOciManifest);
    EXPECT_EQ(m.config.digest, l.config_digest);
    EXPECT_EQ(m.config.media_type, media::kOciConfig);
    ASSERT_EQ(m.layers.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      const std::string& tar = l.layer_tars[i == 1 ? 1 : 0];
      EXPECT_EQ(m.layers[i].media_type, media::kOciLayerTar);
      EXPECT_EQ(m.layers[i].digest, sha256_of(tar));  // digest = diff_id for plain tar
      EXPECT_EQ(m.layers[i].size, tar.size());
      EXPECT_EQ(trainpack::read_file(img->blob_path(m.layers[i].digest)), tar);
    }
    EXPECT_EQ(trainpack::read_file(img->blob_path(img->manifest_digest())), img->raw_manifest());
    EXPECT_EQ(trainpack::read_file(img->blob_path(m.config.digest)), l.raw_config);
  }
  // Per-layer legacy metadata is not imported.
  EXPECT_FALSE(store_->has(sha256_of("1.0")));
  EXPECT_FALSE(store_->has(sha256_of("{}")));

  // The synthesised image can be written out again as a valid layout and archive.
  auto img = open_docker_archive(tmp_ / "legacy.tar", "", kAmd64, *store_);
  write_oci_layout(*img, tmp_ / "layout", "legacy", nullptr);
  EXPECT_EQ(open_oci_layout(tmp_ / "layout", "legacy", kAmd64)->manifest_digest(), img->manifest_digest());
  write_docker_archive(*img, tmp_ / "resaved.tar", "trainer:resaved");
  EXPECT_EQ(open_docker_archive(tmp_ / "resaved.tar", "trainer:resaved", kAmd64, *store_)->manifest_digest(),
            img->manifest_digest());
}

TEST_F(DockerArchiveTest, DetectsGzipLayersInLegacyArchives) {
  Legacy l = make_legacy_archive(/*gzip_second_layer=*/true);
  write_bytes(tmp_ / "legacy.tar", l.tar);
  auto img = open_docker_archive(tmp_ / "legacy.tar", "trainer:legacy", kAmd64, *store_);
  Manifest m = img->manifest();
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].media_type, media::kOciLayerTar);
  EXPECT_EQ(m.layers[1].media_type, media::kOciLayerGzip);
  EXPECT_EQ(m.layers[1].digest, sha256_of(gzip(l.layer_tars[1])));
  EXPECT_EQ(trainpack::read_file(img->blob_path(m.layers[1].digest)), gzip(l.layer_tars[1]));
}

TEST_F(DockerArchiveTest, CorruptArchivesGiveOneLineErrors) {
  auto expect_error = [&](const fs::path& file, const std::string& ref, const std::string& needle) {
    try {
      open_docker_archive(file, ref, kAmd64, *store_);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_FALSE(e.hint().empty()) << msg;
    }
  };
  expect_error(tmp_ / "missing.tar", "", "does not exist");

  write_bytes(tmp_ / "garbage.tar", std::string(5000, 'x'));
  expect_error(tmp_ / "garbage.tar", "", "not a readable tar archive");

  std::string noise(200000, '\0');
  std::uint32_t x = 12345;
  for (char& c : noise) c = static_cast<char>((x = x * 1103515245 + 12345) >> 24);  // incompressible
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", noise}});
  write_docker_archive(*b.image, tmp_ / "good.tar", "trainer:latest");
  std::string good = trainpack::read_file(tmp_ / "good.tar");
  write_bytes(tmp_ / "truncated.tar", good.substr(0, good.size() / 2));
  expect_error(tmp_ / "truncated.tar", "", "cannot read");

  // A flipped byte in a layer blob inside the OCI layout.
  {
    std::string flipped = good;
    std::string layer = b.layers[0].blob;
    auto pos = flipped.find(layer);
    ASSERT_NE(pos, std::string::npos);
    flipped[pos + layer.size() / 2] ^= 0x01;
    write_bytes(tmp_ / "flipped.tar", flipped);
    expect_error(tmp_ / "flipped.tar", "", "blobs/sha256/" + b.layers[0].digest.hex() + " does not match its digest");
  }

  write_bytes(tmp_ / "empty-tar.tar", make_tar({{"hello.txt", "hi", "", false}}));
  expect_error(tmp_ / "empty-tar.tar", "", "not a docker archive");

  write_bytes(tmp_ / "bad-manifest.tar", make_tar({{"manifest.json", "[{", "", false}}));
  expect_error(tmp_ / "bad-manifest.tar", "", "manifest.json is not a JSON list");

  write_bytes(tmp_ / "null-manifest.tar", make_tar({{"manifest.json", "null", "", false}}));
  expect_error(tmp_ / "null-manifest.tar", "", "manifest.json is not a JSON list");

  write_bytes(tmp_ / "no-images.tar", make_tar({{"manifest.json", "[]", "", false}}));
  expect_error(tmp_ / "no-images.tar", "", "holds no images");

  write_bytes(tmp_ / "count.tar", make_legacy_archive(false, "trainer:legacy", 2).tar);
  expect_error(tmp_ / "count.tar", "", "config lists 2 diff_ids but manifest.json 3 layers");

  // A legacy layer whose bytes are not its diff_id.
  {
    Legacy l = make_legacy_archive(false);
    std::string tar = l.tar;
    auto pos = tar.find(l.layer_tars[1]);
    ASSERT_NE(pos, std::string::npos);
    tar[pos + 100] ^= 0x01;  // inside the layer's first header's name field
    write_bytes(tmp_ / "diffid.tar", tar);
    expect_error(tmp_ / "diffid.tar", "", "but the config's diff_id is");
  }

  // Missing layer file.
  {
    json manifest = json::array({{{"Config", "c.json"}, {"RepoTags", {"a:b"}}, {"Layers", {"x/layer.tar"}}}});
    std::string cfg = json{{"architecture", "amd64"}, {"os", "linux"},
                           {"rootfs", {{"type", "layers"}, {"diff_ids", {sha256_of("x").str()}}}}}.dump();
    write_bytes(tmp_ / "nolayer.tar",
                make_tar({{"c.json", cfg, "", false}, {"manifest.json", manifest.dump(), "", false}}));
    expect_error(tmp_ / "nolayer.tar", "a:b", "layer x/layer.tar is missing from the archive");
    expect_error(tmp_ / "nolayer.tar", "c:d", "no image named \"c:d\"");
  }
  EXPECT_TRUE(fs::is_empty(trainpack::store::temp_dir_of(store_->root())));
}
