// trainpack's own CI step image, built by trainpack (scripts/self-image.sh), pushed to the test registry, pulled by
// docker and run the way CI runners run it: `trainpack --version` as its ENTRYPOINT; a Cloud Build step (working
// directory /workspace, the metadata-server stand-in in GCE_METADATA_HOST); a build that pushes with a docker
// config.json, as any user; a GitLab job (`sh -c` with trainpack on PATH, as any user). SelfImage.* tests also get
// the auth servers (tests/CMakeLists.txt): the htpasswd registry, the Google stand-in and the registry whose token
// server it is.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/encoding.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUser = "12345:12345";  // no such user in the image: HOME stays what the image says

// KEY=VALUE lines of the auth servers' env file (tests/fixtures/auth-servers.sh).
std::map<std::string, std::string> auth_env() {
  auto out = read_env_file(env_or_fail("TRAINPACK_TEST_AUTH_DIR") + "/env");
  if (out.empty()) ADD_FAILURE() << "no auth fixture env: run through ctest";
  return out;
}

// scripts/self-image.sh on the test base, pushed to `target`. The test base is Debian's own Python, which PEP 668
// marks externally managed: python:3.11-slim-bookworm is not, so only here does the wheel need the flag.
CommandResult build_self_image(const std::string& target, const fs::path& cache) {
  return run_command({"env", "TRAINPACK_BIN=" + trainpack_bin(), "bash", source_dir() + "/scripts/self-image.sh",
                      "trainpack-test/python:3.11", target, "--base-source=" + base_oci_ref(),
                      "--cache-dir=" + cache.string(), "--break-system-packages", "-q"});
}

// `docker run --rm ARGS...` on the test daemon.
CommandResult docker_run(const std::vector<std::string>& args) {
  auto argv = docker_command({"run", "--rm"});
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

// What the stand-in's token endpoint was sent so far: {"users": [...], "passwords": [...]}.
nlohmann::json standin_record(const std::string& standin) {
  auto r = run_command({"curl", "-sf", "http://" + standin + "/_record"});
  if (r.exit_code != 0) ADD_FAILURE() << describe({"curl", standin + "/_record"}, r);
  return nlohmann::json::parse(r.out.empty() ? "{\"users\": [], \"passwords\": []}" : r.out);
}

// An access token from the stand-in's metadata server, as `gcloud auth print-access-token` prints one on a VM.
std::string metadata_access_token(const std::string& standin) {
  auto r = run_command({"curl", "-sf", "-H", "Metadata-Flavor: Google",
                        "http://" + standin + "/computeMetadata/v1/instance/service-accounts/default/token"});
  if (r.exit_code != 0) ADD_FAILURE() << describe({"curl", standin + " token"}, r);
  return nlohmann::json::parse(r.out).at("access_token").get<std::string>();
}

// The example trainer in DIR/src, world-writable: the step may run as any user and writes job.json beside it.
fs::path workspace(const TempDir& dir) {
  fs::path src = dir.path() / "src";
  fs::copy(fs::path(source_dir()) / "testdata" / "example-trainer", src, fs::copy_options::recursive);
  fs::permissions(dir.path(), fs::perms::all);
  for (const auto& e : fs::recursive_directory_iterator(src)) fs::permissions(e.path(), fs::perms::all);
  fs::permissions(src, fs::perms::all);
  return src;
}

}  // namespace

TEST(SelfImage, BuiltByTrainpackPushedAndRunsVersion) {
  TempDir dir("tp-self");
  const std::string target = env_or_fail("TRAINPACK_TEST_REGISTRY") + "/trainpack/self:test";
  auto built = build_self_image(target, dir.path() / "cache");
  ASSERT_EQ(built.exit_code, 0) << describe({"self-image.sh"}, built);
  EXPECT_TRUE(built.out.starts_with(env_or_fail("TRAINPACK_TEST_REGISTRY") + "/trainpack/self@sha256:")) << built.out;

  auto pull = run_command(docker_command({"pull", target}));
  ASSERT_EQ(pull.exit_code, 0) << describe({"docker pull"}, pull);
  auto run = docker_run({"--network", "none", target, "--version"});
  EXPECT_EQ(run.exit_code, 0) << describe({"docker run"}, run);
  // The image holds this very binary: it names the same version, commit and libraries.
  auto host = run_command({trainpack_bin(), "--version"});
  ASSERT_EQ(host.exit_code, 0) << describe({"trainpack --version"}, host);
  EXPECT_TRUE(run.out.starts_with(std::string("trainpack ") + TRAINPACK_VERSION + " (commit ")) << run.out;
  EXPECT_EQ(run.out, host.out);
  auto help = docker_run({"--network", "none", target, "build", "--help"});
  EXPECT_EQ(help.exit_code, 0) << describe({"docker run ... build --help"}, help);
  EXPECT_NE(help.out.find("--output-image-uri"), std::string::npos) << help.out;

  // GitLab: the runner overrides the entrypoint and runs a shell script; trainpack is on PATH, for any user and
  // from any directory.
  auto gitlab = docker_run({"--network", "none", "--user", kUser, "-w", "/tmp", "--entrypoint", "sh", target, "-c",
                            "command -v trainpack && trainpack --version"});
  EXPECT_EQ(gitlab.exit_code, 0) << describe({"docker run --entrypoint sh"}, gitlab);
  EXPECT_EQ(gitlab.out, "/usr/local/bin/trainpack\n" + host.out);
  // The test base's ca-certificates never ran its maintainer script (no bundle): the shipped one is used.
  auto ca = docker_run({"--network", "none", "--entrypoint", "python", target, "-c",
                        "import trainpack_step as t; p = t.ca_file(t.data_dir()); "
                        "print(p, open(p).read().count('BEGIN CERTIFICATE') > 10)"});
  EXPECT_EQ(ca.exit_code, 0) << describe({"docker run --entrypoint python"}, ca);
  EXPECT_EQ(ca.out, "/usr/local/lib/python3.11/dist-packages/trainpack_step_data/cacert.pem True\n");
  run_command(docker_command({"rmi", "-f", target}));
}

namespace {

// What each CI step run shares: the step image, the workspace (the example trainer) and the build's arguments.
struct StepSetup {
  std::string image;
  fs::path src;
  std::vector<std::string> build;
};

// `docker pull REF` with the client configuration in CONFIG_DIR, then the trainer run for two epochs (as `user`
// when not empty).
void pull_with_config_and_run(const fs::path& config_dir, const std::string& ref, const std::string& user = {}) {
  std::vector<std::string> pull{docker_command()[0], "-H", docker_command()[2], "--config", config_dir.string(),
                                "pull", ref};
  auto pulled = run_command(pull);
  ASSERT_EQ(pulled.exit_code, 0) << describe(pull, pulled);
  std::vector<std::string> args{"--network", "none", ref, "--epochs", "2"};
  if (!user.empty()) args.insert(args.begin(), {"--user", user});
  auto run = docker_run(args);
  EXPECT_EQ(run.exit_code, 0) << describe({"docker run", ref}, run);
  EXPECT_NE(run.out.find("epoch 2/2"), std::string::npos) << run.out;
}

// `skopeo copy` from the registry named like Artifact Registry to `dest`, with an access token as user
// oauth2accesstoken (the credential Google documents for `docker login` to Artifact Registry). This host does not
// resolve test-docker.pkg.dev: skopeo runs in a mount namespace of its own whose /etc/hosts maps it to 127.0.0.1, as
// --add-host does for the step's container.
CommandResult copy_from_google_registry(const std::string& src, const std::string& dest, const std::string& token,
                                        const fs::path& scratch) {
  const fs::path auth = scratch / "google-auth.json", hosts = scratch / "hosts";
  const std::string registry = src.substr(0, src.find('/'));
  write_file(auth, R"({"auths": {")" + registry + R"(": {"auth": ")" +
                       trainpack::net::base64_encode("oauth2accesstoken:" + token) + R"("}}})");
  write_file(hosts, read_file("/etc/hosts") + "\n127.0.0.1 test-docker.pkg.dev\n");
  return run_command({"unshare", "--mount", "sh", "-c", R"(mount --bind "$0" /etc/hosts && exec "$@")",
                      hosts.string(), "skopeo", "copy", "--quiet", "--authfile", auth.string(),
                      "--src-tls-verify=false", "--dest-tls-verify=false", "docker://" + src, "docker://" + dest});
}

// Cloud Build: /workspace mounted and the working directory, GCE_METADATA_HOST the stand-in. The output registry
// is named like an Artifact Registry host (test-docker.pkg.dev, with its token realm; mapped to 127.0.0.1 in the
// container; plain http through --insecure-registry) and admits only an access token the stand-in handed out, as
// user oauth2accesstoken: the push works only with the metadata server's credential. Sets `trainer` to the name
// (by digest) the test dockerd pulled the pushed image by.
void cloud_build_step(const StepSetup& s, const std::map<std::string, std::string>& fx, const fs::path& scratch,
                      std::string& trainer) {
  const std::string standin = fx.at("TRAINPACK_TEST_GOOGLE_STANDIN");
  const std::string local_reg = fx.at("TRAINPACK_TEST_GOOGLE_REGISTRY");  // 127.0.0.1:PORT
  const std::string google_reg = "test-docker.pkg.dev" + local_reg.substr(local_reg.find(':'));
  const std::string repo = "/trainpack-test/trainers/cloudbuild";
  const size_t recorded = standin_record(standin)["passwords"].size();
  auto step_args = [&](const std::string& metadata_host) {
    auto args = s.build;
    args.insert(args.begin(), {"--network", "host", "--add-host", "test-docker.pkg.dev:127.0.0.1", "-w", "/workspace",
                               "-v", s.src.string() + ":/workspace", "-e", "GCE_METADATA_HOST=" + metadata_host,
                               s.image});
    args.insert(args.end(), {"--output-image-uri=" + google_reg + repo + ":1",
                             "--insecure-registry=test-docker.pkg.dev", "--job-spec-out=/workspace/job.json"});
    return args;
  };
  // No metadata server (the token server answers, without Metadata-Flavor): no credential, and the push is refused.
  auto args = step_args(fx.at("TRAINPACK_TEST_TOKEN_SERVER"));
  auto step = docker_run(args);
  EXPECT_EQ(step.exit_code, 1) << describe(args, step);
  EXPECT_NE(step.err.find("anonymous access was refused"), std::string::npos) << step.err;
  args = step_args(standin);
  step = docker_run(args);
  ASSERT_EQ(step.exit_code, 0) << describe(args, step);
  ASSERT_TRUE(step.out.starts_with(google_reg + repo + "@sha256:")) << step.out;
  const std::string digest = step.out.substr(step.out.find('@') + 1, 71);
  EXPECT_NE(read_file(s.src / "job.json").find(google_reg + repo + "@" + digest), std::string::npos);
  // The token server got the metadata server's access token, and only that; trainpack never printed it.
  auto record = standin_record(standin);
  ASSERT_GT(record["passwords"].size(), recorded) << record.dump();
  for (size_t i = recorded; i < record["passwords"].size(); ++i) {
    const std::string token = record["passwords"][i].get<std::string>();
    EXPECT_EQ(record["users"][i], "oauth2accesstoken") << record.dump();
    EXPECT_TRUE(token.starts_with("ya29.gce-")) << record.dump();
    EXPECT_EQ(step.out.find(token), std::string::npos) << step.out;
    EXPECT_EQ(step.err.find(token), std::string::npos) << step.err;
  }
  // Another client reads it back with an access token; the test dockerd pulls that very manifest and runs it.
  const std::string copy = env_or_fail("TRAINPACK_TEST_REGISTRY") + "/trainer/cloudbuild";
  auto copied =
      copy_from_google_registry(google_reg + repo + ":1", copy + ":1", metadata_access_token(standin), scratch);
  ASSERT_EQ(copied.exit_code, 0) << describe({"skopeo copy", google_reg + repo + ":1", copy + ":1"}, copied);
  trainer = copy + "@" + digest;
  pull_with_config_and_run(docker_command()[4], trainer);
}

// As after a `docker login` step: a read-only config.json in DOCKER_CONFIG with the htpasswd registry's
// credentials, the step run as user 12345. Sets `trainer` to the pushed image's name.
void docker_config_step(const StepSetup& s, const std::map<std::string, std::string>& fx, const fs::path& scratch,
                        std::string& trainer) {
  const std::string auth_reg = fx.at("TRAINPACK_TEST_HTPASSWD_REGISTRY");
  const fs::path config = scratch / "docker";
  write_file(config / "config.json", R"({"auths": {")" + auth_reg + R"(": {"auth": "dGVzdHVzZXI6dGVzdHBhc3M="}}})");
  fs::permissions(config, fs::perms::all);
  fs::permissions(config / "config.json", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  auto args = s.build;
  args.insert(args.begin(), {"--network", "host", "--user", kUser, "-w", "/workspace", "-v",
                             s.src.string() + ":/workspace", "-v", config.string() + ":/config:ro", "-e",
                             "DOCKER_CONFIG=/config", s.image});
  trainer = auth_reg + "/trainer/private:1";
  args.push_back("--output-image-uri=" + trainer);
  auto step = docker_run(args);
  ASSERT_EQ(step.exit_code, 0) << describe(args, step);
  EXPECT_TRUE(step.out.starts_with(auth_reg + "/trainer/private@sha256:")) << step.out;
  pull_with_config_and_run(config, trainer, kUser);  // the docker CLI, with the same config.json
}

}  // namespace

// The step image run as a Cloud Build step (`name: IMAGE`, `args: [build, ...]`, credentials from the metadata
// server; the next step reads /workspace/job.json) and as a step after `docker login` (docker config.json); the
// images they push run.
TEST(SelfImage, RunsAsCloudBuildAndDockerConfigStepsAndItsImagesRun) {
  TempDir dir("tp-self-ci");
  auto fx = auth_env();
  const std::string reg = env_or_fail("TRAINPACK_TEST_REGISTRY");
  StepSetup setup{reg + "/trainpack/self:ci", {}, {}};
  auto built = build_self_image(setup.image, dir.path() / "cache");
  ASSERT_EQ(built.exit_code, 0) << describe({"self-image.sh"}, built);
  auto pull = run_command(docker_command({"pull", setup.image}));
  ASSERT_EQ(pull.exit_code, 0) << describe({"docker pull"}, pull);
  const std::string base = reg + "/base/python:3.11";
  auto copy = run_command({"skopeo", "copy", "--dest-tls-verify=false", base_oci_ref(), "docker://" + base});
  ASSERT_EQ(copy.exit_code, 0) << describe({"skopeo copy"}, copy);
  setup.src = workspace(dir);
  setup.build = {"build", "--executor-image-uri=" + base, "--local-package-path=.", "--script=trainer/task.py",
                 "--extra-dirs=config", "-q"};

  std::string cloud_build_trainer, private_trainer;
  EXPECT_NO_FATAL_FAILURE(cloud_build_step(setup, fx, dir.path(), cloud_build_trainer));
  EXPECT_NO_FATAL_FAILURE(docker_config_step(setup, fx, dir.path(), private_trainer));
  run_command(docker_command({"rmi", "-f", setup.image, cloud_build_trainer, private_trainer}));
}
