#include "imagebuild/pip_steps.h"

#include <system_error>

#include "layers/layer_tar_reader.h"
#include "python/base_facts.h"
#include "registry/registries.h"
#include "support/human.h"

namespace trainpack::imagebuild {
namespace fs = std::filesystem;

std::string pip_layer_instruction(const std::string& instruction, const std::string& what) {
  return what.empty() ? instruction : instruction + " # trainpack: " + what + " in a layer of its own";
}

PipSteps::PipSteps(const BuildRequest& request, const store::CacheDir& cache, const registry::BlobLocations& locations,
                   Progress& progress, Timings& timings, std::shared_ptr<const image::Image> base,
                   std::string base_digest)
    : req_(request), cache_(cache), progress_(progress), timings_(timings), base_(std::move(base)),
      base_digest_(std::move(base_digest)), steps_(cache) {
  if (req_.cache_repo && req_.registries)
    shared_ = std::make_unique<CacheRepo>(
        *req_.cache_repo, *req_.registries, cache_.blobs(), &locations,
        [this](const std::string& l) { progress_.line(l); }, [this](const std::string& l) { progress_.detail(l); });
}

PipSteps::~PipSteps() = default;

std::string PipSteps::key(const std::string& instruction, const LayerStack& stack,
                          const layers::LayerOptions& format) const {
  PipStepInputs inputs{base_digest_, {}, instruction, &req_.python, format};
  for (const image::AppendStep& step : stack.history())
    inputs.earlier_steps.push_back(step.created_by + (step.layer ? " " + step.layer->diff_id.str() : ""));
  return pip_step_key(inputs);
}

std::optional<PipStepResult> PipSteps::reuse(const std::string& instruction, const std::string& key,
                                             const std::vector<layers::LayerBlob>& earlier) {
  Timings::Scope reusing = timings_.scope(Phase::kPipCache);
  std::optional<PipStepResult> step = reuse_local(key, earlier);
  if (!step) step = reuse_shared(key);
  if (!step) return std::nullopt;
  installed_artifacts_.insert(installed_artifacts_.end(), step->installed.begin(), step->installed.end());
  say_when_listing_read(instruction, *step);
  return step;
}

// docker's rule for RUN: the same instruction on the same layers is not run again (see pip_step_cache.h).
std::optional<PipStepResult> PipSteps::reuse_local(const std::string& key,
                                                   const std::vector<layers::LayerBlob>& earlier) {
  std::optional<PipStepResult> cached = steps_.lookup(key);
  if (!cached) return std::nullopt;
  if (shared_) {  // the cache repository gets the listings: an entry whose files are gone is a miss
    try {
      for (PipLayer& layer : cached->layers) layer.read_entries();
    } catch (const Error&) {
      return std::nullopt;
    }
    to_share_.push_back({key, *cached, earlier});
  }
  progress_.line("pip step unchanged since it last ran: its layers are reused without asking the index "
                 "(--refresh-pip-steps resolves it again)");
  return cached;
}

// The same rule with what another runner stored in the cache repository; the layers' blobs stay there (the image
// mounts, relays or downloads them from it as an output needs).
std::optional<PipStepResult> PipSteps::reuse_shared(const std::string& key) {
  if (!shared_) return std::nullopt;
  std::optional<SharedPipStep> found = shared_->find_pip_step(key);
  if (!found) return std::nullopt;
  progress_.line("pip step found in the cache repository " + shared_->repo().name() +
                 ": its layers are reused without asking the index (--refresh-pip-steps resolves it again)");
  layer_sources_.push_back(found->artifact);
  found_shared_.push_back({key, found->step, {}});
  return std::move(found->step);
}

// A reused layer's listing stays in the pip-step cache until a later step or the SBOM reads it: -v says when.
void PipSteps::say_when_listing_read(const std::string& instruction, PipStepResult& step) {
  for (PipLayer& layer : step.layers) {
    if (!layer.deferred) continue;
    layer.deferred->on_read([this, said = pip_layer_instruction(instruction, layer.what)](std::size_t entries) {
      progress_.detail("read the listing of a reused pip layer (" + counted(entries, "entry", "entries") +
                       ") from the pip-step cache: " + said);
    });
  }
}

PipStepResult PipSteps::install(const gcloud::PipInstallStep& step, const image::ImageConfig& config,
                                LayerStack& stack) {
  if (!installer_) {
    fetch_shared_scans();
    installer_ = std::make_unique<PythonInstaller>(
        base_, cache_, req_.python, req_.mtime, [this](const std::string& line) { progress_.line(line); }, timings_,
        [this](const std::string& file, std::uint64_t bytes, bool finished) {
          if (finished) progress_.transfer_done("download " + file);
          else progress_.transfer("download " + file, "downloading " + file, bytes, 0);
        });
  }
  PipStepResult made = installer_->install(step, config, stack.entries());
  installed_artifacts_.insert(installed_artifacts_.end(), made.installed.begin(), made.installed.end());
  return made;
}

void PipSteps::remember(const std::string& key, const PipStepResult& step, std::vector<layers::LayerBlob> earlier) {
  try {
    Timings::Scope remembering = timings_.scope(Phase::kPipCache);
    steps_.remember(key, step);
  } catch (const std::exception& e) {
    // Only a cache: the image is right either way, the next build runs the step again.
    progress_.line(std::string("could not remember the pip step for the next build: ") + e.what());
  }
  if (shared_) to_share_.push_back({key, step, std::move(earlier)});
}

void PipSteps::share(const image::Image& image) {
  if (!shared_) return;
  for (const StepToShare& step : to_share_) shared_->share_pip_step(step.key, step.step, step.earlier, image);
  if (installer_ && base_scan_dirs(true).empty())
    shared_->share_scans(CacheRepo::facts_tag(base_digest_, python_scan_name()), base_scan_dirs(false));
  // A step found there is remembered here too once its blobs are (an output that needed their bytes fetched them).
  for (const StepToShare& found : found_shared_) {
    bool local = true;
    for (const PipLayer& layer : found.step.layers)
      local = local && (!layer.blob || cache_.blobs().has(layer.blob->digest));
    try {
      if (local) steps_.remember(found.key, found.step);
    } catch (const std::exception& e) {
      progress_.line(std::string("could not remember the pip step for the next build: ") + e.what());
    }
  }
}

const layers::ScannedImage& PipSteps::base_filesystem() {
  if (installer_) return installer_->base_filesystem();
  if (!base_scan_) {
    fetch_shared_scans();  // a runner that reused every pip step from --cache-repo downloads no base layer either
    base_scan_ = std::make_unique<layers::ScannedImage>(base_, cache_, python_scan_selection());
  }
  return *base_scan_;
}

python::PythonFacts PipSteps::python_facts(const image::ImageConfig& config) {
  if (installer_) return installer_->python_facts(config);
  return python::read_python_facts(base_filesystem(), python::ImageConfigFacts::of(config), false);
}

const layers::ScannedImage* PipSteps::base_filesystem_if_read() const {
  return installer_ ? &installer_->base_filesystem() : base_scan_.get();
}

// Where the pip steps keep the scan of each base layer (python_installer.h); with `only_missing`, those not there yet.
std::vector<ScanDir> PipSteps::base_scan_dirs(bool only_missing) const {
  std::vector<ScanDir> dirs;
  const store::CacheArea scans = cache_.area(store::CacheKind::kScans);
  const std::vector<image::Digest> diff_ids = layers::layer_diff_ids(*base_);
  const image::Manifest manifest = base_->manifest();
  for (std::size_t i = 0; i < manifest.layers.size(); ++i) {
    const image::Descriptor& l = manifest.layers[i];
    const std::string key = layers::ScannedImage::scan_key(python_scan_name(), l.digest, diff_ids[i]);
    fs::path dir = scans.path_of(key);
    std::error_code ec;
    if (!only_missing || !scans.use(key) || !fs::exists(dir / "listing.json", ec)) dirs.push_back({l.digest, dir});
  }
  return dirs;
}

// Before a pip step runs: the base scans this cache lacks, from the cache repository (no base layer downloaded).
void PipSteps::fetch_shared_scans() {
  if (!shared_) return;
  std::vector<ScanDir> missing = base_scan_dirs(true);
  if (!missing.empty()) shared_->fetch_scans(CacheRepo::facts_tag(base_digest_, python_scan_name()), missing);
}

}  // namespace trainpack::imagebuild
