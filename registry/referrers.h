#pragma once
// Referrers: artifacts about an image (its SBOM, its provenance) that name it as their `subject` (OCI image-spec
// 1.1 manifest.md; distribution-spec 1.1 "Listing Referrers"). A registry with the referrers API
// (GET /v2/<name>/referrers/<digest>) lists them itself; for one without it, the spec's referrers tag schema keeps
// an image index under the tag `<alg>-<hex>` of the subject's digest, which the pushing client updates. The
// subject's own manifest, and so its digest, never changes.
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
// registry, begun beside the subject's own push, since it needs only the subject's digest: the subject's referrers
// are listed and every referrer's blobs pushed at once, in the background. finish(), once the subject's manifest is
// in, puts the referrers' manifests (all at once) and, unless the registry lists referrers itself, adds their
// descriptors (with artifactType and annotations) to the subject's fallback index in one PUT: the manifests wait for
// the subject's, as a registry MUST accept them first (distribution-spec "Pushing Manifests") but not every one
// does, and the fallback tag never names referrers of an image that is not there. Those listed already are neither
// pushed nor listed again: an unchanged image's second push costs its listing's requests.
class ReferrerPush {
 public:
  // `client` outlives this.
  ReferrerPush(RegistryClient& client, std::string repository,
               std::vector<std::shared_ptr<const image::Image>> referrers, image::Digest subject, PushOptions options);
  // Waits for the work in the background (the subject's push failed: its blobs stay unreferenced, nothing tagged).
  ~ReferrerPush();
  ReferrerPush(const ReferrerPush&) = delete;
  ReferrerPush& operator=(const ReferrerPush&) = delete;

  // Returns how many referrers were pushed; throws the first failure, the background's included.
  std::size_t finish();

 private:
  // What the background learnt: the subject's listing (the API's, or the fallback index), whether the registry has
  // the API, and the referrers not listed yet, whose blobs it pushed.
  struct Listing {
    nlohmann::json index;
    bool api = false;
    std::vector<const image::Image*> unlisted;
  };
  Listing list_and_push_blobs();
  void push_blobs(const std::vector<const image::Image*>& referrers) const;

  RegistryClient& client_;
  const std::string repository_;
  const std::vector<std::shared_ptr<const image::Image>> referrers_;
  const image::Digest subject_;
  const PushOptions options_;
  std::future<Listing> prepared_;
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
