// What --tag, --label, --annotation and --annotations-from-ci accept, and what each CI's variables give.
#include "cli/image_metadata.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "cli/cli_help.h"
#include "support/error.h"

namespace {

using trainpack::Error;
using trainpack::cli::annotations_from_ci;
using trainpack::cli::check_tags;
using trainpack::cli::EnvLookup;
using trainpack::cli::parse_key_value;
using trainpack::cli::parse_key_values;

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ImageMetadata, KeyValueSplitsAtTheFirstEqualsSign) {
  EXPECT_EQ(parse_key_value("a=b=c", "--label"), std::make_pair(std::string("a"), std::string("b=c")));
  EXPECT_EQ(parse_key_value("a=", "--label"), std::make_pair(std::string("a"), std::string()));
  EXPECT_EQ(parse_key_values({"k=1", "j=2", "k=3"}, "--label"),
            (std::map<std::string, std::string>{{"j", "2"}, {"k", "3"}}));
}

TEST(ImageMetadata, KeyValueWithoutKeyOrEqualsIsAOneLineError) {
  for (const char* bad : {"novalue", "=value", ""}) {
    try {
      parse_key_value(bad, "--annotation");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--annotation"), std::string::npos) << e.what();
      EXPECT_FALSE(e.hint().empty());
    }
  }
}

TEST(ImageMetadata, TagsFollowTheDistributionSpecGrammar) {
  EXPECT_NO_THROW(check_tags({"v1.2", "latest", "_x", "A-b_c.9", std::string(128, 'a')}));
  for (const std::string& bad : {std::string("-x"), std::string(".x"), std::string("a:b"), std::string("r/a"),
                                 std::string(), std::string(129, 'a'), std::string("a b")})
    EXPECT_THROW(check_tags({"ok", bad}), Error) << bad;
}

// The referrers tag schema (distribution-spec "Referrers Tag Schema") keeps the image's referrers under the tag
// sha256-<hex of its digest>: a --tag of that shape would overwrite the index with the image, or be overwritten.
TEST(ImageMetadata, ATagOfTheReferrersTagShapeIsRefused) {
  const std::string hex(64, 'a');
  for (const std::string& bad : {"sha256-" + hex, "sha256-0123456789abcdef" + std::string(48, '0')}) {
    try {
      check_tags({"v1", bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const trainpack::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
      EXPECT_NE(e.hint().find("referrers"), std::string::npos) << e.hint();
    }
  }
  EXPECT_NO_THROW(check_tags({"sha256-abc", "sha256-" + std::string(63, 'a'), "sha256-" + std::string(64, 'g')}));
}

TEST(ImageMetadata, GitHubActionsGivesSourceAndRevision) {
  auto ci = annotations_from_ci(env_of({{"GITHUB_ACTIONS", "true"},
                                        {"GITHUB_SERVER_URL", "https://github.com"},
                                        {"GITHUB_REPOSITORY", "acme/trainer"},
                                        {"GITHUB_SHA", "0123abc"}}),
                                std::nullopt);
  EXPECT_EQ(ci.ci, "GitHub Actions");
  EXPECT_EQ(ci.annotations, (std::map<std::string, std::string>{
                                {"org.opencontainers.image.revision", "0123abc"},
                                {"org.opencontainers.image.source", "https://github.com/acme/trainer"}}));
}

TEST(ImageMetadata, GitLabGivesTheCommitTimeAsCreated) {
  auto ci = annotations_from_ci(env_of({{"GITLAB_CI", "true"},
                                        {"CI_PROJECT_URL", "https://gitlab.example.com/g/p"},
                                        {"CI_COMMIT_SHA", "feed"},
                                        {"CI_COMMIT_TIMESTAMP", "2024-05-01T10:20:30+02:00"},
                                        {"CI_PIPELINE_CREATED_AT", "2024-05-02T00:00:00Z"}}),
                                std::nullopt);
  EXPECT_EQ(ci.ci, "GitLab CI");
  EXPECT_EQ(ci.annotations.at("org.opencontainers.image.source"), "https://gitlab.example.com/g/p");
  EXPECT_EQ(ci.annotations.at("org.opencontainers.image.revision"), "feed");
  EXPECT_EQ(ci.annotations.at("org.opencontainers.image.created"), "2024-05-01T10:20:30+02:00");
  // A timestamp that is not RFC 3339 is left out, never passed on.
  auto odd = annotations_from_ci(env_of({{"GITLAB_CI", "true"}, {"CI_COMMIT_TIMESTAMP", "yesterday"}}), std::nullopt);
  EXPECT_EQ(odd.annotations.count("org.opencontainers.image.created"), 0u);
  auto no_month = annotations_from_ci(env_of({{"GITLAB_CI", "true"}, {"CI_COMMIT_TIMESTAMP", "2024-13-01T10:20:30Z"}}),
                                      std::nullopt);
  EXPECT_EQ(no_month.annotations.count("org.opencontainers.image.created"), 0u);
}

TEST(ImageMetadata, SourceDateEpochIsTheCreatedTimeWhenSet) {
  auto ci = annotations_from_ci(env_of({{"GITLAB_CI", "true"}, {"CI_COMMIT_TIMESTAMP", "2024-05-01T10:20:30Z"}}),
                                86400);
  EXPECT_EQ(ci.annotations.at("org.opencontainers.image.created"), "1970-01-02T00:00:00Z");
}

TEST(ImageMetadata, CloudBuildReadsTheSubstitutionsAStepIsGiven) {
  auto ci = annotations_from_ci(env_of({{"BUILD_ID", "b-1"},
                                        {"PROJECT_ID", "proj"},
                                        {"COMMIT_SHA", "cafe"},
                                        {"_HEAD_REPO_URL", "https://github.com/acme/trainer"}}),
                                std::nullopt);
  EXPECT_EQ(ci.ci, "Cloud Build");
  EXPECT_EQ(ci.annotations.at("org.opencontainers.image.revision"), "cafe");
  EXPECT_EQ(ci.annotations.at("org.opencontainers.image.source"), "https://github.com/acme/trainer");
}

// The same variables name the run for provenance, with the run's own address.
TEST(ImageMetadata, EachCiNamesItsRunForProvenance) {
  trainpack::provenance::CiRun github = trainpack::cli::ci_run(env_of({{"GITHUB_ACTIONS", "true"},
                                                                          {"GITHUB_SERVER_URL", "https://github.com"},
                                                                          {"GITHUB_REPOSITORY", "acme/trainer"},
                                                                          {"GITHUB_RUN_ID", "42"},
                                                                          {"GITHUB_RUN_ATTEMPT", "2"},
                                                                          {"GITHUB_SHA", "0123abc"}}));
  EXPECT_EQ(github.platform, "GitHub Actions");
  EXPECT_EQ(github.invocation, "https://github.com/acme/trainer/actions/runs/42/attempts/2");
  EXPECT_EQ(github.repository, "https://github.com/acme/trainer");
  EXPECT_EQ(github.revision, "0123abc");
  trainpack::provenance::CiRun gitlab = trainpack::cli::ci_run(
      env_of({{"GITLAB_CI", "true"}, {"CI_JOB_URL", "https://gitlab.example.com/g/p/-/jobs/7"}}));
  EXPECT_EQ(gitlab.invocation, "https://gitlab.example.com/g/p/-/jobs/7");
  trainpack::provenance::CiRun cloud_build =
      trainpack::cli::ci_run(env_of({{"BUILD_ID", "b-1"}, {"PROJECT_ID", "proj"}}));
  EXPECT_EQ(cloud_build.invocation, "https://console.cloud.google.com/cloud-build/builds/b-1?project=proj");
  EXPECT_EQ(trainpack::cli::ci_run(env_of({{"GITHUB_RUN_ID", "1"}})).platform, "");
}

// A CI variable holding a URL may carry credentials (a runner's clone URL with a token, a mirror's "?token="): the
// annotation and the provenance get the URL as index URLs are shown, without userinfo, query or fragment.
TEST(ImageMetadata, CredentialsInCiUrlsReachNeitherTheAnnotationNorTheRun) {
  const std::vector<std::map<std::string, std::string>> runs{
      {{"GITHUB_ACTIONS", "true"},
       {"GITHUB_SERVER_URL", "https://robot:s3cret-pass@github.example.com?token=t0ken-value"},
       {"GITHUB_REPOSITORY", "acme/trainer"},
       {"GITHUB_RUN_ID", "42"}},
      {{"GITLAB_CI", "true"},
       {"CI_PROJECT_URL", "https://gitlab-ci-token:s3cret-pass@gitlab.example.com/g/p?token=t0ken-value#x"},
       {"CI_JOB_URL", "https://s3cret-pass@gitlab.example.com/g/p/-/jobs/7?token=t0ken-value"}},
      {{"BUILD_ID", "b-1"},
       {"PROJECT_ID", "proj"},
       {"_HEAD_REPO_URL", "https://x-access-token:s3cret-pass@github.com/acme/trainer.git?token=t0ken-value"}}};
  for (const auto& vars : runs) {
    trainpack::provenance::CiRun run = trainpack::cli::ci_run(env_of(vars));
    auto ci = annotations_from_ci(env_of(vars), std::nullopt);
    const std::string source = ci.annotations.at("org.opencontainers.image.source");
    for (const std::string& text : {source, run.repository, run.invocation}) {
      EXPECT_EQ(text.find("s3cret-pass"), std::string::npos) << text;
      EXPECT_EQ(text.find("t0ken-value"), std::string::npos) << text;
      EXPECT_EQ(text.find('@'), std::string::npos) << text;
    }
    EXPECT_TRUE(source.starts_with("https://g")) << source;
  }
  trainpack::provenance::CiRun gitlab = trainpack::cli::ci_run(env_of(runs[1]));
  EXPECT_EQ(gitlab.repository, "https://gitlab.example.com/g/p");
  EXPECT_EQ(gitlab.invocation, "https://gitlab.example.com/g/p/-/jobs/7");
  EXPECT_EQ(trainpack::cli::ci_run(env_of(runs[0])).invocation,
            "https://github.example.com/acme/trainer/actions/runs/42/attempts/1");
  EXPECT_EQ(trainpack::cli::ci_run(env_of(runs[2])).repository, "https://github.com/acme/trainer.git");
}

TEST(ImageMetadata, OutsideCiNothingIsRead) {
  auto ci = annotations_from_ci(env_of({{"GITHUB_SHA", "x"}, {"CI_COMMIT_SHA", "y"}, {"COMMIT_SHA", "z"}}),
                                std::nullopt);
  EXPECT_TRUE(ci.ci.empty());
  EXPECT_TRUE(ci.annotations.empty());
}

}  // namespace
