#pragma once
// A new image made of a base image plus layers appended on top and an edited config — the shape of
// go-containerregistry's mutate.Append/ConfigFile. Nothing is copied: base blobs stay where the base keeps
// them; new layers, the config and the manifest live in the blob store.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/image.h"
#include "image/media_types.h"
#include "layers/layer_writer.h"
#include "store/blob_store.h"

namespace trainpack::layers {

// One history entry to append; `layer` is empty for config-only instructions (empty_layer: true).
struct AppendStep {
  std::string created_by;
  std::optional<LayerBlob> layer;
};

struct AppendSpec {
  std::vector<AppendStep> steps;
  image::ImageConfig config;            // the base's config with this build's edits (Env, Entrypoint, ...)
  std::string created;                  // RFC 3339, for the image and each new history entry
  nlohmann::json manifest_annotations;  // object
  // The media type of the new layers (layer_media_type(): gzip unless --compression=zstd).
  std::string layer_media_type = std::string(image::media::kOciLayerGzip);
  // Images that hold new layers' blobs not in the store (pip-step layers found in a --cache-repo): their blobs are
  // read, mounted or relayed from there, as the base's are.
  std::vector<std::shared_ptr<const image::Image>> layer_sources;
};

class AppendedImage : public image::Image {
 public:
  // Builds the new config and manifest, stores both in `store`. Docker-family base layers are relabelled to
  // their OCI media types (same bytes and digests); the result is always an OCI manifest.
  AppendedImage(std::shared_ptr<const image::Image> base, const store::BlobStore& store, const AppendSpec& spec);

  const std::string& raw_manifest() const override { return manifest_; }
  const std::string& raw_config() const override { return config_; }
  std::filesystem::path blob_path(const image::Digest& digest) const override;
  bool has_local_blob(const image::Digest& digest) const override;
  std::string describe() const override { return "the built image"; }
  // The base's blobs, and those of the layer sources, have one.
  std::optional<image::RemoteOrigin> remote_origin(const image::Digest& digest) const override;

  const image::Image& base() const { return *base_; }

 private:
  const image::Image* source_of(const image::Digest& digest) const;

  std::shared_ptr<const image::Image> base_;
  std::vector<std::shared_ptr<const image::Image>> layer_sources_;
  store::BlobStore store_;  // a copy: the store is only a root path
  std::string manifest_;
  std::string config_;
};

// "1970-01-01T00:00:00Z" for a Unix time.
std::string rfc3339_utc(std::int64_t unix_seconds);

}  // namespace trainpack::layers
