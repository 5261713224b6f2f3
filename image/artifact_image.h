#pragma once
// OCI artifacts (image-spec manifest.md, "Guidelines for Artifact Usage") as images a transport writes like any
// other: an image manifest with an artifactType, its config and blobs kept by a BlobKeeper (or, for blobs it shares
// with another image, in that image). A referrer is such an artifact whose `subject` names the image it is about
// (image-spec 1.1: an SBOM or a provenance statement of a built image).
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "image/blob_keeper.h"
#include "image/image.h"

namespace trainpack::image {

class ArtifactImage : public Image {
 public:
  ArtifactImage(std::string manifest, std::string config, std::shared_ptr<const BlobKeeper> blobs,
                const Image* source, std::string what)
      : manifest_(std::move(manifest)), config_(std::move(config)), blobs_(std::move(blobs)), source_(source),
        what_(std::move(what)) {}
  const std::string& raw_manifest() const override { return manifest_; }
  const std::string& raw_config() const override { return config_; }
  std::filesystem::path blob_path(const Digest& d) const override;
  bool has_local_blob(const Digest& d) const override;
  bool refetch_blob(const Digest& d, const Digest& actual) const override;
  std::optional<RemoteOrigin> remote_origin(const Digest& d) const override;
  std::string describe() const override { return what_; }

 private:
  std::string manifest_;
  std::string config_;
  std::shared_ptr<const BlobKeeper> blobs_;
  const Image* source_;
  std::string what_;
};

// The image-spec's empty config of an artifact that needs none: "{}" as application/vnd.oci.empty.v1+json.
inline constexpr std::string_view kEmptyMediaType = "application/vnd.oci.empty.v1+json";
inline constexpr std::string_view kEmptyConfig = "{}";

// A referrer of `subject` (the image's manifest descriptor): one blob, `content` of `media_type`, under
// `artifact_type`, with the empty config and the manifest annotations given (org.opencontainers.image.created
// among them keeps it reproducible). `what` names it in messages ("the SBOM of …").
std::shared_ptr<const ArtifactImage> make_referrer(std::shared_ptr<const BlobKeeper> blobs, const Descriptor& subject,
                                                   std::string_view artifact_type, std::string_view media_type,
                                                   std::string_view content,
                                                   const std::map<std::string, std::string>& annotations,
                                                   std::string what);

// The descriptor of an image's manifest (media type, digest, size), as a referrer's subject names it.
Descriptor manifest_descriptor(const Image& image);

// A referrer's artifactType; "" for an image manifest that has none.
std::string artifact_type_of(const Image& image);

// An artifact found attached to an image where it was written (a registry's referrer, an OCI layout's artifact
// entry), as read back: what its listing says it is, its manifest, and its one blob. Each byte is checked against
// its digest; what they say (subject, types, format) is for the reader to check.
struct AttachedDocument {
  std::string listed_type;  // the artifactType its listing (referrers index, index.json entry) gives
  Digest referrer;          // the artifact manifest's digest
  std::string manifest;     // its bytes
  std::string content;      // its blob when the manifest names exactly one layer, else ""
};

}  // namespace trainpack::image
