#pragma once
// A local content-addressed store: <root>/blobs/sha256/<hex>. Blobs appear only by atomic rename of a fully
// written and hashed temp file, so a crash never leaves a blob whose name lies about its bytes.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "image/blob_keeper.h"
#include "image/digest.h"
#include "store/cache_warnings.h"
#include "store/use_lock.h"

namespace trainpack::store {

using image::StoredBlob;

class BlobStore : public image::BlobKeeper {
 public:
  // The blobs of the cache at `root`; `lock` is the cache's (store/cache_dir.h), opened here when not given, and
  // `warnings` where damaged blobs are reported (stderr when not given).
  explicit BlobStore(std::filesystem::path root, std::shared_ptr<const UseLock> lock = nullptr,
                     std::shared_ptr<CacheWarnings> warnings = nullptr);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path path_of(const image::Digest& digest) const;
  // Whether the blob is here, recording its use (store/cache_dir.h: a running build's blobs are not pruned).
  bool has(const image::Digest& digest) const;

  // Streams bytes into a temp file while hashing; commit() renames it to its digest's name.
  class Writer {
   public:
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    Writer(Writer&&) noexcept;
    ~Writer();  // discards uncommitted data
    void write(const void* data, std::size_t size);
    std::uint64_t size() const { return size_; }
    StoredBlob commit();
    // Commits only when the content is `expected`; otherwise discards it and returns nullopt with `actual` set, so
    // a download checked against a published SHA-256 is hashed once.
    std::optional<StoredBlob> commit_if(const image::Digest& expected, image::Digest& actual);

   private:
    friend class BlobStore;
    Writer(const BlobStore* store, std::filesystem::path tmp, std::FILE* file);
    std::optional<StoredBlob> commit_checked(const image::Digest* expected, image::Digest& actual);
    const BlobStore* store_;
    std::filesystem::path tmp_;
    std::FILE* file_;
    image::Sha256 hash_;
    std::uint64_t size_ = 0;
  };

  Writer begin_write() const;
  StoredBlob put(std::string_view bytes) const;
  // image::BlobKeeper: put() unless the blob is here whole; path_of() when it is.
  StoredBlob keep(std::string_view bytes) const override;
  std::optional<std::filesystem::path> find(const image::Digest& digest) const override;
  // A blob whose bytes were found not to hash to its name (`actual`): removed, so the next use misses, with a
  // warning naming its file.
  void discard(const image::Digest& digest, const image::Digest& actual) const override;
  // Copies a file in, hashing as it goes. When `expected` is given and differs, nothing is stored and Error names it.
  StoredBlob put_file(const std::filesystem::path& file, const image::Digest* expected = nullptr) const;

 private:
  std::filesystem::path root_;
  std::shared_ptr<const UseLock> lock_;
  std::shared_ptr<CacheWarnings> warnings_;
};

}  // namespace trainpack::store
