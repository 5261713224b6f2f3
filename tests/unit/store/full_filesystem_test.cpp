// A full filesystem is said as such ("No space left on device"), wherever trainpack writes: the blob store, a cache
// entry, a blob copied into an OCI layout, a docker-archive. A small tmpfs is the full filesystem: mounting one needs
// CAP_SYS_ADMIN, without which the tests are skipped.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <filesystem>
#include <string>

#include "tests/unit/image_test_support.h"
#include "store/blob_store.h"
#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/cache_test_support.h"
#include "transports/docker_archive.h"
#include "transports/oci_layout.h"

namespace {

namespace fs = std::filesystem;
using trainpack::store::CacheDir;
using trainpack::store::CacheKind;
using trainpack::test_support::error_of;

class FullFilesystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(small_);
    if (::mount("tmpfs", small_.c_str(), "tmpfs", 0, "size=256k") != 0) GTEST_SKIP() << "cannot mount a tmpfs";
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(small_.c_str(), MNT_DETACH);
  }

  trainpack::ScopedDir dir_{trainpack::make_temp_dir({}, "full-fs-")};
  fs::path small_ = dir_.path() / "small";
  bool mounted_ = false;
};

TEST_F(FullFilesystemTest, TheCacheSaysItsFilesystemIsFull) {
  CacheDir cache(small_ / "cache");
  std::string blob_err = error_of([&] { cache.blobs().put(std::string(1 << 20, 'x')); });
  EXPECT_NE(blob_err.find("No space left on device"), std::string::npos) << blob_err;
  std::string writer_err = error_of([&] {
    trainpack::store::BlobStore::Writer w = cache.blobs().begin_write();
    for (int i = 0; i < 64; ++i) w.write(std::string(16 << 10, 'y').data(), 16 << 10);
    w.commit();
  });
  EXPECT_NE(writer_err.find("No space left on device"), std::string::npos) << writer_err;
  fs::create_directories(cache.area(CacheKind::kSboms).dir());
  const fs::path entry = cache.area(CacheKind::kSboms).path_of("x.json");
  std::string entry_err = error_of([&] { trainpack::write_file_atomic(entry, std::string(1 << 20, 'x')); });
  EXPECT_NE(entry_err.find("No space left on device"), std::string::npos) << entry_err;
}

// A blob copied out of the store into an OCI layout on another filesystem keeps the copy's cause past its clean-up.
TEST_F(FullFilesystemTest, AnOciLayoutSaysTheFilesystemIsFull) {
  auto built = trainpack::test_support::make_image(dir_.path() / "store", "amd64",
                                                   {{"big", std::string(1 << 20, 'b')}}, /*gzip_layers=*/false);
  std::string err =
      error_of([&] { trainpack::transports::write_oci_layout(*built.image, small_ / "layout", "v1"); });
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
}

// libarchive says "Write error" for any failed write: the cause it kept is said too.
TEST_F(FullFilesystemTest, ADockerArchiveSaysTheFilesystemIsFull) {
  auto built = trainpack::test_support::make_image(dir_.path() / "store", "amd64",
                                                   {{"big", std::string(1 << 20, 'z')}}, /*gzip_layers=*/false);
  std::string err =
      error_of([&] { trainpack::transports::write_docker_archive(*built.image, small_ / "out.tar", "trainer:v1"); });
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
}

}  // namespace
