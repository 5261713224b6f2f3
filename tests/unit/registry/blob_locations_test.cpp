#include "registry/blob_locations.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/fs.h"

namespace trainpack::registry {
namespace {

namespace fs = std::filesystem;

image::Digest digest_of(char c) { return image::Digest::sha256_from_hex(std::string(64, c)); }

class BlobLocationsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir(fs::temp_directory_path(), "blob-locations-test"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

store::CacheArea area(const fs::path& dir) {
  return store::CacheArea(dir, std::make_shared<const store::UseLock>(store::lock_file_in(dir)));
}

TEST_F(BlobLocationsTest, NewestFirstOnceEachAndBounded) {
  BlobLocations locations(area(dir_ / "locations"));
  EXPECT_TRUE(locations.known(digest_of('a')).empty());
  locations.remember(digest_of('a'), {"r.example", "one"});
  locations.remember(digest_of('a'), {"r.example", "two"});
  locations.remember(digest_of('a'), {"r.example", "one"});
  EXPECT_EQ(locations.known(digest_of('a')),
            (std::vector<BlobLocation>{{"r.example", "one"}, {"r.example", "two"}}));
  EXPECT_TRUE(locations.known(digest_of('b')).empty());
  for (int i = 0; i < 20; ++i) locations.remember(digest_of('a'), {"r.example", "repo" + std::to_string(i)});
  auto known = locations.known(digest_of('a'));
  ASSERT_EQ(known.size(), BlobLocations::kKeptPerBlob);
  EXPECT_EQ(known.front().repository, "repo19");
}

TEST_F(BlobLocationsTest, AnOddFileOrAnUnwritableDirectoryIsOnlyNothingKnown) {
  BlobLocations locations(area(dir_));
  std::ofstream(dir_ / ("sha256-" + std::string(64, 'c'))) << "garbage\n\n only-one-field\nr.example good/repo\n";
  EXPECT_EQ(locations.known(digest_of('c')), (std::vector<BlobLocation>{{"r.example", "good/repo"}}));
  BlobLocations nowhere(area("/proc/no-such-dir/locations"));
  EXPECT_NO_THROW(nowhere.remember(digest_of('d'), {"r.example", "x"}));
  EXPECT_TRUE(nowhere.known(digest_of('d')).empty());
  locations.remember(digest_of('e'), {"r.example", "has space"});
  EXPECT_TRUE(locations.known(digest_of('e')).empty());
}

}  // namespace
}  // namespace trainpack::registry
