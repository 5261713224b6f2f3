#pragma once
// Referrers: artifacts about an image (its SBOM, its provenance) that name it as their `subject` (OCI image-spec
// 1.1 manifest.md; distribution-spec 1.1 "Listing Referrers"). A registry with the referrers API
// (GET /v2/<name>/referrers/<digest>) lists them itself; for one without it, the spec's referrers tag schema keeps
// an image index under the tag `<alg>-<hex>` of the subject's digest, which the pushing client updates. The
// subject's own manifest, and so its digest, never changes.
#include <atomic>
#include <cstddef>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/artifact_image.h"
#include "image/digest.h"
#include "image/image.h"
#include "registry/pusher.h"
#include "registry/reference.h"
#include "registry/registry_client.h"

namespace trainpack::registry {

// The fallback tag of the referrers tag schema: "sha256-<hex>".
std::string referrers_tag(const image::Digest& subject);

// A push of `referrers` (artifact manifests whose subject is `subject`) by digest into `repository` of the client's
// registry, begun beside the subject's own push, since it needs only the subject's digest: the subject's fallback
// index is read while every referrer's blob goes up, with the upload sessions of the push begun ahead
// (PushOptions::ahead) when it targets this repository. Once the subject's blobs are in (subject_blobs_pushed), the
// referrers' manifests go up beside the subject's: a registry MUST accept a manifest whose subject is not there yet
// (distribution-spec "Pushing Manifests with Subject"); one that refuses gets them again in finish(). A registry
// that answers their PUT with OCI-Subject lists them itself; for one that does not, finish(), once the subject's
// manifest is in, adds their descriptors (with artifactType and annotations) to the fallback index in one PUT: the
// fallback tag never names referrers of an image that is not there. Those the index lists already get no manifest
// and no listing.
class ReferrerPush {
 public:
  // `client` outlives this.
  ReferrerPush(RegistryClient& client, std::string repository,
               std::vector<std::shared_ptr<const image::Image>> referrers, image::Digest subject, PushOptions options);
  // Waits for the work in the background (the subject's push failed: its blobs stay unreferenced, nothing tagged).
  ~ReferrerPush();
  ReferrerPush(const ReferrerPush&) = delete;
  ReferrerPush& operator=(const ReferrerPush&) = delete;

  // The subject's blobs are in and its manifest goes up next: waits for the referrers' blobs, then puts their
  // manifests in the background. Throws nothing: what failed is finish()'s to report.
  void subject_blobs_pushed();
  // Returns how many referrers were pushed; throws the first failure, the background's included.
  std::size_t finish();

 private:
  nlohmann::json list() const;  // the subject's fallback index (an empty one when the tag is absent)
  std::vector<const image::Image*> unlisted(const nlohmann::json& listing) const;
  void push_blobs() const;
  void put_manifest_of(const image::Image& referrer) const;
  std::vector<const image::Image*> put_manifests(const std::vector<const image::Image*>& referrers) const;

  RegistryClient& client_;
  const std::string repository_;
  const std::vector<std::shared_ptr<const image::Image>> referrers_;
  const image::Digest subject_;
  const PushOptions options_;
  mutable std::atomic<bool> lists_referrers_{false};  // a manifest's PUT was answered with OCI-Subject
  std::shared_future<nlohmann::json> listing_;
  std::shared_future<void> blobs_;
  std::future<std::vector<const image::Image*>> early_;  // manifests put beside the subject's: those refused
};

// What refers to `subject` in `repository`: the registry's referrers API when it has one, else the fallback index
// (none when the tag is absent). Each descriptor's `extra` holds its artifactType.
std::vector<image::Descriptor> list_referrers(RegistryClient& client, const std::string& repository,
                                              const image::Digest& subject);

// The referrers of `subject` whose listed artifactType is in `types`, in the listing's order: each manifest, and its
// one blob (at most 64 MiB), checked against their digests. What they say is the caller's to check: a fallback
// index is anyone's tag.
std::vector<image::AttachedDocument> read_attached(RegistryClient& client, const std::string& repository,
                                                   const image::Digest& subject,
                                                   const std::vector<std::string>& types);

}  // namespace trainpack::registry
