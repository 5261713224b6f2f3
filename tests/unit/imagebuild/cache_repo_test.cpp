#include "imagebuild/cache_repo.h"

#include <gtest/gtest.h>

#include <regex>

#include "support/error.h"

using trainpack::imagebuild::CacheRepo;
using trainpack::imagebuild::parse_cache_repo;

TEST(CacheRepo, TakesARegistryRepository) {
  auto ref = parse_cache_repo("us-central1-docker.pkg.dev/project/trainers/cache");
  EXPECT_EQ(ref.registry, "us-central1-docker.pkg.dev");
  EXPECT_EQ(ref.repository, "project/trainers/cache");
  EXPECT_EQ(parse_cache_repo("127.0.0.1:5000/ci/cache").name(), "127.0.0.1:5000/ci/cache");
  EXPECT_EQ(parse_cache_repo("localhost/cache").registry, "localhost");
}

TEST(CacheRepo, RefusesATagADigestOrNoRegistry) {
  for (const char* bad : {"ci/cache", "cache", "127.0.0.1:5000/ci/cache:latest",
                          "gcr.io/p/cache@sha256:0000000000000000000000000000000000000000000000000000000000000000",
                          "gcr.io/P/Cache"}) {
    try {
      parse_cache_repo(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const trainpack::Error& e) {
      EXPECT_FALSE(e.hint().empty()) << bad;
    }
  }
}

// Tags are the entries' keys: valid tags (distribution-spec: [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}), one per base.
TEST(CacheRepo, FactsTagsAreValidAndKeyedByTheBase) {
  std::string a = CacheRepo::facts_tag("sha256:" + std::string(64, 'a'), "python-facts-3");
  std::string b = CacheRepo::facts_tag("sha256:" + std::string(64, 'b'), "python-facts-3");
  std::string c = CacheRepo::facts_tag("sha256:" + std::string(64, 'a'), "python-facts-4");
  EXPECT_TRUE(std::regex_match(a, std::regex("facts-[0-9a-f]{64}"))) << a;
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, CacheRepo::facts_tag("sha256:" + std::string(64, 'a'), "python-facts-3"));
}
