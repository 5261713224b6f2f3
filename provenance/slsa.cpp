#include "provenance/slsa.h"

#include <nlohmann/json.hpp>

namespace trainpack::provenance {

namespace {

using json = nlohmann::json;

json dependency_json(const Dependency& d) {
  json j = json::object();
  if (!d.uri.empty()) j["uri"] = d.uri;
  if (!d.sha256.empty()) j["digest"] = {{"sha256", d.sha256}};
  if (!d.name.empty()) j["name"] = d.name;
  return j;
}

json build_definition(const Statement& s) {
  json parameters = json::object();
  for (const auto& [flag, value] : s.parameters) parameters[flag] = value;
  json external{{"flags", parameters}};
  if (!s.ci.repository.empty()) {
    json source{{"uri", s.ci.repository}};
    if (!s.ci.revision.empty()) source["digest"] = {{"gitCommit", s.ci.revision}};
    external["source"] = source;
  }
  json dependencies = json::array();
  for (const Dependency& d : s.dependencies) dependencies.push_back(dependency_json(d));
  return {{"buildType", kBuildType}, {"externalParameters", external}, {"resolvedDependencies", dependencies}};
}

json run_details(const Statement& s) {
  json metadata = json::object();  // times only when given: a build outside CI gives the same statement each time
  if (!s.started.empty()) metadata["startedOn"] = s.started;
  if (!s.finished.empty()) metadata["finishedOn"] = s.finished;
  if (!s.ci.invocation.empty()) metadata["invocationId"] = s.ci.invocation;
  return {{"builder", {{"id", builder_id(s.ci)}, {"version", {{"trainpack", s.tool_version}}}}},
          {"metadata", metadata}};
}

}  // namespace

std::string builder_id(const CiRun& ci) {
  // The hosted builders as the platforms name them in their own provenance.
  if (ci.platform == "GitHub Actions") return "https://github.com/actions/runner";
  if (ci.platform == "GitLab CI") return "https://gitlab.com/gitlab-org/gitlab-runner";
  if (ci.platform == "Cloud Build") return "https://cloudbuild.googleapis.com/GoogleHostedWorker";
  return "urn:trainpack:builder:host";
}

std::string statement_json(const Statement& s) {
  json subjects = json::array();
  for (const Subject& subject : s.subjects)
    subjects.push_back({{"name", subject.name}, {"digest", {{"sha256", subject.sha256}}}});
  json statement{{"_type", "https://in-toto.io/Statement/v1"},
                 {"subject", subjects},
                 {"predicateType", "https://slsa.dev/provenance/v1"},
                 {"predicate", {{"buildDefinition", build_definition(s)}, {"runDetails", run_details(s)}}}};
  return statement.dump() + "\n";
}

}  // namespace trainpack::provenance
