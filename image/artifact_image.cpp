#include "image/artifact_image.h"

#include <nlohmann/json.hpp>

#include "image/media_types.h"
#include "support/error.h"

namespace trainpack::image {
using nlohmann::json;

std::filesystem::path ArtifactImage::blob_path(const Digest& d) const {
  if (std::optional<std::filesystem::path> kept = blobs_->find(d)) return *kept;
  if (source_ != nullptr) return source_->blob_path(d);
  throw Error(what_ + ": blob " + d.str() + " is missing from the cache",
              "the cache changed under the build: run it again");
}

bool ArtifactImage::has_local_blob(const Digest& d) const {
  return blobs_->find(d) || (source_ != nullptr && source_->has_local_blob(d));
}

bool ArtifactImage::refetch_blob(const Digest& d, const Digest& actual) const {
  if (blobs_->find(d)) blobs_->discard(d, actual);
  return source_ != nullptr && source_->refetch_blob(d, actual);
}

std::optional<RemoteOrigin> ArtifactImage::remote_origin(const Digest& d) const {
  return source_ != nullptr ? source_->remote_origin(d) : std::nullopt;
}

std::shared_ptr<const ArtifactImage> make_referrer(std::shared_ptr<const BlobKeeper> blobs, const Descriptor& subject,
                                                   std::string_view artifact_type, std::string_view media_type,
                                                   std::string_view content,
                                                   const std::map<std::string, std::string>& annotations,
                                                   std::string what) {
  // A rebuild makes the same documents: keep() does not write them again.
  StoredBlob config = blobs->keep(kEmptyConfig);
  StoredBlob blob = blobs->keep(content);
  json manifest{{"schemaVersion", 2},
                {"mediaType", media::kOciManifest},
                {"artifactType", artifact_type},
                {"config", {{"mediaType", kEmptyMediaType}, {"digest", config.digest.str()}, {"size", config.size}}},
                {"layers", json::array({{{"mediaType", media_type},
                                         {"digest", blob.digest.str()},
                                         {"size", blob.size}}})},
                {"subject", {{"mediaType", subject.media_type},
                             {"digest", subject.digest.str()},
                             {"size", subject.size}}}};
  if (!annotations.empty()) manifest["annotations"] = annotations;
  return std::make_shared<ArtifactImage>(manifest.dump(), std::string(kEmptyConfig), std::move(blobs), nullptr,
                                         std::move(what));
}

Descriptor manifest_descriptor(const Image& image) {
  return {image.manifest().media_type, image.manifest_digest(), image.raw_manifest().size(), {}, {}, {}};
}

std::string artifact_type_of(const Image& image) {
  json manifest = json::parse(image.raw_manifest(), nullptr, false);
  return string_member(manifest, "artifactType");
}

}  // namespace trainpack::image
