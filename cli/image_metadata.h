#pragma once
// What the user adds to an image besides gcloud's build: tags (--tag), config labels (--label), manifest annotations
// (--annotation, --annotations-from-ci). Nothing here is added unless asked, so the default image stays gcloud's.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provenance/slsa.h"

namespace trainpack::cli {

// "KEY=VALUE" as --label and --annotation take it (the first '=' splits; the value may be empty or hold '=');
// throws Error naming `flag` for text without '=' or with an empty key.
std::pair<std::string, std::string> parse_key_value(std::string_view text, std::string_view flag);

// Every "KEY=VALUE" of a repeatable flag, a later one of the same key winning (as docker build --label).
std::map<std::string, std::string> parse_key_values(const std::vector<std::string>& texts, std::string_view flag);

// Checks each --tag against the distribution spec's tag grammar; throws Error naming the first bad one, UsageError
// for one refuse_referrers_tag refuses.
void check_tags(const std::vector<std::string>& tags);

// Throws UsageError, saying `named` (the flag or output) is wrong, for a tag of the referrers tag schema's shape
// ("sha256-" and 64 hex digits: distribution-spec "Referrers Tag Schema", registry/referrers.h), under which
// registries without the referrers API list an image's referrers: the image or its referrers would overwrite it.
void refuse_referrers_tag(std::string_view tag, const std::string& named);

// An environment variable's value, or nullopt when unset; std::getenv for a real run, a map in tests.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup process_environment();

// The OCI standard annotations (image-spec annotations.md) a CI run tells of: org.opencontainers.image.source,
// .revision and .created.
struct CiAnnotations {
  std::string ci;  // "GitHub Actions", "GitLab CI", "Cloud Build"; empty outside a CI this knows
  std::map<std::string, std::string> annotations;
};

// Read from GitHub Actions (GITHUB_ACTIONS=true: GITHUB_SERVER_URL/GITHUB_REPOSITORY, GITHUB_SHA), GitLab CI
// (GITLAB_CI=true: CI_PROJECT_URL, CI_COMMIT_SHA, CI_COMMIT_TIMESTAMP, else CI_PIPELINE_CREATED_AT) or Cloud Build
// (BUILD_ID and PROJECT_ID: COMMIT_SHA, and _HEAD_REPO_URL for a pull request trigger; a Cloud Build step sees its
// substitutions only through options.automapSubstitutions or the step's env). URLs are taken without userinfo,
// query or fragment (a runner's token). `created` is SOURCE_DATE_EPOCH when
// set (the time the layers carry, so the same commit gives the same digest), else the commit's time where the CI
// gives it; never the time of the build, which would make every build's manifest differ.
// `source_date_epoch` is SOURCE_DATE_EPOCH as the build read it, nullopt when unset.
CiAnnotations annotations_from_ci(const EnvLookup& env, std::optional<std::int64_t> source_date_epoch);

// The CI run that starts the build, for provenance: the same platforms and variables, plus the run's own address
// (GitHub: GITHUB_SERVER_URL/GITHUB_REPOSITORY/actions/runs/GITHUB_RUN_ID/attempts/GITHUB_RUN_ATTEMPT; GitLab:
// CI_JOB_URL; Cloud Build: the console's page of BUILD_ID in PROJECT_ID). All empty outside a CI this knows.
provenance::CiRun ci_run(const EnvLookup& env);

}  // namespace trainpack::cli
