#pragma once
// A distribution a pip step installed and where it came from: what the image's SBOM and provenance say of it, kept
// with the step in the pip-step cache and the cache repository so that a reused step says the same.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainpack::imagebuild {

struct InstalledArtifact {
  std::string name;      // as the wheel's file name or metadata spells it
  std::string version;
  std::string filename;  // the wheel or sdist installed; "" for a project directory
  std::string url;       // where it was downloaded from, without userinfo, query or fragment; "" for a local file
  std::string sha256;    // of that file, hex; "" for a project directory
  bool local = false;    // given by path (--extra-packages, a path in a requirements file, the project)
  bool built = false;    // built from an sdist or a project
  bool operator==(const InstalledArtifact&) const = default;
};

nlohmann::json installed_artifacts_json(const std::vector<InstalledArtifact>& artifacts);
// Throws nlohmann::json's exceptions for a malformed list.
std::vector<InstalledArtifact> installed_artifacts_from_json(const nlohmann::json& j);

}  // namespace trainpack::imagebuild
