// Pruning the cache (store/cache_prune.h, `trainpack cache`) while builds run: every build still makes the image a
// build on a cache of its own makes, the cache ends under its cap, and no pruned entry is taken for a hit.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/pip_test_support.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path trainer(const fs::path& dir, const std::string& task_py, const std::string& requirements) {
  write_file(dir / "task.py", task_py);
  write_file(dir / "requirements.txt", requirements);
  return dir;
}

class PipCachePrune : public ::testing::Test {
 protected:
  // A build of `pkg` into oci:DIR/out:x on `cache`, automatic pruning capped at `cap`.
  CommandResult build(const fs::path& pkg, const std::string& out, const fs::path& cache, const std::string& cap) {
    return run_command({"env", "TRAINPACK_CACHE_MAX_SIZE=" + cap, trainpack_bin(), "build",
                        "--executor-image-uri=python:3.11", "--base-source=" + base_oci_ref(),
                        "--local-package-path=" + pkg.string(), "--script=task.py",
                        "--output=oci:" + (dir_.path() / out).string() + ":x", "--cache-dir=" + cache.string(),
                        "--index-url=" + index_url(), "--break-system-packages", "--format=json"});
  }
  json built(const CommandResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }
  CommandResult cache_command(const std::vector<std::string>& args) {
    std::vector<std::string> argv{trainpack_bin(), "cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--cache-dir=" + cache_.string());
    argv.push_back("--format=json");
    return run_command(argv);
  }
  json usage() {
    CommandResult r = cache_command({"du"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  TempDir dir_{"tp-pip-prune"};
  fs::path cache_ = dir_.path() / "cache";
  fs::path alpha_ = trainer(dir_.path() / "alpha", "import tp_alpha\n", "tp-alpha[cli]\n");
  fs::path gamma_ = trainer(dir_.path() / "gamma", "import tp_gamma\n", "tp-gamma[fast]\n");
};

TEST_F(PipCachePrune, BuildsRunningWhilePrunesRemoveTheirEntriesMakeTheSameImages) {
  const std::string alpha = built(build(alpha_, "ref-alpha", dir_.path() / "ref-cache-alpha", "none")).value(
      "manifest_digest", "");
  const std::string gamma = built(build(gamma_, "ref-gamma", dir_.path() / "ref-cache-gamma", "none")).value(
      "manifest_digest", "");
  ASSERT_FALSE(alpha.empty());
  ASSERT_FALSE(gamma.empty());
  built(build(alpha_, "fill-alpha", cache_, "none"));
  built(build(gamma_, "fill-gamma", cache_, "none"));
  const std::uint64_t full = usage().at("total_bytes").get<std::uint64_t>();
  ASSERT_GT(full, 1u << 20);

  // Two builds that keep the cache under one byte when they end, and `cache prune --all` over and over meanwhile;
  // three rounds, so that prunes meet the builds in different phases.
  for (int round = 0; round < 3; ++round) {
    const std::string suffix = std::to_string(round);
    auto first = std::async(std::launch::async, [&] { return build(alpha_, "busy-alpha" + suffix, cache_, "1"); });
    auto second = std::async(std::launch::async, [&] { return build(gamma_, "busy-gamma" + suffix, cache_, "1"); });
    int prunes = 0;
    while (second.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready ||
           first.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
      CommandResult pruned = cache_command({"prune", "--all"});
      EXPECT_EQ(pruned.exit_code, 0) << pruned.err;
      ++prunes;
    }
    EXPECT_GT(prunes, 0);
    EXPECT_EQ(built(first.get()).value("manifest_digest", ""), alpha) << "round " << round;
    EXPECT_EQ(built(second.get()).value("manifest_digest", ""), gamma) << "round " << round;
  }

  // With no build running, a cap holds.
  built(build(gamma_, "refill-gamma", cache_, "none"));
  const std::uint64_t cap = usage().at("total_bytes").get<std::uint64_t>() / 2;
  CommandResult capped = cache_command({"prune", "--max-size=" + std::to_string(cap)});
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_GT(json::parse(capped.out).at("removed_entries").get<int>(), 0) << capped.out;
  EXPECT_LE(usage().at("total_bytes").get<std::uint64_t>(), cap);

  // What is left half of is reused where it is whole: the same image.
  EXPECT_EQ(built(build(gamma_, "after-cap", cache_, "none")).value("manifest_digest", ""), gamma);

  // A build over its cap says what it removed; an entry it removed is no hit for the next build.
  CommandResult over = build(alpha_, "over-cap", cache_, "100kB");
  EXPECT_EQ(built(over).value("manifest_digest", ""), alpha);
  EXPECT_NE(over.err.find("cache over 100.0 kB: removed "), std::string::npos) << over.err;
  CommandResult emptied = cache_command({"prune", "--all"});
  ASSERT_EQ(emptied.exit_code, 0) << emptied.err;
  for (const auto& [kind, counts] : usage().at("kinds").items()) EXPECT_EQ(counts.at("entries"), 0) << kind;
  json cold = built(build(gamma_, "after-all", cache_, "none"));
  EXPECT_EQ(cold.value("manifest_digest", ""), gamma);
  EXPECT_EQ(cold.value("layers_cached", -1), 0) << "every entry was pruned: nothing may be reused";
  EXPECT_GT(cold.value("layers_built", 0), 0);
}

}  // namespace
