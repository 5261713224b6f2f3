#include "imagebuild/image_attestations.h"

#include <algorithm>
#include <map>

#include "imagebuild/python_installer.h"
#include "imagebuild/identity.h"
#include "image/artifact_image.h"
#include "layers/scanned_image.h"
#include "net/encoding.h"
#include "python/base_facts.h"
#include "python/installed_dists.h"
#include "python/names.h"
#include "python/version.h"
#include "sbom/cyclonedx.h"
#include "sbom/image_packages.h"
#include "sbom/spdx.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/utf8.h"

namespace trainpack::imagebuild {

namespace {

// Whether two version strings name one version (PEP 440: "1.0" is "1.0.0"), as METADATA and the resolver spell it.
bool same_version(std::string_view a, std::string_view b) {
  std::optional<python::Version> va = python::Version::try_parse(a), vb = python::Version::try_parse(b);
  return va && vb ? *va == *vb : a == b;
}

sbom::Origin origin_of(const InstalledArtifact& a) {
  if (a.built) return sbom::Origin::kBuiltFromSource;
  return a.local ? sbom::Origin::kLocalArchive : sbom::Origin::kInstalled;
}

// SPDX 2.3 wants a file's SHA-1 in any case: both digests from one read of the file (or of inline bytes); the
// file is named `path`.
sbom::File checksummed(const layers::FileEntry& e, std::string path) {
  Hasher sha1("sha1"), sha256("sha256");
  auto update = [&](const char* data, std::size_t size) {
    sha1.update(data, size);
    sha256.update(data, size);
  };
  if (e.source.empty()) update(e.data.data(), e.data.size());
  else stream_file(e.source, update);
  return {std::move(path), sha1.finish_hex(), sha256.finish_hex()};
}

}  // namespace

std::optional<SbomFormat> parse_sbom_format(std::string_view text) {
  if (text == "spdx") return SbomFormat::kSpdx;
  if (text == "cyclonedx") return SbomFormat::kCycloneDx;
  if (text == "none") return SbomFormat::kNone;
  return std::nullopt;
}

std::vector<sbom::Package> image_packages(const layers::ImageFilesystem& fs, const python::PythonFacts* python,
                                          const std::vector<InstalledArtifact>& installed) {
  std::vector<sbom::Package> packages = sbom::os_packages(fs);
  if (!python) return packages;
  python::MarkerEnvironment environment =
      python::MarkerEnvironment::cpython_linux(python->python_full_version, python->machine);
  std::vector<python::SysPathEntry> sys_path = python::site_sys_path(fs, python->site_dirs);
  for (sbom::Package& p : sbom::python_packages(fs, sys_path, sbom::Origin::kBasePython, &environment)) {
    const InstalledArtifact* from = nullptr;  // a later step's install of the same one wins
    for (const InstalledArtifact& a : installed)
      if (python::canonicalize_name(a.name) == python::canonicalize_name(p.name) && same_version(a.version, p.version))
        from = &a;
    if (from) {
      p.origin = origin_of(*from);
      p.download_url = from->url;
      p.sha256 = from->sha256;
    }
    packages.push_back(std::move(p));
  }
  for (sbom::Package& p : sbom::conda_packages(fs, python->prefix)) packages.push_back(std::move(p));
  return packages;
}

nlohmann::json packages_json(const std::vector<sbom::Package>& packages) {
  nlohmann::json out = nlohmann::json::array();
  for (const sbom::Package& p : packages)
    out.push_back({{"name", p.name}, {"version", p.version}, {"purl", p.purl},
                   {"origin", sbom::origin_name(p.origin)}, {"license_expression", p.license_expression},
                   {"license_text", p.license_text}, {"download_url", p.download_url}, {"sha256", p.sha256},
                   {"depends_on", p.depends_on}});
  return out;
}

std::vector<sbom::Package> packages_from_json(const nlohmann::json& j) {
  static constexpr sbom::Origin kOrigins[] = {sbom::Origin::kBaseOs, sbom::Origin::kBasePython,
                                              sbom::Origin::kInstalled, sbom::Origin::kLocalArchive,
                                              sbom::Origin::kBuiltFromSource};
  std::vector<sbom::Package> packages;
  for (const nlohmann::json& p : j.get_ref<const nlohmann::json::array_t&>()) {
    const std::string origin = p.at("origin").get<std::string>();
    auto known = std::find_if(std::begin(kOrigins), std::end(kOrigins),
                              [&origin](sbom::Origin o) { return sbom::origin_name(o) == origin; });
    if (known == std::end(kOrigins)) throw nlohmann::json::other_error::create(501, "unknown origin " + origin, &p);
    packages.push_back({p.at("name").get<std::string>(), p.at("version").get<std::string>(),
                        p.at("purl").get<std::string>(), *known, p.at("license_expression").get<std::string>(),
                        p.at("license_text").get<std::string>(), p.at("download_url").get<std::string>(),
                        p.at("sha256").get<std::string>(), p.at("depends_on").get<std::vector<std::string>>()});
  }
  return packages;
}

// A path that is not UTF-8 is named with U+FFFD for its stray bytes: an SBOM is JSON.
std::vector<sbom::File> layer_files(const layers::FileEntries& entries) {
  std::map<std::string, const layers::FileEntry*> last;
  for (const layers::FileEntry& e : entries)
    if (e.type == layers::FileEntry::Type::kRegular && e.zip_member.empty()) last[valid_utf8(e.path)] = &e;
  std::vector<sbom::File> files;
  for (const auto& [path, entry] : last) files.push_back(checksummed(*entry, path));
  return files;
}

// Each list is by path, each path once (layer_files, files_from_json): a merge of sorted lists, the later list's
// file where both have a path.
std::vector<sbom::File> merged_files(std::vector<std::vector<sbom::File>> layers) {
  std::vector<sbom::File> out;
  for (std::vector<sbom::File>& later : layers) {
    std::vector<sbom::File> merged;
    merged.reserve(out.size() + later.size());
    auto a = out.begin(), b = later.begin();
    while (a != out.end() || b != later.end()) {
      if (b == later.end() || (a != out.end() && a->path < b->path)) {
        merged.push_back(std::move(*a++));
        continue;
      }
      if (a != out.end() && a->path == b->path) ++a;
      merged.push_back(std::move(*b++));
    }
    out = std::move(merged);
  }
  return out;
}

nlohmann::json files_json(const std::vector<sbom::File>& files) {
  nlohmann::json out = nlohmann::json::array();
  for (const sbom::File& f : files) out.push_back({f.path, f.sha1, f.sha256});
  return out;
}

std::vector<sbom::File> files_from_json(nlohmann::json&& j) {
  std::vector<sbom::File> files;
  auto& list = j.get_ref<nlohmann::json::array_t&>();
  files.reserve(list.size());
  for (nlohmann::json& f : list) {
    files.push_back({std::move(f.at(0).get_ref<std::string&>()), std::move(f.at(1).get_ref<std::string&>()),
                     std::move(f.at(2).get_ref<std::string&>())});
    // merged_files needs each list by path, each path once: a list out of order is not one files_json wrote.
    if (files.size() > 1 && !(files[files.size() - 2].path < files.back().path))
      throw nlohmann::json::other_error::create(501, "the file list is not sorted by path", &f);
  }
  return files;
}

std::vector<provenance::Dependency> build_dependencies(const std::string& base_name, const std::string& base_digest,
                                                       const std::vector<InstalledArtifact>& installed,
                                                       const std::vector<std::string>& index_urls) {
  std::vector<provenance::Dependency> out{{sbom::oci_purl(base_name, base_digest), sbom::digest_hex(base_digest),
                                           "base image " + base_name}};
  for (const InstalledArtifact& a : installed)
    if (!a.sha256.empty() || !a.url.empty()) out.push_back({a.url, a.sha256, a.filename});
  for (const std::string& url : index_urls) out.push_back({url, "", "package index"});
  return out;
}

sbom::Document generated_sbom(std::shared_ptr<const image::Image> image, const std::string& name,
                              const store::CacheDir& cache) {
  image::Manifest manifest = image->manifest();
  image::ImageConfig config = image->config();
  nlohmann::json raw_config = nlohmann::json::parse(image->raw_config(), nullptr, false);
  sbom::Document d{name,
                   image->manifest_digest().str(),
                   image::string_member(manifest.annotations, "org.opencontainers.image.base.name"),
                   image::string_member(manifest.annotations, "org.opencontainers.image.base.digest"),
                   image::string_member(raw_config, "created"),
                   build_identity(),
                   {},
                   {}};
  layers::ScannedImage fs(image, cache, python_scan_selection());
  std::optional<python::PythonFacts> python;
  try {
    python = python::read_python_facts(fs, python::ImageConfigFacts::of(config), false);
  } catch (const Error&) {
    // no Python the pip steps could use: the image's OS packages only
  }
  d.packages = image_packages(fs, python ? &*python : nullptr, {});
  return d;
}

std::string sbom_json(const sbom::Document& document, SbomFormat format) {
  return format == SbomFormat::kCycloneDx ? sbom::cyclonedx_json(document) : sbom::spdx_json(document);
}

std::vector<std::shared_ptr<const image::Image>> attestation_referrers(
    std::shared_ptr<const image::BlobKeeper> blobs, const image::Image& image, SbomFormat format,
    const std::optional<std::string>& sbom, const std::optional<std::string>& statement, const std::string& created) {
  image::Descriptor subject = image::manifest_descriptor(image);
  std::map<std::string, std::string> annotations{{"org.opencontainers.image.created", created}};
  std::vector<std::shared_ptr<const image::Image>> out;
  if (sbom) {
    std::string_view type = format == SbomFormat::kCycloneDx ? kCycloneDxType : kSpdxType;
    out.push_back(image::make_referrer(blobs, subject, type, type, *sbom, annotations, "the SBOM of the image"));
  }
  if (statement) {
    std::map<std::string, std::string> provenance = annotations;
    provenance["in-toto.io/predicate-type"] = "https://slsa.dev/provenance/v1";
    out.push_back(image::make_referrer(blobs, subject, kInTotoType, kInTotoType, *statement, provenance,
                                       "the provenance of the image"));
  }
  return out;
}

namespace {

// The member `key` of `object`; null when `object` is not an object or has none (a malformed document never throws).
const nlohmann::json& member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json none;
  if (!object.is_object()) return none;
  auto it = object.find(key);
  return it == object.end() ? none : *it;
}

// A one-line refusal of the referrer `found`, and what to do about it.
Error refused(const image::AttachedDocument& found, const std::string& why) {
  return Error("the referrer " + found.referrer.str() + " " + why,
               "it was not attached by trainpack build, or was altered since; `oras discover IMAGE` lists what "
               "refers to the image");
}

// The artifact's type as image-spec manifest.md has it: artifactType, else the config's media type.
std::string manifest_artifact_type(const nlohmann::json& manifest) {
  std::string type = image::string_member(manifest, "artifactType");
  return type.empty() ? image::string_member(member(manifest, "config"), "mediaType") : type;
}

// Checks the artifact manifest of `found` says what its listing does: the image as subject, the listed
// artifactType, one blob of that media type.
void check_referrer_manifest(const image::AttachedDocument& found, const image::Digest& subject) {
  nlohmann::json manifest = nlohmann::json::parse(found.manifest, nullptr, false);
  if (!manifest.is_object()) throw refused(found, "is not an image manifest");
  std::string named = image::string_member(member(manifest, "subject"), "digest");
  if (named != subject.str())
    throw refused(found, "names " + (named.empty() ? std::string("no subject") : named) + ", not the image " +
                             subject.str());
  std::string type = manifest_artifact_type(manifest);
  if (type != found.listed_type)
    throw refused(found, "is listed as " + found.listed_type + " but its manifest says " + type);
  const nlohmann::json& layers = member(manifest, "layers");
  if (!layers.is_array() || layers.size() != 1)
    throw refused(found, "has " + std::to_string(layers.is_array() ? layers.size() : 0) + " blobs, not one");
  std::string media_type = image::string_member(layers[0], "mediaType");
  if (media_type != found.listed_type)
    throw refused(found, "holds a blob of " + media_type + ", not " + found.listed_type);
}

// Whether `document` is what `type` says: SPDX 2.x, a CycloneDX BOM, an in-toto Statement v1; the reason if not.
std::string format_mismatch(const nlohmann::json& document, std::string_view type, const image::Digest& subject) {
  if (!document.is_object()) return "is not a JSON object";
  if (type == kSpdxType)
    return image::string_member(document, "spdxVersion").starts_with("SPDX-2.") ? "" : "has no spdxVersion SPDX-2.x";
  if (type == kCycloneDxType)
    return image::string_member(document, "bomFormat") == "CycloneDX" ? "" : "has no bomFormat CycloneDX";
  if (image::string_member(document, "_type") != "https://in-toto.io/Statement/v1")
    return "is not an in-toto Statement v1";
  const nlohmann::json& named = member(document, "subject");
  for (const nlohmann::json& one : named.is_array() ? named : nlohmann::json::array())
    if (image::string_member(member(one, "digest"), "sha256") == subject.hex()) return "";
  return "has a subject that is not the image";
}

}  // namespace

std::string attachment_time(const nlohmann::json& document, std::string_view type) {
  auto rfc3339 = [](const nlohmann::json& object, const char* key) {
    std::string text = image::string_member(object, key);
    return net::parse_rfc3339(text) ? text : std::string();
  };
  if (type == kSpdxType) return rfc3339(member(document, "creationInfo"), "created");
  if (type == kCycloneDxType) return rfc3339(member(document, "metadata"), "timestamp");
  const nlohmann::json& metadata = member(member(member(document, "predicate"), "runDetails"), "metadata");
  std::string finished = rfc3339(metadata, "finishedOn");
  return finished.empty() ? rfc3339(metadata, "startedOn") : finished;
}

std::optional<Attachment> checked_attachment(const image::AttachedDocument& found, const image::Digest& subject) {
  check_referrer_manifest(found, subject);
  nlohmann::json document = nlohmann::json::parse(found.content, nullptr, false);
  if (document.is_discarded()) throw refused(found, "holds a document that is not JSON");
  if (found.listed_type == kInTotoType &&
      image::string_member(document, "predicateType") != "https://slsa.dev/provenance/v1" && document.is_object() &&
      image::string_member(document, "_type") == "https://in-toto.io/Statement/v1")
    return std::nullopt;  // an attestation of another kind (a scan, a signature's claims): not provenance
  if (std::string why = format_mismatch(document, found.listed_type, subject); !why.empty())
    throw refused(found, "is listed as " + found.listed_type + " but its document " + why);
  return Attachment{found.referrer, found.listed_type, found.content, attachment_time(document, found.listed_type)};
}

std::vector<Attachment> newest_first(std::vector<Attachment> attached, const std::vector<std::string>& types,
                                     bool every_type) {
  if (!every_type) {
    auto first = std::find_if(types.begin(), types.end(), [&](const std::string& type) {
      return std::any_of(attached.begin(), attached.end(), [&](const Attachment& a) { return a.type == type; });
    });
    std::erase_if(attached, [&](const Attachment& a) { return first == types.end() || a.type != *first; });
  }
  bool timed = std::all_of(attached.begin(), attached.end(), [](const Attachment& a) { return !a.time.empty(); });
  std::reverse(attached.begin(), attached.end());  // the later listed first, among equals too
  if (timed)
    std::stable_sort(attached.begin(), attached.end(), [](const Attachment& a, const Attachment& b) {
      return *net::parse_rfc3339(a.time) > *net::parse_rfc3339(b.time);
    });
  return attached;
}

std::string choice_note(const std::vector<Attachment>& shown) {
  if (shown.size() < 2) return "";
  bool timed = std::all_of(shown.begin(), shown.end(), [](const Attachment& a) { return !a.time.empty(); });
  std::string kind = std::all_of(shown.begin(), shown.end(), [](const Attachment& a) { return a.type == kInTotoType; })
                         ? "provenance statements"
                         : "SBOMs";
  return std::to_string(shown.size()) + " " + kind + " are attached; showing " +
         (timed ? "the newest (" + shown[0].referrer.str() + ", " + shown[0].time + ")"
                : "the last listed (" + shown[0].referrer.str() + ")") +
         "; --all lists them";
}

}  // namespace trainpack::imagebuild
