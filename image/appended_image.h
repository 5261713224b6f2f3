#pragma once
// A new image made of a base image plus layers appended on top and an edited config — the shape of
// go-containerregistry's mutate.Append/ConfigFile. Nothing is copied: base blobs stay where the base keeps
// them; new layers, the config and the manifest are kept by a BlobKeeper (the cache's blob store).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/blob_keeper.h"
#include "image/image.h"
#include "image/manifest.h"
#include "image/media_types.h"

namespace trainpack::image {

// One history entry to append; `layer` is empty for config-only instructions (empty_layer: true).
struct AppendStep {
  std::string created_by;
  std::optional<LayerBlob> layer;
};

struct AppendSpec {
  std::vector<AppendStep> steps;
  ImageConfig config;            // the base's config with this build's edits (Env, Entrypoint, ...)
  std::string created;                  // RFC 3339, for the image and each new history entry
  nlohmann::json manifest_annotations;  // object
  // The media type of the new layers: gzip unless the build compresses with zstd.
  std::string layer_media_type = std::string(media::kOciLayerGzip);
  // Images that hold new layers' blobs not kept here (pip-step layers found in a --cache-repo): their blobs are
  // read, mounted or relayed from there, as the base's are.
  std::vector<std::shared_ptr<const Image>> layer_sources;
};

class AppendedImage : public Image {
 public:
  // Builds the new config and manifest and keeps both in `blobs`, which holds the new layers' blobs too.
  // Docker-family base layers are relabelled to their OCI media types (same bytes and digests); the result is
  // always an OCI manifest.
  AppendedImage(std::shared_ptr<const Image> base, std::shared_ptr<const BlobKeeper> blobs, const AppendSpec& spec);

  const std::string& raw_manifest() const override { return manifest_; }
  const std::string& raw_config() const override { return config_; }
  std::filesystem::path blob_path(const Digest& digest) const override;
  bool has_local_blob(const Digest& digest) const override;
  // A damaged kept blob is dropped; a base layer (or a layer source's) is then fetched again from there. A layer
  // this build made is not made again here: the next build misses it in the cache and makes it.
  bool refetch_blob(const Digest& digest, const Digest& actual) const override;
  std::string describe() const override { return "the built image"; }
  // The base's blobs, and those of the layer sources, have one.
  std::optional<RemoteOrigin> remote_origin(const Digest& digest) const override;

  const Image& base() const { return *base_; }

 private:
  const Image* source_of(const Digest& digest) const;

  std::shared_ptr<const Image> base_;
  std::vector<std::shared_ptr<const Image>> layer_sources_;
  std::shared_ptr<const BlobKeeper> blobs_;
  std::string manifest_;
  std::string config_;
};

// "1970-01-01T00:00:00Z" for a Unix time.
std::string rfc3339_utc(std::int64_t unix_seconds);

}  // namespace trainpack::image
