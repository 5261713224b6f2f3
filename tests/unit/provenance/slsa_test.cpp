// The provenance statement (provenance/slsa.h): the fields in-toto Statement v1 and SLSA Provenance v1 require, in
// their places.
#include "provenance/slsa.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using json = nlohmann::json;
using namespace trainpack::provenance;

namespace {

Statement example() {
  Statement s;
  s.subjects = {{"us-central1-docker.pkg.dev/p/trainers/mnist", std::string(64, 'a')}};
  s.parameters = {{"--executor-image-uri", "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest"},
                  {"--script", "trainer/task.py"}};
  s.dependencies = {{"oci://us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310", std::string(64, 'b'), "base"},
                    {"https://files.example.com/numpy-1.24.2-cp310-cp310-manylinux_2_17_x86_64.whl",
                     std::string(64, 'c'), "numpy-1.24.2-cp310-cp310-manylinux_2_17_x86_64.whl"},
                    {"https://us-python.pkg.dev/p/r/simple/", "", "index"}};
  s.ci = {"GitHub Actions", "https://github.com/o/r/actions/runs/7/attempts/1", "https://github.com/o/r",
          std::string(40, 'd')};
  s.tool_version = "0.1.0 (commit abc1234)";
  s.started = "2026-12-05T10:00:00Z";
  s.finished = "2026-12-05T10:00:09Z";
  return s;
}

}  // namespace

TEST(SlsaProvenance, AnInTotoStatementWithTheSlsaV1Predicate) {
  json j = json::parse(statement_json(example()));
  EXPECT_EQ(j.at("_type"), "https://in-toto.io/Statement/v1");
  EXPECT_EQ(j.at("predicateType"), "https://slsa.dev/provenance/v1");
  EXPECT_EQ(j.at("subject"), json::parse(R"([{"name": "us-central1-docker.pkg.dev/p/trainers/mnist",
                                              "digest": {"sha256": ")" + std::string(64, 'a') + R"("}}])"));
  const json& definition = j.at("predicate").at("buildDefinition");
  EXPECT_EQ(definition.at("buildType"), kBuildType);
  EXPECT_EQ(definition.at("externalParameters").at("flags").at("--script"), "trainer/task.py");
  EXPECT_EQ(definition.at("externalParameters").at("source"),
            json::parse(R"({"uri": "https://github.com/o/r", "digest": {"gitCommit": ")" + std::string(40, 'd') +
                        R"("}})"));
  const json& dependencies = definition.at("resolvedDependencies");
  ASSERT_EQ(dependencies.size(), 3u);
  EXPECT_EQ(dependencies[1].at("digest").at("sha256"), std::string(64, 'c'));
  EXPECT_FALSE(dependencies[2].contains("digest")) << "an index is named, not hashed";
  const json& run = j.at("predicate").at("runDetails");
  EXPECT_EQ(run.at("builder").at("id"), "https://github.com/actions/runner");
  EXPECT_EQ(run.at("builder").at("version").at("trainpack"), "0.1.0 (commit abc1234)");
  EXPECT_EQ(run.at("metadata").at("invocationId"), "https://github.com/o/r/actions/runs/7/attempts/1");
  EXPECT_EQ(run.at("metadata").at("startedOn"), "2026-12-05T10:00:00Z");
  EXPECT_EQ(statement_json(example()), statement_json(example()));
}

TEST(SlsaProvenance, OutsideACiTheHostIsTheBuilderAndThereIsNoSourceOrInvocation) {
  Statement s = example();
  s.ci = {};
  json j = json::parse(statement_json(s));
  EXPECT_EQ(j.at("predicate").at("runDetails").at("builder").at("id"), "urn:trainpack:builder:host");
  EXPECT_FALSE(j.at("predicate").at("runDetails").at("metadata").contains("invocationId"));
  EXPECT_FALSE(j.at("predicate").at("buildDefinition").at("externalParameters").contains("source"));
  EXPECT_EQ(builder_id({"Cloud Build", "", "", ""}), "https://cloudbuild.googleapis.com/GoogleHostedWorker");
  EXPECT_EQ(builder_id({"GitLab CI", "", "", ""}), "https://gitlab.com/gitlab-org/gitlab-runner");
}
