#pragma once
// Pushes an image to a registry (OCI distribution-spec: pushing blobs and manifests), the way the fast builders do:
// every blob once, in parallel with at most `jobs` uploads at a time, blobs the repository is not known to hold
// first. HEAD first (present: nothing to move; skipped for a small blob not known there, which is simply sent, and
// for the blobs of the manifest a rebuilt tag points at, when this cache made it: one HEAD of the tag), then
// a cross-repository mount from the blob's origin or from a repository of the same registry an earlier push put it
// in (registry/blob_locations.h; between Google registries also another host, with origin=), else a monolithic
// upload (POST, then one PUT with Content-Length streamed from the file, or, for a base blob not in the local store,
// relayed straight from its origin registry: registry/blob_relay.h). Registries that refuse a body on PUT get one
// streamed PATCH and an empty PUT. The manifest goes last, by tag, so a tag never points at a manifest whose blobs
// are missing; the extra tags follow it, each one more PUT of the same bytes. The first blob that fails fails the
// push: no blob starts after it, the uploads under way stop, and no manifest is put. An upload session that a failed
// or aborted push opened is cancelled (DELETE <location>, best effort), so the registry keeps no half-written upload.
// A build may begin the push while it runs (registry/push_ahead.h); this then finishes it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "image/digest.h"
#include "image/image.h"
#include "registry/blob_locations.h"
#include "registry/reference.h"
#include "registry/registry_client.h"
#include "store/blob_store.h"

namespace trainpack::registry {

class PushAhead;

struct BlobEvent {
  enum class Kind { kExists, kMounted, kUploading, kUploadProgress, kUploaded };
  Kind kind;
  image::Digest digest;
  std::uint64_t size = 0;
  std::string from;        // kMounted: the source repository
  std::uint64_t sent = 0;  // kUploadProgress: bytes of this blob sent so far (a few times a second at most)
};

struct PushOptions {
  int jobs = 4;
  // Where blobs were pushed before: mount sources, and told of this push's blobs once it succeeded. Optional.
  const BlobLocations* locations = nullptr;
  // Where this cache keeps the manifests it made: a tag that points at one of them vouches for its blobs. Optional.
  const store::BlobStore* store = nullptr;
  std::function<void(const BlobEvent&)> on_blob;  // called from worker threads, serialised by the pusher
  // The push begun during the build (registry/push_ahead.h), if its target is this one: its sessions, its answer
  // about the tag and the blobs it pushed already are used, and its on_blob takes the events. Optional.
  PushAhead* ahead = nullptr;
  // More tags of the target's repository (each valid: is_valid_tag), PUT with the same manifest once the target's
  // own reference has it, all at once: a failed push writes none of them.
  std::vector<std::string> extra_tags;
  // Called once every blob is in, before the manifest goes up and before unused sessions of `ahead` are cancelled
  // (the image's referrers use them: registry/referrers.h). Must not throw.
  std::function<void()> on_blobs_pushed;
};

struct PushResult {
  std::string reference;  // "registry/repository@sha256:…"
  std::vector<std::string> tags;  // "registry/repository:tag": the target's tag (if it has one), then extra_tags
  image::Digest manifest_digest;
  int blobs_existing = 0;
  int blobs_mounted = 0;
  int blobs_uploaded = 0;
  std::uint64_t bytes_uploaded = 0;
};

// `clients` gives the RegistryClient for a registry name (the target's, and the origin's for cross-registry mounts
// and relays).
PushResult push_image(const image::Image& image, const Reference& target,
                      const std::function<RegistryClient&(const std::string& registry)>& clients,
                      const PushOptions& options);

// PUTs `image`'s manifest into `target`'s repository under `identifier` (a tag, or the manifest's digest), its blobs
// being there; checks the digest the registry echoes. Returns the registry's answer (its headers: OCI-Subject).
// Throws Error naming the reference.
net::HttpResponse put_manifest(RegistryClient& client, const Reference& target, const image::Image& image,
                               const std::string& identifier);

}  // namespace trainpack::registry
