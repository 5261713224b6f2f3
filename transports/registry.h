#pragma once
// A registry as an image source and sink (OCI distribution-spec): reading is registry::RemoteImage (manifests and
// config on open, layer blobs on demand), writing is registry::push_image. Locations are "docker://REF".
#include <memory>

#include "image/image.h"
#include "registry/pusher.h"
#include "registry/reference.h"
#include "transports/transport.h"

namespace trainpack::transports {

std::shared_ptr<const image::Image> open_registry_image(const registry::Reference& ref, const image::Platform& platform,
                                                        const store::BlobStore& store,
                                                        registry::Registries& registries,
                                                        registry::BlobFetchProgress on_fetch = {});

registry::PushResult write_registry_image(const image::Image& image, const registry::Reference& target,
                                          registry::Registries& registries, const registry::PushOptions& options);

extern const Transport kRegistryTransport;

}  // namespace trainpack::transports
