#include "store/blob_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"

namespace fs = std::filesystem;
using namespace trainpack::image;

using namespace trainpack::store;

TEST(BlobStore, PutNamesBlobByDigestAndLeavesNoTemp) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "blobstore-"));
  BlobStore store(dir.path());
  StoredBlob b = store.put("hello");
  EXPECT_EQ(b.size, 5u);
  EXPECT_EQ(b.digest, sha256_of("hello"));
  EXPECT_TRUE(store.has(b.digest));
  EXPECT_EQ(trainpack::read_file(store.path_of(b.digest)), "hello");
  EXPECT_TRUE(fs::is_empty(temp_dir_of(dir.path())));
}

// As an image's BlobKeeper: a kept blob is found again, and keeping it again does not write it again (a rebuild's
// config and manifest are the same file).
TEST(BlobStore, KeepsBlobsOnceAndFindsOnlyWhatItKeeps) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "blobstore-"));
  std::shared_ptr<const BlobKeeper> keeper = std::make_shared<BlobStore>(dir.path());
  EXPECT_EQ(keeper->find(sha256_of("config")), std::nullopt);
  StoredBlob first = keeper->keep("config");
  EXPECT_EQ(first.digest, sha256_of("config"));
  EXPECT_EQ(first.size, 6u);
  std::optional<fs::path> found = keeper->find(first.digest);
  ASSERT_TRUE(found);
  EXPECT_EQ(trainpack::read_file(*found), "config");
  auto inode = [](const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_ino;
  };
  ino_t kept_inode = inode(*found);
  StoredBlob again = keeper->keep("config");
  EXPECT_EQ(again.digest, first.digest);
  EXPECT_EQ(again.size, first.size);
  EXPECT_EQ(inode(*found), kept_inode) << "keeping it again replaced the file";
}

TEST(BlobStore, AbandonedWriterLeavesNothing) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "blobstore-"));
  BlobStore store(dir.path());
  {
    auto w = store.begin_write();
    w.write("partial", 7);
  }
  EXPECT_TRUE(fs::is_empty(temp_dir_of(dir.path())));
  EXPECT_TRUE(fs::is_empty(store.path_of(sha256_of("partial")).parent_path()));
}

TEST(BlobStore, PutFileChecksExpectedDigest) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "blobstore-"));
  BlobStore store(dir.path() / "store");
  fs::path f = dir.path() / "f";
  std::ofstream(f) << "abc";
  Digest right = sha256_of("abc"), wrong = sha256_of("abd");
  EXPECT_EQ(store.put_file(f, &right).digest, right);
  EXPECT_THROW(store.put_file(f, &wrong), trainpack::Error);
  EXPECT_FALSE(store.has(wrong));
}
