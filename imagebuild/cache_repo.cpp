#include "imagebuild/cache_repo.h"

#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "imagebuild/identity.h"
#include "image/artifact_image.h"
#include "image/media_types.h"
#include "layers/layer_writer.h"
#include "layers/rootfs_index.h"
#include "layers/scanned_image.h"
#include "registry/blob_locations.h"
#include "registry/pusher.h"
#include "registry/registries.h"
#include "registry/remote_image.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"
#include "support/redact.h"

namespace trainpack::imagebuild {
namespace fs = std::filesystem;
using image::Descriptor;
using image::Digest;
using layers::FileEntries;
using layers::FileEntry;
using nlohmann::json;

namespace {

constexpr const char* kPipStepType = "application/vnd.trainpack.pip-step.v1+json";
constexpr const char* kContentsType = "application/vnd.trainpack.pip-step.contents.v1.tar+gzip";
constexpr const char* kScansType = "application/vnd.trainpack.base-scan.v1+json";
constexpr const char* kScanLayerType = "application/vnd.trainpack.base-scan.layer.v1.tar+gzip";
constexpr const char* kPipStepFormat = "trainpack-shared-pip-step-v2";
constexpr const char* kScansFormat = "trainpack-shared-base-scan-v1";
constexpr std::uint64_t kCarriedBytes = 1u << 20;

// Contents a later pip step may read from this one's layers: installed distributions' metadata and the build's own
// files in /usr/app (an in-tree build's leftovers). Other files are listed without their bytes.
bool carried(const FileEntry& e) {
  if (e.type != FileEntry::Type::kRegular || e.size == 0 || e.size > kCarriedBytes) return false;
  return e.path.find(".dist-info/") != std::string::npos || e.path.find(".egg-info") != std::string::npos ||
         e.path.ends_with(".pth") || e.path.ends_with(".egg-link") || e.path.starts_with("usr/app/");
}

// `entry` under `prefix` in a tar of contents, with every parent directory the layer writer wants.
void add_carried(FileEntries& tar, std::set<std::string>& dirs, const std::string& prefix, const FileEntry& entry) {
  FileEntry copy = entry;
  copy.path = prefix + "/" + entry.path;
  copy.mode = 0644;
  copy.uid = copy.gid = 0;
  for (auto slash = copy.path.find('/'); slash != std::string::npos; slash = copy.path.find('/', slash + 1)) {
    std::string dir = copy.path.substr(0, slash);
    if (dirs.insert(dir).second) tar.push_back(FileEntry::directory(dir, 0755));
  }
  tar.push_back(std::move(copy));
}

// Bytes of a file in a tar, up to its size.
std::string read_all(const std::function<std::size_t(char*, std::size_t)>& read, std::uint64_t size) {
  std::string out;
  char buffer[64 * 1024];
  for (std::size_t n; (n = read(buffer, sizeof buffer)) > 0;) {
    out.append(buffer, n);
    if (out.size() > size) break;
  }
  return out;
}

const Descriptor* find_blob(const image::Manifest& manifest, const std::string& digest) {
  for (const Descriptor& d : manifest.layers)
    if (d.digest.str() == digest) return &d;
  return nullptr;
}

// The config of a pip-step artifact as layers; the entries' carried contents are filled in by fill_contents.
std::vector<PipLayer> pip_layers_of(const json& config, const image::Manifest& manifest) {
  if (config.value("format", "") != kPipStepFormat) throw Error("unknown format");
  std::vector<PipLayer> layers;
  for (const json& l : config.at("layers")) {
    PipLayer layer{l.at("what").get<std::string>(), std::nullopt, {}, nullptr};
    if (l.contains("digest")) {
      auto diff_id = Digest::parse(l.at("diff_id").get<std::string>());
      const Descriptor* blob = find_blob(manifest, l.at("digest").get<std::string>());
      if (!diff_id || !blob || blob->size != l.at("size").get<std::uint64_t>())
        throw Error("layer " + l.at("digest").get<std::string>() + " is not the artifact's");
      layer.blob = layers::LayerBlob{*diff_id, blob->digest, blob->size};
    }
    for (const json& e : l.at("entries")) {
      layer.entries.push_back(entry_from_listing_json(e));
      const std::string& path = layer.entries.back().path;
      if (path.empty() || path.front() == '/' || has_parent_reference(path))  // later steps copy entries by path
        throw Error("entry path \"" + path + "\" leaves the image's root");
    }
    layers.push_back(std::move(layer));
  }
  return layers;
}

// Puts the carried contents (tar members "<layer index>/<path>") into the entries flagged "c" in `config`.
void fill_contents(std::vector<PipLayer>& layers, const json& config, const image::Image& artifact) {
  std::map<std::string, FileEntry*> wanted;
  const json& config_layers = config.at("layers");
  for (std::size_t i = 0; i < layers.size(); ++i)
    for (std::size_t k = 0; k < layers[i].entries.size(); ++k)
      if (config_layers.at(i).at("entries").at(k).value("c", 0) == 1)
        wanted[std::to_string(i) + "/" + layers[i].entries[k].path] = &layers[i].entries[k];
  if (wanted.empty()) return;
  std::optional<Descriptor> tar;
  for (const Descriptor& d : artifact.manifest().layers)
    if (d.media_type == kContentsType) tar = d;
  if (!tar) throw Error("the contents of its entries are missing");
  auto visit = [&](const std::string& path, const layers::PathInfo& info, std::uint64_t size,
                   const std::function<std::size_t(char*, std::size_t)>& read) {
    auto it = wanted.find(path);
    if (it == wanted.end() || info.type != layers::PathInfo::Type::kRegular || size != it->second->size) return;
    it->second->data = read_all(read, size);
    if (it->second->data.size() == size) wanted.erase(it);
  };
  layers::list_layer_blob(artifact.blob_path(tar->digest), std::nullopt, "the contents of a cache entry", visit);
  if (!wanted.empty()) throw Error("the contents of " + wanted.begin()->first + " are missing");
}

// A scan directory as a tar's entries.
FileEntries scan_entries(const fs::path& dir) {
  FileEntries entries;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = it->path().lexically_relative(dir).string();
    if (it->is_directory()) {
      entries.push_back(FileEntry::directory(rel, 0755));
    } else if (it->is_regular_file()) {
      FileEntry e;
      e.path = rel;
      e.source = it->path();
      e.size = it->file_size();
      entries.push_back(std::move(e));
    }
  }
  return entries;
}

// Unpacks a scan tar into `dir` (through a staging directory: a half-unpacked scan is never taken for a whole one).
void unpack_scan(const fs::path& blob, const fs::path& dir) {
  fs::create_directories(dir.parent_path());
  ScopedDir staging(staging_path_for(dir));
  auto visit = [&](const std::string& path, const layers::PathInfo& info, std::uint64_t size,
                   const std::function<std::size_t(char*, std::size_t)>& read) {
    if (info.type != layers::PathInfo::Type::kRegular || has_parent_reference(path)) return;
    fs::path to = staging.path() / path;
    fs::create_directories(to.parent_path());
    std::ofstream out(to, std::ios::binary);
    char buffer[64 * 1024];
    for (std::size_t n; (n = read(buffer, sizeof buffer)) > 0;) out.write(buffer, static_cast<std::streamsize>(n));
    if (!out) throw Error("cannot write " + to.string() + " (" + std::to_string(size) + " bytes)");
  };
  layers::list_layer_blob(blob, std::nullopt, "a cached base scan", visit);
  if (!layers::ScannedImage::parse_scan_listing(read_file(staging.path() / "listing.json", 1u << 30)))
    throw Error("its listing is not one");
  std::error_code ec;
  fs::rename(staging.path(), dir, ec);
  if (!ec) staging.release();
  else if (!fs::exists(dir / "listing.json")) throw Error("cannot store it in " + dir.string() + ": " + ec.message());
}

}  // namespace

registry::Reference parse_cache_repo(const std::string& text) {
  const std::string hint = "pass --cache-repo=REGISTRY/REPOSITORY, e.g. us-docker.pkg.dev/PROJECT/REPO/cache";
  auto slash = text.find('/');
  std::string host = text.substr(0, slash);
  bool names_host = host.find('.') != std::string::npos || host.find(':') != std::string::npos || host == "localhost";
  if (slash == std::string::npos || !names_host)
    throw Error("--cache-repo " + mask_userinfo(text) + " does not start with a registry host", hint);
  std::string last = text.substr(text.rfind('/') + 1);
  if (last.find(':') != std::string::npos || last.find('@') != std::string::npos)
    throw Error("--cache-repo " + mask_userinfo(text) + " names a tag or digest; it takes a repository (entries are its tags)",
                hint);
  registry::Reference ref = registry::Reference::parse(text);
  ref.tag.clear();
  return ref;
}

CacheRepo::CacheRepo(registry::Reference repo, registry::Registries& registries, const store::BlobStore& store,
                     const registry::BlobLocations* locations, Log log, Log detail)
    : repo_(std::move(repo)), registries_(registries), store_(store), locations_(locations), log_(std::move(log)),
      detail_(std::move(detail)) {}

void CacheRepo::miss(const std::string& what, const std::string& why) const {
  log_("cache repo " + repo_.name() + ": " + what + ": " + why + " (a cache miss)");
}

void CacheRepo::not_stored(const std::string& what, const std::string& why) const {
  log_("cache repo " + repo_.name() + ": could not store " + what + ": " + why + " (the image is not affected)");
}

// HEAD of the tag: 404 is "no such entry", any other failure an Error.
bool CacheRepo::has(const std::string& tag) {
  net::HttpRequest head;
  head.method = "HEAD";
  head.url = "/v2/" + repo_.repository + "/manifests/" + tag;
  head.headers = {{"Accept", registry::kManifestAccept}};
  net::HttpResponse r = registries_.client(repo_.registry).send(head, {registry::pull_scope(repo_.repository)});
  if (r.status == 404) return false;
  if (r.status != 200) throw Error(tag + ": " + registry::describe_registry_error(r));
  return true;
}

bool CacheRepo::lacks(const std::string& tag) { return damaged_.count(tag) > 0 || !has(tag); }

// The artifact of a tag (manifest and config fetched and checked), or nullptr when there is none.
std::shared_ptr<const image::Image> CacheRepo::open(const std::string& tag) {
  if (!has(tag)) {
    detail_("cache repo " + repo_.name() + ": no " + tag);
    return nullptr;
  }
  registry::Reference ref{repo_.registry, repo_.repository, tag, ""};
  return registry::RemoteImage::open(registries_.client(repo_.registry), ref, image::Platform::parse("linux/amd64"),
                                     store_);
}

std::optional<SharedPipStep> CacheRepo::find_pip_step(const std::string& key) {
  const std::string tag = "pip-" + key;
  try {
    std::shared_ptr<const image::Image> artifact = open(tag);
    if (!artifact) return std::nullopt;
    image::Manifest manifest = artifact->manifest();
    if (manifest.config.media_type != kPipStepType) throw Error("not a pip step (" + manifest.config.media_type + ")");
    json config = json::parse(artifact->raw_config());
    SharedPipStep found{{pip_layers_of(config, manifest), installed_artifacts_from_json(config.at("installed"))},
                        artifact};
    fill_contents(found.step.layers, config, *artifact);
    return found;
  } catch (const std::exception& e) {
    damaged_.insert(tag);
    miss(tag, e.what());
    return std::nullopt;
  }
}

void CacheRepo::share_pip_step(const std::string& key, const PipStepResult& step,
                               const std::vector<layers::LayerBlob>& earlier, const image::Image& image) {
  const std::string tag = "pip-" + key;
  const std::vector<PipLayer>& layers = step.layers;
  try {
    if (!lacks(tag)) return;
    json config{{"format", kPipStepFormat},
                {"layers", json::array()},
                {"installed", installed_artifacts_json(step.installed)}};
    // Each layer as the image lists it (gzip or zstd: the step's key includes the compression).
    image::Manifest listed = image.manifest();
    auto layer_descriptor = [&listed](const layers::LayerBlob& blob) {
      for (const Descriptor& d : listed.layers)
        if (d.digest == blob.digest) return d;
      return Descriptor{std::string(image::media::kOciLayerGzip), blob.digest, blob.size, {}, {}, {}};
    };
    std::vector<Descriptor> blobs;
    FileEntries contents;
    std::set<std::string> dirs;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      json l{{"what", layers[i].what}, {"entries", json::array()}};
      if (const auto& blob = layers[i].blob) {
        l.update({{"diff_id", blob->diff_id.str()}, {"digest", blob->digest.str()}, {"size", blob->size}});
        blobs.push_back(layer_descriptor(*blob));
      }
      for (const FileEntry& e : layers[i].listing()) {
        json entry = entry_listing_json(e);
        if (carried(e)) {
          entry["c"] = 1;
          add_carried(contents, dirs, std::to_string(i), e);
        }
        l["entries"].push_back(std::move(entry));
      }
      config["layers"].push_back(std::move(l));
    }
    // The build's earlier layers too: a runner that finds this entry mounts them instead of uploading them.
    for (const layers::LayerBlob& blob : earlier) blobs.push_back(layer_descriptor(blob));
    if (!contents.empty()) {
      layers::LayerBlob tar = layers::write_layer(store_, std::move(contents), layers::LayerOptions{});
      blobs.push_back({kContentsType, tar.digest, tar.size, {}, {}, {}});
    }
    push(tag, kPipStepType, config.dump(), blobs, &image);
  } catch (const std::exception& e) {
    not_stored(tag, e.what());
  }
}

std::string CacheRepo::facts_tag(const std::string& base_digest, const std::string& selection) {
  image::Sha256 h;
  h.update_field(kScansFormat);
  h.update_field(build_identity());
  h.update_field(selection);
  h.update_field(base_digest);
  return "facts-" + h.finish().hex();
}

bool CacheRepo::fetch_scans(const std::string& tag, const std::vector<ScanDir>& missing) {
  try {
    std::shared_ptr<const image::Image> artifact = open(tag);
    if (!artifact) return false;
    image::Manifest manifest = artifact->manifest();
    if (manifest.config.media_type != kScansType) throw Error("not a base scan (" + manifest.config.media_type + ")");
    json config = json::parse(artifact->raw_config());
    if (config.value("format", "") != kScansFormat) throw Error("unknown format");
    std::map<std::string, std::string> scan_of;  // base layer digest -> its scan's blob digest
    for (const json& l : config.at("layers"))
      scan_of[l.at("layer").get<std::string>()] = l.at("scan").get<std::string>();
    for (const ScanDir& scan : missing) {
      auto it = scan_of.find(scan.layer.str());
      const Descriptor* blob = it == scan_of.end() ? nullptr : find_blob(manifest, it->second);
      if (blob == nullptr) throw Error("it lacks the scan of layer " + scan.layer.str());
      unpack_scan(artifact->blob_path(blob->digest), scan.dir);
    }
    log_("base scan found in the cache repository " + repo_.name() +
         ": no base layer is downloaded to read its Python");
    return true;
  } catch (const std::exception& e) {
    damaged_.insert(tag);
    miss(tag, e.what());
    return false;
  }
}

void CacheRepo::share_scans(const std::string& tag, const std::vector<ScanDir>& scans) {
  try {
    if (!lacks(tag)) return;
    json config{{"format", kScansFormat}, {"layers", json::array()}};
    std::vector<Descriptor> blobs;
    for (const ScanDir& scan : scans) {
      layers::LayerBlob tar = layers::write_layer(store_, scan_entries(scan.dir), layers::LayerOptions{});
      config["layers"].push_back({{"layer", scan.layer.str()}, {"scan", tar.digest.str()}});
      blobs.push_back({kScanLayerType, tar.digest, tar.size, {}, {}, {}});
    }
    push(tag, kScansType, config.dump(), blobs, nullptr);
  } catch (const std::exception& e) {
    not_stored(tag, e.what());
  }
}

// An OCI image manifest with an artifactType (image-spec manifest.md), blobs first and the tag last.
void CacheRepo::push(const std::string& tag, const std::string& artifact_type, const std::string& config,
                     const std::vector<Descriptor>& blobs, const image::Image* source) {
  store::StoredBlob stored = store_.put(config);
  json manifest{{"schemaVersion", 2},
                {"mediaType", image::media::kOciManifest},
                {"artifactType", artifact_type},
                {"config", {{"mediaType", artifact_type}, {"digest", stored.digest.str()}, {"size", stored.size}}},
                {"layers", json::array()}};
  std::set<Digest> seen;
  for (const Descriptor& d : blobs)
    if (seen.insert(d.digest).second) manifest["layers"].push_back(d.to_json());
  image::ArtifactImage artifact(manifest.dump(), config, std::make_shared<store::BlobStore>(store_), source,
                                "a cache entry");
  registry::PushOptions options;
  options.locations = locations_;
  registry::push_image(artifact, {repo_.registry, repo_.repository, tag, ""},
                       [this](const std::string& r) -> registry::RegistryClient& { return registries_.client(r); },
                       options);
  detail_("cache repo " + repo_.name() + ": stored " + tag);
}

}  // namespace trainpack::imagebuild
