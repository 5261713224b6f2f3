#pragma once
// Image transports: where images are read from (sources) and written to (sinks). Every transport is one file of
// the same shape — open_… reads an image, write_… writes one — and one row of the table in transports/table.cpp,
// chosen by the location's scheme (skopeo's transport names: oci:, docker-archive:, docker://).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/artifact_image.h"
#include "image/image.h"
#include "registry/pusher.h"
#include "registry/remote_image.h"
#include "support/error.h"
#include "transports/image_location.h"

namespace trainpack::store {
class BlobStore;
}
namespace trainpack::registry {
class Registries;
}

namespace trainpack::transports {

// Writing stopped at a blob the image keeps damaged (a cache blob whose bytes changed) that its source cannot give
// again (a layer a build made): the damaged copy is removed, so the image made again (the build run again) has the
// blob whole. Nothing of the output was left.
class DamagedBlob : public Error {
 public:
  using Error::Error;
};

// What reading an image needs besides its location.
struct OpenContext {
  image::Platform platform;                    // picks from an index
  const store::BlobStore& store;              // where fetched or imported blobs go
  registry::Registries* registries = nullptr;  // needed for registry locations
  registry::BlobFetchProgress on_fetch;         // progress of a registry image's blob downloads
};

// What writing an image needs besides its location.
struct WriteContext {
  registry::Registries* registries = nullptr;  // needed for registry locations
  registry::PushOptions push;                  // parallel uploads and per-blob progress of a push
  // --tag: more tags for the image, written with the location's own: pushed under each (a registry), more ref.name
  // entries of index.json (an OCI layout), more RepoTags of the same name (a docker-archive).
  std::vector<std::string> extra_tags;
  // Artifacts whose subject is the image (its SBOM, its provenance: image/artifact_image.h), written with it where
  // the location can hold them: a registry lists them as referrers (registry/referrers.h), a tagged OCI layout holds
  // them as untagged index.json entries with their artifactType; a docker-archive has no place for them.
  std::vector<std::shared_ptr<const image::Image>> referrers;
};

// What writing did: a push reports the pushed reference and its blob counts; a local sink reports nothing.
struct WriteReport {
  std::optional<registry::PushResult> push;
  std::size_t referrers_attached = 0;  // of WriteContext::referrers: how many the location holds
};

struct Transport {
  std::string_view name;    // "oci"
  std::string_view prefix;  // "oci:"
  bool local;               // reads and writes local files (a sink of this kind holds every blob of the image)
  // Checks the location's reference right after parsing, completing it where the transport has a default; throws Error.
  void (*complete)(ImageLocation& location);
  std::shared_ptr<const image::Image> (*open)(const ImageLocation& location, const OpenContext& context);
  // Throws the Error writing would raise for a destination that cannot be written, before any work is done.
  void (*check_destination)(const ImageLocation& location);
  WriteReport (*write)(const image::Image& image, const ImageLocation& location, const WriteContext& context);
  // The artifacts attached to the image `subject` at the location (a registry's referrers, an OCI layout's artifact
  // entries naming it) whose listed artifactType is in `types`, in the listing's order; none when there is none.
  // Each byte read is checked against its digest.
  std::vector<image::AttachedDocument> (*read_attached)(const ImageLocation& location, const OpenContext& context,
                                                        const image::Digest& subject,
                                                        const std::vector<std::string>& types);
  bool holds_referrers = true;  // false: write() ignores WriteContext::referrers (no place for them)
};

// Every transport, in the order their prefixes are tried.
const std::vector<const Transport*>& transport_table();
// The transport named by `location.transport`; throws Error for an unknown one.
const Transport& transport_of(const ImageLocation& location);

// The image at `location` (for `context.platform` when it is an index).
std::shared_ptr<const image::Image> open_image(const ImageLocation& location, const OpenContext& context);
void check_destination(const ImageLocation& location);
WriteReport write_image(const image::Image& image, const ImageLocation& location, const WriteContext& context);
std::vector<image::AttachedDocument> read_attached(const ImageLocation& location, const OpenContext& context,
                                                  const image::Digest& subject, const std::vector<std::string>& types);

}  // namespace trainpack::transports
