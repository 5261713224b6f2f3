#pragma once
// The build cache shared through a registry (`--cache-repo=REGISTRY/REPOSITORY`, as kaniko's --cache-repo and
// BuildKit's registry cache): what one runner learnt is kept as OCI artifacts in a repository every runner can read
// with the push's credentials, so a runner with an empty --cache-dir neither scans the base nor installs an
// unchanged pip step again.
//
// Two kinds of artifact, each an OCI image manifest (image-spec manifest.md, "Guidelines for Artifact Usage") under a
// tag named for its key:
//  - `pip-<step key>`: a pip step (imagebuild/pip_step_cache.h: the key covers the base, the earlier layers, the
//    instruction, the options and this build of trainpack). Layers: the step's layer blobs (the image's own, so a
//    push to the same registry mounts them), the build's earlier layer blobs (mountable too), and a tar of the
//    entries' small contents later steps read (installed distributions' metadata, the build's files in /usr/app).
//    The config lists each layer's entries.
//  - `facts-<sha256 of the base digest, scan selection and trainpack build>`: the base scan (layers/scanned_image.h:
//    each base layer's listing and the files the pip steps read), one tar per base layer, so that a pip step that
//    must run reads the base's Python without downloading a base layer.
// The pip steps after a step found there read only its entries' carried contents (metadata, /usr/app); its other
// files are listed without their bytes. Every blob read is checked against its digest; a missing tag is a quiet
// miss, anything else wrong with an entry (unreadable, corrupt, inconsistent) a miss said in one line, and the entry
// is replaced after the build. Entries are ordinary tags: expire them with the registry's tag deletion or cleanup
// policies (prefixes `pip-`, `facts-`).
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "imagebuild/pip_step_cache.h"
#include "image/image.h"
#include "registry/reference.h"
#include "store/blob_store.h"

namespace trainpack::registry {
class BlobLocations;
class Registries;
}

namespace trainpack::imagebuild {

// "REGISTRY/REPOSITORY" as --cache-repo takes it; throws Error (one line and a hint) for anything else.
registry::Reference parse_cache_repo(const std::string& text);

// A pip step found in the cache repository: its layers, and the artifact that holds their blobs.
struct SharedPipStep {
  PipStepResult step;
  std::shared_ptr<const image::Image> artifact;
};

// One base layer's scan directory (layers::ScannedImage: listing.json, files/...).
struct ScanDir {
  image::Digest layer;
  std::filesystem::path dir;
};

class CacheRepo {
 public:
  using Log = std::function<void(const std::string&)>;
  // `locations` (optional) names repositories of the registry to mount blobs from when storing; `log` prints a
  // line, `detail` one only --verbose shows.
  CacheRepo(registry::Reference repo, registry::Registries& registries, const store::BlobStore& store,
            const registry::BlobLocations* locations, Log log, Log detail);

  const registry::Reference& repo() const { return repo_; }

  // The pip step of `key`, its entries' contents fetched (the layer blobs are not: the image reads, mounts or
  // relays them from `artifact`); nullopt on a miss.
  std::optional<SharedPipStep> find_pip_step(const std::string& key);
  // Stores a step's layers unless the repository has them; blobs are read through `image` (the built image, whose
  // `earlier` layers precede the step). Never throws: a failure is a logged line.
  void share_pip_step(const std::string& key, const PipStepResult& step,
                      const std::vector<layers::LayerBlob>& earlier, const image::Image& image);

  // The tag of a base's scan.
  static std::string facts_tag(const std::string& base_digest, const std::string& selection);
  // Fills the missing scan directories from the repository; false on a miss.
  bool fetch_scans(const std::string& tag, const std::vector<ScanDir>& missing);
  // Stores the scans unless the repository has them. Never throws.
  void share_scans(const std::string& tag, const std::vector<ScanDir>& scans);

 private:
  std::shared_ptr<const image::Image> open(const std::string& tag);
  bool has(const std::string& tag);
  // Whether storing `tag` is needed: it is absent, or this build found it damaged (then it is replaced).
  bool lacks(const std::string& tag);
  void push(const std::string& tag, const std::string& artifact_type, const std::string& config,
            const std::vector<image::Descriptor>& blobs, const image::Image* source);
  void miss(const std::string& what, const std::string& why) const;
  void not_stored(const std::string& what, const std::string& why) const;

  registry::Reference repo_;
  registry::Registries& registries_;
  store::BlobStore store_;
  const registry::BlobLocations* locations_;
  Log log_;
  Log detail_;
  std::set<std::string> damaged_;  // tags this build found unusable
};

}  // namespace trainpack::imagebuild
