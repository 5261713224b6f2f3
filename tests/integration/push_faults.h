#pragma once
// PushFaultsFixture: trainpack build against tests/fixtures/fault_server.py, which holds the base image
// (base/python:3.11, copied from the python_base fixture) and receives the pushes. Shared by push_faults_test.cpp and
// fault_matrix_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/cache_dir.h"
#include "tests/integration/fault_server.h"
#include "tests/integration/test_support.h"

namespace trainpack::testing {

class PushFaultsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("tp-pushfaults");
    server_ = std::make_unique<FaultServer>();
    base_ref_ = server_->host() + "/base/python:3.11";
    auto copy = run_command({"skopeo", "copy", "--dest-tls-verify=false", base_oci_ref(), "docker://" + base_ref_});
    ASSERT_EQ(copy.exit_code, 0) << describe({"skopeo copy"}, copy);
    nlohmann::json manifest = nlohmann::json::parse(
        run_command({"skopeo", "inspect", "--raw", "--tls-verify=false", "docker://" + base_ref_}).out);
    base_layer_ = manifest["layers"][0]["digest"];
    base_config_ = manifest["config"]["digest"];
    pkg_ = dir_->path() / "pkg";
    std::filesystem::copy(std::filesystem::path(source_dir()) / "testdata" / "example-trainer", pkg_,
                          std::filesystem::copy_options::recursive);
    write_file(dir_->path() / "docker" / "config.json", "{}");
    server_->clear_log();
  }

  // trainpack build onto the base in the fault server, with `flags` (outputs among them), credentials from a
  // docker config.json with `docker_config_json`.
  CommandResult build(const std::vector<std::string>& flags, const std::string& docker_config_json = "{}") {
    write_file(dir_->path() / "docker" / "config.json", docker_config_json);
    std::vector<std::string> argv{"env", "DOCKER_CONFIG=" + (dir_->path() / "docker").string(), trainpack_bin(),
                                  "build", "-q", "--executor-image-uri=" + base_ref_,
                                  "--local-package-path=" + pkg_.string(), "--script=trainer/task.py",
                                  "--cache-dir=" + (dir_->path() / "cache").string(),
                                  // The image alone: these tests count what its push moves (flags may turn them on).
                                  "--sbom=none", "--provenance=none"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return run_command(argv);
  }

  // Builds onto the base in the fault server and pushes to `repo`:v1 there.
  CommandResult push(const std::string& repo, const std::string& docker_config_json = "{}",
                     const std::vector<std::string>& flags = {}) {
    std::vector<std::string> all{"--output-image-uri=" + server_->host() + "/" + repo + ":v1"};
    all.insert(all.end(), flags.begin(), flags.end());
    return build(all, docker_config_json);
  }

  bool tagged(const std::string& repo) {
    auto tags = run_command({"skopeo", "inspect", "--tls-verify=false", "docker://" + server_->host() + "/" + repo + ":v1"});
    return tags.exit_code == 0;
  }
  // The same from the server's state, whatever auth it asks for.
  bool tagged_in_state(const std::string& repo) {
    nlohmann::json repos = server_->state().at("repositories");
    return repos.contains(repo) && repos.at(repo).at("tags").contains("v1");
  }

  // Bearer auth with one user who may push; anonymous users may pull. Returns the docker config.json for it.
  std::string bearer_auth_config() {
    server_->control_one({{"op", "auth"}, {"mode", "bearer"}, {"users", {{"pusher", "s3cret-pass"}}},
                          {"anonymous", "pull"}});
    return R"({"auths": {")" + server_->host() + R"(": {"auth": "cHVzaGVyOnMzY3JldC1wYXNz"}}})";  // pusher:s3cret-pass
  }

  // Fails the test unless `r` failed with one "trainpack: error:" line (and at most a hint) and no secret in it.
  static void expect_one_line_error(const CommandResult& r) {
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(r.err.starts_with("trainpack: error: ")) << r.err;
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
    EXPECT_EQ(r.err.find("s3cret-pass"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("cHVzaGVyOnMzY3JldC1wYXNz"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("tok-"), std::string::npos) << "a token in the output: " << r.err;
  }
  // The first line of the error, without "trainpack: error: ".
  static std::string cause_of(const CommandResult& r) {
    std::string line = r.err.substr(0, r.err.find('\n'));
    return line.starts_with("trainpack: error: ") ? line.substr(18) : line;
  }

  // Every fault rule added so far fired at least once.
  void expect_every_fault_fired() {
    for (const auto& f : server_->control_one({{"op", "faults"}}).at("faults"))
      EXPECT_GT(f.at("hits").get<int>(), 0) << "fault never fired: " << f.dump();
  }

  std::filesystem::path blob_in_cache(const std::string& digest) const {
    return trainpack::store::kind_dir(dir_->path() / "cache", trainpack::store::CacheKind::kBlobs) / "sha256" /
           digest.substr(7);
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<FaultServer> server_;
  std::string base_ref_, base_layer_, base_config_;
  std::filesystem::path pkg_;
};

// Seconds since `start`, for bounds on how long a failing command took.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace trainpack::testing
