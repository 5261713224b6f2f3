#include "transports/oci_layout.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit/image_test_support.h"
#include "image/media_types.h"
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

const Platform kLayoutAmd64 = Platform::parse("linux/amd64");
const Platform kArm64 = Platform::parse("linux/arm64");

class OciLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override { tmp_ = trainpack::make_temp_dir({}, "oci-layout-test-"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  fs::path tmp_;
};

json read_json(const fs::path& p) { return json::parse(trainpack::read_file(p)); }

void flip_last_byte(const fs::path& p) {
  std::string bytes = trainpack::read_file(p);
  bytes.back() ^= 0x01;
  fs::remove(p);  // break a hard link rather than corrupt the source store
  std::ofstream(p, std::ios::binary) << bytes;
}

}  // namespace

TEST_F(OciLayoutTest, RoundTripKeepsManifestAndBlobs) {
  BuiltImage built = make_image(tmp_ / "store", "amd64", {{"a.txt", "alpha"}, {"b.txt", "bravo"}});
  fs::path out = tmp_ / "layout";
  write_oci_layout(*built.image, out, "v1", json{{"org.opencontainers.image.source", "https://example.com/x"}});

  EXPECT_EQ(read_json(out / "oci-layout"), json({{"imageLayoutVersion", "1.0.0"}}));
  json index = read_json(out / "index.json");
  ASSERT_EQ(index["manifests"].size(), 1u);
  EXPECT_EQ(index["mediaType"], media::kOciIndex);
  const json& d = index["manifests"][0];
  EXPECT_EQ(d["digest"], built.image->manifest_digest().str());
  EXPECT_EQ(d["annotations"][std::string(kAnnotationRefName)], "v1");
  EXPECT_EQ(d["annotations"]["org.opencontainers.image.source"], "https://example.com/x");

  auto img = open_oci_layout(out, "v1", kLayoutAmd64);
  EXPECT_EQ(img->manifest_digest(), built.image->manifest_digest());
  EXPECT_EQ(img->raw_manifest(), built.image->raw_manifest());
  EXPECT_EQ(img->raw_config(), built.image->raw_config());
  EXPECT_EQ(img->describe(), "oci:" + out.string() + ":v1");
  Manifest m = img->manifest();
  ASSERT_EQ(m.layers.size(), 2u);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    fs::path p = img->blob_path(m.layers[i].digest);
    EXPECT_EQ(p, out / "blobs" / "sha256" / m.layers[i].digest.hex());
    EXPECT_EQ(trainpack::read_file(p), built.layers[i].blob);
  }
  EXPECT_EQ(trainpack::read_file(img->blob_path(img->manifest_digest())), img->raw_manifest());
  EXPECT_EQ(trainpack::read_file(img->blob_path(m.config.digest)), img->raw_config());

  // An empty tag opens the only image; a layout written from a layout round-trips too.
  auto only = open_oci_layout(out, "", kLayoutAmd64);
  EXPECT_EQ(only->manifest_digest(), built.image->manifest_digest());
  write_oci_layout(*img, tmp_ / "copy", "", nullptr);
  auto copy = open_oci_layout(tmp_ / "copy", "", kLayoutAmd64);
  EXPECT_EQ(copy->manifest_digest(), built.image->manifest_digest());
  EXPECT_FALSE(read_json(tmp_ / "copy" / "index.json")["manifests"][0].contains("annotations"));
}

TEST_F(OciLayoutTest, AddingToAnExistingLayoutReplacesTheSameTag) {
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "first"}});
  BuiltImage b = make_image(tmp_ / "store", "amd64", {{"a.txt", "second"}});
  fs::path out = tmp_ / "layout";
  write_oci_layout(*a.image, out, "latest", nullptr);
  write_oci_layout(*a.image, out, "stable", nullptr);
  write_oci_layout(*b.image, out, "latest", nullptr);

  json index = read_json(out / "index.json");
  ASSERT_EQ(index["manifests"].size(), 2u);
  EXPECT_EQ(open_oci_layout(out, "latest", kLayoutAmd64)->manifest_digest(), b.image->manifest_digest());
  EXPECT_EQ(open_oci_layout(out, "stable", kLayoutAmd64)->manifest_digest(), a.image->manifest_digest());

  std::string ambiguous = error_of([&] { open_oci_layout(out, "", kLayoutAmd64); });
  EXPECT_NE(ambiguous.find("holds 2 images"), std::string::npos) << ambiguous;
  try {
    open_oci_layout(out, "nope", kLayoutAmd64);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no image named \"nope\""), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("stable"), std::string::npos) << e.hint();
    EXPECT_NE(e.hint().find("latest"), std::string::npos) << e.hint();
  }
}

// Builds writing to one layout at once (a new one, or an existing one) all keep their tags: index.json is re-read
// and written under a lock on the layout directory.
TEST_F(OciLayoutTest, ConcurrentWritersKeepEveryTag) {
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "shared"}});
  for (const char* start : {"new", "existing"}) {
    SCOPED_TRACE(start);
    fs::path out = tmp_ / start;
    if (std::string(start) == "existing") write_oci_layout(*a.image, out, "first", nullptr);
    constexpr int kWriters = 8;
    std::vector<std::thread> threads;
    std::vector<std::string> errors(kWriters);
    for (int i = 0; i < kWriters; ++i)
      threads.emplace_back([&, i] {
        errors[i] = error_of([&] { write_oci_layout(*a.image, out, "t" + std::to_string(i), nullptr); });
      });
    for (auto& t : threads) t.join();
    for (const auto& e : errors) EXPECT_EQ(e, kNoError);
    for (int i = 0; i < kWriters; ++i)
      EXPECT_EQ(open_oci_layout(out, "t" + std::to_string(i), kLayoutAmd64)->manifest_digest(), a.image->manifest_digest());
  }
}

TEST_F(OciLayoutTest, EmptyDirectoryIsReplacedOtherDirectoriesAreRefused) {
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "x"}});
  fs::create_directory(tmp_ / "empty");
  write_oci_layout(*a.image, tmp_ / "empty", "t", nullptr);
  EXPECT_EQ(open_oci_layout(tmp_ / "empty", "t", kLayoutAmd64)->manifest_digest(), a.image->manifest_digest());

  fs::create_directory(tmp_ / "other");
  std::ofstream(tmp_ / "other" / "file") << "precious";
  std::string err = error_of([&] { write_oci_layout(*a.image, tmp_ / "other", "t", nullptr); });
  EXPECT_NE(err.find("is not an OCI layout"), std::string::npos) << err;
  EXPECT_EQ(dir_names(tmp_ / "other"), std::vector<std::string>{"file"});

  std::ofstream(tmp_ / "plainfile") << "x";
  err = error_of([&] { write_oci_layout(*a.image, tmp_ / "plainfile", "t", nullptr); });
  EXPECT_NE(err.find("not a directory"), std::string::npos) << err;

  err = error_of([&] { write_oci_layout(*a.image, tmp_ / "bad-ann", "t", json{{"k", 1}}); });
  EXPECT_NE(err.find("not a string"), std::string::npos) << err;
}

// oci:DIR through a symbolic link: the layout goes where the link points (an empty or missing directory), the link
// stays; a link to a FIFO is refused and both stay.
TEST_F(OciLayoutTest, ALinkedDestinationIsWrittenThroughNeverReplaced) {
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "x"}});
  fs::create_directory(tmp_ / "empty");
  fs::create_directory_symlink("empty", tmp_ / "to-empty");
  write_oci_layout(*a.image, tmp_ / "to-empty", "t", nullptr);
  EXPECT_TRUE(fs::is_symlink(tmp_ / "to-empty"));
  EXPECT_EQ(open_oci_layout(tmp_ / "empty", "t", kLayoutAmd64)->manifest_digest(), a.image->manifest_digest());

  fs::create_directory_symlink("later", tmp_ / "dangling");
  write_oci_layout(*a.image, tmp_ / "dangling", "t", nullptr);
  EXPECT_TRUE(fs::is_symlink(tmp_ / "dangling"));
  EXPECT_EQ(open_oci_layout(tmp_ / "later", "t", kLayoutAmd64)->manifest_digest(), a.image->manifest_digest());

  ASSERT_EQ(::mkfifo((tmp_ / "fifo").c_str(), 0600), 0);
  fs::create_symlink("fifo", tmp_ / "to-fifo");
  std::string err = error_of([&] { write_oci_layout(*a.image, tmp_ / "to-fifo", "t", nullptr); });
  EXPECT_NE(err.find("not a directory"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_symlink(tmp_ / "to-fifo"));
  EXPECT_TRUE(fs::is_fifo(tmp_ / "fifo"));
}

TEST_F(OciLayoutTest, FailedWriteLeavesNothingBehind) {
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "x"}, {"b.txt", "y"}});
  fs::remove(a.image->store().path_of(a.layers[1].digest));
  fs::create_directory(tmp_ / "out");
  std::string err = error_of([&] { write_oci_layout(*a.image, tmp_ / "out" / "layout", "t", nullptr); });
  EXPECT_NE(err.find(a.layers[1].digest.str()), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(tmp_ / "out")) << dir_names(tmp_ / "out").front();

  // An existing empty directory stays as it was.
  fs::create_directory(tmp_ / "out" / "empty");
  EXPECT_THROW(write_oci_layout(*a.image, tmp_ / "out" / "empty", "t", nullptr), Error);
  EXPECT_EQ(dir_names(tmp_ / "out"), std::vector<std::string>{"empty"});
  EXPECT_TRUE(fs::is_empty(tmp_ / "out" / "empty"));

  // An existing layout keeps its index when adding fails.
  BuiltImage good = make_image(tmp_ / "store2", "amd64", {{"c.txt", "z"}});
  write_oci_layout(*good.image, tmp_ / "out" / "layout", "good", nullptr);
  std::string index_before = trainpack::read_file(tmp_ / "out" / "layout" / "index.json");
  EXPECT_THROW(write_oci_layout(*a.image, tmp_ / "out" / "layout", "bad", nullptr), Error);
  EXPECT_EQ(trainpack::read_file(tmp_ / "out" / "layout" / "index.json"), index_before);
}

TEST_F(OciLayoutTest, CorruptLayoutsGiveOneLineErrors) {
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "x"}});
  auto fresh = [&](const std::string& name) {
    fs::path p = tmp_ / name;
    write_oci_layout(*a.image, p, "t", nullptr);
    return p;
  };
  auto expect_error = [&](const fs::path& dir, const std::string& needle) {
    try {
      open_oci_layout(dir, "t", kLayoutAmd64);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_NE(msg.find(dir.string()), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_FALSE(e.hint().empty()) << msg;
    }
  };

  expect_error(tmp_ / "missing", "does not exist");

  fs::path p = fresh("no-header");
  fs::remove(p / "oci-layout");
  expect_error(p, "no oci-layout");

  p = fresh("bad-version");
  std::ofstream(p / "oci-layout", std::ios::trunc) << R"({"imageLayoutVersion":"2.0.0"})";
  expect_error(p, "imageLayoutVersion 2.0.0");

  p = fresh("bad-json");
  std::ofstream(p / "index.json", std::ios::trunc) << "{not json";
  expect_error(p, "index.json is not valid JSON");

  p = fresh("no-index");
  fs::remove(p / "index.json");
  expect_error(p, "index.json is missing");

  std::string md = a.image->manifest_digest().hex();
  p = fresh("wrong-manifest-digest");
  flip_last_byte(p / "blobs" / "sha256" / md);
  expect_error(p, "does not match its digest");

  p = fresh("missing-manifest");
  fs::remove(p / "blobs" / "sha256" / md);
  expect_error(p, "blob sha256:" + md + " is missing");

  p = fresh("missing-config");
  fs::remove(p / "blobs" / "sha256" / a.config_digest.hex());
  expect_error(p, "blob " + a.config_digest.str() + " is missing");

  p = fresh("missing-layer");
  fs::remove(p / "blobs" / "sha256" / a.layers[0].digest.hex());
  expect_error(p, "blob " + a.layers[0].digest.str() + " is missing");

  p = fresh("truncated-layer");
  {
    std::string bytes = trainpack::read_file(p / "blobs" / "sha256" / a.layers[0].digest.hex());
    fs::remove(p / "blobs" / "sha256" / a.layers[0].digest.hex());
    std::ofstream(p / "blobs" / "sha256" / a.layers[0].digest.hex(), std::ios::binary) << bytes.substr(1);
  }
  expect_error(p, "bytes, expected");

  p = fresh("bad-descriptor");
  std::ofstream(p / "index.json", std::ios::trunc)
      << R"({"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:xyz","size":1}]})";
  try {
    open_oci_layout(p, "", kLayoutAmd64);
    ADD_FAILURE() << "no error for a bad digest";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid digest"), std::string::npos) << e.what();
  }
}

TEST_F(OciLayoutTest, FlippedLayerByteIsCaughtLazilyAndNamed) {
  BuiltImage a = make_image(tmp_ / "store", "amd64", {{"a.txt", "hello world"}, {"b.txt", "ok"}});
  fs::path p = tmp_ / "layout";
  write_oci_layout(*a.image, p, "t", nullptr);
  flip_last_byte(p / "blobs" / "sha256" / a.layers[0].digest.hex());

  auto img = open_oci_layout(p, "t", kLayoutAmd64);  // sizes still match: opening succeeds
  for (int attempt = 0; attempt < 2; ++attempt) {  // never cached as good
    try {
      img->blob_path(a.layers[0].digest);
      ADD_FAILURE() << "corrupt layer was handed out";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(a.layers[0].digest.str()), std::string::npos) << msg;
      EXPECT_NE(msg.find("does not match its digest"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
  }
  EXPECT_EQ(trainpack::read_file(img->blob_path(a.layers[1].digest)), a.layers[1].blob);
  // The source store was hard-linked from, not modified.
  EXPECT_EQ(trainpack::read_file(a.image->store().path_of(a.layers[0].digest)), a.layers[0].blob);
}

TEST_F(OciLayoutTest, NestedIndexSelectsPlatform) {
  BuiltImage amd = make_image(tmp_ / "store", "amd64", {{"arch.txt", "amd64"}});
  BuiltImage arm = make_image(tmp_ / "store", "arm64", {{"arch.txt", "arm64"}});
  fs::path p = tmp_ / "layout";
  // Put both images' blobs into one layout, then point index.json at a nested index of the two.
  write_oci_layout(*amd.image, p, "amd", nullptr);
  write_oci_layout(*arm.image, p, "arm", nullptr);
  Index nested;
  nested.media_type = media::kOciIndex;
  for (auto* b : {&amd, &arm}) {
    Descriptor d;
    d.media_type = media::kOciManifest;
    d.digest = b->image->manifest_digest();
    d.size = b->image->raw_manifest().size();
    d.platform = {{"os", "linux"}, {"architecture", b == &amd ? "amd64" : "arm64"}};
    if (b == &arm) d.platform["variant"] = "v8";
    nested.manifests.push_back(d);
  }
  std::string raw_nested = nested.serialize();
  Digest nd = sha256_of(raw_nested);
  trainpack::write_file_atomic(p / "blobs" / "sha256" / nd.hex(), raw_nested);
  json index = {{"schemaVersion", 2},
                {"mediaType", media::kOciIndex},
                {"manifests",
                 {{{"mediaType", media::kOciIndex},
                   {"digest", nd.str()},
                   {"size", raw_nested.size()},
                   {"annotations", {{std::string(kAnnotationRefName), "multi"}}}}}}};
  trainpack::write_file_atomic(p / "index.json", index.dump());

  EXPECT_EQ(open_oci_layout(p, "multi", kLayoutAmd64)->manifest_digest(), amd.image->manifest_digest());
  auto a = open_oci_layout(p, "multi", kArm64);
  EXPECT_EQ(a->manifest_digest(), arm.image->manifest_digest());
  EXPECT_EQ(a->config().architecture(), "arm64");
  EXPECT_EQ(open_oci_layout(p, "", Platform::parse("linux/aarch64"))->manifest_digest(),
            arm.image->manifest_digest());
  try {
    open_oci_layout(p, "multi", Platform::parse("linux/s390x"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("linux/s390x"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("linux/arm64"), std::string::npos) << e.hint();
  }

  // A corrupt nested index is reported as such.
  std::string bad = raw_nested;
  bad[bad.size() / 2] ^= 0x01;
  fs::remove(p / "blobs" / "sha256" / nd.hex());
  std::ofstream(p / "blobs" / "sha256" / nd.hex(), std::ios::binary) << bad;
  std::string err = error_of([&] { open_oci_layout(p, "multi", kLayoutAmd64); });
  EXPECT_NE(err.find(nd.str() + " does not match its digest"), std::string::npos) << err;
}
