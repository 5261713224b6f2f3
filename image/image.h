#pragma once
// The read-only Image view that every source (OCI layout, docker-archive, registry) provides and every sink
// consumes. Raw manifest and config bytes are kept verbatim: a manifest's digest is over its exact bytes (OCI
// image-spec descriptor.md).
#include <filesystem>
#include <optional>
#include <string>

#include "image/config.h"
#include "image/digest.h"
#include "image/manifest.h"
#include "image/platform.h"

namespace trainpack::image {

// Where a blob can be had remotely without moving its bytes through us: a registry push to the same registry can
// mount it from this repository instead of uploading it.
struct RemoteOrigin {
  std::string registry;    // "127.0.0.1:5000", "us-docker.pkg.dev"
  std::string repository;  // "base/python"
};

// One image, read-only. Sources implement it; sinks only read through it.
class Image {
 public:
  virtual ~Image() = default;
  // The registry repository that holds `digest`, when the image came from one (lets a push mount it).
  virtual std::optional<RemoteOrigin> remote_origin(const Digest& digest) const { return std::nullopt; }
  virtual const std::string& raw_manifest() const = 0;
  virtual const std::string& raw_config() const = 0;
  // A local file holding the blob's exact bytes. Sources may materialise it lazily.
  virtual std::filesystem::path blob_path(const Digest& digest) const = 0;
  // Whether blob_path() can answer without downloading (a push relays a remote blob instead of storing it).
  virtual bool has_local_blob(const Digest& digest) const { return true; }
  // The bytes blob_path() gave for `digest` were found to hash to `actual` (a sink hashes what it copies): a damaged
  // copy in the cache is dropped. True when blob_path() may now give the right bytes (fetched again from where the
  // image came from); false when there is nowhere to get them.
  virtual bool refetch_blob(const Digest& digest, const Digest& actual) const { return false; }
  // A human name for messages ("oci:/tmp/base:3.11").
  virtual std::string describe() const = 0;

  Digest manifest_digest() const { return sha256_of(raw_manifest()); }
  Manifest manifest() const { return Manifest::parse(raw_manifest(), describe()); }
  ImageConfig config() const { return ImageConfig::parse(raw_config(), describe()); }
};

}  // namespace trainpack::image
