// --cache-repo: two "fresh runners" (two empty cache directories) sharing one cache repository in a registry whose
// access log the test reads. The second runner downloads no base layer, builds no pip layer (its index is down),
// uploads only what the first did not store (its code layer and the config) and makes the same image; a corrupt
// entry is a miss said in one line, and is replaced.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "image/digest.h"
#include "tests/integration/access_logged_registry.h"
#include "tests/integration/image_equivalence.h"
#include "tests/integration/pip_test_support.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class PipCacheRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("tp-cache-repo");
    registry_ = std::make_unique<AccessLoggedRegistry>(dir_->path() / "registry");
    base_ref_ = push_test_base(*registry_, "base/python", base_layers_);
    ASSERT_FALSE(base_layers_.empty());
    pkg_ = dir_->path() / "pkg";
    fs::create_directories(pkg_);
    write_file(pkg_ / "task.py", "import tp_gamma\n");
    write_file(pkg_ / "requirements.txt", "tp-gamma[fast]\n");
  }

  // A build on a runner whose cache directory is `runner`, pushing to `repository`.
  CommandResult build(const std::string& runner, const std::string& repository, const std::string& index) {
    return build_to(runner, "--output-image-uri=" + registry_->host() + "/" + repository + ":v1", index);
  }
  CommandResult build_to(const std::string& runner, const std::string& output, const std::string& index) {
    return run_command({trainpack_bin(), "build", "--executor-image-uri=" + base_ref_,
                        "--local-package-path=" + pkg_.string(), "--script=task.py", output,
                        "--cache-dir=" + (dir_->path() / runner).string(), "--cache-repo=" + cache_repo(),
                        "--index-url=" + index, "--break-system-packages", "--format=json"});
  }
  std::string cache_repo() const { return registry_->host() + "/ci/cache"; }

  // Uploads `bytes` as a blob of the cache repository (distribution-spec: POST for a session, then one PUT).
  void put_blob(const std::string& bytes) {
    fs::path file = dir_->path() / "blob";
    write_file(file, bytes);
    std::string headers = run_ok({"curl", "-sf", "-X", "POST", "-D", "-", "-o", "/dev/null",
                                  "http://" + registry_->host() + "/v2/ci/cache/blobs/uploads/"});
    std::smatch location;
    ASSERT_TRUE(std::regex_search(headers, location, std::regex("[Ll]ocation: *([^\\r\\n]+)"))) << headers;
    std::string url = location[1].str();
    if (url.starts_with("/")) url = "http://" + registry_->host() + url;
    url += (url.find('?') == std::string::npos ? "?" : "&") + std::string("digest=") +
           trainpack::image::sha256_of(bytes).str();
    run_ok({"curl", "-sf", "-X", "PUT", "-H", "Content-Type: application/octet-stream", "--data-binary",
            "@" + file.string(), url});
  }

  // The first runner's build, which stores one pip step: returns its tag.
  std::string first_build(const OwnIndexServer& index, CommandResult& first) {
    first = build("runner1", "app/first", index.url());
    EXPECT_EQ(first.exit_code, 0) << first.err;
    std::vector<std::string> tags = cache_tags("pip-");
    EXPECT_EQ(tags.size(), 1u);
    return tags.empty() ? std::string() : tags[0];
  }

  std::vector<std::string> cache_tags(const std::string& prefix) {
    json list = json::parse(run_ok({"curl", "-sf", "http://" + registry_->host() + "/v2/ci/cache/tags/list"}));
    std::vector<std::string> out;
    for (const auto& t : list.value("tags", json::array()))
      if (t.get<std::string>().starts_with(prefix)) out.push_back(t);
    return out;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<AccessLoggedRegistry> registry_;
  std::string base_ref_;
  std::vector<std::string> base_layers_;
  fs::path pkg_;
};

json pip_layer(const json& result) {
  for (const auto& l : result.at("layers"))
    if (l.value("created_by", "").find("pip install") != std::string::npos) return l;
  ADD_FAILURE() << "no pip layer in " << result.dump();
  return json::object();
}

int blob_uploads(const std::vector<AccessLoggedRegistry::Request>& log) {
  int n = 0;
  for (const auto& r : log) n += r.method == "PUT" && r.path.find("/blobs/uploads/") != std::string::npos;
  return n;
}

int lines_with(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(PipCacheRepo, AFreshRunnerWithAWarmCacheRepoDownloadsNoBaseLayerAndBuildsNoPipLayer) {
  OwnIndexServer index;
  CommandResult first = build("runner1", "app/first", index.url());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  json a = json::parse(first.out);
  EXPECT_EQ(pip_layer(a).value("origin", ""), "built");
  EXPECT_EQ(cache_tags("pip-").size(), 1u);
  EXPECT_EQ(cache_tags("facts-").size(), 1u);

  index.stop();  // the second runner must not need the index
  registry_->clear_log();
  CommandResult second = build("runner2", "app/second", index.url());
  ASSERT_EQ(second.exit_code, 0) << "the second runner did not reuse the pip step: " << second.err;
  json b = json::parse(second.out);
  EXPECT_EQ(pip_layer(b).value("origin", ""), "cached");
  EXPECT_EQ(b.value("manifest_digest", ""), a.value("manifest_digest", "")) << "not the same image";

  auto log = registry_->requests();
  for (const auto& layer : base_layers_) EXPECT_EQ(count(log, "GET", "/blobs/" + layer), 0) << "base layer downloaded";
  EXPECT_EQ(count(log, "GET", "/blobs/" + pip_layer(b).value("digest", "")), 0) << "pip layer downloaded";
  EXPECT_EQ(count(log, "POST", "mount=sha256%3A" + hex_of(pip_layer(b).value("digest", ""))), 1)
      << "pip layer not mounted from the cache repository";
  const json& code = b.at("layers").back();
  ASSERT_NE(code.value("origin", ""), "base");
  EXPECT_EQ(count(log, "PUT", hex_of(code.value("digest", ""))), 1) << "the code layer was not uploaded";
  // The code layer and the config; the SBOM, the provenance and their empty config (the SBOM read the base's
  // packages through the scan the cache repository holds).
  EXPECT_EQ(blob_uploads(log), 5) << "more than the image's two new blobs and its attachments' three uploaded";
  EXPECT_EQ(count(log, "PUT", "/v2/ci/cache/"), 0) << "the cache repository was written again";

  // A file output needs the pip layer's bytes: a third runner downloads them from the cache repository (checked).
  fs::path out = dir_->path() / "out";
  CommandResult third = build_to("runner3", "--output=oci:" + out.string() + ":x", index.url());
  ASSERT_EQ(third.exit_code, 0) << third.err;
  json c = json::parse(third.out);
  EXPECT_EQ(pip_layer(c).value("origin", ""), "cached");
  EXPECT_EQ(c.value("manifest_digest", ""), a.value("manifest_digest", ""));
  EXPECT_TRUE(fs::exists(out / "blobs" / "sha256" / hex_of(pip_layer(c).value("digest", ""))));
}

// A pip-step entry whose config is not JSON: one line says it is a miss, the step runs (reading the base's Python
// from the shared scan, so still no base layer is downloaded), the image is the same, and the entry is replaced.
TEST_F(PipCacheRepo, ACorruptEntryIsAMissSaidInOneLineAndIsReplaced) {
  OwnIndexServer index;
  CommandResult first{};
  const std::string tag = first_build(index, first);
  ASSERT_FALSE(tag.empty());
  const std::string garbage = "{not json";
  put_blob(garbage);
  json manifest{{"schemaVersion", 2},
                {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                {"artifactType", "application/vnd.trainpack.pip-step.v1+json"},
                {"config", {{"mediaType", "application/vnd.trainpack.pip-step.v1+json"},
                            {"digest", trainpack::image::sha256_of(garbage).str()},
                            {"size", garbage.size()}}},
                {"layers", json::array()}};
  write_file(dir_->path() / "manifest.json", manifest.dump());
  run_ok({"curl", "-sf", "-X", "PUT", "-H", "Content-Type: application/vnd.oci.image.manifest.v1+json",
          "--data-binary", "@" + (dir_->path() / "manifest.json").string(),
          "http://" + registry_->host() + "/v2/ci/cache/manifests/" + tag});

  registry_->clear_log();
  CommandResult second = build("runner2", "app/second", index.url());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(lines_with(second.err, "(a cache miss)"), 1) << second.err;
  EXPECT_NE(second.err.find(tag), std::string::npos) << second.err;
  json b = json::parse(second.out);
  EXPECT_EQ(pip_layer(b).value("origin", ""), "built");
  EXPECT_EQ(b.value("manifest_digest", ""), json::parse(first.out).value("manifest_digest", ""));
  auto log = registry_->requests();
  for (const auto& layer : base_layers_) EXPECT_EQ(count(log, "GET", "/blobs/" + layer), 0) << "base layer downloaded";

  index.stop();
  CommandResult third = build("runner3", "app/third", index.url());
  ASSERT_EQ(third.exit_code, 0) << "the corrupt entry was not replaced: " << third.err;
  EXPECT_EQ(pip_layer(json::parse(third.out)).value("origin", ""), "cached");
  EXPECT_EQ(lines_with(third.err, "(a cache miss)"), 0) << third.err;
}

// A blob of an entry gone from the repository (the contents of the step's entries): a miss said in one line; the
// step runs and the same image is built.
TEST_F(PipCacheRepo, AMissingBlobIsAMissSaidInOneLine) {
  OwnIndexServer index;
  CommandResult first{};
  const std::string tag = first_build(index, first);
  ASSERT_FALSE(tag.empty());
  json manifest = json::parse(run_ok({"curl", "-sf", "-H", "Accept: application/vnd.oci.image.manifest.v1+json",
                                      "http://" + registry_->host() + "/v2/ci/cache/manifests/" + tag}));
  std::string contents;
  for (const auto& l : manifest.at("layers"))
    if (l.value("mediaType", "").find("contents") != std::string::npos) contents = l.value("digest", "");
  ASSERT_FALSE(contents.empty()) << manifest.dump();
  run_ok({"curl", "-sf", "-X", "DELETE", "http://" + registry_->host() + "/v2/ci/cache/blobs/" + contents});

  CommandResult second = build("runner2", "app/second", index.url());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(lines_with(second.err, "(a cache miss)"), 1) << second.err;
  json b = json::parse(second.out);
  EXPECT_EQ(pip_layer(b).value("origin", ""), "built");
  EXPECT_EQ(b.value("manifest_digest", ""), json::parse(first.out).value("manifest_digest", ""));
}

TEST(CacheRepoFlag, ATagOrAMissingRegistryIsAOneLineError) {
  TempDir dir("tp-cache-repo-flag");
  write_file(dir.path() / "task.py", "print(1)\n");
  for (const std::string repo : {"127.0.0.1:5000/ci/cache:latest", "ci/cache"}) {
    CommandResult r = run_command({trainpack_bin(), "build", "--executor-image-uri=python:3.11",
                                   "--local-package-path=" + dir.path().string(), "--script=task.py",
                                   "--output=oci:" + (dir.path() / "out").string(), "--cache-repo=" + repo});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("--cache-repo"), std::string::npos) << r.err;
    EXPECT_LE(lines_with(r.err, "\n"), 2) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
  }
}

}  // namespace
