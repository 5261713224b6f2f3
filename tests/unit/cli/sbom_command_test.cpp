// `trainpack sbom` reading back what a build attached to an OCI layout, and what a build says of outputs that get
// none: several statements (a rebuild in another CI run), referrers that are not what they claim, an untagged layout
// and a docker-archive. The same against a registry's referrers tag is in tests/integration/registry_build_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "imagebuild/image_attestations.h"
#include "tests/unit/cli_test_support.h"
#include "image/artifact_image.h"
#include "tests/unit/image_test_support.h"
#include "store/blob_store.h"
#include "support/fs.h"
#include "transports/oci_layout.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using trainpack::testing::CliResult;
using trainpack::testing::trainpack;

// Environment variables set for the test's duration, as a CI runner sets them; restored after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_)
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::map<std::string, std::string> gitlab_job(const std::string& job) {
  return {{"GITLAB_CI", "true"},
          {"CI_PROJECT_URL", "https://gitlab-ci-token:s3cret-pass@gitlab.example.com/g/p?private_token=t0ken-value"},
          {"CI_COMMIT_SHA", "feed"},
          {"CI_JOB_URL", "https://gitlab.example.com/g/p/-/jobs/" + job + "?token=t0ken-value"}};
}

class SbomCommandTest : public ::testing::Test {
 protected:
  SbomCommandTest() {
    fs::create_directories(pkg_ / "trainer");
    trainpack::write_file_atomic(pkg_ / "trainer" / "task.py", "print('train')\n");
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, base_, "1");
  }
  CliResult build(const std::vector<std::string>& outputs, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"build", "-q", "--format=json", "--executor-image-uri=python:3.10",
                                  "--base-source=oci:" + base_.string() + ":1",
                                  "--cache-dir=" + (root_.path() / "cache").string(),
                                  "--local-package-path=" + pkg_.string(), "--script=trainer/task.py"};
    for (const std::string& out : outputs) args.push_back("--output=" + out);
    args.insert(args.end(), extra.begin(), extra.end());
    return trainpack(args);
  }
  CliResult sbom(std::vector<std::string> args) {
    args.insert(args.begin(), {"sbom", "--cache-dir=" + (root_.path() / "cache").string()});
    return trainpack(args);
  }

  trainpack::ScopedDir root_{trainpack::make_temp_dir({}, "trainpack-sbom-")};
  const fs::path pkg_ = root_.path() / "pkg";
  const fs::path base_ = root_.path() / "base";
};

// A rebuild in another CI job makes the same image and another statement: both stay attached, the newest is shown
// with a note saying so, --all lists both newest first. No credential of the CI's URLs reaches the annotation, the
// statement or the SBOM.
TEST_F(SbomCommandTest, ARebuildsStatementIsShownAndEveryOneIsListed) {
  const fs::path layout = root_.path() / "out";
  const std::string out = "oci:" + layout.string() + ":v1";
  std::string digest;
  for (const std::string job : {"1", "2"}) {
    ScopedEnv ci(gitlab_job(job));
    CliResult r = build({out}, {"--annotations-from-ci"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (!digest.empty()) {
      EXPECT_EQ(json::parse(r.out).at("manifest_digest"), digest) << "the image changed";
    }
    digest = json::parse(r.out).at("manifest_digest");
    for (const std::string& text : {r.out, r.err}) EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  }
  CliResult shown = sbom({"--provenance", out});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  json statement = json::parse(shown.out);
  EXPECT_EQ(statement.at("predicate").at("runDetails").at("metadata").at("invocationId"),
            "https://gitlab.example.com/g/p/-/jobs/2");
  EXPECT_TRUE(shown.err.starts_with("trainpack: note: 2 provenance statements are attached; showing the newest ("))
      << shown.err;
  EXPECT_NE(shown.err.find("--all lists them"), std::string::npos) << shown.err;
  EXPECT_EQ(std::count(shown.err.begin(), shown.err.end(), '\n'), 1) << shown.err;

  CliResult all = sbom({"--provenance", "--all", out});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  json listed = json::parse(all.out);
  ASSERT_EQ(listed.size(), 2u) << all.out;
  EXPECT_EQ(listed[0].at("document"), statement);
  EXPECT_EQ(listed[1].at("document").at("predicate").at("runDetails").at("metadata").at("invocationId"),
            "https://gitlab.example.com/g/p/-/jobs/1");
  for (const json& one : listed) {
    EXPECT_EQ(one.at("artifactType"), "application/vnd.in-toto+json");
    EXPECT_TRUE(one.at("referrer").get<std::string>().starts_with("sha256:"));
    EXPECT_TRUE(one.at("time").is_string()) << one.dump();
  }
  EXPECT_NE(all.out.find("https://gitlab.example.com/g/p\""), std::string::npos) << "the source, stripped";

  CliResult spdx = sbom({out});  // the SBOM is the same bytes each time: one
  ASSERT_EQ(spdx.exit_code, 0) << spdx.err;
  EXPECT_TRUE(spdx.err.empty()) << spdx.err;
  json index = json::parse(trainpack::read_file(layout / "index.json"));
  std::string manifest;
  for (const json& d : index.at("manifests"))
    if (d.at("digest") == digest) manifest = trainpack::read_file(layout / "blobs" / "sha256" / digest.substr(7));
  EXPECT_NE(manifest.find("https://gitlab.example.com/g/p\""), std::string::npos) << manifest;
  for (const std::string& text : {manifest, shown.out, all.out, spdx.out}) {
    EXPECT_EQ(text.find("s3cret-pass"), std::string::npos) << text;
    EXPECT_EQ(text.find("t0ken-value"), std::string::npos) << text;
  }
  EXPECT_EQ(sbom({"--generate", "--all", out}).exit_code, 2);
}

// A referrer of the image whose document is not what it claims is refused with one line naming it, not printed.
TEST_F(SbomCommandTest, AReferrerThatIsNotWhatItClaimsIsRefused) {
  const fs::path layout = root_.path() / "out";
  const std::string out = "oci:" + layout.string() + ":v1";
  CliResult r = build({out}, {"--sbom=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto image = trainpack::transports::open_oci_layout(layout, "v1", trainpack::image::Platform::parse("linux/amd64"));
  auto store = std::make_shared<trainpack::store::BlobStore>(root_.path() / "store2");
  auto forged = trainpack::image::make_referrer(store, trainpack::image::manifest_descriptor(*image),
                                                "application/spdx+json", "application/spdx+json",
                                                "#!/bin/sh\necho not an SBOM\n", {}, "a forged SBOM");
  trainpack::transports::write_oci_layout(*forged, layout, "", nullptr, {});
  CliResult refused = sbom({out});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_TRUE(refused.out.empty()) << refused.out;
  EXPECT_TRUE(refused.err.starts_with("trainpack: error: the referrer " + forged->manifest_digest().str()))
      << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 2) << refused.err;  // the cause, a hint
  EXPECT_EQ(sbom({"--provenance", out}).exit_code, 0) << "the statement is still what it says";
}

// An output that cannot hold the SBOM and provenance says so: a warning line each, and "not_attached" in the JSON.
TEST_F(SbomCommandTest, OutputsWithoutAttachmentsSaySo) {
  const std::string untagged = "oci:" + (root_.path() / "untagged").string();
  const std::string archive = "docker-archive:" + (root_.path() / "image.tar").string();
  CliResult r = build({untagged, archive, "oci:" + (root_.path() / "tagged").string() + ":v1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json result = json::parse(r.out);
  ASSERT_EQ(result.at("not_attached").size(), 2u) << r.out;
  EXPECT_TRUE(result["not_attached"][0].at("output").get<std::string>().starts_with(untagged + ":")) << r.out;
  EXPECT_NE(result["not_attached"][0].at("reason").get<std::string>().find("without a tag"), std::string::npos);
  EXPECT_TRUE(result["not_attached"][1].at("output").get<std::string>().starts_with(archive)) << r.out;
  EXPECT_NE(result["not_attached"][1].at("reason").get<std::string>().find("docker-archive"), std::string::npos);
  EXPECT_EQ(result.at("attached").size(), 2u);
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; (end = r.err.find('\n', at)) != std::string::npos; at = end + 1)
    if (r.err.compare(at, 20, "trainpack: warning: ") == 0) lines.push_back(r.err.substr(at, end - at));
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_TRUE(lines[0].starts_with("trainpack: warning: SBOM and provenance not attached to " + untagged)) << lines[0];
  EXPECT_TRUE(lines[1].starts_with("trainpack: warning: SBOM and provenance not attached to " + archive)) << lines[1];

  CliResult text = build({archive}, {"--format=text", "--sbom=none"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.err.find("trainpack: warning: provenance not attached to " + archive), std::string::npos)
      << text.err;
  CliResult none = build({archive}, {"--sbom=none", "--provenance=none"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(json::parse(none.out).at("not_attached").empty()) << none.out;
  EXPECT_EQ(none.err.find("not attached"), std::string::npos) << none.err;
}

}  // namespace
