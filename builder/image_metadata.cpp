#include "builder/image_metadata.h"

#include <cstdlib>

#include "layers/appended_image.h"
#include "net/encoding.h"
#include "registry/reference.h"
#include "support/error.h"

namespace trainpack::builder {

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

void check_tags(const std::vector<std::string>& tags) {
  for (const std::string& tag : tags)
    if (!registry::is_valid_tag(tag))
      throw Error("--tag=" + tag + " is not a valid tag",
                  "a tag is 1-128 letters, digits, '_', '.' and '-', not starting with '.' or '-' (the tag alone, "
                  "without the repository: --tag=v1.2)");
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

// The CI's source, revision and commit time, by what it sets in every job.
CiAnnotations read_ci(const EnvLookup& env) {
  CiAnnotations ci;
  auto put = [&ci](const char* key, const std::optional<std::string>& value) {
    if (value) ci.annotations[key] = *value;
  };
  if (env("GITHUB_ACTIONS") == "true") {
    ci.ci = "GitHub Actions";
    auto server = env("GITHUB_SERVER_URL"), repo = env("GITHUB_REPOSITORY");
    if (server && repo) ci.annotations[kSource] = *server + "/" + *repo;
    put(kRevision, env("GITHUB_SHA"));
  } else if (env("GITLAB_CI") == "true") {
    ci.ci = "GitLab CI";
    put(kSource, env("CI_PROJECT_URL"));
    put(kRevision, env("CI_COMMIT_SHA"));
    std::optional<std::string> created = env("CI_COMMIT_TIMESTAMP");
    if (!created) created = env("CI_PIPELINE_CREATED_AT");
    // annotations.md asks RFC 3339 for .created; a CI's timestamp of another shape is left out, not guessed at.
    if (created && net::parse_rfc3339(*created)) ci.annotations[kCreated] = *created;
  } else if (env("BUILD_ID") && env("PROJECT_ID")) {
    ci.ci = "Cloud Build";
    put(kSource, env("_HEAD_REPO_URL"));
    put(kRevision, env("COMMIT_SHA"));
  }
  return ci;
}

}  // namespace

CiAnnotations annotations_from_ci(const EnvLookup& env, std::optional<std::int64_t> source_date_epoch) {
  CiAnnotations ci = read_ci(env);
  if (source_date_epoch) ci.annotations[kCreated] = layers::rfc3339_utc(*source_date_epoch);
  return ci;
}

}  // namespace trainpack::builder
