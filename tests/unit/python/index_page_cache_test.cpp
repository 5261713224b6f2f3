// IndexPageCache: a page kept with a validator comes back whole; without one it is not kept; a damaged or missing
// body, or an entry for another URL, is a miss (python/index_page_cache.h).
#include "python/index_page_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/fs.h"

namespace fs = std::filesystem;
using trainpack::python::CachedPage;
using trainpack::python::IndexPageCache;

namespace {

class IndexPageCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = trainpack::make_temp_dir({}, "index-page-cache-test"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::vector<fs::path> bodies() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_ / "pages"))
      if (e.path().filename().string().starts_with("body-")) out.push_back(e.path());
    return out;
  }
  trainpack::store::CacheArea pages() const {
    return {dir_ / "pages", std::make_shared<const trainpack::store::UseLock>(trainpack::store::lock_file_in(dir_))};
  }
  fs::path dir_;
};

TEST_F(IndexPageCacheTest, AKeptPageComesBackWithItsValidators) {
  IndexPageCache cache(pages());
  CachedPage page{"<a href=x-1.0.tar.gz>x</a>", "text/html", "https://i.example/simple/x/", "\"e1\"", ""};
  cache.remember("https://i.example/simple/x/", page);
  std::optional<CachedPage> kept = cache.lookup("https://i.example/simple/x/");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->body, page.body);
  EXPECT_EQ(kept->content_type, "text/html");
  EXPECT_EQ(kept->etag, "\"e1\"");
  EXPECT_EQ(kept->url, page.url);
  EXPECT_FALSE(cache.lookup("https://i.example/simple/y/"));

  // A changed page replaces the entry and its old body.
  page.body = "<a href=x-2.0.tar.gz>x</a>";
  page.etag = "\"e2\"";
  cache.remember("https://i.example/simple/x/", page);
  EXPECT_EQ(cache.lookup("https://i.example/simple/x/")->body, page.body);
  EXPECT_EQ(bodies().size(), 1u);
}

TEST_F(IndexPageCacheTest, APageWithoutValidatorsIsNotKept) {
  IndexPageCache cache(pages());
  cache.remember("https://i.example/simple/x/", {"body", "text/html", "https://i.example/simple/x/", "", ""});
  EXPECT_FALSE(cache.lookup("https://i.example/simple/x/"));
}

TEST_F(IndexPageCacheTest, ADamagedOrMissingBodyIsAMiss) {
  IndexPageCache cache(pages());
  cache.remember("https://i.example/simple/x/",
                 {"body", "text/html", "https://i.example/simple/x/", "", "Wed, 21 Oct 2015 07:28:00 GMT"});
  ASSERT_TRUE(cache.lookup("https://i.example/simple/x/"));
  ASSERT_EQ(bodies().size(), 1u);
  trainpack::write_file_atomic(bodies()[0], "other bytes");
  EXPECT_FALSE(cache.lookup("https://i.example/simple/x/"));
  fs::remove(bodies()[0]);
  EXPECT_FALSE(cache.lookup("https://i.example/simple/x/"));
}

}  // namespace
