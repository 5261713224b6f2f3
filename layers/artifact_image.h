#pragma once
// OCI artifacts (image-spec manifest.md, "Guidelines for Artifact Usage") as images a transport writes like any
// other: an image manifest with an artifactType, its config and blobs in the blob store (or, for blobs it shares
// with another image, in that image). A referrer is such an artifact whose `subject` names the image it is about
// (image-spec 1.1: an SBOM or a provenance statement of a built image).
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "image/image.h"
#include "store/blob_store.h"

namespace trainpack::layers {

class ArtifactImage : public image::Image {
 public:
  ArtifactImage(std::string manifest, std::string config, const store::BlobStore& store, const image::Image* source,
                std::string what)
      : manifest_(std::move(manifest)), config_(std::move(config)), store_(store), source_(source),
        what_(std::move(what)) {}
  const std::string& raw_manifest() const override { return manifest_; }
  const std::string& raw_config() const override { return config_; }
  std::filesystem::path blob_path(const image::Digest& d) const override;
  bool has_local_blob(const image::Digest& d) const override;
  std::optional<image::RemoteOrigin> remote_origin(const image::Digest& d) const override;
  std::string describe() const override { return what_; }

 private:
  std::string manifest_;
  std::string config_;
  store::BlobStore store_;
  const image::Image* source_;
  std::string what_;
};

// The image-spec's empty config of an artifact that needs none: "{}" as application/vnd.oci.empty.v1+json.
inline constexpr std::string_view kEmptyMediaType = "application/vnd.oci.empty.v1+json";

// A referrer of `subject` (the image's manifest descriptor): one blob, `content` of `media_type`, under
// `artifact_type`, with the empty config and the manifest annotations given (org.opencontainers.image.created
// among them keeps it reproducible). `what` names it in messages ("the SBOM of …").
std::shared_ptr<const ArtifactImage> make_referrer(const store::BlobStore& store, const image::Descriptor& subject,
                                                   std::string_view artifact_type, std::string_view media_type,
                                                   std::string_view content,
                                                   const std::map<std::string, std::string>& annotations,
                                                   std::string what);

// The descriptor of an image's manifest (media type, digest, size), as a referrer's subject names it.
image::Descriptor manifest_descriptor(const image::Image& image);

// A referrer's artifactType; "" for an image manifest that has none.
std::string artifact_type_of(const image::Image& image);

}  // namespace trainpack::layers
