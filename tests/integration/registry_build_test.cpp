// trainpack build with registries on both ends, against a real docker-registry (distribution) started by the test
// with its access log on, so what crossed the wire can be counted: base blobs must never be uploaded, a push to the
// base's own registry mounts them, and a rebuild moves only what changed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/integration/access_logged_registry.h"
#include "tests/integration/delay_line.h"
#include "tests/integration/sbom_validation.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class RegistryBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("tp-registry");
    registry_ = std::make_unique<AccessLoggedRegistry>(dir_->path() / "registry");
    base_ref_ = push_test_base(*registry_, "base/python", base_layers_);
    ASSERT_FALSE(base_layers_.empty());
    pkg_ = dir_->path() / "pkg";
    fs::copy(fs::path(source_dir()) / "testdata" / "example-trainer", pkg_, fs::copy_options::recursive);
  }

  // The image alone unless `extra` asks for its SBOM and provenance: most of these tests count what its push moves.
  CommandResult build(const std::string& output_image, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{trainpack_bin(), "build", "--executor-image-uri=" + base_ref_,
                                  "--local-package-path=" + pkg_.string(), "--script=trainer/task.py",
                                  "--extra-dirs=config", "--output-image-uri=" + output_image,
                                  "--cache-dir=" + (dir_->path() / "cache").string(), "--format=json",
                                  "--sbom=none", "--provenance=none"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_command(args);
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<AccessLoggedRegistry> registry_;
  std::string base_ref_;
  std::vector<std::string> base_layers_;
  fs::path pkg_;
};

TEST_F(RegistryBuildTest, PushToTheBasesRegistryMountsBaseLayersAndRebuildsMoveOnlyWhatChanged) {
  registry_->clear_log();
  const std::string target = registry_->host() + "/trainer/app:v1";
  auto r = build(target);
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  json result = json::parse(r.out);
  std::string digest = result.at("manifest_digest");
  ASSERT_EQ(result.at("pushed").size(), 1u);
  EXPECT_EQ(result["pushed"][0], registry_->host() + "/trainer/app@" + digest);

  auto log = registry_->requests();
  for (const auto& layer : base_layers_) {
    EXPECT_EQ(count(log, "PUT", hex_of(layer)), 0) << "base layer uploaded";
    EXPECT_EQ(count(log, "PATCH", hex_of(layer)), 0) << "base layer uploaded";
    EXPECT_EQ(count(log, "POST", "mount=sha256%3A" + hex_of(layer)), 1) << "base layer not mounted";
    // Not one base layer byte is read, even with an empty cache: only the base's manifest and config are.
    EXPECT_EQ(count(log, "GET", "/blobs/sha256:" + hex_of(layer)), 0) << "base layer downloaded";
  }
  EXPECT_EQ(count(log, "PUT", "/v2/trainer/app/manifests/v1"), 1);

  // The image runs after docker pull (127.0.0.0/8 registries are insecure by default for dockerd).
  auto pull = run_command(docker_command({"pull", target}));
  ASSERT_EQ(pull.exit_code, 0) << describe({"docker pull"}, pull);
  auto run = run_command(docker_command({"run", "--rm", "--network", "none", target, "--epochs", "2"}));
  EXPECT_EQ(run.exit_code, 0) << describe({"docker run"}, run);
  EXPECT_NE(run.out.find("epoch 2/2"), std::string::npos) << run.out;
  run_command(docker_command({"rmi", "-f", target}));

  // skopeo sees the same digest.
  auto inspect = run_command({"skopeo", "inspect", "--tls-verify=false", "docker://" + target});
  ASSERT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect"}, inspect);
  EXPECT_EQ(json::parse(inspect.out).at("Digest"), digest);

  // Rebuild with only the trainer code changed: one new layer, the config and the manifest; no base blob at all.
  write_file(pkg_ / "trainer" / "task.py", read_file(pkg_ / "trainer" / "task.py") + "\n# tuned\n");
  registry_->clear_log();
  auto again = build(registry_->host() + "/trainer/app:v2");
  ASSERT_EQ(again.exit_code, 0) << describe({"trainpack build"}, again);
  json second = json::parse(again.out);
  EXPECT_EQ(second.at("layers_built"), 1);
  EXPECT_EQ(second.at("blobs").at("uploaded"), 2) << again.out;  // the changed layer and the config
  log = registry_->requests();
  int blob_puts = 0;
  for (const auto& req : log) blob_puts += req.method == "PUT" && req.path.find("/blobs/uploads/") != std::string::npos;
  EXPECT_EQ(blob_puts, 2);
  for (const auto& layer : base_layers_) EXPECT_EQ(count(log, "GET", hex_of(layer)), 0) << "base layer read again";
  EXPECT_EQ(count(log, "PUT", "/v2/trainer/app/manifests/v2"), 1);
}

// Rebuilding the same tag after a code change, as a developer does: one HEAD of the tag finds the manifest this cache
// pushed there last time, which vouches for every blob it names (no HEAD each, no GET that Docker Hub would count as
// a pull), and the new code layer and config, small and never pushed there, are sent without asking first. The
// result is complete: skopeo copies every blob of it.
TEST_F(RegistryBuildTest, RebuildingATagAsksOnceForWhatItHoldsAndSendsSmallNewBlobsStraightAway) {
  const std::string target = registry_->host() + "/trainer/app:v1";
  auto first = build(target);
  ASSERT_EQ(first.exit_code, 0) << describe({"trainpack build"}, first);
  write_file(pkg_ / "trainer" / "task.py", read_file(pkg_ / "trainer" / "task.py") + "\n# tuned\n");
  registry_->clear_log();
  auto again = build(target);
  ASSERT_EQ(again.exit_code, 0) << describe({"trainpack build"}, again);
  json result = json::parse(again.out);
  EXPECT_EQ(result.at("blobs").at("uploaded"), 2) << again.out;  // the changed layer and the config
  auto log = registry_->requests();
  EXPECT_EQ(count(log, "HEAD", "/v2/trainer/app/manifests/v1"), 1);
  EXPECT_EQ(count(log, "GET", "/v2/trainer/app/manifests/"), 0);
  EXPECT_EQ(count(log, "HEAD", "/v2/trainer/app/blobs/"), 0) << "blobs the tag's manifest names were asked about";
  EXPECT_EQ(count(log, "PUT", "/v2/trainer/app/manifests/v1"), 1);

  auto copy = run_command({"skopeo", "copy", "--src-tls-verify=false", "docker://" + target,
                           "oci:" + (dir_->path() / "copy").string() + ":v1"});
  ASSERT_EQ(copy.exit_code, 0) << describe({"skopeo copy"}, copy);
  auto inspect = run_command({"skopeo", "inspect", "--tls-verify=false", "docker://" + target});
  ASSERT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect"}, inspect);
  EXPECT_EQ(json::parse(inspect.out).at("Digest"), result.at("manifest_digest"));
}

// The push begins with the build (registry/push_ahead.h): the tag is asked for and two upload sessions are opened
// while the steps run, and the new code layer goes up as soon as it is made. A code-only rebuild uses both sessions
// (the code layer, the config), opens no other; an unchanged rebuild cancels them. No session is ever left open.
TEST_F(RegistryBuildTest, APushBegunWithTheBuildUsesTheSessionsItOpenedAndLeavesNoneOpen) {
  const std::string target = registry_->host() + "/trainer/app:v1";
  auto first = build(target);
  ASSERT_EQ(first.exit_code, 0) << describe({"trainpack build"}, first);
  EXPECT_EQ(registry_->open_uploads("trainer/app"), 0);

  auto uploads_started = [](const std::vector<AccessLoggedRegistry::Request>& log) {
    int n = 0;
    for (const auto& r : log) n += r.method == "POST" && r.path.find("mount=") == std::string::npos;
    return n;
  };
  write_file(pkg_ / "trainer" / "task.py", read_file(pkg_ / "trainer" / "task.py") + "\n# tuned\n");
  registry_->clear_log();
  auto edited = build(target);
  ASSERT_EQ(edited.exit_code, 0) << describe({"trainpack build"}, edited);
  EXPECT_EQ(json::parse(edited.out).at("blobs").at("uploaded"), 2) << edited.out;
  std::string code_layer = json::parse(edited.out).at("layers").back().at("digest");
  EXPECT_NE(edited.err.find("uploaded  " + code_layer.substr(7, 12)), std::string::npos)
      << "the code layer pushed ahead has no progress row: " << edited.err;
  auto log = registry_->requests();
  EXPECT_EQ(uploads_started(log), 2) << "the push opened sessions of its own";
  EXPECT_EQ(count(log, "DELETE", "/blobs/uploads/"), 0);
  EXPECT_EQ(registry_->open_uploads("trainer/app"), 0);

  registry_->clear_log();
  auto unchanged = build(target);
  ASSERT_EQ(unchanged.exit_code, 0) << describe({"trainpack build"}, unchanged);
  EXPECT_EQ(json::parse(unchanged.out).at("blobs").at("uploaded"), 0) << unchanged.out;
  log = registry_->requests();
  EXPECT_EQ(uploads_started(log), 2);
  EXPECT_EQ(count(log, "DELETE", "/blobs/uploads/"), 2) << "the unused sessions were not cancelled";
  EXPECT_EQ(registry_->open_uploads("trainer/app"), 0);
  EXPECT_EQ(json::parse(unchanged.out).at("manifest_digest"), json::parse(edited.out).at("manifest_digest"));
}

// A build that fails after its first layers were pushed ahead stops there: no tag, no upload session left open.
TEST_F(RegistryBuildTest, ABuildThatFailsAfterItsPushBeganLeavesNoTagAndNoSessionOpen) {
  fs::path index = dir_->path() / "empty-index" / "simple";
  fs::create_directories(index);
  const std::string target = registry_->host() + "/trainer/failed:v1";
  auto r = build(target, {"--requirements=no-such-project", "--index-url=file://" + index.string(), "--tag=also"});
  ASSERT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("no-such-project"), std::string::npos) << r.err;
  auto log = registry_->requests();
  EXPECT_GE(count(log, "PUT", "/v2/trainer/failed/blobs/uploads/"), 1) << "no layer was pushed ahead";
  EXPECT_EQ(count(log, "PUT", "/v2/trainer/failed/manifests/"), 0);
  EXPECT_EQ(registry_->open_uploads("trainer/failed"), 0);
  auto inspect = run_command({"skopeo", "inspect", "--tls-verify=false", "docker://" + target});
  EXPECT_NE(inspect.exit_code, 0) << "the failed build's tag exists";
  inspect = run_command(
      {"skopeo", "inspect", "--tls-verify=false", "docker://" + registry_->host() + "/trainer/failed:also"});
  EXPECT_NE(inspect.exit_code, 0) << "the failed build's --tag exists";
}

// A second repository of the same registry gets this build's own layers and config by mounts from the repository an
// earlier push put them in (the cache remembers it: registry/blob_locations), not by uploads, as docker push does.
TEST_F(RegistryBuildTest, ASecondRepositoryMountsWhatAnEarlierPushUploaded) {
  auto first = build(registry_->host() + "/trainer/first:v1");
  ASSERT_EQ(first.exit_code, 0) << describe({"trainpack build"}, first);
  registry_->clear_log();
  auto second = build(registry_->host() + "/team/second:v1");
  ASSERT_EQ(second.exit_code, 0) << describe({"trainpack build"}, second);
  json result = json::parse(second.out);
  EXPECT_EQ(result.at("manifest_digest"), json::parse(first.out).at("manifest_digest"));
  EXPECT_EQ(result.at("blobs").at("uploaded"), 0) << second.out;
  auto log = registry_->requests();
  int blob_puts = 0;
  for (const auto& req : log) blob_puts += req.method == "PUT" && req.path.find("/blobs/uploads/") != std::string::npos;
  EXPECT_EQ(blob_puts, 0) << "a blob was uploaded instead of mounted";
  EXPECT_GE(count(log, "POST", "from=trainer/first"), 1) << "nothing was mounted from the first repository";
}

// A target in another registry cannot mount the base's blobs: they are relayed from the base's registry to the
// target's, each GET once, without ever landing in the local blob store; the image then pulls and runs.
TEST_F(RegistryBuildTest, PushToAnotherRegistryRelaysBaseLayersWithoutStoringThem) {
  AccessLoggedRegistry other(dir_->path() / "other");
  registry_->clear_log();
  const std::string target = other.host() + "/trainer/relayed:v1";
  auto r = build(target);
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  json result = json::parse(r.out);
  auto source_log = registry_->requests();
  auto target_log = other.requests();
  for (const auto& layer : base_layers_) {
    EXPECT_EQ(count(source_log, "GET", "/blobs/sha256:" + hex_of(layer)), 1) << "base layer not read exactly once";
    EXPECT_EQ(count(target_log, "PUT", hex_of(layer)), 1) << "base layer not uploaded to the other registry";
    EXPECT_FALSE(fs::exists(trainpack::store::kind_dir(dir_->path() / "cache", trainpack::store::CacheKind::kBlobs) / "sha256" /
                            hex_of(layer)))
        << "a relayed base layer was written to the local store";
  }
  auto inspect = run_command({"skopeo", "inspect", "--tls-verify=false", "docker://" + target});
  ASSERT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect"}, inspect);
  EXPECT_EQ(json::parse(inspect.out).at("Digest"), result.at("manifest_digest"));
  // Every blob is really there with the right bytes: skopeo verifies digests while copying them back.
  auto back = run_command({"skopeo", "copy", "--src-tls-verify=false", "docker://" + target,
                           "oci:" + (dir_->path() / "back").string() + ":x"});
  EXPECT_EQ(back.exit_code, 0) << describe({"skopeo copy"}, back);
  auto pull = run_command(docker_command({"pull", target}));
  ASSERT_EQ(pull.exit_code, 0) << describe({"docker pull"}, pull);
  auto run = run_command(docker_command({"run", "--rm", "--network", "none", target, "--epochs", "1"}));
  EXPECT_EQ(run.exit_code, 0) << describe({"docker run"}, run);
  run_command(docker_command({"rmi", "-f", target}));
}

TEST_F(RegistryBuildTest, RegistryBaseToLocalOutputsAndPullBackRunsUnderRunc) {
  const std::string target = registry_->host() + "/trainer/pulled:v1";
  auto r = build(target, {"--output=oci:" + (dir_->path() / "out").string() + ":v1",
                          "--output=docker://" + target});
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  auto v = run_command({"oci-image-tool", "validate", "--type", "image", (dir_->path() / "out").string()});
  EXPECT_EQ(v.exit_code, 0) << describe({"oci-image-tool"}, v);

  auto copy = run_command({"skopeo", "copy", "--src-tls-verify=false", "docker://" + target,
                           "oci:" + (dir_->path() / "back").string() + ":v1"});
  ASSERT_EQ(copy.exit_code, 0) << describe({"skopeo copy"}, copy);
  fs::path bundle = dir_->path() / "bundle";
  auto unpack = run_command({"umoci", "unpack", "--image", (dir_->path() / "back").string() + ":v1", bundle.string()});
  ASSERT_EQ(unpack.exit_code, 0) << describe({"umoci unpack"}, unpack);
  json spec = json::parse(read_file(bundle / "config.json"));
  spec["process"]["terminal"] = false;
  write_file(bundle / "config.json", spec.dump());
  auto run = run_command({"runc", "run", "-b", bundle.string(), "tp-reg-" + std::to_string(::getpid())});
  EXPECT_EQ(run.exit_code, 0) << describe({"runc run"}, run);
  EXPECT_NE(run.out.find("done:"), std::string::npos) << run.out;
}

TEST_F(RegistryBuildTest, MissingBaseAndUnreachableRegistryAreOneLineErrors) {
  auto missing = run_command({trainpack_bin(), "build", "-q", "--executor-image-uri=" + registry_->host() + "/no/such:tag",
                              "--local-package-path=" + pkg_.string(), "--script=trainer/task.py",
                              "--output-image-uri=" + registry_->host() + "/trainer/x:v1",
                              "--cache-dir=" + (dir_->path() / "cache").string()});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_TRUE(missing.err.starts_with("trainpack: error: ")) << missing.err;
  EXPECT_NE(missing.err.find("no/such"), std::string::npos) << missing.err;
  auto tags = run_command({"skopeo", "list-tags", "--tls-verify=false", "docker://" + registry_->host() + "/trainer/x"});
  EXPECT_NE(tags.exit_code, 0) << "nothing may be pushed: " << tags.out;

  auto down = run_command({trainpack_bin(), "build", "-q", "--executor-image-uri=127.0.0.1:9/base/python:3.11",
                           "--local-package-path=" + pkg_.string(), "--script=trainer/task.py",
                           "--output=oci:" + (dir_->path() / "never").string(),
                           "--cache-dir=" + (dir_->path() / "cache").string()});
  EXPECT_NE(down.exit_code, 0);
  EXPECT_TRUE(down.err.starts_with("trainpack: error: ")) << down.err;
  EXPECT_NE(down.err.find("127.0.0.1:9"), std::string::npos) << down.err;
  EXPECT_LE(std::count(down.err.begin(), down.err.end(), '\n'), 2) << down.err;
  EXPECT_FALSE(fs::exists(dir_->path() / "never"));
}

TEST_F(RegistryBuildTest, JobSpecOutPinsThePushedImageByDigest) {
  fs::path spec_file = dir_->path() / "job.json";
  auto r = build(registry_->host() + "/trainer/app:job",
                 {"--job-spec-out=" + spec_file.string(), "--machine-type=n1-highmem-8", "--replica-count=2",
                  "--args=--epochs=7", "--env=MODE=full"});
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  json result = json::parse(r.out);
  json spec = json::parse(read_file(spec_file));
  ASSERT_TRUE(spec.contains("workerPoolSpecs")) << spec.dump();
  const json& pool = spec["workerPoolSpecs"][0];
  EXPECT_EQ(pool["containerSpec"]["imageUri"], result["pushed"][0]);
  EXPECT_EQ(pool["containerSpec"]["imageUri"].get<std::string>().substr(
                pool["containerSpec"]["imageUri"].get<std::string>().find('@') + 1),
            result["manifest_digest"]);
  EXPECT_EQ(pool["machineSpec"]["machineType"], "n1-highmem-8");
  EXPECT_EQ(pool["replicaCount"], 2);
  EXPECT_EQ(pool["containerSpec"]["args"], json({"--epochs=7"}));
  EXPECT_EQ(pool["containerSpec"]["env"], json({{{"name", "MODE"}, {"value", "full"}}}));
  // The pinned image is really there.
  auto inspect = run_command({"skopeo", "inspect", "--tls-verify=false",
                              "docker://" + pool["containerSpec"]["imageUri"].get<std::string>()});
  EXPECT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect"}, inspect);
}

// --tag pushes the one manifest under more tags after the output's own (blobs once), --label and --annotation land
// in the config and the manifest, --image-name-with-digest-file names every pushed tag as kaniko does; a dry run
// then finds every new layer in the registry.
TEST_F(RegistryBuildTest, ExtraTagsLabelsAnnotationsAndTheImageNameFile) {
  const std::string repo = registry_->host() + "/trainer/tagged";
  fs::path names = dir_->path() / "names.txt";
  auto r = build(repo + ":main", {"--tag=v1", "--tag=stable", "--label=team=ml", "--annotation=com.example.k=v",
                                  "--image-name-with-digest-file=" + names.string()});
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  json result = json::parse(r.out);
  const std::string digest = result.at("manifest_digest");
  EXPECT_EQ(result.at("tags"), json({repo + ":main", repo + ":v1", repo + ":stable"}));
  EXPECT_EQ(read_file(names), repo + "@" + digest + "\n" + repo + "@" + digest + "\n" + repo + "@" + digest + "\n");
  auto log = registry_->requests();
  EXPECT_EQ(count(log, "PUT", "/v2/trainer/tagged/manifests/"), 3);
  for (const std::string tag : {"main", "v1", "stable"}) {
    auto inspect = run_command({"skopeo", "inspect", "--tls-verify=false", "docker://" + repo + ":" + tag});
    ASSERT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect"}, inspect);
    json info = json::parse(inspect.out);
    EXPECT_EQ(info.at("Digest"), digest) << tag;
    EXPECT_EQ(info.at("Labels").at("team"), "ml");
  }
  auto raw = run_command({"skopeo", "inspect", "--raw", "--tls-verify=false", "docker://" + repo + ":v1"});
  ASSERT_EQ(raw.exit_code, 0) << describe({"skopeo inspect --raw"}, raw);
  json annotations = json::parse(raw.out).at("annotations");
  EXPECT_EQ(annotations.at("com.example.k"), "v");
  EXPECT_EQ(annotations.at("org.opencontainers.image.base.name"), base_ref_);

  auto plan = build(repo + ":main", {"--dry-run", "-q"});
  ASSERT_EQ(plan.exit_code, 0) << describe({"trainpack build --dry-run"}, plan);
  int new_layers = 0;
  const json planned = json::parse(plan.out);
  for (const json& layer : planned.at("layers")) {
    EXPECT_EQ(layer.at("plan"), "in registry") << layer.dump();
    ++new_layers;
  }
  EXPECT_GT(new_layers, 0);
}

}  // namespace

// The SBOM and the provenance statement go with the image as OCI 1.1 referrers: docker-registry has no referrers
// API, so the referrers tag schema's index (tag sha256-<hex> of the image's digest) lists both, each an artifact
// manifest whose subject is the image. `trainpack sbom` reads them back. The image is the same with or without
// them, and with --sbom=none --provenance=none nothing is attached. No password given on the command line reaches
// either document.
TEST_F(RegistryBuildTest, SbomAndProvenanceAreAttachedAsReferrersAndLeaveTheImageAsItIs) {
  const std::string repo = registry_->host() + "/trainer/attested";
  const std::vector<std::string> attested{"--sbom=spdx", "--provenance=slsa"};  // what a build does by default
  std::vector<std::string> with_password = attested;
  with_password.push_back("--index-url=http://robot:s3cret-pass@127.0.0.1:9/simple/");
  auto r = build(repo + ":v1", with_password);
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  json result = json::parse(r.out);
  const std::string digest = result.at("manifest_digest");
  ASSERT_EQ(result.at("attached").size(), 2u) << r.out;

  auto raw = [&](const std::string& ref) {
    auto inspect = run_command({"skopeo", "inspect", "--raw", "--tls-verify=false", "docker://" + ref});
    EXPECT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect --raw"}, inspect);
    return json::parse(inspect.out);
  };
  json index = raw(repo + ":sha256-" + hex_of(digest));
  EXPECT_EQ(index.at("mediaType"), "application/vnd.oci.image.index.v1+json");
  std::set<std::string> types;
  for (const json& d : index.at("manifests")) {
    types.insert(d.at("artifactType").get<std::string>());
    json artifact = raw(repo + "@" + d.at("digest").get<std::string>());
    EXPECT_EQ(artifact.at("subject").at("digest"), digest);
    EXPECT_EQ(artifact.at("artifactType"), d.at("artifactType"));
    EXPECT_EQ(artifact.at("config").at("mediaType"), "application/vnd.oci.empty.v1+json");
    ASSERT_EQ(artifact.at("layers").size(), 1u);
    EXPECT_EQ(artifact.at("layers")[0].at("mediaType"), d.at("artifactType"));
  }
  EXPECT_EQ(types, (std::set<std::string>{"application/spdx+json", "application/vnd.in-toto+json"}));

  auto sbom = run_command({trainpack_bin(), "sbom", repo + ":v1", "--cache-dir=" + (dir_->path() / "c2").string()});
  ASSERT_EQ(sbom.exit_code, 0) << describe({"trainpack sbom"}, sbom);
  expect_valid("spdx-2.3.schema.json", sbom.out, "the attached SBOM");
  json spdx = json::parse(sbom.out);
  EXPECT_EQ(spdx.at("spdxVersion"), "SPDX-2.3");
  EXPECT_NE(spdx.dump().find(hex_of(digest)), std::string::npos) << "the SBOM describes the image by digest";
  auto provenance = run_command({trainpack_bin(), "sbom", "--provenance", repo + ":v1"});
  ASSERT_EQ(provenance.exit_code, 0) << describe({"trainpack sbom --provenance"}, provenance);
  json statement = json::parse(provenance.out);
  EXPECT_EQ(statement.at("predicateType"), "https://slsa.dev/provenance/v1");
  EXPECT_EQ(statement.at("subject")[0].at("digest").at("sha256"), hex_of(digest));
  for (const std::string& text : {r.out, r.err, sbom.out, provenance.out})
    EXPECT_EQ(text.find("s3cret-pass"), std::string::npos) << text;

  auto bare = build(registry_->host() + "/trainer/bare:v1");
  ASSERT_EQ(bare.exit_code, 0) << describe({"trainpack build"}, bare);
  EXPECT_EQ(json::parse(bare.out).at("manifest_digest"), digest) << "attachments changed the image";
  EXPECT_TRUE(json::parse(bare.out).at("attached").empty());
  auto tags = run_command({"skopeo", "list-tags", "--tls-verify=false",
                           "docker://" + registry_->host() + "/trainer/bare"});
  ASSERT_EQ(tags.exit_code, 0) << describe({"skopeo list-tags"}, tags);
  EXPECT_EQ(json::parse(tags.out).at("Tags"), json::array({"v1"}));
  auto none = run_command({trainpack_bin(), "sbom", registry_->host() + "/trainer/bare:v1"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("has no SBOM attached"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("--generate"), std::string::npos) << none.err;

  // --sbom=none alone leaves the provenance: the index lists only it, and no SBOM is found.
  auto no_sbom = build(registry_->host() + "/trainer/nosbom:v1", {"--sbom=none", "--provenance=slsa"});
  ASSERT_EQ(no_sbom.exit_code, 0) << describe({"trainpack build"}, no_sbom);
  json provenance_only = raw(registry_->host() + "/trainer/nosbom:sha256-" + hex_of(digest));
  ASSERT_EQ(provenance_only.at("manifests").size(), 1u);
  EXPECT_EQ(provenance_only.at("manifests")[0].at("artifactType"), "application/vnd.in-toto+json");
  EXPECT_EQ(run_command({trainpack_bin(), "sbom", registry_->host() + "/trainer/nosbom:v1"}).exit_code, 1);

  // The same build again finds both listed: nothing is pushed or listed again.
  registry_->clear_log();
  auto again = build(repo + ":v1", with_password);
  ASSERT_EQ(again.exit_code, 0) << describe({"trainpack build"}, again);
  EXPECT_EQ(count(registry_->requests(), "PUT", "/manifests/sha256"), 0);
}

// A rebuild of the same image in another CI job (other CI variables) attaches its own statement beside the first: the
// fallback index lists both, `trainpack sbom --provenance` shows the newest and says there are two, --all lists both.
// The CI's URLs carry a token and a password: neither reaches the annotation, a statement or the SBOM. An index that
// lists another image's referrers (a confused or forged sha256-HEX tag) is refused, naming the referrer.
TEST_F(RegistryBuildTest, ARebuildInAnotherCiRunAddsAStatementAndTheNewestIsShown) {
  const std::string repo = registry_->host() + "/trainer/ci";
  auto in_job = [&](const std::string& job, const std::string& tag) {
    std::vector<std::string> env{
        "env", "GITLAB_CI=true", "CI_COMMIT_SHA=feed",
        "CI_PROJECT_URL=https://gitlab-ci-token:s3cret-pass@gitlab.example.com/g/p?token=t0ken",
        "CI_JOB_URL=https://gitlab.example.com/g/p/-/jobs/" + job + "?token=t0ken"};
    std::vector<std::string> args{trainpack_bin(), "build", "--executor-image-uri=" + base_ref_,
                                  "--local-package-path=" + pkg_.string(), "--script=trainer/task.py",
                                  "--extra-dirs=config", "--output-image-uri=" + repo + ":" + tag,
                                  "--cache-dir=" + (dir_->path() / "cache").string(), "--format=json",
                                  "--annotations-from-ci"};
    env.insert(env.end(), args.begin(), args.end());
    return run_command(env);
  };
  auto first = in_job("1", "v1");
  ASSERT_EQ(first.exit_code, 0) << describe({"trainpack build"}, first);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the second job's statement ends a second later
  auto second = in_job("2", "v1");
  ASSERT_EQ(second.exit_code, 0) << describe({"trainpack build"}, second);
  const std::string digest = json::parse(second.out).at("manifest_digest");
  EXPECT_EQ(json::parse(first.out).at("manifest_digest"), digest) << "the CI changed the image";

  auto provenance = run_command({trainpack_bin(), "sbom", "--provenance", repo + ":v1"});
  ASSERT_EQ(provenance.exit_code, 0) << describe({"trainpack sbom --provenance"}, provenance);
  json statement = json::parse(provenance.out);
  EXPECT_EQ(statement.at("predicate").at("runDetails").at("metadata").at("invocationId"),
            "https://gitlab.example.com/g/p/-/jobs/2");
  EXPECT_NE(provenance.err.find("2 provenance statements are attached; showing the newest"), std::string::npos)
      << provenance.err;
  auto all = run_command({trainpack_bin(), "sbom", "--provenance", "--all", repo + ":v1"});
  ASSERT_EQ(all.exit_code, 0) << describe({"trainpack sbom --provenance --all"}, all);
  json listed = json::parse(all.out);
  ASSERT_EQ(listed.size(), 2u) << all.out;
  EXPECT_EQ(listed[0].at("document"), statement);
  EXPECT_EQ(listed[1].at("document").at("predicate").at("runDetails").at("metadata").at("invocationId"),
            "https://gitlab.example.com/g/p/-/jobs/1");
  auto sbom = run_command({trainpack_bin(), "sbom", repo + ":v1"});
  ASSERT_EQ(sbom.exit_code, 0) << describe({"trainpack sbom"}, sbom);
  EXPECT_TRUE(sbom.err.empty()) << "one SBOM, the same bytes both times: " << sbom.err;
  auto manifest = run_command({"skopeo", "inspect", "--raw", "--tls-verify=false", "docker://" + repo + ":v1"});
  ASSERT_EQ(manifest.exit_code, 0) << describe({"skopeo inspect --raw"}, manifest);
  EXPECT_EQ(json::parse(manifest.out).at("annotations").at("org.opencontainers.image.source"),
            "https://gitlab.example.com/g/p");
  for (const std::string& text : {first.out, first.err, second.err, manifest.out, all.out, sbom.out}) {
    EXPECT_EQ(text.find("s3cret-pass"), std::string::npos) << text;
    EXPECT_EQ(text.find("t0ken"), std::string::npos) << text;
  }

  // Another image (other code) in the same repository whose referrers tag lists the first image's referrers.
  write_file(pkg_ / "trainer" / "task.py", read_file(pkg_ / "trainer" / "task.py") + "\n# other\n");
  auto other = build(repo + ":v2");
  ASSERT_EQ(other.exit_code, 0) << describe({"trainpack build"}, other);
  const std::string other_digest = json::parse(other.out).at("manifest_digest");
  auto index = run_command({"skopeo", "inspect", "--raw", "--tls-verify=false",
                            "docker://" + repo + ":sha256-" + hex_of(digest)});
  ASSERT_EQ(index.exit_code, 0) << describe({"skopeo inspect --raw"}, index);
  const fs::path index_file = dir_->path() / "index.json";
  write_file(index_file, index.out);
  auto put = run_command({"curl", "-sf", "-X", "PUT", "-H", "Content-Type: application/vnd.oci.image.index.v1+json",
                          "--data-binary", "@" + index_file.string(),
                          "http://" + repo.substr(0, repo.find('/')) + "/v2/trainer/ci/manifests/sha256-" +
                              hex_of(other_digest)});
  ASSERT_EQ(put.exit_code, 0) << describe({"curl -X PUT"}, put);
  auto refused = run_command({trainpack_bin(), "sbom", repo + ":v2"});
  EXPECT_EQ(refused.exit_code, 1) << describe({"trainpack sbom"}, refused);
  EXPECT_TRUE(refused.out.empty()) << refused.out;
  EXPECT_NE(refused.err.find("trainpack: error: the referrer sha256:"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("names " + digest + ", not the image " + other_digest), std::string::npos)
      << refused.err;
}

// An OCI layout holds them as untagged entries with their artifactType beside the tagged image: skopeo and umoci still
// find the image by its tag, trainpack sbom finds the SBOM. A docker-archive has no place for them.
TEST_F(RegistryBuildTest, AnOciLayoutHoldsTheAttachmentsBesideItsImage) {
  const fs::path layout = dir_->path() / "layout";
  auto r = build(registry_->host() + "/trainer/local:v1",
                 {"--output=oci:" + layout.string() + ":v1", "--output=docker-archive:" +
                  (dir_->path() / "image.tar").string(), "--sbom=cyclonedx", "--provenance=slsa"});
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  const std::string digest = json::parse(r.out).at("manifest_digest");
  json index = json::parse(read_file(layout / "index.json"));
  std::set<std::string> types;
  for (const json& d : index.at("manifests")) types.insert(d.value("artifactType", "image"));
  EXPECT_EQ(types, (std::set<std::string>{"image", "application/vnd.cyclonedx+json", "application/vnd.in-toto+json"}));
  auto inspect = run_command({"skopeo", "inspect", "oci:" + layout.string() + ":v1"});
  ASSERT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect"}, inspect);
  EXPECT_EQ(json::parse(inspect.out).at("Digest"), digest);
  auto sbom = run_command({trainpack_bin(), "sbom", "oci:" + layout.string() + ":v1"});
  ASSERT_EQ(sbom.exit_code, 0) << describe({"trainpack sbom"}, sbom);
  expect_valid("bom-1.6.schema.json", sbom.out, "the attached CycloneDX SBOM");
  json cyclonedx = json::parse(sbom.out);
  EXPECT_EQ(cyclonedx.at("bomFormat"), "CycloneDX");
  EXPECT_EQ(cyclonedx.at("specVersion"), "1.6");
  auto archived = run_command({trainpack_bin(), "sbom", "docker-archive:" + (dir_->path() / "image.tar").string()});
  EXPECT_EQ(archived.exit_code, 1) << describe({"trainpack sbom"}, archived);
}

// Across a WAN every request waited on costs a round trip. With the registry behind a delay line, a one-line change
// with the SBOM and provenance attached waits on at most four requests one after another: the base's and the
// target's tags asked, upload sessions opened and the referrers' empty config asked about, all at once; the new
// blobs (sent through those sessions) beside the read of the fallback index; the image's manifest beside its
// referrers'; the fallback referrers index. Connections are reused: those opened at the start carry the rest.
TEST_F(RegistryBuildTest, AWarmBuildWithAttachmentsWaitsOnAtMostFourRequestsInARow) {
  constexpr int kDelayMs = 200;  // well above the build's own work, so that independent requests overlap
  DelayLine wan(dir_->path(), registry_->host(), kDelayMs);
  auto build_through = [&] {
    return run_command({trainpack_bin(), "build", "--executor-image-uri=" + wan.host() + "/base/python:3.11",
                        "--local-package-path=" + pkg_.string(), "--script=trainer/task.py", "--extra-dirs=config",
                        "--output-image-uri=" + wan.host() + "/trainer/app:v1",
                        "--cache-dir=" + (dir_->path() / "cache").string(), "--format=json"});
  };
  auto first = build_through();
  ASSERT_EQ(first.exit_code, 0) << describe({"trainpack build"}, first);
  write_file(pkg_ / "trainer" / "task.py", read_file(pkg_ / "trainer" / "task.py") + "\n# tuned\n");
  wan.clear_trace();
  auto again = build_through();
  ASSERT_EQ(again.exit_code, 0) << describe({"trainpack build"}, again);
  json result = json::parse(again.out);
  EXPECT_EQ(result.at("layers_built"), 1);
  EXPECT_EQ(result.at("attached").size(), 2u) << again.out;

  std::vector<Exchange> exchanges = wan.exchanges();
  ASSERT_FALSE(exchanges.empty());
  std::vector<Exchange> chain = longest_sequential_chain(requests_sent(exchanges));
  EXPECT_LE(chain.size(), 4u) << "requests waited on in a row:\n" << describe_chain(chain);
  const double first_round_ends = exchanges.front().start + kDelayMs / 1000.0 / 2;
  int opened_later = 0;
  for (const Exchange& e : exchanges) opened_later += e.handshake() && e.start > first_round_ends;
  EXPECT_LE(opened_later, 2) << "connections not reused:\n" << describe_chain(exchanges);

  // What the listing and tags say is whole: skopeo copies the image, and the fallback tag lists both documents.
  auto inspect = run_command({"skopeo", "inspect", "--raw", "--tls-verify=false",
                              "docker://" + registry_->host() + "/trainer/app:sha256-" +
                                  hex_of(result.at("manifest_digest"))});
  ASSERT_EQ(inspect.exit_code, 0) << describe({"skopeo inspect"}, inspect);
  EXPECT_EQ(json::parse(inspect.out).at("manifests").size(), 2u);
}
