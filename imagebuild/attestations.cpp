#include "imagebuild/attestations.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "imagebuild/identity.h"
#include "layers/stacked_filesystem.h"
#include "layers/whiteouts.h"
#include "net/url.h"
#include "python/base_facts.h"
#include "store/sealed_text.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/human.h"
#include "support/paths.h"

namespace trainpack::imagebuild {
using layers::FileEntry;
using nlohmann::json;

namespace {

// Whether an entry of a layer after the last pip step may change what image_packages finds: os-release, an OS
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

// A value kept sealed in `area` under `name`: `from_json` of it when it is there and whole; nullopt when it is not
// there, or is damaged or of another shape (then discarded with a warning naming `what`).
template <typename FromJson>
auto read_kept(const store::CacheArea& area, const std::string& name, const std::string& what, FromJson from_json)
    -> std::optional<decltype(from_json(json()))> {
  std::optional<std::string> text = store::read_sealed(area, name, what);
  if (!text) return std::nullopt;
  try {
    return from_json(json::parse(*text));
  } catch (const std::exception&) {  // not what from_json reads
  }
  area.discard(name, "it is not " + what + " this trainpack kept");
  return std::nullopt;
}

}  // namespace

Attestations::Attestations(const BuildRequest& request, const store::CacheDir& cache, Progress& progress)
    : req_(request), cache_(cache), progress_(progress) {}

bool Attestations::wanted() const { return req_.sbom != SbomFormat::kNone || req_.provenance; }

std::vector<std::shared_ptr<const image::Image>> Attestations::referrers(const AttestedBuild& build) {
  std::optional<std::string> sbom, statement;
  std::string unkept;  // the key of an SBOM made here: kept once its referrer has stored its blob
  if (req_.sbom != SbomFormat::kNone) sbom = sbom_text(build, unkept);
  if (req_.provenance) statement = provenance::statement_json(provenance_statement(build));
  auto referrers = attestation_referrers(std::make_shared<store::BlobStore>(cache_.blobs()), build.image, req_.sbom,
                                         sbom, statement, build.created);
  if (!unkept.empty())  // the SBOM's referrer comes first; its one layer is the SBOM's blob
    store::keep_sealed(cache_.area(store::CacheKind::kSboms), unkept,
                       referrers.front()->manifest().layers.at(0).digest.str());
  return referrers;
}

// The SBOM is a function of the image (its digest covers every layer), what the pip steps installed from where, and
// the names it is given: kept under that key, so a build of an unchanged image reads no listing again. What is kept
// is the digest of the SBOM's blob, the one its referrer pushes: the text, megabytes for a large extra dir, is
// written and hashed once, by its referrer (`unkept` is set to the key the caller keeps it under then).
std::string Attestations::sbom_text(const AttestedBuild& build, std::string& unkept) {
  image::Sha256 key;
  for (const std::string& field : {build_identity(), std::to_string(static_cast<int>(req_.sbom)),
                                   build.image.manifest_digest().str(), image_name(), req_.base_name,
                                   installed_artifacts_json(build.installed).dump()})
    key.update_field(field);
  const store::CacheArea sboms = cache_.area(store::CacheKind::kSboms);
  const std::string name = key.finish().hex() + ".blob";
  if (std::optional<std::string> kept = kept_sbom(sboms, name)) return *kept;
  unkept = name;
  return sbom_json(sbom_document(build), req_.sbom);
}

// The SBOM kept under `name`: the blob it names, read back and checked against its digest; nullopt when either is
// missing or damaged (a damaged one is discarded).
std::optional<std::string> Attestations::kept_sbom(const store::CacheArea& sboms, const std::string& name) const {
  std::optional<std::string> kept = store::read_sealed(sboms, name, "an SBOM's blob digest");
  if (!kept) return std::nullopt;
  std::optional<image::Digest> digest = image::Digest::parse(*kept);
  if (!digest) {
    sboms.discard(name, "it is not an SBOM's blob digest this trainpack kept");
    return std::nullopt;
  }
  std::optional<std::filesystem::path> blob = cache_.blobs().find(*digest);
  if (!blob) return std::nullopt;
  try {
    std::string text = read_file(*blob, std::uintmax_t(1) << 32, "an SBOM blob");
    image::Digest actual = image::sha256_of(text);
    if (actual == *digest) return text;
    cache_.blobs().discard(*digest, actual);
  } catch (const Error&) {  // gone since find(): made again
  }
  return std::nullopt;
}

// The image's packages when a pip step read the base's Python (the base's OS and Python packages, what the steps
// installed); a build that only copies code names the base by digest and reads none of its layers. The trainer's
// copied files in either case.
sbom::Document Attestations::sbom_document(const AttestedBuild& build) {
  sbom::Document d{image_name(), build.image.manifest_digest().str(), req_.base_name, build.base_digest,
                   build.created, build_identity(), {}, {}};
  bool pip_steps = std::any_of(req_.steps.begin(), req_.steps.end(), [](const gcloud::BuildStep& s) {
    return std::holds_alternative<gcloud::PipInstallStep>(s.action);
  });
  if (pip_steps) d.packages = kept_image_packages(build);
  d.files = copied_files(build.stack);
  return d;
}

// The image's packages are a function of the base, the layers up to the last pip step's (what the pip steps
// installed included) and the config its Python is read with, unless a later layer holds package records: kept
// under that key, so a build whose code alone changed reads neither the base's scans nor a reused step's listing.
std::vector<sbom::Package> Attestations::kept_image_packages(const AttestedBuild& build) {
  LayerStack& stack = build.stack;
  const std::size_t through = stack.through_last_pip_step();
  for (const layers::FileEntries* layer : stack.entries(through, stack.size()))
    if (std::any_of(layer->begin(), layer->end(), may_change_packages))
      return image_packages_through(build, stack.size());
  image::Sha256 key;
  const image::ImageConfig& config = build.config;
  const std::string installed = installed_artifacts_json(build.installed).dump();
  for (const std::string& field :
       {build_identity(), build.base_digest, installed, config.user(), config.architecture(), config.variant()})
    key.update_field(field);
  const image::EnvList env = config.env();  // entries() refers into it: kept alive for the loop
  for (const std::string& entry : env.entries()) key.update_field(entry);
  for (std::size_t i = 0; i < through; ++i)
    key.update_field(stack[i].instruction + (stack[i].blob ? " " + stack[i].blob->diff_id.str() : ""));
  const store::CacheArea kept = cache_.area(store::CacheKind::kSboms);
  const std::string name = "packages-" + key.finish().hex() + ".json";
  if (auto packages = read_kept(kept, name, "a package list", packages_from_json)) return *packages;
  std::vector<sbom::Package> packages = image_packages_through(build, through);
  store::keep_sealed(kept, name, packages_json(packages).dump());
  return packages;
}

// The trainer's files: each COPY layer's, kept by the layer's diff_id (its tar's hash: the same files with the same
// bytes), so a build hashes the files of the layers it made anew and reads the others' lists.
std::vector<sbom::File> Attestations::copied_files(const LayerStack& stack) {
  const store::CacheArea kept = cache_.area(store::CacheKind::kSboms);
  std::vector<std::vector<sbom::File>> per_layer;
  for (const LayerStack::Layer* layer : stack.copied()) {
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
    store::keep_sealed(kept, name, files_json(per_layer.back()).dump());
    progress_.detail("hashed the files of a layer for the SBOM (" +
                     counted(per_layer.back().size(), "file", "files") + "): " + layer->instruction);
  }
  return merged_files(std::move(per_layer));
}

// The packages of the base with the first `history_entries` of this build's layers on it.
std::vector<sbom::Package> Attestations::image_packages_through(const AttestedBuild& build,
                                                                std::size_t history_entries) {
  const layers::ScannedImage& base = build.base_filesystem();
  layers::StackedFilesystem fs(base, base.index(), build.stack.entries(0, history_entries));
  python::PythonFacts python = build.python_facts(build.config);
  return image_packages(fs, &python, build.installed);
}

provenance::Statement Attestations::provenance_statement(const AttestedBuild& build) const {
  provenance::Statement s;
  for (const transports::ImageLocation& out : req_.outputs)
    s.subjects.push_back({out.is_registry() ? out.registry_reference().name() : out.str(),
                          build.image.manifest_digest().hex()});
  s.parameters = req_.parameters;
  std::vector<std::string> indexes;
  if (req_.python.index_url) indexes.push_back(net::url_for_display(*req_.python.index_url));
  for (const std::string& url : req_.python.extra_index_urls) indexes.push_back(net::url_for_display(url));
  s.dependencies = build_dependencies(req_.base_name, build.base_digest, build.installed, indexes);
  s.ci = req_.ci;
  s.tool_version = build_identity();
  if (!s.ci.platform.empty()) {  // a CI run is one event; elsewhere the same inputs give the same statement
    s.started = image::rfc3339_utc(started_);
    s.finished = image::rfc3339_utc(std::time(nullptr));
  }
  return s;
}

// The first output's repository (a registry) or location, as the documents name the image.
std::string Attestations::image_name() const {
  if (req_.outputs.empty()) return "";
  const transports::ImageLocation& out = req_.outputs.front();
  return out.is_registry() ? out.registry_reference().name() : out.str();
}

}  // namespace trainpack::imagebuild
