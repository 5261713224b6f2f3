#include "store/blob_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"

namespace trainpack::store {
namespace fs = std::filesystem;

BlobStore::BlobStore(fs::path root, std::shared_ptr<const UseLock> lock, std::shared_ptr<CacheWarnings> warnings)
    : root_(std::move(root)), lock_(std::move(lock)), warnings_(std::move(warnings)) {
  std::error_code ec;
  fs::create_directories(kind_dir(root_, CacheKind::kBlobs) / "sha256", ec);
  if (!ec) fs::create_directories(temp_dir_of(root_), ec);
  if (ec) throw Error("cannot create blob store at " + root_.string() + ": " + ec.message(),
                      "check that the cache directory is writable, or pass --cache-dir");
  if (!lock_) lock_ = std::make_shared<const UseLock>(lock_file_in(root_));
  if (!warnings_) warnings_ = std::make_shared<CacheWarnings>();
}

fs::path BlobStore::path_of(const image::Digest& digest) const {
  return kind_dir(root_, CacheKind::kBlobs) / digest.algorithm() / digest.hex();
}

bool BlobStore::has(const image::Digest& digest) const { return lock_->touch(path_of(digest)); }

BlobStore::Writer::Writer(const BlobStore* store, fs::path tmp, std::FILE* file)
    : store_(store), tmp_(std::move(tmp)), file_(file) {}

BlobStore::Writer::Writer(Writer&& other) noexcept
    : store_(other.store_), tmp_(std::move(other.tmp_)), file_(other.file_), size_(other.size_) {
  other.file_ = nullptr;
  other.tmp_.clear();
  // The moved-from hasher state cannot move (OpenSSL ctx); writers are moved only before any write.
}

BlobStore::Writer::~Writer() {
  if (file_) std::fclose(file_);
  if (!tmp_.empty()) {
    std::error_code ec;
    fs::remove(tmp_, ec);
  }
}

void BlobStore::Writer::write(const void* data, std::size_t size) {
  if (!size) return;
  if (std::fwrite(data, 1, size, file_) != size)
    throw Error("cannot write to the blob store at " + store_->root().string() + ": " + std::strerror(errno),
                "is the disk full?");
  hash_.update(data, size);
  size_ += size;
}

StoredBlob BlobStore::Writer::commit() {
  image::Digest actual;
  return *commit_checked(nullptr, actual);
}

std::optional<StoredBlob> BlobStore::Writer::commit_if(const image::Digest& expected, image::Digest& actual) {
  return commit_checked(&expected, actual);
}

std::optional<StoredBlob> BlobStore::Writer::commit_checked(const image::Digest* expected, image::Digest& actual) {
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    throw Error("cannot write to the blob store at " + store_->root().string() + ": " + std::strerror(errno));
  }
  file_ = nullptr;
  StoredBlob blob{hash_.finish(), size_};
  actual = blob.digest;
  if (expected && blob.digest != *expected) return std::nullopt;  // the destructor removes the temp file
  fs::path final_path = store_->path_of(blob.digest);
  std::error_code ec;
  fs::rename(tmp_, final_path, ec);
  if (ec) throw Error("cannot store blob " + blob.digest.str() + ": " + ec.message());
  tmp_.clear();
  return blob;
}

BlobStore::Writer BlobStore::begin_write() const {
  const fs::path temp = temp_dir_of(root_);
  std::string tmpl = (temp / ("blob-" + temp_owner_tag() + "-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw Error("cannot create a temp file in " + temp.string() + ": " + std::strerror(errno));
  ::fchmod(fd, 0644);
  std::FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    ::close(fd);
    throw Error("cannot open a temp file in the blob store");
  }
  return Writer(this, fs::path(tmpl), f);
}

StoredBlob BlobStore::put(std::string_view bytes) const {
  Writer w = begin_write();
  w.write(bytes.data(), bytes.size());
  return w.commit();
}

// A kept blob is small (a config, a manifest, an SBOM): the copy already here is compared with `bytes`, so one
// damaged in the cache is written again rather than left for a push to read.
StoredBlob BlobStore::keep(std::string_view bytes) const {
  image::Digest digest = image::sha256_of(bytes);
  if (!has(digest)) return put(bytes);
  std::string held;
  try {
    held = read_file(path_of(digest), bytes.size() + 1);
  } catch (const Error&) {  // larger, or gone meanwhile: written again below
  }
  if (held == bytes) return {digest, bytes.size()};
  discard(digest, image::sha256_of(held));
  return put(bytes);
}

std::optional<fs::path> BlobStore::find(const image::Digest& digest) const {
  if (!has(digest)) return std::nullopt;
  return path_of(digest);
}

void BlobStore::discard(const image::Digest& digest, const image::Digest& actual) const {
  const fs::path path = path_of(digest);
  warnings_->warn("the cached blob " + path.string() + " is damaged (its bytes hash to " + actual.str() +
                  "); it is removed and fetched or made again");
  remove_file_quietly(path);
}

StoredBlob BlobStore::put_file(const fs::path& file, const image::Digest* expected) const {
  Writer w = begin_write();
  stream_file(file, [&w](const char* data, std::size_t size) { w.write(data, size); });
  // A mismatching blob is still stored under its true digest (so never corrupt); the caller just gets an error.
  StoredBlob blob = w.commit();
  if (expected && blob.digest != *expected) {
    throw Error(file.string() + ": content digest is " + blob.digest.str() + ", expected " + expected->str(),
                "the file was modified or corrupted");
  }
  return blob;
}

}  // namespace trainpack::store
