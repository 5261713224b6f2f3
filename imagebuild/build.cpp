#include "imagebuild/build.h"

#include <ctime>

#include <nlohmann/json.hpp>

#include "imagebuild/cache_repo.h"
#include "imagebuild/identity.h"
#include "imagebuild/layer_stack.h"
#include "imagebuild/pip_step_cache.h"
#include "context/context_copy.h"
#include "context/dockerignore.h"
#include "image/appended_image.h"
#include "image/artifact_image.h"
#include "layers/entry_safety.h"
#include "layers/layer_cache.h"
#include "layers/layer_tar_reader.h"
#include "layers/rootfs_index.h"
#include "layers/scanned_image.h"
#include "layers/stacked_filesystem.h"
#include "layers/whiteouts.h"
#include "net/url.h"
#include "python/base_facts.h"
#include "registry/push_ahead.h"
#include "registry/pusher.h"
#include "registry/registries.h"
#include "store/cache_prune.h"
#include "store/sealed_text.h"
#include "transports/transport.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/human.h"
#include "support/paths.h"

namespace trainpack::imagebuild {
namespace fs = std::filesystem;
using layers::FileEntries;
using layers::FileEntry;
using layers::PathInfo;
using layers::RootfsIndex;
using nlohmann::json;

namespace {

std::string image_path(std::string_view absolute_or_relative_to_workdir) {
  std::string_view p = absolute_or_relative_to_workdir;
  if (p.starts_with('/')) return clean_path(p);
  return join_path(clean_path(gcloud::kWorkdir), clean_path(p));
}

// Adds every ancestor directory of `path` that `entries` lacks: with the attributes an earlier step of this build
// gave it, else as a root-owned 0755 directory (what an ordinary base has there, and what Docker creates).
void add_parent_dirs(FileEntries& entries, const RootfsIndex& index, const std::string& path) {
  std::string prefix;
  std::size_t start = 0;
  for (;;) {
    auto slash = path.find('/', start);
    if (slash == std::string::npos) return;
    prefix = path.substr(0, slash);
    start = slash + 1;
    bool present = false;
    for (const auto& e : entries) present = present || e.path == prefix;
    if (present) continue;
    if (const PathInfo* info = index.find(prefix)) {
      if (info->type != PathInfo::Type::kDirectory)
        throw Error("cannot create /" + path + ": /" + prefix + " in the image is not a directory");
      entries.push_back(FileEntry::directory(prefix, info->mode, info->uid, info->gid));
    } else {
      entries.push_back(FileEntry::directory(prefix, 0755));
    }
  }
}

// RUN mkdir -m 777 -p DIR...: Docker keeps the directories that exist and creates the rest, the named ones 0777
// (exactly: -m is not subject to the umask), missing parents 0755 (RUN's umask is 022).
//
// trainpack computes this without reading the base's layers, so a multi-GB base is never downloaded for it. It
// knows the directories its own earlier layers made (`index`) and assumes the base is an ordinary Linux root:
// every top-level directory gcloud names (/home) exists and is kept as it is, as are the mount points /dev, /proc
// and /sys that Docker's RUN would add to a base without them; deeper directories (/usr/app) are created, with
// their parents as 0755 root:root directories, the attributes every distribution gives /usr. On such a base the
// merged root filesystem is Docker's, entry for entry.
FileEntries run_mkdir_entries(const RootfsIndex& index, const std::vector<std::string>& dirs) {
  FileEntries entries;
  for (const auto& dir : dirs) {
    std::string target = index.resolve(dir);
    if (target.find('/') == std::string::npos) continue;  // a top-level directory: the base has it
    if (const PathInfo* info = index.find(target)) {
      if (info->type != PathInfo::Type::kDirectory)
        throw Error("RUN mkdir -p " + dir + " would fail: /" + target + " is not a directory",
                    "an earlier step put a file at that path");
      continue;
    }
    bool created = false;
    for (const auto& e : entries) created = created || e.path == target;
    if (!created) entries.push_back(FileEntry::directory(target, 0777));
  }
  FileEntries created = entries;
  for (const auto& e : created) add_parent_dirs(entries, index, e.path);
  return entries;
}

// Whether a base's history shows a Dockerfile `WORKDIR dir` (BuildKit's "WORKDIR /w", the classic builder's and
// buildah's "/bin/sh -c #(nop) WORKDIR /w"): every builder creates that directory, so the base has it.
bool history_made_workdir(const image::ImageConfig& config, const std::string& dir) {
  for (const json& entry : config.history()) {
    if (!entry.is_object()) continue;
    std::string created_by = image::string_member(entry, "created_by");
    for (const char* prefix : {"WORKDIR ", "/bin/sh -c #(nop) WORKDIR "})
      if (created_by == prefix + dir) return true;
  }
  return false;
}

// RUN rm -rf PATH: a whiteout. Without the base's listing trainpack cannot know whether PATH exists; a whiteout
// of a missing path changes nothing when the image is unpacked, so the result is the same either way.
FileEntries run_rm_entries(const RootfsIndex& index, const std::string& path) {
  std::string clean = clean_path(path);
  auto slash = clean.rfind('/');
  std::string parent = slash == std::string::npos ? "" : index.resolve(clean.substr(0, slash));
  std::string target = join_path(parent, slash == std::string::npos ? clean : clean.substr(slash + 1));
  FileEntries entries{FileEntry::whiteout(target)};
  add_parent_dirs(entries, index, target);
  return entries;
}

// COPY ["src", "dest"] with WORKDIR /usr/app. Directories on the way that exist keep their attributes.
FileEntries copy_entries(const RootfsIndex& index, const fs::path& context_dir, const context::DockerIgnore& ignore,
                         const std::string& src, const std::string& dest) {
  context::CopyOptions options;
  options.existing_dir = [&index](std::string_view path) -> std::optional<context::ExistingDir> {
    const PathInfo* info = index.find(path);
    if (!info || info->type != PathInfo::Type::kDirectory) return std::nullopt;
    return context::ExistingDir{info->mode, info->uid, info->gid};
  };
  return context::collect_copy(context_dir, src, index.resolve(image_path(dest)), ignore, options);
}

// What builds killed with SIGKILL left behind (temporary files and directories named for their owner process, see
// support/fs.h), in the cache and beside the outputs: removed when that process is gone. Returns how many.
int sweep_killed_builds(const BuildRequest& req, const store::CacheDir& cache) {
  int removed = cache.sweep_leftovers();
  std::error_code tmp_ec;
  removed += sweep_orphaned_temps(fs::temp_directory_path(tmp_ec));  // work directories of builds run as another user
  for (const transports::ImageLocation& out : req.outputs) {
    if (!transports::transport_of(out).local) continue;
    fs::path path = fs::absolute(out.path).lexically_normal();
    if (!path.has_filename()) path = path.parent_path();  // "out/"
    removed += sweep_orphaned_temps(path.parent_path());
  }
  return removed;
}

}  // namespace

namespace {

// An image that is not an index has one platform: a --platform the user asked for must be it.
std::shared_ptr<const image::Image> check_platform(std::shared_ptr<const image::Image> image,
                                                   const image::Platform& platform) {
  nlohmann::json config = image->config().document();
  nlohmann::json has = {{"os", image::string_member(config, "os")},
                        {"architecture", image::string_member(config, "architecture")}};
  if (config.contains("variant")) has["variant"] = config["variant"];
  if (platform.matches(has)) return image;
  std::string offered = has.value("os", "?") + "/" + has.value("architecture", "?");
  if (has.contains("variant") && has["variant"].is_string()) offered += "/" + has["variant"].get<std::string>();
  throw Error(image->describe() + " is for " + offered + ", not " + platform.str(),
              "it is a single-platform image: pass --platform=" + offered + " or choose a base for " + platform.str());
}

}  // namespace

std::shared_ptr<const image::Image> open_image(const transports::ImageLocation& loc,
                                               const image::Platform& platform, const store::BlobStore& store,
                                               registry::Registries* registries, bool platform_required,
                                               registry::BlobFetchProgress on_fetch) {
  std::shared_ptr<const image::Image> image =
      transports::open_image(loc, {platform, store, registries, std::move(on_fetch)});
  return platform_required ? check_platform(std::move(image), platform) : image;
}

namespace {

std::string short_hex(const image::Digest& d) { return d.hex().substr(0, 12); }

std::string short_digest(const image::Digest& d) { return d.algorithm() + ":" + d.hex().substr(0, 12); }

// One progress row per blob of a push (or of a push begun during the build).
std::function<void(const registry::BlobEvent&)> blob_rows(Progress& progress) {
  return [&progress](const registry::BlobEvent& e) {
    using K = registry::BlobEvent::Kind;
    std::string key = e.digest.str();
    std::string size = human_bytes(e.size);
    switch (e.kind) {
      case K::kExists: progress.row(key, "exists    " + short_hex(e.digest) + "  " + size, true); break;
      case K::kMounted:
        progress.row(key, "mounted   " + short_hex(e.digest) + "  " + size + "  from " + e.from, true);
        break;
      case K::kUploading: progress.row(key, "uploading " + short_hex(e.digest) + "  " + size, false); break;
      case K::kUploadProgress:
        progress.row(key, "uploading " + short_hex(e.digest) + "  " + human_bytes(e.sent) + " / " + size, false);
        break;
      case K::kUploaded: progress.row(key, "uploaded  " + short_hex(e.digest) + "  " + size, true); break;
    }
  };
}

// Blobs are mounted from where earlier pushes put them (`locations`), and the manifests this cache made (`store`)
// vouch for the blobs of a tag they are under.
registry::PushOptions push_options(const BuildRequest& req, Progress& progress,
                                   const registry::BlobLocations& locations, const store::BlobStore& store) {
  registry::PushOptions options;
  options.jobs = req.jobs;
  options.locations = &locations;
  options.store = &store;
  options.on_blob = blob_rows(progress);
  return options;
}

// The base layers whose bytes this build passes on: all of them for a local output (it holds every blob), else those
// already here (a push uploads them). A layer a registry push mounts or finds there, or relays from the base's
// registry, never passes through here whole; the Python steps read (and so check) the layers they scan.
std::vector<image::Digest> base_layers_passed_on(const BuildRequest& req, const image::Image& base,
                                                 const image::Manifest& manifest) {
  bool file_output = false;
  for (const transports::ImageLocation& out : req.outputs) file_output |= transports::transport_of(out).local;
  std::vector<image::Digest> out;
  for (const image::Descriptor& l : manifest.layers)
    if (file_output || base.has_local_blob(l.digest)) out.push_back(l.digest);
  return out;
}

// Whether an entry of a layer after the last pip step may change what sbom/image_packages finds: os-release, an OS
// package database, a Python distribution's record (dist-info, egg-info, egg, egg-link), a .pth file (it adds to
// sys.path), conda's records, or a whiteout (which may hide any of them).
bool may_change_packages(const FileEntry& e) {
  for (std::string_view prefix : {"var/lib/dpkg/", "lib/apk/db/", "etc/os-release", "usr/lib/os-release"})
    if (e.path.starts_with(prefix)) return true;
  for (std::string_view part : path_components(e.path))
    if (part.starts_with(layers::kWhiteoutPrefix) || part == "conda-meta" || part.ends_with(".dist-info") ||
        part.ends_with(".egg-info") || part.ends_with(".egg") || part.ends_with(".egg-link") || part.ends_with(".pth"))
      return true;
  return false;
}

// A layer with at least this much content shows its progress while it is written.
constexpr std::uint64_t kLargeLayerBytes = 64u << 20;

// What a build reads from and keeps in the cache, open (so registered as in use) for the whole build.
struct BuildCaches {
  explicit BuildCaches(const std::filesystem::path& root)
      : dir(root), blobs(dir.blobs()), layers(blobs, dir.area(store::CacheKind::kLayers)), pip_steps(dir),
        blob_locations(dir.area(store::CacheKind::kBlobLocations)) {}
  store::CacheDir dir;
  const store::BlobStore& blobs;
  layers::LayerCache layers;
  PipStepCache pip_steps;
  registry::BlobLocations blob_locations;
};

// A value kept sealed in `area` under `name` (store/sealed_text.h): `from_json` of it when it is there and whole;
// nullopt when it is not there, or is damaged or of another shape (then discarded with a warning naming `what`).
template <typename FromJson>
auto read_kept(const store::CacheArea& area, const std::string& name, const std::string& what, FromJson from_json)
    -> std::optional<decltype(from_json(json()))> {
  std::error_code ec;
  if (!area.use(name) || !fs::is_regular_file(area.path_of(name), ec)) return std::nullopt;
  try {
    const std::string file = read_file(area.path_of(name));  // unseal's view points into it
    if (std::optional<std::string_view> text = store::unseal(file)) return from_json(json::parse(*text));
  } catch (const std::exception&) {  // unreadable, or not what from_json reads
  }
  area.discard(name, "it is not " + what + " this trainpack kept");
  return std::nullopt;
}

void keep(const store::CacheArea& area, const std::string& name, const json& value) {
  std::error_code ec;
  fs::create_directories(area.dir(), ec);
  write_file_atomic(area.path_of(name), store::seal(value.dump()));
}

// One build in progress: the base, the config being edited, and the layers made so far.
class Build {
 public:
  Build(const BuildRequest& req, Progress& progress, Timings::Clock::time_point start)
      : timings_(start),
        req_(req),
        progress_(progress),
        cache_(req.cache_dir) {
    // A damaged cache entry is a miss, made again: said as the build's warnings are.
    cache_.dir.on_warning([&progress = progress_](const std::string& text) { progress.warning(text); });
    if (req.cache_repo && req.registries)
      shared_ = std::make_unique<CacheRepo>(
          *req.cache_repo, *req.registries, cache_.blobs, &cache_.blob_locations,
          [this](const std::string& l) { log(l); }, [this](const std::string& l) { progress_.detail(l); });
  }

  void log(const std::string& line) { progress_.line(line); }
  void check_context_secrets();
  int sweep_leftovers() const { return sweep_killed_builds(req_, cache_.dir); }
  // After a build: least recently used entries removed while the cache exceeds its cap (BuildRequest::cache_max_size).
  void keep_cache_under_cap();
  void begin_pushes();
  void open_base();
  void run_step(const gcloud::BuildStep& step);
  BuildResult finish_dry_run();
  // Assembles the image from the base and the layers made; checks the base layers passed on.
  void assemble();
  void write_outputs();
  // --cache-repo: stores what the repository lacks, after the outputs are written (never for a failed build).
  void share_cache();
  // The SBOM and provenance the outputs get (BuildRequest::sbom, ::provenance), made once the image is assembled.
  void attest();
  BuildResult result() && { return std::move(result_); }
  Timings& timings() { return timings_; }

 private:
  void run_pip_step(const std::string& instruction, const gcloud::PipInstallStep& step);
  FileEntries run_mkdir_step(const gcloud::MkdirStep& step);
  FileEntries missing_workdir_entries();
  void check_entrypoint_program(const std::vector<std::string>& argv);
  bool reuse_pip_step(const std::string& instruction, const std::string& key);
  bool reuse_shared_pip_step(const std::string& instruction, const std::string& key);
  void record_cached_pip_step(const std::string& instruction, CachedPipStep step);
  std::vector<ScanDir> base_scan_dirs(bool only_missing) const;
  void fetch_shared_scans();
  std::string pip_step_key(const std::string& instruction) const;
  void add_layer(const std::string& instruction, FileEntries entries,
                 LayerStack::Maker maker = LayerStack::Maker::kOther);
  void report_layer(const std::string& instruction, const layers::LayerBlob& blob, bool from_cache,
                    std::size_t entries);
  void offer_to_pushes(const layers::LayerBlob& blob);
  void plan_layer(const std::string& instruction, FileEntries entries, LayerStack::Maker maker);
  bool registry_outputs_have(const image::Digest& digest);
  void list_planned_files(const std::vector<std::string>& files);
  layers::LayerOptions layer_format() const;
  layers::LayerOptions layer_options(const std::string& instruction, const FileEntries& entries);
  void write_output(const transports::ImageLocation& out);
  void record_push(const registry::PushResult& pushed);
  void record_attached(const transports::ImageLocation& out);
  void record_not_attached(const transports::ImageLocation& out);
  bool has_pip_steps() const;
  bool outputs_take_attachments() const;
  const layers::ScannedImage& base_python_filesystem();
  std::string sbom_text();
  sbom::Document sbom_document();
  std::vector<sbom::Package> kept_image_packages();
  std::vector<sbom::File> copied_files();
  std::vector<sbom::Package> image_packages_through(std::size_t history_entries);
  provenance::Statement provenance_statement() const;
  std::string image_name() const;

  Timings timings_;
  const BuildRequest& req_;
  Progress& progress_;
  BuildCaches cache_;
  // --cache-repo: the repository, the pip steps to store there (with the build's layers before each), and those
  // found there (remembered locally once their blobs are here).
  struct PipStepToShare {
    std::string key;
    CachedPipStep step;
    std::vector<layers::LayerBlob> earlier;
  };
  std::unique_ptr<CacheRepo> shared_;
  std::vector<PipStepToShare> to_share_;
  std::vector<PipStepToShare> shared_hits_;
  std::shared_ptr<const image::Image> base_;
  image::Manifest base_manifest_;
  image::ImageConfig config_;
  std::optional<context::DockerIgnore> ignore_;
  // The layers this build made. The base's layers are not listed for the non-pip steps (see run_mkdir_entries; only
  // a WorkingDir no WORKDIR of the base made is looked up, missing_workdir_entries), so a build that only copies
  // code reads no base layer bytes; pip steps read the base's Python (python_steps.h).
  LayerStack stack_;
  std::unique_ptr<PythonInstaller> python_;
  std::vector<InstalledArtifact> installed_;  // by every pip step, in order (for the SBOM and provenance)
  std::unique_ptr<layers::ScannedImage> base_scan_;  // the base as the SBOM reads it when no pip step ran here
  std::vector<std::shared_ptr<const image::Image>> referrers_;
  std::int64_t started_ = std::time(nullptr);
  image::AppendSpec spec_;
  std::shared_ptr<const image::AppendedImage> image_;
  BuildResult result_;
  // Pushes begun with the build, by output (registry/push_ahead.h); last, so they end before what they use.
  std::map<std::string, std::unique_ptr<registry::PushAhead>> ahead_;
};

// Each registry output's push starts now: its token, its tag, upload sessions; then every layer as it is made.
void Build::begin_pushes() {
  if (req_.dry_run || !req_.registries) return;
  for (const transports::ImageLocation& out : req_.outputs) {
    if (!out.is_registry() || ahead_.count(out.str())) continue;
    registry::Reference target = out.registry_reference();
    registry::PushAheadOptions options;
    options.jobs = req_.jobs;
    options.locations = &cache_.blob_locations;
    options.store = &cache_.blobs;
    options.on_blob = blob_rows(progress_);
    ahead_[out.str()] = std::make_unique<registry::PushAhead>(req_.registries->client(target.registry), target,
                                                              std::move(options));
  }
}

// A layer goes to the pushes begun as soon as it is made. Not with --cache-repo: a later pip step found there may
// hold this layer too (the layers before it), and the push then mounts it from there rather than upload it.
void Build::offer_to_pushes(const layers::LayerBlob& blob) {
  if (shared_) return;
  image::Descriptor layer{std::string(layers::layer_media_type(req_.compression)), blob.digest, blob.size, {}, {}, {}};
  for (auto& [output, push] : ahead_) push->offer(layer);
}

void Build::open_base() {
  Timings::Scope opening = timings_.scope(Phase::kBase);
  // A base blob is downloaded only when a pip step lists it (or a file output, or local-run's unpacking, needs it):
  // a row while it comes. The base outlives this build (local-run unpacks the image after it), so the row goes to
  // the caller's Progress, never through this Build.
  auto on_fetch = [&progress = progress_](const image::Digest& digest, std::uint64_t done, std::uint64_t total,
                                          bool finished) {
    std::string key = "fetch " + digest.str();
    if (finished) progress.transfer_done(key);
    else progress.transfer(key, "downloading " + short_hex(digest) + " of the base", done, total);
  };
  base_ = open_image(req_.base_location, req_.platform, cache_.blobs, req_.registries, req_.platform_required,
                     on_fetch);
  base_manifest_ = base_->manifest();
  config_ = base_->config();
  result_.base_digest = base_->manifest_digest().str();
  gcloud::check_runs_as_root(config_.user(), req_.steps);
  log("base " + req_.base_name + " " + result_.base_digest + " (" +
      counted(base_manifest_.layers.size(), "layer", "layers") + ")");
  for (const auto& l : base_manifest_.layers)
    result_.layers.push_back({"base", "base", l.digest, {}, l.size, l.media_type, 0, {}, {}});
  spec_.created = image::rfc3339_utc(req_.mtime);
  spec_.layer_media_type = std::string(layers::layer_media_type(req_.compression));
}

// Before the base is read: the files the COPY steps take from the context (as .dockerignore leaves it) that likely
// hold credentials, one warning each, or with --fail-on-secrets the build's error, before anything is pushed.
void Build::check_context_secrets() {
  Timings::Scope listing = timings_.scope(Phase::kLayers);  // listing the context belongs to making its layers
  ignore_ = context::DockerIgnore::load(req_.package_dir);
  std::map<std::string, secrets::Finding> found;  // by context path: COPY . takes requirements.txt again
  for (const gcloud::BuildStep& step : req_.steps) {
    const auto* copy = std::get_if<gcloud::CopyStep>(&step.action);
    if (!copy) continue;
    FileEntries entries = context::collect_copy(req_.package_dir, copy->src, image_path(copy->dest), *ignore_);
    for (secrets::Finding& f : secrets::find_credentials(entries, req_.package_dir, image_path(".")))
      found.try_emplace(f.context_path, std::move(f));
  }
  std::string listed;
  for (auto& [path, f] : found) {
    listed += (listed.empty() ? "" : ", ") + path + " (" + f.kind + ")";
    if (!req_.fail_on_secrets)
      progress_.warning(path + " in the package path looks like " + f.kind + "; the image holds it as /" +
                        f.image_path + " (a .dockerignore entry leaves it out; --fail-on-secrets stops such builds)");
    result_.secrets.push_back(std::move(f));
  }
  if (req_.fail_on_secrets && !found.empty())
    throw Error("the package path holds files that look like credentials: " + listed,
                "leave them out of the image with .dockerignore entries, or move them out of the package path");
}

// One layer (or a config-only history entry when `entries` is empty) for an instruction.
void Build::add_layer(const std::string& instruction, FileEntries entries, LayerStack::Maker maker) {
  if (entries.empty()) return stack_.append(instruction, std::nullopt, {}, maker);
  Timings::Scope writing = timings_.scope(Phase::kLayers);
  if (req_.dry_run) return plan_layer(instruction, std::move(entries), maker);
  layers::LayerOptions options = layer_options(instruction, entries);
  layers::BuiltLayer built = layers::build_layer(cache_.blobs, cache_.layers, std::move(entries), options);
  progress_.transfer_done(instruction);
  report_layer(instruction, built.blob, built.from_cache, built.entries.size());
  stack_.append(instruction, built.blob, std::move(built.entries), maker);
}

// A layer joins the image: its blob is offered to the pushes under way, and the result lists it.
void Build::report_layer(const std::string& instruction, const layers::LayerBlob& blob, bool from_cache,
                         std::size_t entries) {
  offer_to_pushes(blob);
  (from_cache ? result_.layers_cached : result_.layers_built)++;
  result_.layers.push_back({instruction, from_cache ? "cached" : "built", blob.digest, blob.diff_id, blob.size,
                            std::string(layers::layer_media_type(req_.compression)), entries, {}, {}});
  log(std::string(from_cache ? "reused " : "built  ") + short_digest(blob.digest) + " " + human_bytes(blob.size) +
      "  " + instruction);
}

// The mtime and compression of new layers, which decide their bytes.
layers::LayerOptions Build::layer_format() const {
  layers::LayerOptions options;
  options.mtime = req_.mtime;
  options.compression = req_.compression;
  options.gzip = req_.gzip;
  options.zstd = req_.zstd;
  return options;
}

// How new layers are written; a large one shows its progress (the layer cache may spare writing it).
layers::LayerOptions Build::layer_options(const std::string& instruction, const FileEntries& entries) {
  layers::LayerOptions options = layer_format();
  std::uint64_t bytes = 0;
  for (const FileEntry& e : entries) bytes += e.size;
  if (bytes < kLargeLayerBytes) return options;
  std::string label = "writing " + (instruction.size() > 60 ? instruction.substr(0, 57) + "..." : instruction);
  options.on_progress = [this, instruction, label](std::uint64_t done, std::uint64_t total) {
    progress_.transfer(instruction, label, done, total);
  };
  return options;
}

// A dry run lists the layer instead of building it: whether the layer cache has it (its fingerprint, as a build
// would look it up) and whether every registry output has its blob already.
void Build::plan_layer(const std::string& instruction, FileEntries entries, LayerStack::Maker maker) {
  FileEntries sorted = entries;
  layers::sort_and_check_entries(sorted);
  BuiltLayerInfo info{instruction, "planned", {}, {}, 0, "", entries.size(), "build", {}};
  for (const FileEntry& e : sorted) info.files.push_back(e.path);
  std::string fingerprint = layers::LayerCache::fingerprint(sorted, layer_format());
  if (std::optional<layers::LayerBlob> cached = cache_.layers.lookup(fingerprint)) {
    info = {instruction, "planned", cached->digest, cached->diff_id, cached->size,
            std::string(layers::layer_media_type(req_.compression)), entries.size(), "cached", std::move(info.files)};
    if (registry_outputs_have(cached->digest)) info.plan = "in registry";
  }
  static const std::map<std::string, std::string> kVerbs = {
      {"build", "would build"},
      {"cached", "would reuse from the layer cache"},
      {"in registry", "would find in the registry"}};
  log(kVerbs.at(info.plan) + " a layer of " + counted(entries.size(), "entry", "entries") + "  " + instruction);
  list_planned_files(info.files);
  result_.layers.push_back(std::move(info));
  stack_.append(instruction, std::nullopt, std::move(entries), maker);
}

// A planned layer's paths under its line: the first few, every one with --verbose (--format=json lists them all).
void Build::list_planned_files(const std::vector<std::string>& files) {
  constexpr std::size_t kShown = 20;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (i < kShown) log("    /" + files[i]);
    else progress_.detail("    /" + files[i]);
  }
  if (files.size() > kShown && !progress_.verbose())
    log("    ... and " + std::to_string(files.size() - kShown) + " more (--verbose lists them)");
}

// Whether there is a registry output and each has the blob (a HEAD, with pull access: a dry run asks no push
// rights). A registry that cannot be asked counts as not having it; the dry run goes on.
bool Build::registry_outputs_have(const image::Digest& digest) {
  bool any = false;
  for (const transports::ImageLocation& out : req_.outputs) {
    if (!out.is_registry() || !req_.registries) continue;
    registry::Reference target = out.registry_reference();
    net::HttpRequest head;
    head.method = "HEAD";
    head.url = "/v2/" + target.repository + "/blobs/" + digest.str();
    head.follow_redirects = false;
    try {
      net::HttpResponse r =
          req_.registries->client(target.registry).send(head, {registry::pull_scope(target.repository)});
      if (r.status != 200 && (r.status < 300 || r.status >= 400)) return false;
    } catch (const Error& e) {
      log("could not ask " + target.name() + " for " + short_digest(digest) + ": " + e.what());
      return false;
    }
    any = true;
  }
  return any;
}

void Build::run_step(const gcloud::BuildStep& step) {
  // Listing a COPY's context belongs to making its layer; a pip step charges its own phases (python_steps.cpp).
  std::optional<Timings::Scope> layer_step;
  if (!std::holds_alternative<gcloud::PipInstallStep>(step.action)) layer_step.emplace(timings_, Phase::kLayers);
  std::visit(gcloud::StepVisitor{
                 [&](const gcloud::MkdirStep& s) { add_layer(step.instruction, run_mkdir_step(s)); },
                 [&](const gcloud::WorkdirStep& s) {
                   config_.set_working_dir(s.dir);
                   add_layer(step.instruction, {});
                 },
                 [&](const gcloud::EnvStep& s) {
                   config_.set_env(s.key, s.value);
                   add_layer(step.instruction, {});
                 },
                 [&](const gcloud::RemovePathStep& s) {
                   add_layer(step.instruction, run_rm_entries(stack_.index(), s.path));
                 },
                 [&](const gcloud::CopyStep& s) {
                   add_layer(step.instruction,
                             copy_entries(stack_.index(), req_.package_dir, *ignore_, s.src, s.dest),
                             LayerStack::Maker::kCopy);
                 },
                 [&](const gcloud::EntrypointStep& s) {
                   check_entrypoint_program(s.argv);
                   config_.set_entrypoint(s.argv);  // a Dockerfile ENTRYPOINT resets the inherited CMD
                   add_layer(step.instruction, {});
                 },
                 [&](const gcloud::PipInstallStep& s) { run_pip_step(step.instruction, s); },
             },
             step.action);
}

// RUN mkdir in the config's working directory: that directory when it is missing, then what mkdir makes (which
// keeps a directory the first part made: `mkdir -p` changes no mode of a directory that exists).
FileEntries Build::run_mkdir_step(const gcloud::MkdirStep& step) {
  FileEntries entries = missing_workdir_entries();
  if (entries.empty()) return run_mkdir_entries(stack_.index(), step.dirs);
  RootfsIndex with_workdir = stack_.index();
  with_workdir.apply(entries);
  for (FileEntry& made : run_mkdir_entries(with_workdir, step.dirs))
    if (std::none_of(entries.begin(), entries.end(), [&made](const FileEntry& e) { return e.path == made.path; }))
      entries.push_back(std::move(made));
  return entries;
}

// A RUN runs in the config's WorkingDir, which docker's builders create when it is missing (BuildKit's runc
// executor: MkdirAllAndChown(cwd, 0755, the RUN's user); the classic builder: 0755 root:root when it starts the
// container), so that RUN's layer holds it. A base is known to have its WorkingDir from a Dockerfile WORKDIR in its
// history; otherwise its layers are listed to know (downloaded unless their listing is cached).
FileEntries Build::missing_workdir_entries() {
  const std::string workdir = config_.working_dir();
  const std::string dir = clean_path(workdir);
  const RootfsIndex& own = stack_.index();
  if (dir.empty() || own.find(own.resolve(dir)) || history_made_workdir(base_->config(), workdir)) return {};
  const RootfsIndex& base = base_python_filesystem().index();
  const std::string target = base.resolve(dir);
  if (const PathInfo* info = base.find(target)) {
    if (info->type != PathInfo::Type::kDirectory)
      throw Error("the base image's WorkingDir " + workdir + " is not a directory, so docker's build cannot run "
                  "gcloud's first RUN there", "build on a base whose WorkingDir is a directory");
    return {};
  }
  FileEntries entries{FileEntry::directory(target, 0755)};
  add_parent_dirs(entries, base, target);
  return entries;
}

// gcloud's ENTRYPOINT starts `python` (`python3` on Vertex prebuilt images) through the image's PATH. docker builds
// an image whose base lacks it all the same (the build never runs it), and so does this one, with a warning when
// the base's listing is at hand (a pip step or the WorkingDir read it): a multi-GB base is not downloaded for a
// warning, and local-run says the same when the container cannot start.
void Build::check_entrypoint_program(const std::vector<std::string>& argv) {
  const layers::ScannedImage* base = python_ ? &python_->base_filesystem() : base_scan_.get();
  if (argv.empty() || base == nullptr) return;
  std::vector<std::string> env = config_.env().entries();
  result_.entrypoint_found = !python::find_command(*base, env, argv[0]).empty();
  if (*result_.entrypoint_found) return;
  std::string path = config_.env().has("PATH") ? config_.env().value("PATH") : "Docker's default";
  progress_.warning("the image's entrypoint program " + argv[0] + " is not on the base image's PATH (" + path +
                    "): the image is built as docker builds it, but its container cannot start (use a base that "
                    "has " + argv[0] + ", e.g. Debian's python-is-python3 package)");
}

std::string pip_layer_instruction(const std::string& instruction, const std::string& what) {
  return what.empty() ? instruction : instruction + " # trainpack: " + what + " in a layer of its own";
}

void Build::run_pip_step(const std::string& instruction, const gcloud::PipInstallStep& step) {
  bool cacheable = !req_.dry_run;
  std::string key = cacheable ? pip_step_key(instruction) : std::string();
  std::vector<layers::LayerBlob> earlier = stack_.blobs();
  if (cacheable && !req_.refresh_pip_steps &&
      (reuse_pip_step(instruction, key) || reuse_shared_pip_step(instruction, key)))
    return;
  if (!python_) {
    fetch_shared_scans();
    python_ = std::make_unique<PythonInstaller>(
        base_, cache_.dir, req_.python, req_.mtime, [this](const std::string& line) { log(line); },
        timings_, [this](const std::string& file, std::uint64_t bytes, bool finished) {
          if (finished) progress_.transfer_done("download " + file);
          else progress_.transfer("download " + file, "downloading " + file, bytes, 0);
        });
  }
  // Each layer's entries stay in the stack (its history entries from `first` on); the cache entries read them there.
  PipStepOutcome outcome = python_->install(step, config_, stack_.entries());
  installed_.insert(installed_.end(), outcome.installed.begin(), outcome.installed.end());
  const std::size_t first = stack_.size();
  for (PipLayer& layer : outcome.layers)
    add_layer(pip_layer_instruction(instruction, layer.what), std::move(layer.entries), LayerStack::Maker::kPip);
  if (!cacheable) return;
  std::vector<PipLayerMade> listed;
  for (std::size_t i = 0; i < outcome.layers.size(); ++i) {
    const LayerStack::Layer& made = stack_[first + i];
    listed.push_back({outcome.layers[i].what, made.blob, &made.entries});
  }
  try {
    Timings::Scope remembering = timings_.scope(Phase::kPipCache);
    cache_.pip_steps.remember(key, listed, outcome.installed);
  } catch (const std::exception& e) {
    // Only a cache: the image is right either way, the next build runs the step again.
    log(std::string("could not remember the pip step for the next build: ") + e.what());
  }
  if (!shared_) return;
  CachedPipStep shared{{}, std::move(outcome.installed)};
  for (const PipLayerMade& m : listed) shared.layers.push_back({m.what, m.blob, *m.entries, nullptr});
  to_share_.push_back({key, std::move(shared), std::move(earlier)});
}

// docker's rule for RUN: the same instruction on the same layers is not run again (see pip_step_cache.h).
bool Build::reuse_pip_step(const std::string& instruction, const std::string& key) {
  Timings::Scope reusing = timings_.scope(Phase::kPipCache);
  std::optional<CachedPipStep> cached = cache_.pip_steps.lookup(key);
  if (!cached) return false;
  if (shared_) {  // the cache repository gets the listings: an entry whose files are gone is a miss
    try {
      for (CachedPipLayer& layer : cached->layers) layer.read_entries();
    } catch (const Error&) {
      return false;
    }
    to_share_.push_back({key, *cached, stack_.blobs()});
  }
  log("pip step unchanged since it last ran: its layers are reused without asking the index "
      "(--refresh-pip-steps resolves it again)");
  record_cached_pip_step(instruction, std::move(*cached));
  return true;
}

// The same rule with what another runner stored in the cache repository; the layers' blobs stay there (the image
// mounts, relays or downloads them from it as an output needs).
bool Build::reuse_shared_pip_step(const std::string& instruction, const std::string& key) {
  if (!shared_) return false;
  Timings::Scope reusing = timings_.scope(Phase::kPipCache);
  std::optional<SharedPipStep> found = shared_->find_pip_step(key);
  if (!found) return false;
  log("pip step found in the cache repository " + shared_->repo().name() +
      ": its layers are reused without asking the index (--refresh-pip-steps resolves it again)");
  spec_.layer_sources.push_back(found->artifact);
  shared_hits_.push_back({key, found->step, {}});
  record_cached_pip_step(instruction, std::move(found->step));
  return true;
}

void Build::record_cached_pip_step(const std::string& instruction, CachedPipStep step) {
  installed_.insert(installed_.end(), step.installed.begin(), step.installed.end());
  for (CachedPipLayer& layer : step.layers) {
    std::string layer_instruction = pip_layer_instruction(instruction, layer.what);
    if (!layer.blob) {
      stack_.append(layer_instruction, std::nullopt, {}, LayerStack::Maker::kPip);
      continue;
    }
    report_layer(layer_instruction, *layer.blob, true, layer.entry_count());
    if (!layer.deferred) {
      stack_.append(layer_instruction, *layer.blob, std::move(layer.entries), LayerStack::Maker::kPip);
      continue;
    }
    layer.deferred->on_read([this, layer_instruction](std::size_t entries) {
      progress_.detail("read the listing of a reused pip layer (" + counted(entries, "entry", "entries") +
                       ") from the pip-step cache: " + layer_instruction);
    });
    stack_.append(layer_instruction, *layer.blob, std::move(layer.deferred));
  }
}

// Where the pip steps keep the scan of each base layer (python_steps.h); with `only_missing`, those not there yet.
std::vector<ScanDir> Build::base_scan_dirs(bool only_missing) const {
  std::vector<ScanDir> dirs;
  const store::CacheArea scans = cache_.dir.area(store::CacheKind::kScans);
  const std::vector<image::Digest> diff_ids = layers::layer_diff_ids(*base_);
  for (std::size_t i = 0; i < base_manifest_.layers.size(); ++i) {
    const image::Descriptor& l = base_manifest_.layers[i];
    const std::string key = layers::ScannedImage::scan_key(python_scan_name(), l.digest, diff_ids[i]);
    fs::path dir = scans.path_of(key);
    std::error_code ec;
    if (!only_missing || !scans.use(key) || !fs::exists(dir / "listing.json", ec)) dirs.push_back({l.digest, dir});
  }
  return dirs;
}

// Before a pip step runs: the base scans this cache lacks, from the cache repository (no base layer downloaded).
void Build::fetch_shared_scans() {
  if (!shared_) return;
  std::vector<ScanDir> missing = base_scan_dirs(true);
  if (!missing.empty()) shared_->fetch_scans(CacheRepo::facts_tag(result_.base_digest, python_scan_name()), missing);
}

std::string Build::pip_step_key(const std::string& instruction) const {
  PipStepInputs inputs{result_.base_digest, {}, instruction, &req_.python, layer_format()};
  for (const image::AppendStep& step : stack_.history())
    inputs.earlier_steps.push_back(step.created_by + (step.layer ? " " + step.layer->diff_id.str() : ""));
  return imagebuild::pip_step_key(inputs);
}

BuildResult Build::finish_dry_run() {
  result_.excluded = context::list_excluded(req_.package_dir, *ignore_);
  for (const auto& path : result_.excluded) log("excluded by .dockerignore: " + path);
  return std::move(result_);
}

// Charged to output: assembling is cheap, and checking the base layers passed on reads (downloads, for a file
// output) their bytes, which only outputs need.
void Build::assemble() {
  Timings::Scope output = timings_.scope(Phase::kOutput);
  for (const auto& [key, value] : req_.labels) config_.set_label(key, value);
  spec_.steps = stack_.history();
  spec_.config = config_;
  spec_.manifest_annotations = {{"org.opencontainers.image.base.name", req_.base_name},
                                {"org.opencontainers.image.base.digest", result_.base_digest}};
  for (const auto& [key, value] : req_.annotations) spec_.manifest_annotations[key] = value;
  image_ = std::make_shared<image::AppendedImage>(base_, std::make_shared<store::BlobStore>(cache_.blobs), spec_);
  result_.image = image_;
  result_.manifest_digest = image_->manifest_digest();
  result_.manifest_size = image_->raw_manifest().size();
  result_.config_digest = image_->manifest().config.digest;
  // After the steps: layers their base scan listed are already known safe and are not read a second time.
  layers::check_layers_are_safe(*base_, base_layers_passed_on(req_, *base_, base_manifest_),
                                cache_.dir.area(store::CacheKind::kCheckedLayers));
}

bool Build::has_pip_steps() const {
  return std::any_of(req_.steps.begin(), req_.steps.end(),
                     [](const gcloud::BuildStep& s) {
                       return std::holds_alternative<gcloud::PipInstallStep>(s.action);
                     });
}

// The base as the pip steps read it: their scan when a step ran here, else the same scan made (or read from its
// cache) now.
const layers::ScannedImage& Build::base_python_filesystem() {
  if (python_) return python_->base_filesystem();
  if (!base_scan_) {
    fetch_shared_scans();  // a runner that reused every pip step from --cache-repo downloads no base layer either
    base_scan_ = std::make_unique<layers::ScannedImage>(base_, cache_.dir, python_scan_selection());
  }
  return *base_scan_;
}

// The first output's repository (a registry) or location, as the documents name the image.
std::string Build::image_name() const {
  if (req_.outputs.empty()) return "";
  const transports::ImageLocation& out = req_.outputs.front();
  return out.is_registry() ? out.registry_reference().name() : out.str();
}

// The image's packages when a pip step read the base's Python (the base's OS and Python packages, what the steps
// installed); a build that only copies code names the base by digest and reads none of its layers. The trainer's
// copied files in either case.
sbom::Document Build::sbom_document() {
  sbom::Document d{image_name(), result_.manifest_digest.str(), req_.base_name, result_.base_digest, spec_.created,
                   build_identity(), {}, {}};
  if (has_pip_steps()) d.packages = kept_image_packages();
  d.files = copied_files();
  return d;
}

// The image's packages are a function of the base, the layers up to the last pip step's (what the pip steps
// installed included) and the config its Python is read with, unless a later layer holds package records: kept
// under that key, so a build whose code alone changed reads neither the base's scans nor a reused step's listing.
std::vector<sbom::Package> Build::kept_image_packages() {
  const std::size_t through = stack_.through_last_pip_step();
  for (const FileEntries* layer : stack_.entries(through, stack_.size()))
    if (std::any_of(layer->begin(), layer->end(), may_change_packages)) return image_packages_through(stack_.size());
  image::Sha256 key;
  for (const std::string& field : {build_identity(), result_.base_digest, installed_artifacts_json(installed_).dump(),
                                   config_.user(), config_.architecture(), config_.variant()})
    key.update_field(field);
  const image::EnvList env = config_.env();  // entries() refers into it: kept alive for the loop
  for (const std::string& entry : env.entries()) key.update_field(entry);
  for (std::size_t i = 0; i < through; ++i) {
    const LayerStack::Layer& layer = stack_[i];
    key.update_field(layer.instruction + (layer.blob ? " " + layer.blob->diff_id.str() : ""));
  }
  const store::CacheArea kept = cache_.dir.area(store::CacheKind::kSboms);
  const std::string name = "packages-" + key.finish().hex() + ".json";
  if (auto packages = read_kept(kept, name, "a package list", packages_from_json)) return *packages;
  std::vector<sbom::Package> packages = image_packages_through(through);
  keep(kept, name, packages_json(packages));
  return packages;
}

// The trainer's files: each COPY layer's, kept by the layer's diff_id (its tar's hash: the same files with the same
// bytes), so a build hashes the files of the layers it made anew and reads the others' lists.
std::vector<sbom::File> Build::copied_files() {
  const store::CacheArea kept = cache_.dir.area(store::CacheKind::kSboms);
  std::vector<std::vector<sbom::File>> per_layer;
  for (const LayerStack::Layer* layer : stack_.copied()) {
    if (!layer->blob) {  // a dry run's planned layer
      per_layer.push_back(layer_files(layer->entries));
      continue;
    }
    const std::string name = "files-" + layer->blob->diff_id.hex() + ".json";
    if (auto files = read_kept(kept, name, "a file list", files_from_json)) {
      per_layer.push_back(std::move(*files));
      continue;
    }
    per_layer.push_back(layer_files(layer->entries));
    keep(kept, name, files_json(per_layer.back()));
    progress_.detail("hashed the files of a layer for the SBOM (" +
                     counted(per_layer.back().size(), "file", "files") + "): " + layer->instruction);
  }
  return merged_files(per_layer);
}

// The packages of the base with the first `history_entries` of this build's layers on it.
std::vector<sbom::Package> Build::image_packages_through(std::size_t history_entries) {
  const layers::ScannedImage& base = base_python_filesystem();
  layers::StackedFilesystem fs(base, base.index(), stack_.entries(0, history_entries));
  python::PythonFacts python = python::read_python_facts(base, python::ImageConfigFacts::of(config_), false);
  return image_packages(fs, &python, installed_);
}

// The SBOM is a function of the image (its digest covers every layer), what the pip steps installed from where, and
// the names it is given: kept under that key, so a build of an unchanged image reads no listing again.
std::string Build::sbom_text() {
  image::Sha256 key;
  for (const std::string& field : {build_identity(), std::to_string(static_cast<int>(req_.sbom)),
                                   result_.manifest_digest.str(), image_name(), req_.base_name,
                                   installed_artifacts_json(installed_).dump()})
    key.update_field(field);
  const store::CacheArea sboms = cache_.dir.area(store::CacheKind::kSboms);
  const std::string name = key.finish().hex() + ".json";
  fs::path kept = sboms.path_of(name);
  std::error_code ec;
  if (sboms.use(name) && fs::is_regular_file(kept, ec)) {
    std::string file = read_file(kept);
    if (std::optional<std::string_view> text = store::unseal(file)) return std::string(*text);
    sboms.discard(name, "it is not an SBOM this trainpack kept");  // made again below
  }
  std::string text = sbom_json(sbom_document(), req_.sbom);
  fs::create_directories(kept.parent_path(), ec);
  write_file_atomic(kept, store::seal(text));
  return text;
}

void Build::keep_cache_under_cap() {
  store::PruneLimits limits;
  limits.max_bytes = store::cache_cap(cache_.dir.root(), req_.cache_max_size);
  store::PruneReport pruned;
  try {
    pruned = store::prune_cache(cache_.dir, limits);
  } catch (const std::exception& e) {
    // The image is written: a cache that cannot be pruned now is pruned by a later build.
    log("warning: the cache was not pruned: " + std::string(e.what()));
    return;
  }
  for (const std::string& passed : pruned.warnings) log("warning: " + passed);
  if (pruned.removed_entries == 0) return;
  log("cache over " + human_bytes(*limits.max_bytes) + ": removed " +
      counted(pruned.removed_entries, "entry", "entries") + " used least recently (" +
      human_bytes(pruned.freed_bytes) + "); it holds " + human_bytes(pruned.remaining_bytes));
}

provenance::Statement Build::provenance_statement() const {
  provenance::Statement s;
  for (const transports::ImageLocation& out : req_.outputs)
    s.subjects.push_back({out.is_registry() ? out.registry_reference().name() : out.str(),
                          result_.manifest_digest.hex()});
  s.parameters = req_.parameters;
  std::vector<std::string> indexes;
  if (req_.python.index_url) indexes.push_back(net::url_for_display(*req_.python.index_url));
  for (const std::string& url : req_.python.extra_index_urls) indexes.push_back(net::url_for_display(url));
  s.dependencies = build_dependencies(req_.base_name, result_.base_digest, installed_, indexes);
  s.ci = req_.ci;
  s.tool_version = build_identity();
  if (!s.ci.platform.empty()) {  // a CI run is one event; elsewhere the same inputs give the same statement
    s.started = image::rfc3339_utc(started_);
    s.finished = image::rfc3339_utc(std::time(nullptr));
  }
  return s;
}

// Whether some output will hold the SBOM and provenance beside the image.
bool Build::outputs_take_attachments() const {
  return std::any_of(req_.outputs.begin(), req_.outputs.end(), [this](const transports::ImageLocation& out) {
    return transports::transport_of(out).holds_referrers && !req_.outputs_without_attachments.count(out.str());
  });
}

void Build::attest() {
  if (!outputs_take_attachments() || (req_.sbom == SbomFormat::kNone && !req_.provenance)) return;
  Timings::Scope output = timings_.scope(Phase::kOutput);
  std::optional<std::string> sbom, statement;
  if (req_.sbom != SbomFormat::kNone) sbom = sbom_text();
  if (req_.provenance) statement = provenance::statement_json(provenance_statement());
  referrers_ = attestation_referrers(std::make_shared<store::BlobStore>(cache_.blobs), *image_, req_.sbom, sbom,
                                     statement, spec_.created);
}

// Writes the image to every output (the sinks), in the order given.
void Build::write_outputs() {
  Timings::Scope output = timings_.scope(Phase::kOutput);
  for (const transports::ImageLocation& out : req_.outputs) write_output(out);
  log(counted(result_.layers_built, "layer", "layers") + " built, " + std::to_string(result_.layers_cached) +
      " reused from cache");
}

void Build::share_cache() {
  if (!shared_) return;
  Timings::Scope output = timings_.scope(Phase::kOutput);
  for (const PipStepToShare& step : to_share_) shared_->share_pip_step(step.key, step.step, step.earlier, *image_);
  if (python_) {
    std::vector<ScanDir> scans = base_scan_dirs(false);
    if (base_scan_dirs(true).empty())
      shared_->share_scans(CacheRepo::facts_tag(result_.base_digest, python_scan_name()), scans);
  }
  // A step found there is remembered here too once its blobs are (an output that needed their bytes fetched them).
  for (const PipStepToShare& hit : shared_hits_) {
    bool local = true;
    for (const CachedPipLayer& layer : hit.step.layers)
      local = local && (!layer.blob || cache_.blobs.has(layer.blob->digest));
    try {
      if (local) cache_.pip_steps.remember(hit.key, hit.step);
    } catch (const std::exception& e) {
      log(std::string("could not remember the pip step for the next build: ") + e.what());
    }
  }
}

void Build::write_output(const transports::ImageLocation& out) {
  transports::WriteContext context{req_.registries, push_options(req_, progress_, cache_.blob_locations, cache_.blobs),
                                   req_.extra_tags, {}};
  if (!req_.outputs_without_attachments.count(out.str())) context.referrers = referrers_;
  if (auto ahead = ahead_.find(out.str()); ahead != ahead_.end()) context.push.ahead = ahead->second.get();
  transports::WriteReport report = transports::write_image(*image_, out, context);
  if (report.push) {
    progress_.finish();
    record_push(*report.push);
  }
  if (report.referrers_attached > 0) record_attached(out);
  else record_not_attached(out);
  result_.outputs.push_back(out.str());
  if (!report.push) log("wrote " + out.str());
}

// The SBOM and provenance an output holds beside the image: a line, and the result's list (the same for each).
void Build::record_attached(const transports::ImageLocation& out) {
  std::string what;
  for (const auto& referrer : referrers_) {
    std::string type = image::artifact_type_of(*referrer);
    if (result_.attached.size() < referrers_.size()) result_.attached.push_back({type, referrer->manifest_digest()});
    what += std::string(what.empty() ? "" : " and ") + (type == kInTotoType ? "provenance" : "SBOM");
  }
  log("attached " + what + " to " + out.str() + " as referrers of " + short_digest(result_.manifest_digest));
}

// An output that gets neither the SBOM nor the provenance asked for says so, with why: a warning line, and the
// result's list.
void Build::record_not_attached(const transports::ImageLocation& out) {
  if (req_.sbom == SbomFormat::kNone && !req_.provenance) return;
  std::string reason = !transports::transport_of(out).holds_referrers
                           ? "a docker-archive has no place for them"
                           : "the OCI layout was named without a tag, so it keeps one manifest (name one: oci:DIR:TAG)";
  std::string what = req_.sbom == SbomFormat::kNone ? "provenance" : req_.provenance ? "SBOM and provenance" : "SBOM";
  result_.not_attached.push_back({out.str(), reason});
  progress_.warning(what + " not attached to " + out.str() + ": " + reason);
}

void Build::record_push(const registry::PushResult& pushed) {
  result_.pushed.push_back(pushed.reference);
  result_.tags.insert(result_.tags.end(), pushed.tags.begin(), pushed.tags.end());
  result_.blobs_existing += pushed.blobs_existing;
  result_.blobs_mounted += pushed.blobs_mounted;
  result_.blobs_uploaded += pushed.blobs_uploaded;
  result_.bytes_uploaded += pushed.bytes_uploaded;
  log("pushed " + pushed.reference + " (" + counted(pushed.blobs_uploaded, "blob", "blobs") + " uploaded, " +
      human_bytes(pushed.bytes_uploaded) + "; " + std::to_string(pushed.blobs_mounted) + " mounted, " +
      std::to_string(pushed.blobs_existing) + " already there)");
}

BuildResult build_once(const BuildRequest& req, Progress& progress) {
  Timings::Clock::time_point start = Timings::Clock::now();
  for (const transports::ImageLocation& out : req.outputs) transports::check_destination(out);
  Build build(req, progress, start);
  build.check_context_secrets();
  if (int removed = build.sweep_leftovers())
    build.log("removed " + counted(removed, "leftover", "leftovers") + " of killed builds");
  build.open_base();
  build.begin_pushes();
  for (const gcloud::BuildStep& step : req.steps) build.run_step(step);
  if (!req.dry_run) {
    build.assemble();
    build.attest();
    build.write_outputs();
    build.share_cache();
  }
  if (!req.dry_run) build.keep_cache_under_cap();
  BuildResult result = req.dry_run ? build.finish_dry_run() : std::move(build).result();
  result.timings = build.timings().snapshot();
  return result;
}

}  // namespace

// A layer reused from the cache whose blob was found damaged while an output was written has had its copy removed
// (transports::DamagedBlob): built again, the layer is made anew. A few times, for several damaged layers.
BuildResult run_build(const BuildRequest& req, Progress& progress) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    try {
      return build_once(req, progress);
    } catch (const transports::DamagedBlob& e) {
      if (attempt == kAttempts) throw;
      progress.warning(std::string(e.what()) + ": building again");
    }
  }
}

}  // namespace trainpack::imagebuild
