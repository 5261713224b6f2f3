#include "layers/layer_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <locale.h>
#include <sys/stat.h>
#include <zip.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "layers/layer_cache.h"
#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/gzip_test_support.h"
#include "tests/unit/sample_bytes.h"
#include "tests/unit/wheel_test_support.h"

namespace fs = std::filesystem;
using namespace trainpack::image;
using namespace trainpack::layers;
using namespace trainpack::store;

namespace {

using trainpack::test_support::mixed_bytes;
using trainpack::test_support::write_zip;
using trainpack::test_support::ZipItem;
using trainpack::testing::gunzip;

struct TarRow {
  std::string path, uname, gname, link;
  unsigned mode;
  long long uid, gid, mtime;
  bool has_atime;
  std::string data;
};

std::vector<TarRow> read_tar(const std::string& tar) {
  std::vector<TarRow> rows;
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  EXPECT_EQ(archive_read_open_memory(a, tar.data(), tar.size()), ARCHIVE_OK);
  archive_entry* e;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    TarRow r;
    r.path = archive_entry_pathname(e);
    r.uname = archive_entry_uname(e) ? archive_entry_uname(e) : "";
    r.gname = archive_entry_gname(e) ? archive_entry_gname(e) : "";
    r.link = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
    r.mode = archive_entry_mode(e);
    r.uid = archive_entry_uid(e);
    r.gid = archive_entry_gid(e);
    r.mtime = archive_entry_mtime(e);
    r.has_atime = archive_entry_atime_is_set(e);
    char buf[4096];
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, sizeof buf)) > 0) r.data.append(buf, static_cast<size_t>(n));
    rows.push_back(r);
  }
  archive_read_free(a);
  return rows;
}

class LayerWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = trainpack::make_temp_dir({}, "layerwriter-");
    store_ = std::make_unique<BlobStore>(dir_ / "store");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write_source(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / "src" / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  FileEntry file_from(const fs::path& src, std::string path, unsigned mode) {
    FileEntry e;
    e.path = std::move(path);
    e.source = src;
    e.size = fs::file_size(src);
    e.mode = mode;
    return e;
  }
  fs::path dir_;
  std::unique_ptr<BlobStore> store_;
};

}  // namespace

TEST_F(LayerWriterTest, OnePassProducesMatchingDiffIdDigestAndNormalizedEntries) {
  fs::path src = write_source("task.py", "print('hi')\n");
  std::string long_name(150, 'x');
  FileEntries entries{
      FileEntry::directory("usr/app/trainer", 0755),
      file_from(src, "usr/app/trainer/task.py", 0644),
      FileEntry::directory("usr", 0755),
      FileEntry::directory("usr/app", 0777),
      FileEntry::inline_file("usr/app/trainer/" + long_name, "long", 0755),
  };
  FileEntry link;
  link.path = "usr/app/trainer/link";
  link.type = FileEntry::Type::kSymlink;
  link.mode = 0777;
  link.link_target = "task.py";
  entries.push_back(link);

  LayerBlob blob = write_layer(*store_, entries, {.mtime = 1234, .gzip = {.engine = DeflateEngine::kZlib, .level = 6}});
  std::string gz = trainpack::read_file(store_->path_of(blob.digest));
  EXPECT_EQ(gz.size(), blob.size);
  EXPECT_EQ(sha256_of(gz), blob.digest);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(gz[4] | gz[5] | gz[6] | gz[7], 0) << "gzip header must carry no timestamp";
  std::string tar = gunzip(gz);
  EXPECT_EQ(sha256_of(tar), blob.diff_id);

  auto rows = read_tar(tar);
  std::vector<std::string> paths;
  for (auto& r : rows) paths.push_back(r.path);
  std::vector<std::string> want{"usr/", "usr/app/", "usr/app/trainer/", "usr/app/trainer/link",
                                "usr/app/trainer/task.py", "usr/app/trainer/" + long_name};
  EXPECT_EQ(paths, want);
  for (auto& r : rows) {
    EXPECT_EQ(r.uid, 0);
    EXPECT_EQ(r.gid, 0);
    EXPECT_EQ(r.uname, "");
    EXPECT_EQ(r.gname, "");
    EXPECT_EQ(r.mtime, 1234);
    EXPECT_FALSE(r.has_atime);
  }
  EXPECT_EQ(rows[1].mode & 07777, 0777u);
  EXPECT_EQ(rows[3].link, "task.py");
  EXPECT_EQ(rows[4].data, "print('hi')\n");
  EXPECT_EQ(rows[5].mode & 07777, 0755u);
}

// A wheel's member names are UTF-8: written as such in the pax header, whatever the calling thread's locale, which
// the writer leaves as it found it.
TEST_F(LayerWriterTest, NonAsciiNamesAreWrittenAsUtf8) {
  const std::string name = "usr/app/donn\xc3\xa9" "es";
  FileEntries entries{FileEntry::directory("usr", 0755), FileEntry::directory("usr/app", 0755),
                      FileEntry::inline_file(name, "\xc3\xa9t\xc3\xa9")};
  FileEntry link;
  link.path = "usr/app/link";
  link.type = FileEntry::Type::kSymlink;
  link.mode = 0777;
  link.link_target = "donn\xc3\xa9" "es";
  entries.push_back(link);
  locale_t before = uselocale(static_cast<locale_t>(0));
  LayerBlob blob = write_layer(*store_, entries, {.mtime = 1});
  EXPECT_EQ(uselocale(static_cast<locale_t>(0)), before);

  std::string tar = gunzip(trainpack::read_file(store_->path_of(blob.digest)));
  locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  ASSERT_NE(utf8, static_cast<locale_t>(0));
  uselocale(utf8);  // for reading the names back as they are
  std::map<std::string, std::string> links;  // path → link target
  for (const TarRow& row : read_tar(tar)) links[row.path] = row.link;
  uselocale(before);
  freelocale(utf8);
  EXPECT_EQ(links, (std::map<std::string, std::string>{
                       {"usr/", ""}, {"usr/app/", ""}, {name, ""}, {"usr/app/link", "donn\xc3\xa9" "es"}}));
}

TEST_F(LayerWriterTest, SameEntriesGiveSameDigestsRegardlessOfSourceMtime) {
  fs::path src = write_source("a.txt", "same bytes");
  FileEntries entries{FileEntry::directory("app", 0755), file_from(src, "app/a.txt", 0644)};
  LayerBlob first = write_layer(*store_, entries, {});
  fs::last_write_time(src, fs::file_time_type::clock::now() - std::chrono::hours(48));
  ::chmod(src.c_str(), 0600);  // host mode is not what the entry says; the entry wins
  LayerBlob second = write_layer(*store_, entries, {});
  EXPECT_EQ(first.digest, second.digest);
  EXPECT_EQ(first.diff_id, second.diff_id);
}

TEST_F(LayerWriterTest, RejectsDuplicatesMissingParentsAndBadPaths) {
  EXPECT_THROW(write_layer(*store_, {FileEntry::inline_file("a/b", "x")}, {}), trainpack::Error);
  EXPECT_THROW(write_layer(*store_, {FileEntry::inline_file("a", "x"), FileEntry::inline_file("a", "y")}, {}),
               trainpack::Error);
  EXPECT_THROW(write_layer(*store_, {FileEntry::inline_file("/abs", "x")}, {}), trainpack::Error);
  EXPECT_THROW(write_layer(*store_, {FileEntry::directory("x", 0755), FileEntry::inline_file("x/../y", "")}, {}),
               trainpack::Error);
  EXPECT_TRUE(fs::is_empty(trainpack::store::temp_dir_of(dir_ / "store")));
}

TEST_F(LayerWriterTest, SourceThatChangedSizeFailsAndStoresNothing) {
  fs::path src = write_source("grow.txt", "12345");
  FileEntry e = file_from(src, "grow.txt", 0644);
  std::ofstream(src, std::ios::app) << "more";
  EXPECT_THROW(write_layer(*store_, {e}, {}), trainpack::Error);
  EXPECT_TRUE(fs::is_empty(trainpack::store::temp_dir_of(dir_ / "store")));
  EXPECT_TRUE(fs::is_empty(trainpack::store::kind_dir(dir_ / "store", trainpack::store::CacheKind::kBlobs) / "sha256"));
}

TEST_F(LayerWriterTest, CacheHitSkipsWritingAndStampChangeMisses) {
  trainpack::store::CacheDir cache_dir(dir_ / "store");
  LayerCache cache(*store_, cache_dir.area(trainpack::store::CacheKind::kLayers));
  fs::path src = write_source("t.py", "v1");
  FileEntry e = file_from(src, "t.py", 0644);
  e.source_stamp = "stamp-1";
  trainpack::layers::BuiltLayer a = build_layer(*store_, cache, {e}, {});
  EXPECT_FALSE(a.from_cache);
  trainpack::layers::BuiltLayer b = build_layer(*store_, cache, {e}, {});
  EXPECT_TRUE(b.from_cache);
  EXPECT_EQ(a.blob.digest, b.blob.digest);

  std::ofstream(src, std::ios::trunc) << "v2";
  e.source_stamp = "stamp-2";
  trainpack::layers::BuiltLayer c = build_layer(*store_, cache, {e}, {});
  EXPECT_FALSE(c.from_cache);
  EXPECT_NE(c.blob.digest, a.blob.digest);

  // A cache entry whose blob vanished is a miss, not a dangling reference.
  fs::remove(store_->path_of(c.blob.digest));
  EXPECT_FALSE(build_layer(*store_, cache, {e}, {}).from_cache);
  EXPECT_TRUE(store_->has(c.blob.digest));
}

// A dry run's look-up is the build's: sorted entries, the fingerprint build_layer remembers, the blob once cached.
TEST_F(LayerWriterTest, ALookUpFindsWhatBuildingRemembered) {
  trainpack::store::CacheDir cache_dir(dir_ / "store");
  LayerCache cache(*store_, cache_dir.area(trainpack::store::CacheKind::kLayers));
  trainpack::layers::FileEntries entries{FileEntry::inline_file("app/b.py", "b"), FileEntry::directory("app", 0755),
                                         FileEntry::inline_file("app/a.py", "a")};
  trainpack::layers::LayerLookup before = trainpack::layers::look_up_layer(cache, entries, {});
  EXPECT_FALSE(before.cached);
  ASSERT_EQ(before.entries.size(), 3u);
  EXPECT_EQ(before.entries[0].path, "app");
  EXPECT_EQ(before.entries[1].path, "app/a.py");
  EXPECT_EQ(before.fingerprint, LayerCache::fingerprint(before.entries, {}));
  trainpack::layers::BuiltLayer built = build_layer(*store_, cache, entries, {});
  trainpack::layers::LayerLookup after = trainpack::layers::look_up_layer(cache, entries, {});
  ASSERT_TRUE(after.cached);
  EXPECT_EQ(after.cached->digest, built.blob.digest);
  EXPECT_EQ(after.fingerprint, before.fingerprint);
}

// Deflated members of 16 KiB or more are spliced, not recompressed: the tar inside is the same as for the same bytes
// given inline, the gzip stream is valid, and its bytes depend on neither the number of threads nor the run.
TEST_F(LayerWriterTest, SplicedWheelMembersGiveTheSameTarAsPlainBytes) {
  std::vector<ZipItem> members{{"pkg/big.py", mixed_bytes(300 * 1024, 1)},
                                 {"pkg/small.py", mixed_bytes(3000, 2)},
                                 {"pkg/stored.bin", mixed_bytes(40 * 1024, 3), 0100644, ZIP_CM_STORE},
                                 {"pkg/zeros.bin", std::string(2 * 1024 * 1024, '\0')}};
  fs::path wheel = dir_ / "pkg-1.0-py3-none-any.whl";
  write_zip(wheel, members);
  FileEntries from_zip{FileEntry::directory("pkg", 0755)}, inline_entries{FileEntry::directory("pkg", 0755)};
  for (std::size_t i = 0; i < members.size(); ++i) {
    from_zip.push_back(FileEntry::zip_file(members[i].name, wheel, members[i].name, i, members[i].data.size()));
    inline_entries.push_back(FileEntry::inline_file(members[i].name, members[i].data));
  }
  from_zip.push_back(FileEntry::inline_file("pkg/tail.txt", mixed_bytes(5000, 4)));
  inline_entries.push_back(from_zip.back());

  LayerBlob spliced = write_layer(*store_, from_zip, {.gzip = {.threads = 1}});
  LayerBlob plain = write_layer(*store_, inline_entries, {.gzip = {.threads = 1}});
  EXPECT_EQ(spliced.diff_id, plain.diff_id);
  EXPECT_NE(spliced.digest, plain.digest) << "the members were compressed again instead of spliced";
  std::string gz = trainpack::read_file(store_->path_of(spliced.digest));
  EXPECT_EQ(sha256_of(gunzip(gz)), spliced.diff_id);
  for (unsigned threads : {2u, 5u}) {
    LayerBlob again = write_layer(*store_, from_zip, {.gzip = {.threads = threads}});
    EXPECT_EQ(again.digest, spliced.digest) << threads << " threads";
  }
}

// A zstd layer holds the same tar (same diff_id) as a gzip one, wheel members inflated and compressed again, and its
// bytes do not depend on the number of threads.
TEST_F(LayerWriterTest, AZstdLayerHoldsTheSameTarAsAGzipOne) {
  std::vector<ZipItem> members{{"pkg/big.py", mixed_bytes(300 * 1024, 1)}, {"pkg/small.py", mixed_bytes(3000, 2)}};
  fs::path wheel = dir_ / "pkg-1.0-py3-none-any.whl";
  write_zip(wheel, members);
  FileEntries entries{FileEntry::directory("pkg", 0755)};
  for (std::size_t i = 0; i < members.size(); ++i)
    entries.push_back(FileEntry::zip_file(members[i].name, wheel, members[i].name, i, members[i].data.size()));

  LayerBlob gzip = write_layer(*store_, entries, {});
  LayerBlob zstd = write_layer(*store_, entries, {.compression = LayerCompression::kZstd, .zstd = {.threads = 1}});
  EXPECT_EQ(zstd.diff_id, gzip.diff_id);
  std::string frame = trainpack::read_file(store_->path_of(zstd.digest));
  ASSERT_GE(frame.size(), 4u);
  EXPECT_EQ(frame.substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4)) << "not a zstd frame";
  EXPECT_EQ(zstd.size, frame.size());

  // libarchive (as containerd and umoci read layers) finds the entries in it.
  archive* a = archive_read_new();
  archive_read_support_filter_zstd(a);
  archive_read_support_format_tar(a);
  ASSERT_EQ(archive_read_open_memory(a, frame.data(), frame.size()), ARCHIVE_OK) << archive_error_string(a);
  archive_entry* e;
  std::vector<std::string> paths;
  std::string big;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    paths.push_back(archive_entry_pathname(e));
    char buf[8192];
    la_ssize_t n;
    std::string data;
    while ((n = archive_read_data(a, buf, sizeof buf)) > 0) data.append(buf, static_cast<std::size_t>(n));
    if (paths.back() == "pkg/big.py") big = data;
  }
  archive_read_free(a);
  EXPECT_EQ(paths, (std::vector<std::string>{"pkg/", "pkg/big.py", "pkg/small.py"}));
  EXPECT_EQ(big, members[0].data);

  LayerBlob again = write_layer(*store_, entries, {.compression = LayerCompression::kZstd, .zstd = {.threads = 3}});
  EXPECT_EQ(again.digest, zstd.digest);
  EXPECT_EQ(layer_media_type(LayerCompression::kZstd), "application/vnd.oci.image.layer.v1.tar+zstd");
  EXPECT_NE(LayerCache::fingerprint(entries, {}),
            LayerCache::fingerprint(entries, {.compression = LayerCompression::kZstd}))
      << "the compression is not part of the layer cache key";
}

TEST_F(LayerWriterTest, ACorruptDeflatedMemberFailsAndStoresNothing) {
  fs::path wheel = dir_ / "bad-1.0-py3-none-any.whl";
  std::string bytes = mixed_bytes(200 * 1024, 5);
  write_zip(wheel, {{"bad/data.py", bytes}});
  std::string zip = trainpack::read_file(wheel);
  zip[zip.size() / 2] = static_cast<char>(zip[zip.size() / 2] ^ 0x55);  // inside the member's deflate stream
  std::ofstream(wheel, std::ios::binary | std::ios::trunc) << zip;
  FileEntries entries{FileEntry::directory("bad", 0755),
                      FileEntry::zip_file("bad/data.py", wheel, "bad/data.py", 0, bytes.size())};
  EXPECT_THROW(write_layer(*store_, entries, {}), trainpack::Error);
  EXPECT_TRUE(fs::is_empty(trainpack::store::temp_dir_of(dir_ / "store")));
  EXPECT_TRUE(fs::is_empty(trainpack::store::kind_dir(dir_ / "store", trainpack::store::CacheKind::kBlobs) / "sha256"));
}

TEST(LayerMtime, SourceDateEpoch) {
  ::setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  EXPECT_EQ(default_layer_mtime(), 1700000000);
  ::setenv("SOURCE_DATE_EPOCH", "yesterday", 1);
  EXPECT_THROW(default_layer_mtime(), trainpack::Error);
  ::unsetenv("SOURCE_DATE_EPOCH");
  EXPECT_EQ(default_layer_mtime(), 0);
}
