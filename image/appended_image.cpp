#include "image/appended_image.h"

#include <ctime>

#include "image/media_types.h"
#include "support/error.h"

namespace trainpack::image {
using nlohmann::json;

namespace {
std::string oci_layer_type(const std::string& type, const std::string& what) {
  if (type == media::kDockerLayerGzip) return std::string(media::kOciLayerGzip);
  if (type == media::kOciLayerGzip || type == media::kOciLayerTar || type == media::kOciLayerZstd) return type;
  throw Error(what + ": unsupported layer media type " + type,
              "only tar, tar+gzip and tar+zstd layers can be built on (no foreign or nondistributable layers)");
}
}  // namespace

std::string rfc3339_utc(std::int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

AppendedImage::AppendedImage(std::shared_ptr<const Image> base, std::shared_ptr<const BlobKeeper> blobs,
                             const AppendSpec& spec)
    : base_(std::move(base)), layer_sources_(spec.layer_sources), blobs_(std::move(blobs)) {
  Manifest base_manifest = base_->manifest();
  ImageConfig cfg = spec.config;

  std::optional<std::size_t> diff_ids = cfg.diff_id_count();
  if (!diff_ids) throw Error(base_->describe() + ": image config has no rootfs.diff_ids", "the base image is corrupt");
  if (*diff_ids != base_manifest.layers.size())
    throw Error(base_->describe() + ": config lists " + std::to_string(*diff_ids) + " diff_ids but the manifest has " +
                    std::to_string(base_manifest.layers.size()) + " layers",
                "the base image is corrupt");

  cfg.set_created(spec.created);
  cfg.ensure_execution_config();
  cfg.fill_missing_history(base_manifest.layers.size());

  Manifest out;
  out.media_type = std::string(media::kOciManifest);
  for (const Descriptor& l : base_manifest.layers) {
    Descriptor d = l;
    d.media_type = oci_layer_type(l.media_type, base_->describe());
    out.layers.push_back(d);
  }
  for (const AppendStep& step : spec.steps) {
    json h{{"created", spec.created}, {"created_by", step.created_by}, {"comment", "trainpack"}};
    if (step.layer) {
      cfg.append_history(std::move(h), step.layer->diff_id.str());
      Descriptor d;
      d.media_type = spec.layer_media_type;
      d.digest = step.layer->digest;
      d.size = step.layer->size;
      out.layers.push_back(d);
    } else {
      h["empty_layer"] = true;
      cfg.append_history(std::move(h), std::nullopt);
    }
  }
  config_ = cfg.serialize();
  StoredBlob config_blob = blobs_->keep(config_);
  out.config.media_type = std::string(media::kOciConfig);
  out.config.digest = config_blob.digest;
  out.config.size = config_blob.size;
  out.annotations = spec.manifest_annotations;
  manifest_ = out.serialize();
  blobs_->keep(manifest_);
}

// The layer source that holds `digest`, else the base.
const Image* AppendedImage::source_of(const Digest& digest) const {
  for (const auto& source : layer_sources_)
    if (source->remote_origin(digest)) return source.get();
  return base_.get();
}

std::filesystem::path AppendedImage::blob_path(const Digest& digest) const {
  if (std::optional<std::filesystem::path> kept = blobs_->find(digest)) return *kept;
  return source_of(digest)->blob_path(digest);
}

bool AppendedImage::has_local_blob(const Digest& digest) const {
  return blobs_->find(digest) || source_of(digest)->has_local_blob(digest);
}

bool AppendedImage::refetch_blob(const Digest& digest, const Digest& actual) const {
  if (blobs_->find(digest)) blobs_->discard(digest, actual);
  return source_of(digest)->refetch_blob(digest, actual);
}

std::optional<RemoteOrigin> AppendedImage::remote_origin(const Digest& digest) const {
  return source_of(digest)->remote_origin(digest);
}

}  // namespace trainpack::image
