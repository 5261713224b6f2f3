#pragma once
// A base layer's tar read from its blob (plain tar, or any compression libarchive reads) with its diff_id checked on
// the way. The OCI image spec (config.md, rootfs.diff_ids) makes a layer's diff_id the digest of its uncompressed
// tar: the bytes are hashed as the tar reader takes them, in the one pass that decompresses the layer, and finish()
// compares the digest with the config's. The blob's own digest is checked where it is stored, not here.
#include <archive.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "image/digest.h"
#include "image/image.h"
#include "support/error.h"

namespace trainpack::layers {

class LayerTarReader {
 public:
  // `diff_id`: the config's rootfs.diff_ids entry for the layer; nullopt reads without checking (a blob that is no
  // image's layer). `what` names the layer in errors. Throws Error when the blob cannot be read.
  LayerTarReader(const std::filesystem::path& blob, std::optional<image::Digest> diff_id, std::string what);
  LayerTarReader(const LayerTarReader&) = delete;
  LayerTarReader& operator=(const LayerTarReader&) = delete;

  // The tar reader (archive_read_next_header, archive_read_data, ...).
  struct archive* tar() const { return tar_.get(); }

  // Hashes what the tar reader left (end-of-archive blocks, padding), then throws Error naming the layer and both
  // digests when the uncompressed tar is not the diff_id. Returns the uncompressed tar's digest.
  image::Digest finish();

 private:
  using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;
  static la_ssize_t read_block(struct archive* tar, void* self, const void** buffer);

  std::optional<image::Digest> diff_id_;
  std::string what_;
  ArchivePtr blob_;  // the blob decompressed, as one "raw" entry
  ArchivePtr tar_;   // the tar format read from what blob_ gives
  image::Sha256 hash_;
};

// The error for `layer` (named as in messages) whose uncompressed tar hashed to `actual`, not to `diff_id`.
Error diff_id_mismatch(const std::string& layer, const image::Digest& actual, const image::Digest& diff_id);

// The config's rootfs.diff_ids of `image`, one per manifest layer. Throws Error when the list is missing, holds a
// non-digest, or does not have one entry per layer.
std::vector<image::Digest> layer_diff_ids(const image::Image& image);

}  // namespace trainpack::layers
