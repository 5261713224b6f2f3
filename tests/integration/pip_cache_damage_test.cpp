// The cache is input, not truth (docs/caching.md): a build on a filled cache in which one file has a byte flipped
// exits 0, makes the image a build on the whole cache makes, and every blob of its oci: and docker-archive: outputs
// hashes to its name; a damaged file it reads is named in a warning. The base comes from a registry, so its layers
// are in the cache too.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/digest.h"
#include "support/fs.h"
#include "tests/integration/access_logged_registry.h"
#include "tests/integration/pip_test_support.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Files of each kind of entry damaged, besides every blob of the image and each scan's listing and sums: enough to
// reach every reader, few enough to keep the test near a minute.
constexpr std::size_t kPerKind = 2;

class PipCacheDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_unique<AccessLoggedRegistry>(dir_.path() / "registry");
    std::vector<std::string> layers;
    base_ref_ = push_test_base(*registry_, "base/python", layers);
    write_file(pkg_ / "task.py", "import tp_alpha\n");
    write_file(pkg_ / "requirements.txt", "tp-alpha[cli]\n");
  }

  // A build into oci:DIR/NAME:x and docker-archive:DIR/NAME.tar, on the test's cache.
  CommandResult build(const std::string& name, bool refresh_pip_steps) {
    std::vector<std::string> argv{trainpack_bin(), "build", "--executor-image-uri=" + base_ref_,
                                  "--local-package-path=" + pkg_.string(), "--script=task.py",
                                  "--output=oci:" + (dir_.path() / name).string() + ":x",
                                  "--output=docker-archive:" + (dir_.path() / (name + ".tar")).string() + ":trainer:x",
                                  "--cache-dir=" + cache_.string(), "--cache-max-size=none",
                                  "--index-url=" + index_url(), "--break-system-packages", "--format=json"};
    if (refresh_pip_steps) argv.push_back("--refresh-pip-steps");
    return run_command(argv);
  }

  // Every blob of the build NAME's outputs hashes to its name.
  void expect_outputs_whole(const std::string& name, const std::string& why) {
    expect_blobs_named_by_digest(dir_.path() / name / "blobs" / "sha256", why);
    fs::path unpacked = dir_.path() / (name + "-archive");
    fs::create_directories(unpacked);
    auto untar = run_command({"tar", "-xf", (dir_.path() / (name + ".tar")).string(), "-C", unpacked.string()});
    ASSERT_EQ(untar.exit_code, 0) << why << ": " << untar.err;
    expect_blobs_named_by_digest(unpacked / "blobs" / "sha256", why);
    fs::remove_all(dir_.path() / name);
    fs::remove_all(unpacked);
    fs::remove(dir_.path() / (name + ".tar"));
  }

  static void expect_blobs_named_by_digest(const fs::path& dir, const std::string& why) {
    int blobs = 0;
    for (const auto& blob : fs::directory_iterator(dir)) {
      ++blobs;
      EXPECT_EQ(trainpack::image::sha256_of_file(blob.path()).hex(), blob.path().filename().string())
          << why << ": " << blob.path();
    }
    EXPECT_GT(blobs, 2) << why << ": " << dir;
  }

  // The digests of the blobs the image in the layout `layout` (tag x) is made of: its config and layers.
  static std::set<std::string> image_blobs(const fs::path& layout) {
    json index = json::parse(read_file(layout / "index.json"));
    std::set<std::string> blobs;
    for (const json& d : index["manifests"]) {
      if (d.contains("artifactType")) continue;  // the SBOM beside it
      std::string digest = d["digest"];
      json manifest = json::parse(read_file(layout / "blobs" / "sha256" / digest.substr(7)));
      blobs.insert(manifest["config"]["digest"].get<std::string>().substr(7));
      for (const json& l : manifest["layers"]) blobs.insert(l["digest"].get<std::string>().substr(7));
    }
    return blobs;
  }

  // What is damaged: every blob of the image, each scan's listing.json and kept.json, and kPerKind more files of
  // each kind (the cache's first directory level); never the cache's own lock and registrations.
  std::vector<fs::path> files_to_damage(const std::set<std::string>& blobs_of_image) const {
    std::vector<fs::path> files;
    std::map<std::string, std::size_t> others;
    for (const auto& entry : fs::recursive_directory_iterator(cache_)) {
      if (!entry.is_regular_file() || entry.file_size() == 0) continue;
      const fs::path rel = entry.path().lexically_relative(cache_);
      const std::string kind = rel.begin()->string(), name = entry.path().filename().string();
      if (kind == "users" || kind == "tmp" || kind == "run" || kind == "lock") continue;
      bool always = (kind == "blobs" && blobs_of_image.count(name)) ||
                    (kind == "scans" && (name == "listing.json" || name == "kept.json"));
      if (always || others[kind]++ < kPerKind) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    return files;
  }

  TempDir dir_{"tp-cache-damage"};
  fs::path cache_ = dir_.path() / "cache";
  fs::path pkg_ = dir_.path() / "pkg";
  std::unique_ptr<AccessLoggedRegistry> registry_;
  std::string base_ref_;
};

TEST_F(PipCacheDamage, EveryBuildOnACacheWithAByteFlippedMakesTheSameWholeImage) {
  CommandResult filled = build("filled", false);
  ASSERT_EQ(filled.exit_code, 0) << filled.err;
  const std::string digest = json::parse(filled.out).value("manifest_digest", "");
  const std::set<std::string> blobs_of_image = image_blobs(dir_.path() / "filled");
  ASSERT_GE(blobs_of_image.size(), 3u);
  expect_outputs_whole("filled", "the filled cache");

  const std::vector<fs::path> files = files_to_damage(blobs_of_image);
  ASSERT_GT(files.size(), 10u);
  std::set<std::string> kinds;
  int n = 0;
  for (const fs::path& file : files) {
    const std::string rel = file.lexically_relative(cache_).string(), kind = rel.substr(0, rel.find('/'));
    kinds.insert(kind);
    const std::string whole = read_file(file);
    std::string damaged = whole;
    damaged[damaged.size() / 2] ^= 0x20;
    trainpack::write_file_atomic(file, damaged);  // a new file: the outputs' hard links keep their bytes

    // The scans and index pages are read only by a pip step that runs.
    const bool refresh = kind == "scans" || kind == "index-pages";
    const std::string name = "build-" + std::to_string(n++);
    CommandResult r = build(name, refresh);
    EXPECT_EQ(r.exit_code, 0) << rel << ":\n" << r.err;
    if (r.exit_code != 0) continue;
    EXPECT_EQ(json::parse(r.out).value("manifest_digest", ""), digest) << rel << ":\n" << r.err;
    expect_outputs_whole(name, rel);
    const bool read_by_every_build =
        kind == "pip-steps" || (kind == "blobs" && blobs_of_image.count(file.filename().string()));
    if (read_by_every_build || r.err.find("is damaged") != std::string::npos) {
      EXPECT_NE(r.err.find(file.string()), std::string::npos) << rel << ": the warning names the file\n" << r.err;
    }

    // The next build meets no damage but its own.
    if (fs::exists(file)) trainpack::write_file_atomic(file, whole);
  }
  for (const char* kind : {"blobs", "layers", "pip-steps", "scans", "checked-layers"})
    EXPECT_TRUE(kinds.count(kind)) << "no " << kind << " file was damaged";
}

}  // namespace
