#include "cli/image_metadata.h"

#include <cstdlib>

#include "cli/cli_help.h"
#include "image/appended_image.h"
#include "net/encoding.h"
#include "net/url.h"
#include "registry/reference.h"
#include "support/error.h"

namespace trainpack::cli {

std::pair<std::string, std::string> parse_key_value(std::string_view text, std::string_view flag) {
  std::size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    throw Error(std::string(flag) + " takes KEY=VALUE, not \"" + std::string(text) + "\"",
                "e.g. " + std::string(flag) + "=org.opencontainers.image.title=trainer (an empty value: KEY=)");
  if (eq == 0)
    throw Error(std::string(flag) + "=" + std::string(text) + " has no key", "the key is what comes before the '='");
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

std::map<std::string, std::string> parse_key_values(const std::vector<std::string>& texts, std::string_view flag) {
  std::map<std::string, std::string> out;
  for (const std::string& text : texts) {
    auto [key, value] = parse_key_value(text, flag);
    out[key] = value;
  }
  return out;
}

void refuse_referrers_tag(std::string_view tag, const std::string& named) {
  constexpr std::string_view prefix = "sha256-";
  if (tag.size() != prefix.size() + 64 || !tag.starts_with(prefix) ||
      tag.substr(prefix.size()).find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return;
  throw UsageError(named + " has the shape of a referrers tag (sha256-<digest hex>)",
                   "registries without the referrers API list an image's SBOM and provenance under that tag; "
                   "choose another tag");
}

void check_tags(const std::vector<std::string>& tags) {
  for (const std::string& tag : tags) {
    refuse_referrers_tag(tag, "--tag=" + tag);
    if (!registry::is_valid_tag(tag))
      throw Error("--tag=" + tag + " is not a valid tag",
                  "a tag is 1-128 letters, digits, '_', '.' and '-', not starting with '.' or '-' (the tag alone, "
                  "without the repository: --tag=v1.2)");
  }
}

EnvLookup process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
}

namespace {

constexpr const char* kSource = "org.opencontainers.image.source";
constexpr const char* kRevision = "org.opencontainers.image.revision";
constexpr const char* kCreated = "org.opencontainers.image.created";

}  // namespace

provenance::CiRun ci_run(const EnvLookup& env) {
  provenance::CiRun run;
  auto value = [&env](const char* name) { return env(name).value_or(""); };
  // A URL a CI gives may carry a token (userinfo, "?token="): kept as index URLs are shown, without either.
  auto url = [&env](const char* name) { return net::url_for_display(env(name).value_or("")); };
  if (env("GITHUB_ACTIONS") == "true") {
    run.platform = "GitHub Actions";
    std::string server = url("GITHUB_SERVER_URL");
    auto repo = env("GITHUB_REPOSITORY");
    if (!server.empty() && repo) run.repository = server + "/" + *repo;
    if (auto id = env("GITHUB_RUN_ID"); id && !run.repository.empty())
      run.invocation = run.repository + "/actions/runs/" + *id + "/attempts/" + env("GITHUB_RUN_ATTEMPT").value_or("1");
    run.revision = value("GITHUB_SHA");
  } else if (env("GITLAB_CI") == "true") {
    run.platform = "GitLab CI";
    run.repository = url("CI_PROJECT_URL");
    run.revision = value("CI_COMMIT_SHA");
    run.invocation = url("CI_JOB_URL");
  } else if (env("BUILD_ID") && env("PROJECT_ID")) {
    run.platform = "Cloud Build";
    run.repository = url("_HEAD_REPO_URL");
    run.revision = value("COMMIT_SHA");
    run.invocation = "https://console.cloud.google.com/cloud-build/builds/" + value("BUILD_ID") + "?project=" +
                     value("PROJECT_ID");
  }
  return run;
}

CiAnnotations annotations_from_ci(const EnvLookup& env, std::optional<std::int64_t> source_date_epoch) {
  provenance::CiRun run = ci_run(env);
  CiAnnotations ci;
  ci.ci = run.platform;
  if (!run.repository.empty()) ci.annotations[kSource] = run.repository;
  if (!run.revision.empty()) ci.annotations[kRevision] = run.revision;
  if (run.platform == "GitLab CI") {
    std::optional<std::string> created = env("CI_COMMIT_TIMESTAMP");
    if (!created) created = env("CI_PIPELINE_CREATED_AT");
    // annotations.md asks RFC 3339 for .created; a CI's timestamp of another shape is left out, not guessed at.
    if (created && net::parse_rfc3339(*created)) ci.annotations[kCreated] = *created;
  }
  if (source_date_epoch) ci.annotations[kCreated] = image::rfc3339_utc(*source_date_epoch);
  return ci;
}

}  // namespace trainpack::cli
