#pragma once
// Where blobs were last seen: for each digest, the repositories (registry/repository) a push put it in or a pull
// read it from, newest first. A later push to another repository of the same registry mounts the blob from one of
// them instead of uploading it (OCI distribution-spec, "Mounting a blob from another repository"), as docker does
// with what it remembers of earlier pushes. Kept in the cache as one small file per digest, written atomically;
// a missing, unreadable or odd file only means nothing is known.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "image/digest.h"
#include "store/cache_dir.h"

namespace trainpack::registry {

struct BlobLocation {
  std::string registry;    // "us-docker.pkg.dev", "127.0.0.1:5000"
  std::string repository;  // "project/repo/image"
  bool operator==(const BlobLocation&) const = default;
};

class BlobLocations {
 public:
  static constexpr std::size_t kKeptPerBlob = 8;

  explicit BlobLocations(store::CacheArea entries) : entries_(std::move(entries)) {}

  // Newest first; never throws.
  std::vector<BlobLocation> known(const image::Digest& digest) const;
  // Puts `where` first (once) and keeps the newest kKeptPerBlob; a failure to write is ignored (it is a cache).
  void remember(const image::Digest& digest, const BlobLocation& where) const;

 private:
  static std::string key_of(const image::Digest& digest);
  store::CacheArea entries_;
};

// A blob-locations file's lines ("registry repository"), the first BlobLocations::kKeptPerBlob well-formed ones; a
// line that is not one is skipped (a mount from a wrong place only fails, and the blob is uploaded).
std::vector<BlobLocation> parse_blob_locations(std::string_view text);

}  // namespace trainpack::registry
