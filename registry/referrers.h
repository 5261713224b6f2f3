#pragma once
// Referrers: artifacts about an image (its SBOM, its provenance) that name it as their `subject` (OCI image-spec
// 1.1 manifest.md; distribution-spec 1.1 "Listing Referrers"). A registry with the referrers API
// (GET /v2/<name>/referrers/<digest>) lists them itself; for one without it, the spec's referrers tag schema keeps
// an image index under the tag `<alg>-<hex>` of the subject's digest, which the pushing client updates. The
// subject's own manifest, and so its digest, never changes.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "image/artifact_image.h"
#include "image/digest.h"
#include "image/image.h"
#include "registry/pusher.h"
#include "registry/reference.h"
#include "registry/registry_client.h"

namespace trainpack::registry {

// The fallback tag of the referrers tag schema: "sha256-<hex>".
std::string referrers_tag(const image::Digest& subject);

// Pushes each of `referrers` (artifact manifests whose subject is `subject`, in `repository`) by digest into
// `repository` of the client's registry, and, unless the registry lists referrers itself, adds their descriptors
// (with artifactType and annotations) to the subject's fallback index in one PUT. Those listed already are neither
// pushed nor listed again: an unchanged image's second push costs two GETs. Returns how many were pushed.
std::size_t push_referrers(RegistryClient& client, const std::string& repository,
                           const std::vector<std::shared_ptr<const image::Image>>& referrers,
                           const image::Digest& subject, const PushOptions& options);

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
