#pragma once
// An image in a registry, as a lazy image::Image (OCI distribution-spec: pulling manifests and blobs): the manifest (through an index when the
// reference names one, picking the platform) and the config are fetched on open and kept as raw bytes; layer blobs
// are fetched only when something asks for their bytes, digest-verified while streaming into the blob store, and
// reused from the store afterwards. Every blob knows its origin, so a push to the same registry mounts it.
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "image/image.h"
#include "registry/reference.h"
#include "registry/registry_client.h"
#include "store/blob_store.h"

namespace trainpack::registry {

// The Accept header for manifests: OCI and Docker schema2 manifests and indexes, never schema1.
extern const char* const kManifestAccept;

// Called from the downloading thread as a blob's bytes arrive (`finished` false), and once when its download ends,
// however it ends (`finished` true): what a progress display needs.
using BlobFetchProgress = std::function<void(const image::Digest& digest, std::uint64_t done, std::uint64_t total,
                                             bool finished)>;

class RemoteImage : public image::Image {
 public:
  static std::shared_ptr<RemoteImage> open(RegistryClient& client, const Reference& ref,
                                           const image::Platform& platform, const store::BlobStore& store,
                                           BlobFetchProgress on_fetch = {});

  const std::string& raw_manifest() const override { return manifest_; }
  const std::string& raw_config() const override { return config_; }
  std::filesystem::path blob_path(const image::Digest& digest) const override;
  bool has_local_blob(const image::Digest& digest) const override { return store_.has(digest); }
  // A blob of this image found damaged in the store is dropped there; blob_path() downloads it again.
  bool refetch_blob(const image::Digest& digest, const image::Digest& actual) const override;
  std::string describe() const override { return reference_.str(); }
  std::optional<image::RemoteOrigin> remote_origin(const image::Digest& digest) const override;

  const Reference& reference() const { return reference_; }
  // The digest of the index the tag pointed at, when it pointed at one (else the manifest's).
  const image::Digest& resolved_digest() const { return resolved_digest_; }

 private:
  RemoteImage(RegistryClient& client, Reference ref, const store::BlobStore& store)
      : client_(client), reference_(std::move(ref)), store_(store) {}
  void fetch_blob(const image::Descriptor& descriptor) const;
  // The config's bytes, from the store (downloaded when not there, or again when the stored copy is damaged).
  std::string read_config(const image::Descriptor& config) const;

  RegistryClient& client_;
  Reference reference_;
  store::BlobStore store_;  // a copy: the store is only a root path
  BlobFetchProgress on_fetch_;
  std::string manifest_;
  std::string config_;
  image::Digest resolved_digest_;
  std::map<image::Digest, image::Descriptor> blobs_;  // what this image references: config and layers
  // Blobs being downloaded: each digest once at a time (a second caller waits for the first), different digests
  // in parallel.
  mutable std::mutex fetch_mutex_;
  mutable std::condition_variable fetch_done_;
  mutable std::set<image::Digest> fetching_;
};

// Fetches a manifest or index by tag or digest with the right Accept header. Verifies the body against the digest
// when the reference is a digest; returns the raw body, its media type and its digest.
struct FetchedManifest {
  std::string body;
  std::string media_type;
  image::Digest digest;
};
FetchedManifest fetch_manifest(RegistryClient& client, const std::string& repository, const std::string& reference);

}  // namespace trainpack::registry
