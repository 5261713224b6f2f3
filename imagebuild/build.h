#pragma once
// Carries out a build plan: opens the base, lists its filesystem (cached per layer), turns each step into a
// layer or a config edit without running anything from the image, assembles the new image and writes it to
// every requested output.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gcloud/build_plan.h"
#include "imagebuild/image_attestations.h"
#include "imagebuild/progress.h"
#include "imagebuild/python_installer.h"
#include "imagebuild/timings.h"
#include "image/digest.h"
#include "image/image.h"
#include "provenance/slsa.h"
#include "layers/gzip_encoder.h"
#include "layers/layer_writer.h"
#include "registry/reference.h"
#include "registry/remote_image.h"
#include "secrets/credential_scan.h"
#include "transports/image_location.h"

namespace trainpack::store {
class BlobStore;
}
namespace trainpack::registry {
class Registries;
}

namespace trainpack::imagebuild {

struct BuildRequest {
  std::filesystem::path package_dir;        // absolute build context
  std::string base_name;                    // --executor-image-uri as given (FROM, base.name annotation)
  transports::ImageLocation base_location;  // where the base's bytes are read
  std::vector<gcloud::BuildStep> steps;
  std::vector<transports::ImageLocation> outputs;  // refs already defaulted
  std::filesystem::path cache_dir;
  // Automatic pruning keeps the cache under this many bytes after a build; nullopt: store::cache_cap's default.
  std::optional<std::uint64_t> cache_max_size;
  image::Platform platform;
  bool platform_required = false;  // --platform was given: a single-platform base must be for it
  std::int64_t mtime = 0;
  // How new layers are compressed (part of the layer cache key): gzip's engine and level, or zstd's level.
  layers::LayerCompression compression = layers::LayerCompression::kGzip;
  layers::GzipOptions gzip;
  layers::ZstdOptions zstd;
  bool dry_run = false;  // plan every layer and list .dockerignore exclusions, write nothing
  bool refresh_pip_steps = false;  // resolve every pip step again, even an unchanged one (pip_step_cache.h)
  bool fail_on_secrets = false;    // likely credentials in what the COPY steps take fail the build (else: warnings)
  registry::Registries* registries = nullptr;  // needed when the base or an output is a registry
  int jobs = 4;                                // parallel blob uploads
  PythonOptions python;                        // pip steps: index overrides, --no-compile
  // --cache-repo: pip steps and base scans shared through this repository (imagebuild/cache_repo.h); needs registries.
  std::optional<registry::Reference> cache_repo;
  // Asked for, never added otherwise (cli/image_metadata.h): more tags of every output, config.Labels over the
  // base's, manifest annotations over trainpack's base.name/base.digest.
  std::vector<std::string> extra_tags;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  // Attached to every output that can hold them, never changing the image (imagebuild/image_attestations.h): the SBOM
  // in this format, and the provenance statement, whose parameters are the flags as given (secrets masked) and
  // whose CI run is the one the build runs in (cli/image_metadata.h ci_run).
  SbomFormat sbom = SbomFormat::kSpdx;
  bool provenance = true;
  // Outputs (ImageLocation::str()) that get neither: an OCI layout whose tag the user did not name keeps its one
  // manifest, which skopeo and umoci take as "the only image" of an untagged oci:DIR.
  std::set<std::string> outputs_without_attachments;
  std::vector<std::pair<std::string, std::string>> parameters;
  provenance::CiRun ci;
};

struct BuiltLayerInfo {
  std::string instruction;  // the step that made it, or "base"
  std::string origin;       // "base", "built", "cached", or "planned" (dry run)
  image::Digest digest;
  image::Digest diff_id;   // empty for base layers (known only from the config)
  std::uint64_t size = 0;
  std::string media_type;
  std::size_t entries = 0;  // files, dirs and links in a new layer
  // Dry run: what a build would do with the layer, "build", "cached" (the layer cache has it: digest, diff_id and size
  // are known) or "in registry" (cached, and every registry output has its blob); and its paths, sorted.
  std::string plan;
  std::vector<std::string> files;
};

struct BuildResult {
  image::Digest manifest_digest;
  image::Digest config_digest;
  std::uint64_t manifest_size = 0;
  std::string base_digest;
  std::vector<BuiltLayerInfo> layers;
  std::vector<std::string> outputs;
  std::vector<std::string> pushed;    // "registry/repository@sha256:…" per registry output
  std::vector<std::string> tags;      // "registry/repository:tag" per tag pushed, each output's own tag first
  int blobs_existing = 0;             // registry outputs: blobs the target already had,
  int blobs_mounted = 0;              // mounted from another repository,
  int blobs_uploaded = 0;             // or uploaded
  std::uint64_t bytes_uploaded = 0;
  int layers_built = 0;
  int layers_cached = 0;
  std::vector<std::string> excluded;  // dry run: paths .dockerignore keeps out of the context
  std::vector<secrets::Finding> secrets;  // files the COPY steps take that likely hold credentials (warned about)
  struct Attached {
    std::string artifact_type;  // "application/spdx+json", ...
    image::Digest digest;       // the artifact manifest's
  };
  std::vector<Attached> attached;  // SBOM and provenance, referrers of the image in the outputs that hold them
  struct NotAttached {
    std::string output;  // ImageLocation::str()
    std::string reason;  // "a docker-archive has no place for them", ...
  };
  std::vector<NotAttached> not_attached;  // outputs that got neither the SBOM nor the provenance asked for
  std::shared_ptr<const image::Image> image;  // the built image (not set by a dry run), e.g. for local-run
  // Whether the image's PATH finds its entrypoint's program; nullopt when the build read no base listing.
  std::optional<bool> entrypoint_found;
  PhaseTimes timings;  // wall time per phase (imagebuild/timings.h); phases that did not occur are 0
};

BuildResult run_build(const BuildRequest& request, Progress& progress);

// Opens an image from any location; `registries` is needed for registry locations. `platform` picks from an
// index; with `platform_required` (the user gave --platform) a single-platform image must be for it too.
// `on_fetch` sees the progress of the blobs a registry image downloads.
std::shared_ptr<const image::Image> open_image(const transports::ImageLocation& location,
                                               const image::Platform& platform, const store::BlobStore& store,
                                               registry::Registries* registries, bool platform_required = false,
                                               registry::BlobFetchProgress on_fetch = {});

}  // namespace trainpack::imagebuild
