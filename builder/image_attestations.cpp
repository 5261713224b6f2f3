#include "builder/image_attestations.h"

#include <map>

#include "builder/python_steps.h"
#include "builder/version.h"
#include "image/artifact_image.h"
#include "layers/scanned_image.h"
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

namespace trainpack::builder {

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

// SPDX 2.3 wants a file's SHA-1 in any case: both digests from one read of the file (or of inline bytes).
sbom::File checksummed(const layers::FileEntry& e) {
  Hasher sha1("sha1"), sha256("sha256");
  auto update = [&](const char* data, std::size_t size) {
    sha1.update(data, size);
    sha256.update(data, size);
  };
  if (e.source.empty()) update(e.data.data(), e.data.size());
  else stream_file(e.source, update);
  return {e.path, sha1.finish_hex(), sha256.finish_hex()};
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

std::vector<sbom::File> copied_files(const std::vector<const layers::FileEntries*>& layers) {
  std::map<std::string, const layers::FileEntry*> last;
  for (const layers::FileEntries* entries : layers)
    for (const layers::FileEntry& e : *entries)
      if (e.type == layers::FileEntry::Type::kRegular && e.zip_member.empty()) last[e.path] = &e;
  std::vector<sbom::File> files;
  for (const auto& [path, entry] : last) files.push_back(checksummed(*entry));
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
    python::ImageConfigFacts cfg{config.env().entries(), config.user(), config.architecture(), config.variant()};
    python = python::read_python_facts(fs, cfg, false);
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

}  // namespace trainpack::builder
