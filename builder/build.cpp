#include "builder/build.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "layers/appended_image.h"
#include "layers/blob_store.h"
#include "layers/context_copy.h"
#include "layers/docker_archive.h"
#include "layers/dockerignore.h"
#include "layers/entry_safety.h"
#include "layers/layer_cache.h"
#include "layers/oci_layout.h"
#include "layers/rootfs_index.h"
#include "registry/pusher.h"
#include "registry/reference.h"
#include "registry/registries.h"
#include "registry/remote_image.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"

namespace trainpack::builder {
namespace fs = std::filesystem;
using layers::FileEntries;
using layers::FileEntry;
using layers::PathInfo;
using layers::RootfsIndex;
using nlohmann::json;

fs::path default_cache_dir() {
  if (const char* d = std::getenv("TRAINPACK_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "trainpack";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "trainpack";
  return fs::temp_directory_path() / "trainpack-cache";
}

namespace {

// "./a//b/." → "a/b"; "." → ""; keeps ".." so callers can refuse it.
std::string clean_relative(std::string_view p) {
  std::string out;
  for (std::string_view part : path_components(p)) out = join_path(out, part);
  return out;
}

std::string image_path(std::string_view absolute_or_relative_to_workdir) {
  std::string_view p = absolute_or_relative_to_workdir;
  if (p.starts_with('/')) return clean_relative(p);
  return join_path(clean_relative(kWorkdir), clean_relative(p));
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

// RUN rm -rf PATH: a whiteout. Without the base's listing trainpack cannot know whether PATH exists; a whiteout
// of a missing path changes nothing when the image is unpacked, so the result is the same either way.
FileEntries run_rm_entries(const RootfsIndex& index, const std::string& path) {
  std::string clean = clean_relative(path);
  auto slash = clean.rfind('/');
  std::string parent = slash == std::string::npos ? "" : index.resolve(clean.substr(0, slash));
  std::string target = join_path(parent, slash == std::string::npos ? clean : clean.substr(slash + 1));
  FileEntries entries{FileEntry::whiteout(target)};
  add_parent_dirs(entries, index, target);
  return entries;
}

// COPY ["src", "dest"] with WORKDIR /usr/app. Directories on the way that exist keep their attributes.
FileEntries copy_entries(const RootfsIndex& index, const fs::path& context, const layers::DockerIgnore& ignore,
                         const std::string& src, const std::string& dest) {
  layers::CopyOptions options;
  options.existing_dir = [&index](std::string_view path) -> std::optional<layers::ExistingDir> {
    const PathInfo* info = index.find(path);
    if (!info || info->type != PathInfo::Type::kDirectory) return std::nullopt;
    return layers::ExistingDir{info->mode, info->uid, info->gid};
  };
  return layers::collect_copy(context, src, index.resolve(image_path(dest)), ignore, options);
}

void set_env(json& cfg, const std::string& key, const std::string& value) {
  json& env = cfg["Env"];
  if (!env.is_array()) env = json::array();
  std::string item = key + "=" + value;
  for (auto& e : env) {
    if (e.is_string() && e.get<std::string>().starts_with(key + "=")) {
      e = item;
      return;
    }
  }
  env.push_back(item);
}

// What builds killed with SIGKILL left behind (temporary files and directories named for their owner process, see
// support/fs.h), in the cache and beside the outputs: removed when that process is gone. Returns how many.
int sweep_leftovers(const BuildRequest& req) {
  int removed = 0;
  for (const char* dir : {"tmp", "interpreters", "site-packages", "built-wheels"})
    removed += sweep_orphaned_temps(req.cache_dir / dir);
  std::error_code ec;
  for (fs::directory_iterator it(req.cache_dir / "scans", ec), end; !ec && it != end; it.increment(ec))
    removed += sweep_orphaned_temps(it->path());
  removed += sweep_orphaned_temps(req.cache_dir / "layers");
  std::error_code tmp_ec;
  removed += sweep_orphaned_temps(fs::temp_directory_path(tmp_ec));  // work directories of builds run as another user
  for (const ImageLocation& out : req.outputs) {
    if (out.kind == ImageLocation::Kind::kRegistry) continue;
    fs::path path = fs::absolute(out.path).lexically_normal();
    if (!path.has_filename()) path = path.parent_path();  // "out/"
    removed += sweep_orphaned_temps(path.parent_path());
  }
  return removed;
}

registry::Registries& need_registries(const BuildRequest& req) {
  if (!req.registries) throw Error("internal: no registry access configured");
  return *req.registries;
}

}  // namespace

namespace {

// An image that is not an index has one platform: a --platform the user asked for must be it.
std::shared_ptr<const layers::Image> check_platform(std::shared_ptr<const layers::Image> image,
                                                   const layers::Platform& platform) {
  nlohmann::json config = image->config();
  nlohmann::json has = {{"os", layers::string_member(config, "os")},
                        {"architecture", layers::string_member(config, "architecture")}};
  if (config.contains("variant")) has["variant"] = config["variant"];
  if (platform.matches(has)) return image;
  std::string offered = has.value("os", "?") + "/" + has.value("architecture", "?");
  if (has.contains("variant") && has["variant"].is_string()) offered += "/" + has["variant"].get<std::string>();
  throw Error(image->describe() + " is for " + offered + ", not " + platform.str(),
              "it is a single-platform image: pass --platform=" + offered + " or choose a base for " + platform.str());
}

// The image at `loc`, for `platform` when it is an index.
std::shared_ptr<const layers::Image> open_image_at(const ImageLocation& loc, const layers::Platform& platform,
                                                    const layers::BlobStore& store, registry::Registries* registries) {
  std::error_code ec;
  switch (loc.kind) {
    case ImageLocation::Kind::kOciLayout:
      if (!fs::exists(loc.path, ec))
        throw Error("image " + loc.str() + " does not exist", "check the path of the OCI layout directory");
      return layers::open_oci_layout(loc.path, loc.ref, platform);
    case ImageLocation::Kind::kDockerArchive:
      if (!fs::exists(loc.path, ec))
        throw Error("image " + loc.str() + " does not exist", "check the path of the docker-archive file");
      return layers::open_docker_archive(loc.path, loc.ref, platform, store);
    case ImageLocation::Kind::kRegistry: {
      if (!registries) throw Error("internal: no registry access configured");
      registry::Reference ref = registry::Reference::parse(loc.ref);
      return registry::RemoteImage::open(registries->client(ref.registry), ref, platform, store);
    }
  }
  throw Error("internal: unknown image location");
}

}  // namespace

std::shared_ptr<const layers::Image> open_image(const ImageLocation& loc, const layers::Platform& platform,
                                                const layers::BlobStore& store, registry::Registries* registries,
                                                bool platform_required) {
  std::shared_ptr<const layers::Image> image = open_image_at(loc, platform, store, registries);
  return platform_required ? check_platform(std::move(image), platform) : image;
}

namespace {

std::string short_hex(const layers::Digest& d) { return d.hex().substr(0, 12); }

// Pushes `image` to a registry output, one progress row per blob.
registry::PushResult push_output(const BuildRequest& req, const layers::Image& image, const ImageLocation& out,
                                 Progress& progress) {
  registry::Registries& registries = need_registries(req);
  registry::Reference target = registry::Reference::parse(out.ref);
  registry::PushOptions options;
  options.jobs = req.jobs;
  options.on_blob = [&progress](const registry::BlobEvent& e) {
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
  registry::PushResult pushed = registry::push_image(
      image, target, [&registries](const std::string& r) -> registry::RegistryClient& { return registries.client(r); },
      options);
  progress.finish();
  return pushed;
}

// Refuses an output that cannot be written before any work is done (the sinks check again when writing).
void check_output(const ImageLocation& out) {
  if (out.kind == ImageLocation::Kind::kRegistry) {
    registry::Reference::parse(out.ref);
    return;
  }
  if (out.kind == ImageLocation::Kind::kOciLayout) {
    layers::check_oci_layout_destination(out.path);
    return;
  }
  std::error_code ec;
  fs::path parent = fs::absolute(out.path, ec).parent_path();
  if (!fs::is_directory(parent, ec))
    throw Error("cannot write " + out.str() + ": directory " + parent.string() + " does not exist",
                "create it first, or choose another path");
  if (fs::is_directory(out.path, ec))
    throw Error("cannot write " + out.str() + ": " + out.path.string() + " is a directory",
                "a docker-archive is a single tar file");
}

std::string short_digest(const layers::Digest& d) { return d.algorithm() + ":" + d.hex().substr(0, 12); }

// The base layers whose bytes this build passes on: all of them for a file output (it holds every blob), else those
// already here (a push uploads them). A layer a registry push mounts or finds there, or relays from the base's
// registry, never passes through here whole; the Python steps read (and so check) the layers they scan.
std::vector<layers::Digest> base_layers_passed_on(const BuildRequest& req, const layers::Image& base,
                                                  const layers::Manifest& manifest) {
  bool file_output = false;
  for (const ImageLocation& out : req.outputs) file_output |= out.kind != ImageLocation::Kind::kRegistry;
  std::vector<layers::Digest> out;
  for (const layers::Descriptor& l : manifest.layers)
    if (file_output || base.has_local_blob(l.digest)) out.push_back(l.digest);
  return out;
}

}  // namespace

BuildResult run_build(const BuildRequest& req, Progress& progress) {
  auto log = [&progress](const std::string& line) { progress.line(line); };
  for (const ImageLocation& out : req.outputs) check_output(out);

  layers::BlobStore store(req.cache_dir);
  layers::LayerCache cache(store, req.cache_dir / "layers");
  const layers::LayerOptions options{req.mtime, req.gzip_level};
  if (int removed = sweep_leftovers(req)) log("removed " + std::to_string(removed) + " leftovers of killed builds");

  std::shared_ptr<const layers::Image> base =
      open_image(req.base_location, req.platform, store, req.registries, req.platform_required);
  layers::Manifest base_manifest = base->manifest();
  json base_config = base->config();
  BuildResult result;
  result.base_digest = base->manifest_digest().str();
  log("base " + req.base_name + " " + result.base_digest + " (" + std::to_string(base_manifest.layers.size()) +
      " layers)");

  // What this build's own layers hold. The base's layers are never listed for the non-pip steps (see
  // run_mkdir_entries), so a build that only copies code reads no base layer bytes at all; pip steps read the
  // base's Python installation (python_steps.h).
  RootfsIndex index;
  std::vector<FileEntries> own_layers;
  std::unique_ptr<PythonInstaller> python;
  for (const auto& l : base_manifest.layers) result.layers.push_back({"base", "base", l.digest, {}, l.size, l.media_type, 0});

  json cfg = base_config.contains("config") && base_config["config"].is_object() ? base_config["config"] : json::object();
  const layers::DockerIgnore ignore = layers::DockerIgnore::load(req.package_dir);
  layers::AppendSpec spec;
  spec.created = layers::rfc3339_utc(req.mtime);

  // One layer (or a config-only history entry when `entries` is empty) for an instruction.
  auto add_layer = [&](const std::string& instruction, FileEntries entries) {
    if (entries.empty()) {
      spec.steps.push_back({instruction, std::nullopt});
      return;
    }
    if (req.dry_run) {
      result.layers.push_back({instruction, "planned", {}, {}, 0, "", entries.size()});
      log("would build a layer of " + std::to_string(entries.size()) + " entries  " + instruction);
      index.apply(entries);
      own_layers.push_back(std::move(entries));
      return;
    }
    FileEntries applied = entries;
    layers::BuiltLayer built = layers::build_layer(store, cache, std::move(entries), options);
    index.apply(applied);
    spec.steps.push_back({instruction, built.blob});
    (built.from_cache ? result.layers_cached : result.layers_built)++;
    const char* origin = built.from_cache ? "cached" : "built";
    result.layers.push_back({instruction, origin, built.blob.digest, built.blob.diff_id, built.blob.size,
                             "application/vnd.oci.image.layer.v1.tar+gzip", applied.size()});
    log(std::string(built.from_cache ? "reused " : "built  ") + short_digest(built.blob.digest) + " " +
        std::to_string(built.blob.size) + " B  " + instruction);
    own_layers.push_back(std::move(applied));
  };

  for (const BuildStep& step : req.steps) {
    std::visit(StepVisitor{
                   [&](const MkdirStep& s) { add_layer(step.instruction, run_mkdir_entries(index, s.dirs)); },
                   [&](const WorkdirStep& s) {
                     cfg["WorkingDir"] = s.dir;
                     add_layer(step.instruction, {});
                   },
                   [&](const EnvStep& s) {
                     set_env(cfg, s.key, s.value);
                     add_layer(step.instruction, {});
                   },
                   [&](const RemovePathStep& s) { add_layer(step.instruction, run_rm_entries(index, s.path)); },
                   [&](const CopyStep& s) {
                     add_layer(step.instruction, copy_entries(index, req.package_dir, ignore, s.src, s.dest));
                   },
                   [&](const EntrypointStep& s) {
                     cfg["Entrypoint"] = s.argv;
                     cfg.erase("Cmd");  // a Dockerfile ENTRYPOINT resets the inherited CMD
                     add_layer(step.instruction, {});
                   },
                   [&](const PipInstallStep& s) {
                     if (!python)
                       python = std::make_unique<PythonInstaller>(base, store, req.cache_dir, req.python, req.mtime, log);
                     for (PipLayer& layer : python->install(s, cfg, own_layers))
                       add_layer(layer.what.empty()
                                     ? step.instruction
                                     : step.instruction + " # trainpack: " + layer.what + " in a layer of its own",
                                 std::move(layer.entries));
                   },
               },
               step.action);
  }

  if (req.dry_run) {
    result.excluded = layers::list_excluded(req.package_dir, ignore);
    for (const auto& path : result.excluded) log("excluded by .dockerignore: " + path);
    return result;
  }

  spec.config = cfg;
  spec.manifest_annotations = {{"org.opencontainers.image.base.name", req.base_name},
                               {"org.opencontainers.image.base.digest", result.base_digest}};
  auto appended = std::make_shared<layers::AppendedImage>(base, store, spec);
  const layers::AppendedImage& image = *appended;
  result.image = appended;
  result.manifest_digest = image.manifest_digest();
  result.manifest_size = image.raw_manifest().size();
  result.config_digest = image.manifest().config.digest;
  // After the steps: layers their base scan listed are already known safe and are not read a second time.
  layers::check_layers_are_safe(*base, base_layers_passed_on(req, *base, base_manifest), req.cache_dir);

  for (const ImageLocation& out : req.outputs) {
    switch (out.kind) {
      case ImageLocation::Kind::kOciLayout: layers::write_oci_layout(image, out.path, out.ref); break;
      case ImageLocation::Kind::kDockerArchive: layers::write_docker_archive(image, out.path, out.ref); break;
      case ImageLocation::Kind::kRegistry: {
        registry::PushResult pushed = push_output(req, image, out, progress);
        result.pushed.push_back(pushed.reference);
        result.blobs_existing += pushed.blobs_existing;
        result.blobs_mounted += pushed.blobs_mounted;
        result.blobs_uploaded += pushed.blobs_uploaded;
        result.bytes_uploaded += pushed.bytes_uploaded;
        log("pushed " + pushed.reference + " (" + std::to_string(pushed.blobs_uploaded) + " blobs uploaded, " +
            human_bytes(pushed.bytes_uploaded) + "; " + std::to_string(pushed.blobs_mounted) + " mounted, " +
            std::to_string(pushed.blobs_existing) + " already there)");
        break;
      }
    }
    result.outputs.push_back(out.str());
    if (out.kind != ImageLocation::Kind::kRegistry) log("wrote " + out.str());
  }
  log(std::to_string(result.layers_built) + " layers built, " + std::to_string(result.layers_cached) +
      " reused from cache");
  return result;
}

}  // namespace trainpack::builder
