#include "layers/layer_tar_reader.h"

#include <cerrno>

#include "support/error.h"

namespace trainpack::layers {
namespace {

std::string error_of(struct archive* a) {
  const char* why = archive_error_string(a);  // may be null: libarchive does not always set one
  return why ? why : "unknown error";
}

}  // namespace

LayerTarReader::LayerTarReader(const std::filesystem::path& blob, std::optional<image::Digest> diff_id,
                               std::string what)
    : diff_id_(std::move(diff_id)),
      what_(std::move(what)),
      blob_(archive_read_new(), archive_read_free),
      tar_(archive_read_new(), archive_read_free) {
  // Docker hashes layers with sha256 only (moby layer/layer_store.go), so no other diff_id can match.
  if (diff_id_ && diff_id_->algorithm() != "sha256")
    throw Error(what_ + ": the config's diff_id " + diff_id_->str() + " is not a sha256 digest",
                "Docker refuses this image too; rebuild the base image with a standard tool");
  // Two readers: the first decompresses the blob into one "raw" entry, the second reads the tar from that entry's
  // data through read_block, which hashes each block as it passes.
  archive_read_support_filter_all(blob_.get());
  archive_read_support_format_raw(blob_.get());
  struct archive_entry* entry;
  if (archive_read_open_filename(blob_.get(), blob.c_str(), 1 << 20) != ARCHIVE_OK ||
      archive_read_next_header(blob_.get(), &entry) != ARCHIVE_OK)
    throw Error(what_ + ": cannot read layer: " + error_of(blob_.get()), "the image is corrupt");
  archive_read_support_format_tar(tar_.get());
  if (archive_read_open(tar_.get(), this, nullptr, &LayerTarReader::read_block, nullptr) != ARCHIVE_OK)
    throw Error(what_ + ": cannot read layer: " + error_of(tar_.get()), "the image is corrupt");
}

la_ssize_t LayerTarReader::read_block(struct archive* tar, void* self, const void** buffer) {
  auto* reader = static_cast<LayerTarReader*>(self);
  std::size_t size = 0;
  la_int64_t offset = 0;
  int rc = archive_read_data_block(reader->blob_.get(), buffer, &size, &offset);
  if (rc == ARCHIVE_EOF) return 0;
  if (rc != ARCHIVE_OK) {
    archive_set_error(tar, EIO, "%s", error_of(reader->blob_.get()).c_str());
    return -1;
  }
  reader->hash_.update(*buffer, size);
  return static_cast<la_ssize_t>(size);
}

image::Digest LayerTarReader::finish() {
  const void* buffer;
  std::size_t size = 0;
  la_int64_t offset = 0;
  int rc;
  while ((rc = archive_read_data_block(blob_.get(), &buffer, &size, &offset)) == ARCHIVE_OK) hash_.update(buffer, size);
  if (rc != ARCHIVE_EOF)
    throw Error(what_ + ": cannot read layer: " + error_of(blob_.get()), "the image is corrupt");
  image::Digest actual = hash_.finish();
  if (diff_id_ && actual != *diff_id_) throw diff_id_mismatch(what_, actual, *diff_id_);
  return actual;
}

Error diff_id_mismatch(const std::string& layer, const image::Digest& actual, const image::Digest& diff_id) {
  return Error(layer + ": its uncompressed tar hashes to " + actual.str() + " but the config's diff_id is " +
                   diff_id.str(),
               "the base image's config does not match its layers; Docker refuses it too: rebuild or re-push it");
}

std::vector<image::Digest> layer_diff_ids(const image::Image& image) {
  const image::ImageConfig config = image.config();
  const std::size_t layers = image.manifest().layers.size();
  std::optional<std::size_t> count = config.diff_id_count();
  if (!count) throw Error(image.describe() + ": image config has no rootfs.diff_ids", "the base image is corrupt");
  if (*count != layers)
    throw Error(image.describe() + ": config lists " + std::to_string(*count) + " diff_ids but the manifest has " +
                    std::to_string(layers) + " layers",
                "the base image is corrupt");
  std::vector<image::Digest> out;
  for (const std::string& text : config.diff_ids().value_or(std::vector<std::string>{}))
    out.push_back(image::Digest::parse_or_throw(text, image.describe() + ": rootfs.diff_ids"));
  if (out.size() != layers)
    throw Error(image.describe() + ": rootfs.diff_ids holds an entry that is not a string",
                "the base image is corrupt");
  return out;
}

}  // namespace trainpack::layers
