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
  EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
  return r.out;
}

// Builds `flags` both ways and compares the results. `docker_base` is the docker-archive holding the executor
// image under its --executor-image-uri name (loaded into the test dockerd); `trainpack_base` is where trainpack
// reads the same image.
void expect_same_image(const fs::path& work, const std::vector<std::string>& flags, const fs::path& docker_base,
                       const std::string& trainpack_base) {
  run_ok(docker_command({"load", "-i", docker_base.string()}));
  std::vector<std::string> dockerfile_cmd{trainpack_bin(), "dockerfile"};
  dockerfile_cmd.insert(dockerfile_cmd.end(), flags.begin(), flags.end());
  std::string dockerfile = run_ok(dockerfile_cmd);
  std::string pkg;
  for (const auto& f : flags)
    if (f.starts_with("--local-package-path=")) pkg = f.substr(21);

  // What gcloud runs, plus --network none (the test dockerd has no bridge) and BuildKit.
  const std::string tag = "trainpack-test/equiv:docker";
  auto docker_build = docker_command({"build", "--no-cache", "--network", "none", "-t", tag, "--rm", "-f-", pkg});
  docker_build.insert(docker_build.begin(), {"env", "DOCKER_BUILDKIT=1"});
  run_ok(docker_build, dockerfile);
  run_ok(docker_command({"save", "-o", (work / "docker.tar").string(), tag}));
  run_command(docker_command({"rmi", "-f", tag}));
  run_ok({"skopeo", "copy", "docker-archive:" + (work / "docker.tar").string(),
          "oci:" + (work / "docker-oci").string() + ":x"});
  run_ok({"umoci", "unpack", "--image", (work / "docker-oci").string() + ":x", (work / "bd").string()});

  std::vector<std::string> build_cmd{trainpack_bin(), "build", "--base-source=" + trainpack_base,
                                     "--output=oci:" + (work / "tp-oci").string() + ":x",
                                     "--cache-dir=" + (work / "cache").string()};
  build_cmd.insert(build_cmd.end(), flags.begin(), flags.end());
  run_ok(build_cmd);
  run_ok({"umoci", "unpack", "--image", (work / "tp-oci").string() + ":x", (work / "bt").string()});

  auto docker_tree = tree(work / "bd" / "rootfs");
  auto trainpack_tree = tree(work / "bt" / "rootfs");
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
  EXPECT_GT(trainpack_tree.size(), 1000u) << "the base's files must be there too";

  // The image config must match too, except history (which names instructions in each builder's words).
  auto config_of = [&](const std::string& ref) {
    json c = json::parse(run_ok({"skopeo", "inspect", "--config", ref}));
    return c.at("config");
  };
  EXPECT_EQ(config_of("oci:" + (work / "docker-oci").string() + ":x"),
            config_of("oci:" + (work / "tp-oci").string() + ":x"));
}

}  // namespace

// A script in a subdirectory, an extra dir, .dockerignore excluding build debris.
TEST(DockerEquivalence, ScriptDirAndExtraDirOnAPlainPythonBase) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-equiv-"));
  fs::path pkg = dir.path() / "pkg";
  fs::copy(fs::path(source_dir()) / "testdata" / "example-trainer", pkg, fs::copy_options::recursive);
  write_file(pkg / "trainer" / "train.log", "excluded by **/*.log\n");
  write_file(pkg / "trainer" / "__pycache__" / "task.cpython-311.pyc", "excluded by **/__pycache__");
  expect_same_image(dir.path(),
                    {"--executor-image-uri=trainpack-test/python:3.11", "--local-package-path=" + pkg.string(),
                     "--script=trainer/task.py", "--extra-dirs=config"},
                    base_archive(), base_oci_ref());
}

// A Vertex prebuilt image name (pip3/python3, RUN rm -rf /var/sitecustomize, which the base has), a script at
// the package root (COPY . . of the whole context) and a .dockerignore with an exception.
TEST(DockerEquivalence, RootScriptOnAPrebuiltImageWithSitecustomize) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-equiv-"));
  const std::string prebuilt = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest";
  fs::path base = dir.path() / "prebuilt-base";
  fs::copy(base_oci_dir(), base, fs::copy_options::recursive);
  write_file(dir.path() / "sc" / "sitecustomize.py", "print('patched')\n");
  run_ok({"umoci", "insert", "--image", base.string() + ":3.11", (dir.path() / "sc").string(), "/var/sitecustomize"});
  fs::path archive = dir.path() / "prebuilt.tar";
  run_ok({"skopeo", "copy", "oci:" + base.string() + ":3.11", "docker-archive:" + archive.string() + ":" + prebuilt});

  fs::path pkg = dir.path() / "pkg";
  write_file(pkg / "task.py", "print('root task')\n");
  write_file(pkg / "sub" / "helper.py", "X = 1\n");
  write_file(pkg / ".git" / "HEAD", "ref: refs/heads/main\n");
  write_file(pkg / "data.log", "excluded\n");
  write_file(pkg / "keep.log", "re-included\n");
  write_file(pkg / ".dockerignore", ".git\n*.log\n!keep.log\n");
  expect_same_image(dir.path(),
                    {"--executor-image-uri=" + prebuilt, "--local-package-path=" + pkg.string(), "--script=task.py"},
                    archive, "oci:" + base.string() + ":3.11");
  EXPECT_FALSE(fs::exists(dir.path() / "bt" / "rootfs" / "var" / "sitecustomize"));
  EXPECT_TRUE(fs::exists(dir.path() / "bt" / "rootfs" / "usr" / "app" / "keep.log"));
  EXPECT_FALSE(fs::exists(dir.path() / "bt" / "rootfs" / "usr" / "app" / ".git"));
  run_command(docker_command({"rmi", "-f", prebuilt}));
}

// A Vertex prebuilt image name on a base WITHOUT /var/sitecustomize: Docker's `RUN rm -rf` changes nothing there,
// trainpack (which never reads the base's layers for it) writes a whiteout of a missing path; unpacked, the two
// images are the same.
TEST(DockerEquivalence, PrebuiltImageNameOnABaseWithoutSitecustomize) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-equiv-"));
  const std::string prebuilt = "europe-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-1.py310:latest";
  fs::path archive = dir.path() / "prebuilt.tar";
  run_ok({"skopeo", "copy", base_oci_ref(), "docker-archive:" + archive.string() + ":" + prebuilt});
  fs::path pkg = dir.path() / "pkg";
  write_file(pkg / "trainer" / "task.py", "print('task')\n");
  expect_same_image(dir.path(),
                    {"--executor-image-uri=" + prebuilt, "--local-package-path=" + pkg.string(),
                     "--script=trainer/task.py"},
                    archive, base_oci_ref());
  run_command(docker_command({"rmi", "-f", prebuilt}));
}
