#pragma once
// Where an image came from and how it was made, as an in-toto Statement v1 (github.com/in-toto/attestation,
// spec/v1/statement.md) whose predicate is SLSA Provenance v1 (slsa.dev/spec/v1.0/provenance): the subject is the
// image's manifest digest; the build definition holds the parameters as given (gcloud's flags) and every resolved
// dependency (the base by digest, each artifact a pip step downloaded with its sha256, the package indexes without
// credentials); the run details name the builder (trainpack's version, the CI platform) and the CI's invocation.
// The caller strips credentials from every URI and masks secret parameters; nothing here reads the environment.
#include <string>
#include <utility>
#include <vector>

namespace trainpack::provenance {

struct Subject {
  std::string name;    // "REGISTRY/REPOSITORY" (or the output's path)
  std::string sha256;  // the manifest digest's hex
};

struct Dependency {
  std::string uri;     // "https://files.example.com/numpy-1.24.2-….whl", "oci://REGISTRY/REPOSITORY"
  std::string sha256;  // hex; "" when the dependency is named only (an index)
  std::string name;    // "numpy-1.24.2-cp311-cp311-manylinux_2_17_x86_64.whl", "base image"; may be ""
};

// The CI run that started the build, from its documented variables (cli/ reads them).
struct CiRun {
  std::string platform;     // "GitHub Actions", "GitLab CI", "Cloud Build"; "" when run elsewhere
  std::string invocation;   // the run's URL or id (GITHUB_SERVER_URL/REPOSITORY/actions/runs/RUN_ID/attempts/N,
                            // CI_JOB_URL, BUILD_ID)
  std::string repository;   // the source repository's URL
  std::string revision;     // the commit built
};

struct Statement {
  std::vector<Subject> subjects;
  std::vector<std::pair<std::string, std::string>> parameters;  // flag → value as given, in order
  std::vector<Dependency> dependencies;
  CiRun ci;
  std::string tool_version;       // "0.1.0 (commit abc1234)"
  std::string started, finished;  // RFC 3339 UTC; "" leaves them out
};

// The builder.id of SLSA's run details: the CI platform's hosted builder when known, else trainpack on a host.
std::string builder_id(const CiRun& ci);

// The statement as JSON (one line, then "\n"), the same bytes for the same Statement.
std::string statement_json(const Statement& statement);

// The buildType this statement's buildDefinition says its parameters follow.
inline constexpr const char* kBuildType = "urn:trainpack:build-type:gcloud-ai-custom-jobs-local-package:v1";

}  // namespace trainpack::provenance
