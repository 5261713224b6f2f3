#include "imagebuild/build.h"

#include <nlohmann/json.hpp>

#include "imagebuild/attestations.h"
#include "imagebuild/layer_stack.h"
#include "imagebuild/outputs.h"
#include "imagebuild/pip_steps.h"
#include "context/context_copy.h"
#include "context/dockerignore.h"
#include "image/appended_image.h"
#include "layers/entry_safety.h"
#include "layers/layer_cache.h"
#include "layers/rootfs_index.h"
#include "layers/scanned_image.h"
#include "python/base_facts.h"
#include "registry/blob_locations.h"
#include "store/cache_prune.h"
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

// COPY ["src", "dest"] with WORKDIR /usr/app, of a source read before the build began. Directories on the way that
// exist keep their attributes.
FileEntries copy_entries(const RootfsIndex& index, context::CopySource source, const std::string& dest) {
  context::CopyOptions options;
  options.existing_dir = [&index](std::string_view path) -> std::optional<context::ExistingDir> {
    const PathInfo* info = index.find(path);
    if (!info || info->type != PathInfo::Type::kDirectory) return std::nullopt;
    return context::ExistingDir{info->mode, info->uid, info->gid};
  };
  return context::place_copy(std::move(source), index.resolve(image_path(dest)), options);
}

// What builds killed with SIGKILL left behind (temporary files and directories named for their owner process, see
// support/fs.h), in the cache and beside the outputs: removed when that process is gone. Returns how many. Only
// when a process that had the cache open was killed: the directories walked grow with the cache (and /tmp).
int sweep_killed_builds(const BuildRequest& req, const store::CacheDir& cache) {
  if (!cache.has_dead_users()) return 0;
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

// A layer with at least this much content shows its progress while it is written.
constexpr std::uint64_t kLargeLayerBytes = 64u << 20;

// What a build reads from and keeps in the cache, open (so registered as in use) for the whole build.
struct BuildCaches {
  explicit BuildCaches(const std::filesystem::path& root)
      : dir(root), blobs(dir.blobs()), layers(blobs, dir.area(store::CacheKind::kLayers)),
        blob_locations(dir.area(store::CacheKind::kBlobLocations)) {}
  store::CacheDir dir;
  const store::BlobStore& blobs;
  layers::LayerCache layers;
  registry::BlobLocations blob_locations;
};

// One build in progress: the base, the config being edited and the layers made so far, and the steps that carry it
// out: the pip steps, the attestations and the outputs.
class Build {
 public:
  Build(const BuildRequest& req, Progress& progress, Timings::Clock::time_point start)
      : timings_(start),
        req_(req),
        progress_(progress),
        cache_(req.cache_dir),
        attestations_(req, cache_.dir, progress),
        outputs_(req, cache_.blobs, cache_.blob_locations, progress, result_) {
    // A damaged cache entry is a miss, made again: said as the build's warnings are.
    cache_.dir.on_warning([&progress = progress_](const std::string& text) { progress.warning(text); });
  }

  void log(const std::string& line) { progress_.line(line); }
  void read_context();
  int sweep_leftovers() const { return sweep_killed_builds(req_, cache_.dir); }
  // After a build: least recently used entries removed while the cache exceeds its cap (BuildRequest::cache_max_size).
  void keep_cache_under_cap();
  void open_base();
  void begin_pushes() { outputs_.begin_pushes(); }
  void run_step(const gcloud::BuildStep& step);
  BuildResult finish_dry_run();
  // Assembles the image from the base and the layers made; checks the base layers passed on.
  void assemble();
  // The SBOM and provenance the outputs get (BuildRequest::sbom, ::provenance), made once the image is assembled.
  void attest();
  void write_outputs();
  // --cache-repo: stores what the repository lacks, after the outputs are written (never for a failed build).
  void share_cache();
  BuildResult result() && { return std::move(result_); }
  Timings& timings() { return timings_; }

 private:
  void run_pip_step(const std::string& instruction, const gcloud::PipInstallStep& step);
  void add_pip_layers(const std::string& instruction, PipStepResult step, bool reused);
  FileEntries run_mkdir_step(const gcloud::MkdirStep& step);
  FileEntries missing_workdir_entries();
  void check_entrypoint_program(const std::vector<std::string>& argv);
  void add_layer(const std::string& instruction, FileEntries entries,
                 LayerStack::Maker maker = LayerStack::Maker::kOther);
  std::optional<layers::LayerBlob> write_layer(const std::string& instruction, FileEntries& entries);
  void report_layer(const std::string& instruction, const layers::LayerBlob& blob, bool from_cache,
                    std::size_t entries);
  void plan_layer(const std::string& instruction, const layers::LayerLookup& layer);
  void list_planned_files(const std::vector<std::string>& files);
  layers::LayerOptions layer_format() const;
  layers::LayerOptions layer_options(const std::string& instruction, const FileEntries& entries);

  Timings timings_;
  const BuildRequest& req_;
  Progress& progress_;
  BuildCaches cache_;
  BuildResult result_;
  std::shared_ptr<const image::Image> base_;
  image::Manifest base_manifest_;
  image::ImageConfig config_;
  std::optional<context::DockerIgnore> ignore_;
  // What each COPY step takes from the context, read once for the secrets check and its layer.
  std::map<const gcloud::BuildStep*, context::CopySource> copy_sources_;
  // The layers this build made. The base's layers are not listed for the non-pip steps (see run_mkdir_entries; only
  // a WorkingDir no WORKDIR of the base made is looked up, missing_workdir_entries), so a build that only copies
  // code reads no base layer bytes; pip steps read the base's Python (python_installer.h).
  LayerStack stack_;
  std::optional<PipSteps> pip_steps_;  // once the base is open
  Attestations attestations_;
  std::vector<std::shared_ptr<const image::Image>> referrers_;
  image::AppendSpec spec_;
  std::shared_ptr<const image::AppendedImage> image_;
  // Last, so that pushes begun with the build end before what they use.
  Outputs outputs_;
};

void Build::open_base() {
  Timings::Scope opening = timings_.scope(Phase::kBase);
  // A base blob is downloaded only when a pip step lists it (or a file output, or local-run's unpacking, needs it):
  // a row while it comes. The base outlives this build (local-run unpacks the image after it), so the row goes to
  // the caller's Progress, never through this Build.
  auto on_fetch = [&progress = progress_](const image::Digest& digest, std::uint64_t done, std::uint64_t total,
                                          bool finished) {
    std::string key = "fetch " + digest.str();
    if (finished) progress.transfer_done(key);
    else progress.transfer(key, "downloading " + digest.short_hex() + " of the base", done, total);
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
  pip_steps_.emplace(req_, cache_.dir, cache_.blob_locations, progress_, timings_, base_, result_.base_digest);
}

// Before the base is read: what the COPY steps take from the context (as .dockerignore leaves it), read once for the
// check and the layers; the files that likely hold credentials get one warning each, or with --fail-on-secrets fail
// the build, before anything is pushed.
void Build::read_context() {
  Timings::Scope listing = timings_.scope(Phase::kLayers);  // listing the context belongs to making its layers
  ignore_ = context::DockerIgnore::load(req_.package_dir);
  std::map<std::string, secrets::Finding> found;  // by context path: COPY . takes requirements.txt again
  for (const gcloud::BuildStep& step : req_.steps) {
    const auto* copy = std::get_if<gcloud::CopyStep>(&step.action);
    if (!copy) continue;
    const context::CopySource& source = copy_sources_[&step] =
        context::read_copy_source(req_.package_dir, copy->src, *ignore_);
    FileEntries entries = context::place_copy(source, image_path(copy->dest));
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
  std::optional<layers::LayerBlob> blob;
  if (!entries.empty()) blob = write_layer(instruction, entries);
  stack_.append(instruction, blob, std::move(entries), maker);
}

// The blob of a layer of `entries` (sorted in place): from the layer cache or written now, then reported. A dry run
// plans the layer instead (nullopt).
std::optional<layers::LayerBlob> Build::write_layer(const std::string& instruction, FileEntries& entries) {
  Timings::Scope writing = timings_.scope(Phase::kLayers);
  if (req_.dry_run) {
    layers::LayerLookup layer = layers::look_up_layer(cache_.layers, std::move(entries), layer_format());
    plan_layer(instruction, layer);
    entries = std::move(layer.entries);
    return std::nullopt;
  }
  layers::LayerOptions options = layer_options(instruction, entries);
  layers::BuiltLayer built = layers::build_layer(cache_.blobs, cache_.layers, std::move(entries), options);
  progress_.transfer_done(instruction);
  entries = std::move(built.entries);
  report_layer(instruction, built.blob, built.from_cache, entries.size());
  return built.blob;
}

// A layer joins the image: its blob is offered to the pushes under way, and the result lists it. Not with
// --cache-repo: a later pip step found there may hold this layer too (the layers before it), and the push then
// mounts it from there rather than upload it.
void Build::report_layer(const std::string& instruction, const layers::LayerBlob& blob, bool from_cache,
                         std::size_t entries) {
  if (!pip_steps_->shares()) outputs_.offer(blob);
  (from_cache ? result_.layers_cached : result_.layers_built)++;
  result_.layers.push_back({instruction, from_cache ? "cached" : "built", blob.digest, blob.diff_id, blob.size,
                            std::string(layers::layer_media_type(req_.compression)), entries, {}, {}});
  log(std::string(from_cache ? "reused " : "built  ") + blob.digest.short_str() + " " + human_bytes(blob.size) +
      "  " + instruction);
}

// A dry run lists the layer instead of building it: whether the layer cache has it (as a build would look it up)
// and whether every registry output has its blob already.
void Build::plan_layer(const std::string& instruction, const layers::LayerLookup& layer) {
  BuiltLayerInfo info{instruction, "planned", {}, {}, 0, "", layer.entries.size(), "build", {}};
  for (const FileEntry& e : layer.entries) info.files.push_back(e.path);
  if (const std::optional<layers::LayerBlob>& cached = layer.cached) {
    info = {instruction, "planned", cached->digest, cached->diff_id, cached->size,
            std::string(layers::layer_media_type(req_.compression)), layer.entries.size(), "cached",
            std::move(info.files)};
    if (outputs_.registries_have(cached->digest)) info.plan = "in registry";
  }
  static const std::map<std::string, std::string> kVerbs = {
      {"build", "would build"},
      {"cached", "would reuse from the layer cache"},
      {"in registry", "would find in the registry"}};
  log(kVerbs.at(info.plan) + " a layer of " + counted(layer.entries.size(), "entry", "entries") + "  " + instruction);
  list_planned_files(info.files);
  result_.layers.push_back(std::move(info));
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

void Build::run_step(const gcloud::BuildStep& step) {
  // Listing a COPY's context belongs to making its layer; a pip step charges its own phases (python_installer.cpp).
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
                   context::CopySource source = std::move(copy_sources_.at(&step));  // read by read_context
                   copy_sources_.erase(&step);
                   add_layer(step.instruction, copy_entries(stack_.index(), std::move(source), s.dest),
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
  const RootfsIndex& base = pip_steps_->base_filesystem().index();
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
  const layers::ScannedImage* base = pip_steps_->base_filesystem_if_read();
  if (argv.empty() || base == nullptr) return;
  std::vector<std::string> env = config_.env().entries();
  result_.entrypoint_found = !python::find_command(*base, env, argv[0]).empty();
  if (*result_.entrypoint_found) return;
  std::string path = config_.env().has("PATH") ? config_.env().value("PATH") : "Docker's default";
  progress_.warning("the image's entrypoint program " + argv[0] + " is not on the base image's PATH (" + path +
                    "): the image is built as docker builds it, but its container cannot start (use a base that "
                    "has " + argv[0] + ", e.g. Debian's python-is-python3 package)");
}

// A pip step: reused when its inputs are unchanged, else installed, its layers written, and remembered (not in a
// dry run, which writes nothing).
void Build::run_pip_step(const std::string& instruction, const gcloud::PipInstallStep& step) {
  const bool cacheable = !req_.dry_run;
  const std::string key = cacheable ? pip_steps_->key(instruction, stack_, layer_format()) : std::string();
  std::vector<layers::LayerBlob> earlier = stack_.blobs();
  if (cacheable && !req_.refresh_pip_steps)
    if (std::optional<PipStepResult> reused = pip_steps_->reuse(instruction, key, earlier))
      return add_pip_layers(instruction, std::move(*reused), true);
  PipStepResult made = pip_steps_->install(step, config_, stack_);
  for (PipLayer& layer : made.layers)
    if (!layer.entries.empty()) layer.blob = write_layer(pip_layer_instruction(instruction, layer.what), layer.entries);
  if (cacheable) pip_steps_->remember(key, made, std::move(earlier));
  add_pip_layers(instruction, std::move(made), false);
}

// A pip step's layers join the stack; reused ones are reported here (a written one was when it was written), and a
// reused layer's listing stays deferred.
void Build::add_pip_layers(const std::string& instruction, PipStepResult step, bool reused) {
  for (PipLayer& layer : step.layers) {
    std::string layer_instruction = pip_layer_instruction(instruction, layer.what);
    if (reused && layer.blob) report_layer(layer_instruction, *layer.blob, true, layer.entry_count());
    if (layer.deferred && layer.blob) stack_.append(layer_instruction, *layer.blob, std::move(layer.deferred));
    else stack_.append(layer_instruction, layer.blob, std::move(layer.entries), LayerStack::Maker::kPip);
  }
}

BuildResult Build::finish_dry_run() {
  result_.excluded = context::list_excluded(req_.package_dir, *ignore_);
  for (const auto& path : result_.excluded) log("excluded by .dockerignore: " + path);
  return std::move(result_);
}

void Build::keep_cache_under_cap() {
  const std::uint64_t cap = store::cache_cap(cache_.dir.root(), req_.cache_max_size);
  std::optional<store::PruneReport> pruned;
  try {
    pruned = store::keep_under_cap(cache_.dir, cap);
  } catch (const std::exception& e) {
    // The image is written: a cache that cannot be pruned now is pruned by a later build.
    log("warning: the cache was not pruned: " + std::string(e.what()));
    return;
  }
  if (!pruned) return;
  for (const std::string& passed : pruned->warnings) log("warning: " + passed);
  if (pruned->removed_entries == 0) return;
  log("cache over " + human_bytes(cap) + ": removed " + counted(pruned->removed_entries, "entry", "entries") +
      " used least recently (" + human_bytes(pruned->freed_bytes) + "); it holds " +
      human_bytes(pruned->remaining_bytes));
}

// Charged to output: assembling is cheap, and checking the base layers passed on reads (downloads, for a file
// output) their bytes, which only outputs need.
void Build::assemble() {
  Timings::Scope output = timings_.scope(Phase::kOutput);
  for (const auto& [key, value] : req_.labels) config_.set_label(key, value);
  spec_.steps = stack_.history();
  spec_.config = config_;
  spec_.layer_sources = pip_steps_->layer_sources();
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

void Build::attest() {
  if (!outputs_.take_attachments() || !attestations_.wanted()) return;
  Timings::Scope output = timings_.scope(Phase::kOutput);
  AttestedBuild built{*image_, result_.base_digest, spec_.created, stack_, config_, pip_steps_->installed(),
                      [this]() -> const layers::ScannedImage& { return pip_steps_->base_filesystem(); },
                      [this](const image::ImageConfig& config) { return pip_steps_->python_facts(config); }};
  referrers_ = attestations_.referrers(built);
}

// Writes the image to every output (the sinks), in the order given.
void Build::write_outputs() {
  Timings::Scope output = timings_.scope(Phase::kOutput);
  outputs_.write(*image_, referrers_);
}

void Build::share_cache() {
  Timings::Scope output = timings_.scope(Phase::kOutput);
  pip_steps_->share(*image_);
}

BuildResult build_once(const BuildRequest& req, Progress& progress) {
  Timings::Clock::time_point start = Timings::Clock::now();
  for (const transports::ImageLocation& out : req.outputs) transports::check_destination(out);
  Build build(req, progress, start);
  build.read_context();
  if (int removed = build.sweep_leftovers())
    build.log("removed " + counted(removed, "leftover", "leftovers") + " of killed builds");
  build.begin_pushes();  // beside the base's read: the target's tag and sessions cost no round trip of their own
  build.open_base();
  for (const gcloud::BuildStep& step : req.steps) build.run_step(step);
  if (!req.dry_run) {
    build.assemble();
    build.attest();
    build.write_outputs();
    build.share_cache();
    build.keep_cache_under_cap();
  }
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
