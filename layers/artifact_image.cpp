#include "layers/artifact_image.h"

#include <nlohmann/json.hpp>

#include "image/media_types.h"

namespace trainpack::layers {
using nlohmann::json;

std::filesystem::path ArtifactImage::blob_path(const image::Digest& d) const {
  if (store_.has(d) || source_ == nullptr) return store_.path_of(d);
  return source_->blob_path(d);
}

bool ArtifactImage::has_local_blob(const image::Digest& d) const {
  return store_.has(d) || (source_ != nullptr && source_->has_local_blob(d));
}

std::optional<image::RemoteOrigin> ArtifactImage::remote_origin(const image::Digest& d) const {
  return source_ != nullptr ? source_->remote_origin(d) : std::nullopt;
}

std::shared_ptr<const ArtifactImage> make_referrer(const store::BlobStore& store, const image::Descriptor& subject,
                                                   std::string_view artifact_type, std::string_view media_type,
                                                   std::string_view content,
                                                   const std::map<std::string, std::string>& annotations,
                                                   std::string what) {
  static constexpr std::string_view kEmpty = "{}";
  // A rebuild makes the same documents: what the store holds is not written again.
  auto stored = [&store](std::string_view bytes) {
    image::Digest digest = image::sha256_of(bytes);
    return store.has(digest) ? store::StoredBlob{digest, bytes.size()} : store.put(bytes);
  };
  store::StoredBlob config = stored(kEmpty);
  store::StoredBlob blob = stored(content);
  json manifest{{"schemaVersion", 2},
                {"mediaType", image::media::kOciManifest},
                {"artifactType", artifact_type},
                {"config", {{"mediaType", kEmptyMediaType}, {"digest", config.digest.str()}, {"size", config.size}}},
                {"layers", json::array({{{"mediaType", media_type},
                                         {"digest", blob.digest.str()},
                                         {"size", blob.size}}})},
                {"subject", {{"mediaType", subject.media_type},
                             {"digest", subject.digest.str()},
                             {"size", subject.size}}}};
  if (!annotations.empty()) manifest["annotations"] = annotations;
  return std::make_shared<ArtifactImage>(manifest.dump(), std::string(kEmpty), store, nullptr, std::move(what));
}

image::Descriptor manifest_descriptor(const image::Image& image) {
  return {image.manifest().media_type, image.manifest_digest(), image.raw_manifest().size(), {}, {}, {}};
}

std::string artifact_type_of(const image::Image& image) {
  json manifest = json::parse(image.raw_manifest(), nullptr, false);
  return image::string_member(manifest, "artifactType");
}

}  // namespace trainpack::layers
