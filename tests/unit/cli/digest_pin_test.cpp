// The image of the example trainer (testdata/example-trainer: code and a config dir, no pip step) on a fixed base
// made here, pinned by digest: a change to any byte trainpack writes (tar headers, gzip streams, config, history,
// manifest) shows as another digest, where the docker-equivalence tests would only show a change docker also sees.
// A deliberate change of the image's bytes updates the pins in the same commit and says why.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/fs.h"
#include "tests/unit/cli_test_support.h"
#include "tests/unit/image_test_support.h"
#include "transports/oci_layout.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using trainpack::testing::CliResult;
using trainpack::testing::trainpack;

// The base's one layer, as zlib writes it at level 6 (not trainpack's bytes: if this pin fails, the fixture moved).
constexpr const char* kBaseLayer = "sha256:d2beb5e3198db2d6b7c316946b3881cc3da06966b3371302c52d955f82ca6277";
constexpr const char* kManifest = "sha256:7f51afd85202f6f090c7a0ae8cbd25496fd0a76fd872bbb0fa15dc85e8454ee9";
constexpr const char* kConfig = "sha256:0f8654e1b5a59d6aa40d2c2ea92ecb0ae5bd224408b6ec7669ec595fcad256fb";

// SOURCE_DATE_EPOCH unset for the test's length: the pins are of the default timestamps.
class WithoutSourceDateEpoch {
 public:
  WithoutSourceDateEpoch() {
    if (const char* v = std::getenv("SOURCE_DATE_EPOCH")) saved_ = v;
    ::unsetenv("SOURCE_DATE_EPOCH");
  }
  ~WithoutSourceDateEpoch() {
    if (saved_) ::setenv("SOURCE_DATE_EPOCH", saved_->c_str(), 1);
  }

 private:
  std::optional<std::string> saved_;
};

TEST(DigestPin, TheExampleTrainersImageKeepsItsDigest) {
  WithoutSourceDateEpoch fixed_time;
  trainpack::ScopedDir root(trainpack::make_temp_dir({}, "trainpack-pin-"));
  auto base = trainpack::test_support::make_image(root.path() / "store", "amd64", {{"f", "y"}});
  ASSERT_EQ(base.layers.at(0).digest.str(), kBaseLayer) << "the fixed base is not the one pinned against";
  trainpack::transports::write_oci_layout(*base.image, root.path() / "base", "1");
  // Only the example's own files (a checkout may hold __pycache__ or editor files beside them).
  const fs::path example = fs::path(TRAINPACK_TESTDATA_DIR) / "example-trainer";
  const fs::path pkg = root.path() / "pkg";
  for (const char* file : {"trainer/__init__.py", "trainer/task.py", "config/params.json"}) {
    fs::create_directories((pkg / file).parent_path());
    trainpack::write_file_atomic(pkg / file, trainpack::read_file(example / file));
  }
  CliResult r = trainpack({"build", "-q", "--format=json", "--executor-image-uri=python:3.11",
                           "--base-source=oci:" + (root.path() / "base").string() + ":1",
                           "--local-package-path=" + pkg.string(), "--script=trainer/task.py", "--extra-dirs=config",
                           "--cache-dir=" + (root.path() / "cache").string(),
                           "--output=oci:" + (root.path() / "out").string() + ":latest"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json result = json::parse(r.out);
  EXPECT_EQ(result.at("config_digest"), kConfig) << trainpack::read_file(root.path() / "out" / "blobs" / "sha256" /
                                                                         result.at("config_digest").get<std::string>().substr(7));
  EXPECT_EQ(result.at("manifest_digest"), kManifest) << r.out;
}

}  // namespace
