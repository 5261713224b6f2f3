#pragma once
// The pip steps of one build, as docker's build cache treats a RUN: a step whose inputs are unchanged (its key,
// imagebuild/pip_step_cache.h) is reused, from this cache or from the cache repository (--cache-repo,
// imagebuild/cache_repo.h), without asking the index; any other is installed (imagebuild/python_installer.h), and
// once its layers are written it is remembered for the next build and, after the outputs are written, shared through
// the cache repository. The build writes the layers and keeps the stack; this keeps what the steps installed and the
// base as they read it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imagebuild/build.h"
#include "imagebuild/cache_repo.h"
#include "imagebuild/installed_artifact.h"
#include "imagebuild/layer_stack.h"
#include "imagebuild/pip_layer.h"
#include "imagebuild/pip_step_cache.h"
#include "imagebuild/progress.h"
#include "imagebuild/python_installer.h"
#include "imagebuild/timings.h"
#include "image/image.h"
#include "layers/scanned_image.h"
#include "registry/blob_locations.h"
#include "store/cache_dir.h"

namespace trainpack::imagebuild {

// A pip layer's history entry: the step's instruction, with what a separate layer holds ("torch 2.1.0").
std::string pip_layer_instruction(const std::string& instruction, const std::string& what);

class PipSteps {
 public:
  // `base` is the opened base (`base_digest` its manifest's digest). The request, `cache`, `locations` (mount
  // sources for what the cache repository stores), `progress` and `timings` outlive this.
  PipSteps(const BuildRequest& request, const store::CacheDir& cache, const registry::BlobLocations& locations,
           Progress& progress, Timings& timings, std::shared_ptr<const image::Image> base, std::string base_digest);
  ~PipSteps();

  // The key of the step `instruction` on the layers of `stack`, new layers written with `format`.
  std::string key(const std::string& instruction, const LayerStack& stack, const layers::LayerOptions& format) const;
  // The step's layers (blobs set, listings deferred) when it ran before with the same key, here or on a runner
  // sharing the cache repository; nullopt otherwise. `earlier` are the blobs of the layers below it.
  std::optional<PipStepResult> reuse(const std::string& instruction, const std::string& key,
                                     const std::vector<layers::LayerBlob>& earlier);
  // Installs the step on the layers of `stack`, with the image config at that step: its layers' entries, no blobs.
  PipStepResult install(const gcloud::PipInstallStep& step, const image::ImageConfig& config, LayerStack& stack);
  // A step installed here, its layers written: kept for the next build, and with --cache-repo shared after the
  // outputs (share()) with `earlier`, the blobs of the layers below it.
  void remember(const std::string& key, const PipStepResult& step, std::vector<layers::LayerBlob> earlier);
  // --cache-repo: stores what the repository lacks (`image`, the built image, holds the blobs), and remembers here
  // the steps found there whose blobs are here now. After the outputs are written; never for a failed build.
  void share(const image::Image& image);

  // Whether the steps go through a cache repository (then a layer may be mounted from there rather than uploaded).
  bool shares() const { return shared_ != nullptr; }
  // What every step installed or reused, in order (for the SBOM and provenance).
  const std::vector<InstalledArtifact>& installed() const { return installed_artifacts_; }
  // The artifacts of steps found in the cache repository, which hold their layers' blobs (image::AppendSpec).
  const std::vector<std::shared_ptr<const image::Image>>& layer_sources() const { return layer_sources_; }
  // The base as the pip steps read it: the installer's scan when a step ran, else the same scan made (or read from
  // its cache) now.
  const layers::ScannedImage& base_filesystem();
  // The same, when something has read it already (nullptr otherwise): a warning never downloads a base.
  const layers::ScannedImage* base_filesystem_if_read() const;
  // The base's Python under `config`: the facts a step with that config read, else read now.
  python::PythonFacts python_facts(const image::ImageConfig& config);

 private:
  std::optional<PipStepResult> reuse_local(const std::string& key, const std::vector<layers::LayerBlob>& earlier);
  std::optional<PipStepResult> reuse_shared(const std::string& key);
  void say_when_listing_read(const std::string& instruction, PipStepResult& step);
  std::vector<ScanDir> base_scan_dirs(bool only_missing) const;
  void fetch_shared_scans();

  // A step to store in the cache repository, with the blobs of the layers below it.
  struct StepToShare {
    std::string key;
    PipStepResult step;
    std::vector<layers::LayerBlob> earlier;
  };

  const BuildRequest& req_;
  const store::CacheDir& cache_;
  Progress& progress_;
  Timings& timings_;
  std::shared_ptr<const image::Image> base_;
  const std::string base_digest_;
  PipStepCache steps_;
  std::unique_ptr<CacheRepo> shared_;
  std::vector<StepToShare> to_share_;
  std::vector<StepToShare> found_shared_;
  std::unique_ptr<PythonInstaller> installer_;
  std::unique_ptr<layers::ScannedImage> base_scan_;  // the base's scan when no step ran the installer
  std::vector<InstalledArtifact> installed_artifacts_;
  std::vector<std::shared_ptr<const image::Image>> layer_sources_;
};

}  // namespace trainpack::imagebuild
