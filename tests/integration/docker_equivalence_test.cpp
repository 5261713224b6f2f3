// The image trainpack builds must hold the same root filesystem and config as the image docker builds from
// the Dockerfile trainpack prints (gcloud's), for trainers without pip steps. Both are unpacked by umoci and
// compared entry by entry: path, type, mode, owner, symlink target, bytes. Mtimes differ by design.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "layers/digest.h"
#include "support/fs.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string describe_entry(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return "unreadable";
  std::string kind = S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "symlink" : S_ISREG(st.st_mode) ? "file" : "other";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
  std::string s = kind + " " + mode + " " + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid);
  if (S_ISLNK(st.st_mode)) s += " -> " + fs::read_symlink(p).string();
  if (S_ISREG(st.st_mode)) s += " " + trainpack::layers::sha256_of_file(p).str();
  return s;
}

std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it)
    out[fs::relative(it->path(), root).string()] = describe_entry(it->path());
  return out;
}

std::string run_ok(const std::vector<std::string>& argv, const std::string& input = "") {
  auto r = run_command(argv, input);
  EXPECT_EQ(r.exit_code, 0) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "") << "\n" << r.out << r.err;
  return r.out;
}

}  // namespace

TEST(DockerEquivalence, TrainpackBuildMatchesDockerBuildOfTheSameDockerfile) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-equiv-"));
  fs::path pkg = dir.path() / "pkg";
  fs::copy(fs::path(source_dir()) / "testdata" / "example-trainer", pkg,
           fs::copy_options::recursive);
  
  run_ok(docker_command({"load", "-i", base_archive()}));

  std::vector<std::string> flags{"--executor-image-uri=trainpack-test/python:3.11",
                                 "--local-package-path=" + pkg.string(), "--script=trainer/task.py",
                                 "--extra-dirs=config"};
  std::vector<std::string> dockerfile_cmd{trainpack_bin(), "dockerfile"};
  dockerfile_cmd.insert(dockerfile_cmd.end(), flags.begin(), flags.end());
  std::string dockerfile = run_ok(dockerfile_cmd);
  ASSERT_NE(dockerfile.find("FROM trainpack-test/python:3.11"), std::string::npos);

  // What gcloud runs, plus --network none (the test dockerd has no bridge) and BuildKit.
  auto docker_build = docker_command({"build", "--no-cache", "--network", "none", "-t", "trainpack-test/equiv:docker",
                                      "--rm", "-f-", pkg.string()});
  docker_build.insert(docker_build.begin(), {"env", "DOCKER_BUILDKIT=1"});
  run_ok(docker_build, dockerfile);
  run_ok(docker_command({"save", "-o", (dir.path() / "docker.tar").string(), "trainpack-test/equiv:docker"}));
  run_ok({"skopeo", "copy", "docker-archive:" + (dir.path() / "docker.tar").string(),
          "oci:" + (dir.path() / "docker-oci").string() + ":x"});
  run_ok({"umoci", "unpack", "--image", (dir.path() / "docker-oci").string() + ":x", (dir.path() / "bd").string()});

  std::vector<std::string> build_cmd{trainpack_bin(), "build", "--base-source=" + base_oci_ref(),
                                     "--output=oci:" + (dir.path() / "tp-oci").string() + ":x",
                                     "--cache-dir=" + (dir.path() / "cache").string()};
  build_cmd.insert(build_cmd.end(), flags.begin(), flags.end());
  run_ok(build_cmd);
  run_ok({"umoci", "unpack", "--image", (dir.path() / "tp-oci").string() + ":x", (dir.path() / "bt").string()});

  auto docker_tree = tree(dir.path() / "bd" / "rootfs");
  auto trainpack_tree = tree(dir.path() / "bt" / "rootfs");
  std::vector<std::string> diffs;
  for (const auto& [path, d] : docker_tree) {
    auto it = trainpack_tree.find(path);
    if (it == trainpack_tree.end()) diffs.push_back("only in docker's image: /" + path + " (" + d + ")");
    else if (it->second != d) diffs.push_back("/" + path + ": docker " + d + " | trainpack " + it->second);
  }
  for (const auto& [path, t] : trainpack_tree)
    if (!docker_tree.count(path)) diffs.push_back("only in trainpack's image: /" + path + " (" + t + ")");
  std::string report;
  for (const auto& d : diffs) report += d + "\n";
  EXPECT_TRUE(diffs.empty()) << report;

  // The image config must match too, except history (which names instructions in each builder's words).
  auto config_of = [&](const std::string& ref) {
    json c = json::parse(run_ok({"skopeo", "inspect", "--config", ref}));
    return c.at("config");
  };
  EXPECT_EQ(config_of("oci:" + (dir.path() / "docker-oci").string() + ":x"),
            config_of("oci:" + (dir.path() / "tp-oci").string() + ":x"));
  run_command(docker_command({"rmi", "-f", "trainpack-test/equiv:docker"}));
}
