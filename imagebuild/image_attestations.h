#pragma once
// What a build says about the image it made, attached to it as referrers (image/artifact_image.h) that every
// output able to hold them receives (transports/transport.h): an SBOM (sbom/: SPDX 2.3 or CycloneDX 1.6 JSON) and a
// provenance statement (provenance/: in-toto Statement v1 with a SLSA Provenance v1 predicate). Neither changes the
// image or its digest.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imagebuild/installed_artifact.h"
#include "image/artifact_image.h"
#include "image/blob_keeper.h"
#include "image/image.h"
#include "layers/file_entry.h"
#include "layers/image_filesystem.h"
#include "provenance/slsa.h"
#include "python/base_facts.h"
#include "sbom/document.h"
#include "store/cache_dir.h"

namespace trainpack::imagebuild {

enum class SbomFormat { kSpdx, kCycloneDx, kNone };
// "spdx", "cyclonedx", "none"; nullopt for anything else.
std::optional<SbomFormat> parse_sbom_format(std::string_view text);

// The referrers' artifactTypes (the media types their one blob has too).
inline constexpr std::string_view kSpdxType = "application/spdx+json";
inline constexpr std::string_view kCycloneDxType = "application/vnd.cyclonedx+json";
inline constexpr std::string_view kInTotoType = "application/vnd.in-toto+json";

// The packages of an image's filesystem: its OS packages, and, given its Python (`python`, as the pip steps read
// it; nullptr for none), the Python distributions along its sys.path with the Requires-Dist edges its markers select,
// and what conda installed into its prefix. A distribution a pip step installed (`installed`, by name and version)
// carries that step's origin, download URL and sha256, every other one is the base's.
std::vector<sbom::Package> image_packages(const layers::ImageFilesystem& fs, const python::PythonFacts* python,
                                          const std::vector<InstalledArtifact>& installed);

// The packages as the build keeps them between builds (Attestations::kept_image_packages), and back;
// packages_from_json throws nlohmann::json's exceptions for a list packages_json did not write.
nlohmann::json packages_json(const std::vector<sbom::Package>& packages);
std::vector<sbom::Package> packages_from_json(const nlohmann::json& j);

// The regular files of one layer's entries (a COPY's: the trainer's own files), each with its SHA-1 and SHA-256,
// read from where the layer writer reads them; by path.
std::vector<sbom::File> layer_files(const layers::FileEntries& entries);
// The files of several layers' lists (each by path, as layer_files and files_from_json give them), later layers'
// files winning; by path.
std::vector<sbom::File> merged_files(std::vector<std::vector<sbom::File>> layers);
// A layer's files as the build keeps them between builds (by the layer's diff_id), and back; files_from_json throws
// nlohmann::json's exceptions for a list files_json did not write (one not by path included).
nlohmann::json files_json(const std::vector<sbom::File>& files);
std::vector<sbom::File> files_from_json(nlohmann::json&& j);

// The resolved dependencies a provenance statement names: the base by digest, each artifact a pip step downloaded
// with its sha256 (local files by name), and the package indexes given.
std::vector<provenance::Dependency> build_dependencies(const std::string& base_name, const std::string& base_digest,
                                                       const std::vector<InstalledArtifact>& installed,
                                                       const std::vector<std::string>& index_urls);

// An SBOM of any image from its layers alone (`trainpack sbom --generate`): its OS packages and the Python
// distributions along its Python's sys.path (none without a Python), the image as the described package under
// `name`, and its base when its annotations name one (org.opencontainers.image.base.name, .base.digest). Layers are
// read as a pip step's base scan reads them (cached per layer in `cache`); its files are not listed.
sbom::Document generated_sbom(std::shared_ptr<const image::Image> image, const std::string& name,
                              const store::CacheDir& cache);

// The SBOM in `format` (not kNone).
std::string sbom_json(const sbom::Document& document, SbomFormat format);

// The referrers of `image`: the SBOM (when `sbom` is set) and the provenance statement (when `statement` is set),
// each an artifact of one blob, created at `created` (RFC 3339: the image's own time, so they are reproducible too).
std::vector<std::shared_ptr<const image::Image>> attestation_referrers(
    std::shared_ptr<const image::BlobKeeper> blobs, const image::Image& image, SbomFormat format,
    const std::optional<std::string>& sbom, const std::optional<std::string>& statement, const std::string& created);

// An attached document of the kind asked for, checked to be what its referrer says (checked_attachment).
struct Attachment {
  image::Digest referrer;  // the artifact manifest's digest
  std::string type;        // kSpdxType, kCycloneDxType or kInTotoType
  std::string content;     // the document's bytes as attached
  // When the document says it was made (attachment_time): a statement's finishedOn, else startedOn; an SPDX
  // document's creationInfo.created; a CycloneDX BOM's metadata.timestamp. Empty when it says nothing (RFC 3339).
  std::string time;
};

// `found` (image/artifact_image.h) as an attachment of the image `subject`, checked: its manifest's subject is the
// image, its artifactType is the type its listing gave, its one blob has that media type and parses as that format
// (SPDX 2.x JSON, CycloneDX JSON, an in-toto Statement v1 whose subject is the image). nullopt for an in-toto
// statement whose predicate is not SLSA provenance (another kind of attestation); otherwise throws a one-line Error
// naming the referrer.
std::optional<Attachment> checked_attachment(const image::AttachedDocument& found, const image::Digest& subject);

// The time `document` of `type` says it was made (see Attachment::time); "" when it says none in RFC 3339.
std::string attachment_time(const nlohmann::json& document, std::string_view type);

// `attached` newest first: by their own time when every one has one (the same time: the later listed first), else
// the later listed first. Without `every_type`, only those of the first of `types` (earlier preferred) any has.
std::vector<Attachment> newest_first(std::vector<Attachment> attached, const std::vector<std::string>& types,
                                     bool every_type);

// The line that says which of several attachments (`shown`, newest_first's) is shown: "3 provenance statements are
// attached; showing the newest (sha256:…, 2026-…); --all lists them". "" for one.
std::string choice_note(const std::vector<Attachment>& shown);

}  // namespace trainpack::imagebuild
