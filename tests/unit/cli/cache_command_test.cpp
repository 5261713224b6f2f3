// `trainpack cache du` and `trainpack cache prune` (cli/cache_command.cpp) read and prune only a trainpack cache:
// a --cache-dir naming another directory is refused in one line, with nothing in it made or removed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/unit/cache_test_support.h"
#include "tests/unit/cli_test_support.h"

namespace {

namespace fs = std::filesystem;
using trainpack::testing::CliResult;
using trainpack::testing::trainpack;
using trainpack::test_support::key_of;
using trainpack::test_support::tree_of;
using trainpack::test_support::write_aged;

class CacheCommandTest : public ::testing::Test {
 protected:
  CliResult cache(const std::string& action, const fs::path& dir, const std::string& more = "--format=text") {
    return trainpack({"cache", action, "--cache-dir=" + dir.string(), more});
  }
  trainpack::ScopedDir dir_{trainpack::make_temp_dir({}, "cache-command-")};
};

// A mistyped --cache-dir that holds directories called as the cache's (layers/, users/) is no cache: prune and du
// refuse it with one line and a hint, and it is left exactly as it was.
TEST_F(CacheCommandTest, ADirectoryThatIsNotACacheIsRefusedAndNothingInItChanges) {
  const fs::path project = dir_.path() / "project";
  write_aged(project / "layers" / (key_of("mine") + ".json"), "mine", 100000);
  write_aged(project / "users" / "alice" / "notes.txt", "mine", 100000);
  write_aged(project / "README", "mine", 100000);
  const std::set<std::string> before = tree_of(project);
  for (const char* action : {"prune", "du"}) {
    CliResult r = cache(action, project, action == std::string("prune") ? "--all" : "--format=json");
    EXPECT_EQ(r.exit_code, 1) << action;
    EXPECT_EQ(r.out, "") << action;
    EXPECT_TRUE(r.err.starts_with("trainpack: error: " + project.string() + " is not a trainpack cache\nhint: "))
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
    EXPECT_EQ(tree_of(project), before) << action;
  }
}

// `cache du` on a cache no build has made yet shows an empty one and makes nothing.
TEST_F(CacheCommandTest, NoCacheYetIsAnEmptyOneAndIsNotMade) {
  const fs::path missing = dir_.path() / "missing";
  CliResult du = cache("du", missing, "--format=json");
  ASSERT_EQ(du.exit_code, 0) << du.err;
  EXPECT_EQ(nlohmann::json::parse(du.out).at("total_bytes"), 0);
  CliResult prune = cache("prune", missing, "--all");
  ASSERT_EQ(prune.exit_code, 0) << prune.err;
  EXPECT_FALSE(fs::exists(missing));
  fs::create_directories(dir_.path() / "empty");
  ASSERT_EQ(cache("du", dir_.path() / "empty").exit_code, 0);
  EXPECT_TRUE(fs::is_empty(dir_.path() / "empty"));
}

// In a cache, du lists what trainpack did not make, and prune leaves it.
TEST_F(CacheCommandTest, DuListsWhatTrainpackDidNotMakeAndPruneLeavesIt) {
  const fs::path root = dir_.path() / "cache";
  { trainpack::store::CacheDir made(root); }
  write_aged(root / "sboms" / "notes.txt", "mine", 100000);
  write_aged(root / "sboms" / (key_of("sbom") + ".json"), "{}", 100000);
  CliResult du = cache("du", root, "--format=json");
  ASSERT_EQ(du.exit_code, 0) << du.err;
  nlohmann::json usage = nlohmann::json::parse(du.out);
  EXPECT_EQ(usage.at("kinds").at("sboms").at("entries"), 1);
  EXPECT_EQ(usage.at("strays"), nlohmann::json::array({"sboms/notes.txt"}));
  CliResult text = cache("du", root);
  EXPECT_NE(text.out.find("not made by trainpack, never pruned: sboms/notes.txt\n"), std::string::npos) << text.out;
  CliResult prune = cache("prune", root, "--all");
  ASSERT_EQ(prune.exit_code, 0) << prune.err;
  EXPECT_TRUE(fs::exists(root / "sboms" / "notes.txt"));
  EXPECT_FALSE(fs::exists(root / "sboms" / (key_of("sbom") + ".json")));
}

}  // namespace
