#pragma once
// Where an image made here (image/appended_image.h, image/artifact_image.h) keeps the blobs it writes — its config,
// its manifest, an artifact's content — and finds them again by digest. The cache's blob store is one
// (store/blob_store.h); image/ sits below the cache and asks only these two things of it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "image/digest.h"

namespace trainpack::image {

struct StoredBlob {
  Digest digest;
  std::uint64_t size = 0;
};

class BlobKeeper {
 public:
  virtual ~BlobKeeper() = default;
  // Keeps `bytes` under their digest; bytes already kept are not written again.
  virtual StoredBlob keep(std::string_view bytes) const = 0;
  // The file holding `digest`, when it is kept here.
  virtual std::optional<std::filesystem::path> find(const Digest& digest) const = 0;
  // The kept bytes of `digest` were found to hash to `actual`: they are dropped, so the next find() misses.
  virtual void discard(const Digest& digest, const Digest& actual) const = 0;
};

}  // namespace trainpack::image
