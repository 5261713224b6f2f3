#include "transports/registry.h"

#include "registry/referrers.h"
#include "registry/registries.h"
#include "registry/remote_image.h"
#include "support/error.h"

namespace trainpack::transports {

std::shared_ptr<const image::Image> open_registry_image(const registry::Reference& ref, const image::Platform& platform,
                                                        const store::BlobStore& store,
                                                        registry::Registries& registries,
                                                        registry::BlobFetchProgress on_fetch) {
  return registry::RemoteImage::open(registries.client(ref.registry), ref, platform, store, std::move(on_fetch));
}

registry::PushResult write_registry_image(const image::Image& image, const registry::Reference& target,
                                          registry::Registries& registries, const registry::PushOptions& options) {
  return registry::push_image(
      image, target, [&registries](const std::string& r) -> registry::RegistryClient& { return registries.client(r); },
      options);
}

namespace {

registry::Registries& need_registries(registry::Registries* registries) {
  if (!registries) throw Error("internal: no registry access configured");
  return *registries;
}

// A one-line error for a malformed reference, before any work.
void check_reference(ImageLocation& location) { location.reference = location.registry_reference(); }
void check_reference_only(const ImageLocation& location) { location.registry_reference(); }

std::shared_ptr<const image::Image> open_location(const ImageLocation& location, const OpenContext& context) {
  registry::Registries& registries = need_registries(context.registries);
  return open_registry_image(location.registry_reference(), context.platform, context.store, registries,
                             context.on_fetch);
}

WriteReport write_location(const image::Image& image, const ImageLocation& location, const WriteContext& context) {
  registry::Registries& registries = need_registries(context.registries);
  registry::PushOptions options = context.push;
  options.extra_tags = context.extra_tags;
  registry::Reference target = location.registry_reference();
  registry::PushOptions artifacts;  // a few small blobs each: no progress rows; sessions of the push begun ahead
  artifacts.jobs = options.jobs;
  artifacts.locations = options.locations;
  artifacts.ahead = options.ahead;
  // The SBOM and provenance need only the image's digest: their push begins beside the image's, and their manifests
  // go up beside its manifest.
  std::optional<registry::ReferrerPush> referrers;
  if (!context.referrers.empty()) {
    referrers.emplace(registries.client(target.registry), target.repository, context.referrers,
                      image.manifest_digest(), artifacts);
    options.on_blobs_pushed = [&referrers] { referrers->subject_blobs_pushed(); };
  }
  WriteReport report{write_registry_image(image, target, registries, options)};
  if (!referrers) return report;
  try {
    referrers->finish();
  } catch (const Error& e) {
    throw Error(report.push->reference + " is pushed, but its SBOM and provenance could not be attached: " + e.what(),
                "the image stands as pushed; --sbom=none --provenance=none builds it without them");
  }
  report.referrers_attached = context.referrers.size();
  return report;
}

std::vector<image::AttachedDocument> read_attached_location(const ImageLocation& location, const OpenContext& context,
                                                           const image::Digest& subject,
                                                           const std::vector<std::string>& types) {
  registry::Reference ref = location.registry_reference();
  registry::RegistryClient& client = need_registries(context.registries).client(ref.registry);
  return registry::read_attached(client, ref.repository, subject, types);
}

}  // namespace

const Transport kRegistryTransport{"docker", "docker://", /*local=*/false, check_reference, open_location,
                                   check_reference_only, write_location, read_attached_location};

}  // namespace trainpack::transports
