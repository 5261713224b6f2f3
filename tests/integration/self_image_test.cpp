// trainpack's own CI step image, built by trainpack (scripts/self-image.sh), pushed to the test registry, pulled by
// docker and run the way CI runners run it: `trainpack --version` as its ENTRYPOINT; a Cloud Build step (working
// directory /workspace, the metadata-server stand-in in GCE_METADATA_HOST); a build that pushes with a docker
// config.json, as any user; a GitLab job (`sh -c` with trainpack on PATH, as any user). SelfImage.* tests also get
// the auth servers (tests/CMakeLists.txt): the htpasswd registry and the Google stand-in.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUser = "12345:12345";  // no such user in the image: HOME stays what the image says

// KEY=VALUE lines of the auth servers' env file (tests/fixtures/auth-servers.sh).
std::map<std::string, std::string> auth_env() {
  std::ifstream f(env_or_fail("TRAINPACK_TEST_AUTH_DIR") + "/env");
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(f, line);) {
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
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

// Cloud Build: `name: IMAGE`, `args: [build, ...]`, /workspace mounted and the working directory, credentials
// from the metadata server; the next step reads /workspace/job.json. Then, as after a `docker login` step: a
// config.json in DOCKER_CONFIG with the htpasswd registry's credentials, the step run as another user.
TEST(SelfImage, RunsAsCloudBuildAndDockerConfigStepsAndItsImagesRun) {
  TempDir dir("tp-self-ci");
  auto fx = auth_env();
  const std::string reg = env_or_fail("TRAINPACK_TEST_REGISTRY");
  const std::string image = reg + "/trainpack/self:ci";
  auto built = build_self_image(image, dir.path() / "cache");
  ASSERT_EQ(built.exit_code, 0) << describe({"self-image.sh"}, built);
  auto pull = run_command(docker_command({"pull", image}));
  ASSERT_EQ(pull.exit_code, 0) << describe({"docker pull"}, pull);
  const std::string base = reg + "/base/python:3.11";
  auto copy = run_command({"skopeo", "copy", "--dest-tls-verify=false", base_oci_ref(), "docker://" + base});
  ASSERT_EQ(copy.exit_code, 0) << describe({"skopeo copy"}, copy);
  fs::path src = workspace(dir);
  const std::vector<std::string> build{"build", "--executor-image-uri=" + base, "--local-package-path=.",
                                       "--script=trainer/task.py", "--extra-dirs=config", "-q"};

  auto cloud_build = build;
  cloud_build.insert(cloud_build.begin(), {"--network", "host", "-w", "/workspace", "-v", src.string() + ":/workspace",
                                           "-e", "GCE_METADATA_HOST=" + fx.at("TRAINPACK_TEST_GOOGLE_STANDIN"), image});
  const std::string trainer = reg + "/trainer/cloudbuild:1";
  cloud_build.insert(cloud_build.end(), {"--output-image-uri=" + trainer, "--job-spec-out=/workspace/job.json"});
  auto step = docker_run(cloud_build);
  ASSERT_EQ(step.exit_code, 0) << describe(cloud_build, step);
  EXPECT_TRUE(step.out.starts_with(reg + "/trainer/cloudbuild@sha256:")) << step.out;
  EXPECT_NE(read_file(src / "job.json").find(reg + "/trainer/cloudbuild@sha256:"), std::string::npos);
  ASSERT_EQ(run_command(docker_command({"pull", trainer})).exit_code, 0);
  auto run = docker_run({"--network", "none", trainer, "--epochs", "2"});
  EXPECT_EQ(run.exit_code, 0) << describe({"docker run", trainer}, run);
  EXPECT_NE(run.out.find("epoch 2/2"), std::string::npos) << run.out;

  // docker config.json (what `docker login` writes), read-only, as user 12345.
  const std::string auth_reg = fx.at("TRAINPACK_TEST_HTPASSWD_REGISTRY");
  fs::path config = dir.path() / "docker";
  write_file(config / "config.json", R"({"auths": {")" + auth_reg + R"(": {"auth": "dGVzdHVzZXI6dGVzdHBhc3M="}}})");
  fs::permissions(config, fs::perms::all);
  fs::permissions(config / "config.json", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  auto logged_in = build;
  logged_in.insert(logged_in.begin(), {"--network", "host", "--user", kUser, "-w", "/workspace", "-v",
                                       src.string() + ":/workspace", "-v", config.string() + ":/config:ro", "-e",
                                       "DOCKER_CONFIG=/config", image});
  const std::string private_trainer = auth_reg + "/trainer/private:1";
  logged_in.push_back("--output-image-uri=" + private_trainer);
  step = docker_run(logged_in);
  ASSERT_EQ(step.exit_code, 0) << describe(logged_in, step);
  EXPECT_TRUE(step.out.starts_with(auth_reg + "/trainer/private@sha256:")) << step.out;
  // The docker CLI pulls it with the same config.json.
  std::vector<std::string> pull_private{docker_command()[0], "-H", docker_command()[2], "--config", config.string(),
                                        "pull", private_trainer};
  auto pulled = run_command(pull_private);
  ASSERT_EQ(pulled.exit_code, 0) << describe(pull_private, pulled);
  run = docker_run({"--network", "none", "--user", kUser, private_trainer, "--epochs", "1"});
  EXPECT_EQ(run.exit_code, 0) << describe({"docker run", private_trainer}, run);
  EXPECT_NE(run.out.find("epoch 1/1"), std::string::npos) << run.out;
  run_command(docker_command({"rmi", "-f", image, trainer, private_trainer}));
}
