#pragma once
// The resolver's candidate source for one pip step (python/resolver.h CandidateSource): the index and find-links
// pages filtered to the files the image can install (its wheel tags, pip's format control, yanked files as the
// image's pip sees them), plus the local distributions the step was given (wheels, sdists, the project), each the
// only candidate of its project. A candidate's file is downloaded (into the blob store, verified) or built only
// when the resolver asks for its metadata or the step installs it.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "python/filenames.h"
#include "python/index_client.h"
#include "python/pip_behaviour.h"
#include "python/requirements_file.h"
#include "python/resolver.h"
#include "python/source_build.h"
#include "python/tags.h"
#include "python/wheel_file.h"
#include "store/blob_store.h"

namespace trainpack::python {

// What an installable candidate is on the host.
struct BuiltDistribution {
  std::filesystem::path wheel;                  // a wheel (downloaded, given, or built) to install ...
  std::optional<LegacyInstall> legacy;  // ... or what `setup.py install` staged (pip's legacy install)
  std::string name;                             // as the wheel's file name or the installed PKG-INFO spells it
  Version version;
  CandidateMetadata metadata;           // Requires-Dist, Requires-Python, Provides-Extra
};

// A distribution the user gave by path (--extra-packages, a path line, the project in setup.py): the only
// candidate of its project.
struct LocalDistribution {
  std::filesystem::path file;       // the wheel or sdist as given (empty for a project directory)
  BuiltDistribution built;
  nlohmann::json direct_url;        // PEP 610 record pip writes for it
  bool reinstall_same_version = false;  // an sdist or a directory: pip reinstalls it at the installed version
};

// Builds a downloaded sdist; `display` names it in messages.
using SdistBuilder = std::function<BuiltDistribution(const std::filesystem::path& sdist, const std::string& filename,
                                                     const std::string& display)>;

// The dependencies the resolver needs, from a METADATA / PKG-INFO text.
CandidateMetadata candidate_metadata(const std::string& text);
// pip's own target: packaging.tags.sys_tags() of the image's interpreter (linux_<arch> last, as pip has it).
TagPriority tags_for(const PythonFacts& facts);
// pip's rule for a wheel it is given rather than finds (a path, --extra-packages): one of its tags must be the
// target's, else "X.whl is not a supported wheel on this platform." (resolution/resolvelib/factory.py
// _fail_if_link_is_unsupported_wheel). `where` says who gave it. Throws Error.
void require_supported_wheel(const WheelFilename& wheel, const std::string& filename, const TagPriority& tags,
                             const std::string& where);

// Where a picked candidate's file came from, as an SBOM and a provenance statement name it.
struct ArtifactOrigin {
  std::string filename;  // the wheel or sdist as the index or the user named it; "" for a project directory
  std::string url;       // the index's URL for it, as the page gave it (the caller strips credentials); "" local
  std::string sha256;    // hex of that file; "" for a project directory
  bool local = false;    // given by path: --extra-packages, a path in a requirements file, the project
  bool built = false;    // an sdist or a project, built into the wheel that was installed
};

class IndexCandidates : public CandidateSource {
 public:
  IndexCandidates(IndexClient& client, const store::BlobStore& store, const TagPriority& tags,
                  FormatControl formats, std::map<std::string, LocalDistribution> local,
                  SdistBuilder build_sdist, const PipBehaviour& pip);

  std::vector<CandidateInfo> candidates(const std::string& name) override;
  CandidateMetadata metadata(const std::string& name, const CandidateInfo& c) override {
    return metadata_of(c.handle);
  }

  // A candidate's dependencies: PEP 658 metadata when the index has it, else a wheel's METADATA read in HTTP ranges
  // when the server answers them, else the built distribution's (the whole file downloaded). Read once.
  const CandidateMetadata& metadata_of(std::size_t handle);
  // The picked candidate on the host: downloaded, given, or built from its sdist.
  const BuiltDistribution& built(std::size_t handle);
  // The file as the index or the user gave it (what hash-checking mode checks): the wheel or the sdist.
  std::filesystem::path archive(std::size_t handle);
  std::string filename(std::size_t handle) const;
  const LocalDistribution* local(std::size_t handle) const { return files_.at(handle).local; }
  // Where the picked candidate came from (after archive() or built() of it).
  ArtifactOrigin origin(std::size_t handle);
  // Whether built() would return a wheel at once: one given, or one from the index whose download has finished.
  bool wheel_at_hand(std::size_t handle) const;
  // Starts downloading the files of these candidates, up to `jobs` at once, and returns: archive() or built() of one
  // of them waits for that file only, so the first can be installed while the others arrive. A failed download is
  // reported there; it stops the queue (downloads under way finish).
  void prefetch(const std::vector<std::size_t>& handles, int jobs);

 private:
  struct File {
    IndexFile index;
    const LocalDistribution* local = nullptr;
    std::optional<store::StoredBlob> blob;
    std::optional<BuiltDistribution> built;
    std::optional<CandidateMetadata> metadata;
    bool metadata_by_range = false;  // read from HTTP ranges of the wheel: unverified until it is downloaded
  };
  bool yanked(const IndexFile& f) const;

  IndexClient& client_;
  const store::BlobStore& store_;
  const TagPriority& tags_;
  FormatControl formats_;
  std::map<std::string, LocalDistribution> local_;
  SdistBuilder build_sdist_;
  const PipBehaviour& pip_;
  std::vector<File> files_;
  std::map<std::size_t, std::shared_future<store::StoredBlob>> downloading_;
  std::vector<std::future<void>> downloaders_;  // last: destroyed (joined) before what they use
};

}  // namespace trainpack::python
