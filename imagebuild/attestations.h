#pragma once
// The SBOM and provenance of one build's image (BuildRequest::sbom, ::provenance), as one step of the build: made
// once the image is assembled, from what the build recorded, never from a second read of what it made. The SBOM is
// assembled from parts kept in the cache's sboms/ area (store::CacheKind::kSboms): the image's package list by the
// inputs it depends on, each COPY layer's files by the layer's diff_id, the whole document by the image's digest;
// so a build whose code alone changed hashes the files of the one layer it made and reads no pip-step listing.
// The documents themselves are imagebuild/image_attestations.h's.
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imagebuild/build.h"
#include "imagebuild/image_attestations.h"
#include "imagebuild/installed_artifact.h"
#include "imagebuild/layer_stack.h"
#include "imagebuild/progress.h"
#include "image/image.h"
#include "layers/scanned_image.h"
#include "python/base_facts.h"
#include "store/cache_dir.h"

namespace trainpack::imagebuild {

// What the attestations describe: the image just assembled and how the build made it.
struct AttestedBuild {
  const image::Image& image;
  const std::string& base_digest;
  const std::string& created;  // RFC 3339: the image's own time
  LayerStack& stack;
  const image::ImageConfig& config;
  const std::vector<InstalledArtifact>& installed;  // by every pip step, in order
  // The base as the pip steps read it, and its Python under a config as they read it; asked for only when the
  // image's kept package list is missing.
  std::function<const layers::ScannedImage&()> base_filesystem;
  std::function<python::PythonFacts(const image::ImageConfig&)> python_facts;
};

class Attestations {
 public:
  // The request, `cache` and `progress` outlive this; the provenance's start time is now.
  Attestations(const BuildRequest& request, const store::CacheDir& cache, Progress& progress);

  // Whether the request asks for either.
  bool wanted() const;
  // The referrers the outputs get: the SBOM and the provenance statement asked for.
  std::vector<std::shared_ptr<const image::Image>> referrers(const AttestedBuild& build);

 private:
  std::string sbom_text(const AttestedBuild& build, std::string& unkept);
  std::optional<std::string> kept_sbom(const store::CacheArea& sboms, const std::string& name) const;
  sbom::Document sbom_document(const AttestedBuild& build);
  std::vector<sbom::Package> kept_image_packages(const AttestedBuild& build);
  std::vector<sbom::File> copied_files(const LayerStack& stack);
  std::vector<sbom::Package> image_packages_through(const AttestedBuild& build, std::size_t history_entries);
  provenance::Statement provenance_statement(const AttestedBuild& build) const;
  std::string image_name() const;

  const BuildRequest& req_;
  const store::CacheDir& cache_;
  Progress& progress_;
  std::time_t started_ = std::time(nullptr);
};

}  // namespace trainpack::imagebuild
