#include "imagebuild/installed_artifact.h"

namespace trainpack::imagebuild {

nlohmann::json installed_artifacts_json(const std::vector<InstalledArtifact>& artifacts) {
  nlohmann::json out = nlohmann::json::array();
  for (const InstalledArtifact& a : artifacts)
    out.push_back({{"name", a.name}, {"version", a.version}, {"filename", a.filename}, {"url", a.url},
                   {"sha256", a.sha256}, {"local", a.local}, {"built", a.built}});
  return out;
}

std::vector<InstalledArtifact> installed_artifacts_from_json(const nlohmann::json& j) {
  std::vector<InstalledArtifact> out;
  for (const nlohmann::json& a : j.get<std::vector<nlohmann::json>>())
    out.push_back({a.at("name"), a.at("version"), a.at("filename"), a.at("url"), a.at("sha256"), a.at("local"),
                   a.at("built")});
  return out;
}

}  // namespace trainpack::imagebuild
