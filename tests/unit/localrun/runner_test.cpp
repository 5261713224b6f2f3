#include "localrun/runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/error.h"
#include "support/fs.h"

using namespace trainpack;
using namespace trainpack::localrun;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Argv = std::vector<std::string>;

class RunnerSpec : public ::testing::Test {
 protected:
  void SetUp() override { root_ = make_temp_dir({}, "runner-test"); }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& content) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << content;
  }
  fs::path root_;
};

std::vector<std::string> env_of(const json& spec) { return spec["process"]["env"].get<std::vector<std::string>>(); }

const json* mount_at(const json& spec, const std::string& dest) {
  for (const auto& m : spec["mounts"])
    if (m["destination"] == dest) return &m;
  return nullptr;
}

}  // namespace

TEST(DockerRunArgv, IsGcloudsArgvInGcloudsOrder) {
  RunOptions o;
  o.credentials_file = "/home/u/key.json";
  o.args = {"--epochs", "3"};
  EXPECT_EQ(docker_run_argv("docker", "img:tag", o),
            (Argv{"docker", "run", "--rm", "-v", "/home/u/key.json:/tmp/keys/cred_key.json", "-e",
                  "GOOGLE_APPLICATION_CREDENTIALS=/tmp/keys/cred_key.json", "--ipc", "host", "img:tag", "--epochs",
                  "3"}));
}

TEST(DockerRunArgv, GpuUsesGpusAllAndPodmanUsesCdi) {
  RunOptions o;
  o.gpu = true;
  o.credentials_file = "/k.json";
  Argv d = docker_run_argv("docker", "i", o);
  ASSERT_GE(d.size(), 5u);
  EXPECT_EQ((Argv{d[3], d[4]}), (Argv{"--gpus", "all"}));
  Argv p = docker_run_argv("podman", "i", o);
  EXPECT_EQ((Argv{p[3], p[4]}), (Argv{"--device", "nvidia.com/gpu=all"}));
  for (const auto& a : d) EXPECT_NE(a, "--runtime");
}

TEST(DockerRunArgv, ExtraEnvAndMountsGoBeforeIpcHostNoKeyNoMount) {
  RunOptions o;
  o.extra_env = {{"AIP_MODEL_DIR", "/aip/model"}};
  o.mounts = {{"/host/model", "/aip/model"}};
  EXPECT_EQ(docker_run_argv("docker", "i", o),
            (Argv{"docker", "run", "--rm", "-e", "AIP_MODEL_DIR=/aip/model", "-v", "/host/model:/aip/model", "--ipc",
                  "host", "i"}));
}

TEST_F(RunnerSpec, RuntimeSpecArgsEnvCwdAndMounts) {
  json cfg = {{"config",
               {{"Entrypoint", {"python", "trainer/task.py"}},
                {"Cmd", {"--default"}},
                {"Env", {"PATH=/usr/local/bin:/usr/bin", "HOME=/home", "GOOGLE_APPLICATION_CREDENTIALS=/old"}},
                {"WorkingDir", "/usr/app"}}}};
  RunOptions o;
  json s = runtime_spec(cfg, o, root_);
  EXPECT_EQ(s["process"]["args"], json({"python", "trainer/task.py", "--default"}));
  EXPECT_EQ(s["process"]["cwd"], "/usr/app");
  EXPECT_EQ(s["process"]["terminal"], false);
  EXPECT_EQ(s["root"]["path"], root_.string());
  EXPECT_EQ(mount_at(s, kCredentialsMountPath), nullptr);

  o.args = {"--lr", "0.1"};
  o.credentials_file = (root_ / "key.json").string();
  o.extra_env = {{"AIP_X", "1"}, {"HOME", "/override"}};
  o.mounts = {{"/host/data", "/data"}};
  s = runtime_spec(cfg, o, root_);
  EXPECT_EQ(s["process"]["args"], json({"python", "trainer/task.py", "--lr", "0.1"}));
  auto env = env_of(s);
  EXPECT_EQ(env[0], "PATH=/usr/local/bin:/usr/bin");
  EXPECT_EQ(env[1], "HOME=/override");
  EXPECT_EQ(env[2], "GOOGLE_APPLICATION_CREDENTIALS=/tmp/keys/cred_key.json");
  EXPECT_NE(std::find(env.begin(), env.end(), "AIP_X=1"), env.end());
  const json* key = mount_at(s, kCredentialsMountPath);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ((*key)["source"], o.credentials_file);
  EXPECT_EQ((*key)["type"], "bind");
  EXPECT_NE(std::find((*key)["options"].begin(), (*key)["options"].end(), "ro"), (*key)["options"].end());
  const json* data = mount_at(s, "/data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ((*data)["source"], "/host/data");
  for (const char* d : {"/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys"})
    EXPECT_NE(mount_at(s, d), nullptr) << d;
  std::vector<std::string> ns;
  for (const auto& n : s["linux"]["namespaces"]) ns.push_back(n["type"]);
  EXPECT_EQ(ns, (std::vector<std::string>{"pid", "ipc", "uts", "mount"}));  // no network: the host's
}

TEST_F(RunnerSpec, RuntimeSpecDefaultsAndRefusals) {
  json s = runtime_spec({{"config", {{"Cmd", {"/bin/sh"}}}}}, RunOptions{}, root_);
  EXPECT_EQ(s["process"]["cwd"], "/");
  EXPECT_EQ(s["process"]["user"]["uid"], 0);
  auto env = env_of(s);
  EXPECT_EQ(env[0], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  EXPECT_THROW(runtime_spec({{"config", json::object()}}, RunOptions{}, root_), Error);
  RunOptions gpu;
  gpu.gpu = true;
  EXPECT_THROW(runtime_spec({{"config", {{"Cmd", {"x"}}}}}, gpu, root_), Error);
}

TEST_F(RunnerSpec, UserIsResolvedThroughTheRootfs) {
  write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\ntrainer:x:1000:1001::/home/trainer:/bin/sh\n");
  write("etc/group", "root:x:0:\nstaff:x:50:trainer,other\ntrainers:x:1001:\nvideo:x:44:trainer\n");
  auto u = resolve_user("trainer", root_);
  EXPECT_EQ(u.uid, 1000u);
  EXPECT_EQ(u.gid, 1001u);
  EXPECT_EQ(u.home, "/home/trainer");
  EXPECT_EQ(u.additional_gids, (std::vector<unsigned>{50, 44}));
  u = resolve_user("trainer:staff", root_);
  EXPECT_EQ(u.gid, 50u);
  u = resolve_user("1000", root_);
  EXPECT_EQ(u.uid, 1000u);
  EXPECT_EQ(u.gid, 1001u);
  u = resolve_user("4242:4343", root_);
  EXPECT_EQ(u.uid, 4242u);
  EXPECT_EQ(u.gid, 4343u);
  u = resolve_user("4242", root_);
  EXPECT_EQ(u.gid, 0u);
  EXPECT_THROW(resolve_user("nobody-here", root_), Error);
  EXPECT_THROW(resolve_user("trainer:nogroup", root_), Error);

  json s = runtime_spec({{"config", {{"Cmd", {"x"}}, {"User", "trainer"}}}}, RunOptions{}, root_);
  EXPECT_EQ(s["process"]["user"]["uid"], 1000);
  EXPECT_EQ(s["process"]["user"]["gid"], 1001);
  EXPECT_EQ(s["process"]["user"]["additionalGids"], json({50, 44}));
  auto env = env_of(s);
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/home/trainer"), env.end());
}

TEST_F(RunnerSpec, PasswdSymlinkIsResolvedInsideTheRootfs) {
  // An absolute symlink must point into the rootfs, never at the host's /etc/passwd.
  write("real/passwd", "trainer:x:777:778::/h:/bin/sh\n");
  fs::create_directories(root_ / "etc");
  fs::create_symlink("/real/passwd", root_ / "etc/passwd");
  auto u = resolve_user("trainer", root_);
  EXPECT_EQ(u.uid, 777u);
  fs::remove(root_ / "etc/passwd");
  fs::create_symlink("/etc/shadow-not-in-root", root_ / "etc/passwd");
  EXPECT_THROW(resolve_user("root", root_), Error);  // the host's root is not the image's
}

TEST(DefaultCredentials, FollowsGcloudsOrder) {
  const char* h = std::getenv("HOME");
  std::string saved_home = h ? h : "";
  ::setenv("GOOGLE_APPLICATION_CREDENTIALS", "/x/key.json", 1);
  EXPECT_EQ(default_credentials_file(), "/x/key.json");
  ::unsetenv("GOOGLE_APPLICATION_CREDENTIALS");
  ::setenv("CLOUDSDK_CONFIG", "/cfg", 1);
  EXPECT_EQ(default_credentials_file(), "/cfg/application_default_credentials.json");
  ::unsetenv("CLOUDSDK_CONFIG");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_credentials_file(), "/home/u/.config/gcloud/application_default_credentials.json");
  if (h) ::setenv("HOME", saved_home.c_str(), 1);
}
