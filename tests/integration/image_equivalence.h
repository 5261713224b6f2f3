#pragma once
// The equivalence oracle: build the same trainer with `docker build` (BuildKit) of the Dockerfile trainpack prints
// (gcloud's) and with `trainpack build`, unpack both with umoci and compare the root filesystems entry by entry
// (path, type, mode, owner, symlink target, bytes) and the image configs. Mtimes differ by design; a .pyc is
// compared without its header's source-mtime field (Docker's pip stamps the time of the build, trainpack the
// layer's fixed mtime). The SBOM trainpack attaches is checked against docker's image as well: its Python packages
// are what `pip list` prints in a container of docker's image, its OS packages what dpkg-query reads from docker's
// root, its files hold the bytes trainpack's image holds, and it passes the SPDX 2.3 schema.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "image/digest.h"
#include "python/names.h"
#include "support/fs.h"
#include "support/utf8.h"
#include "tests/integration/sbom_validation.h"
#include "tests/integration/test_support.h"

namespace trainpack::testing {

inline std::string describe_entry(const std::filesystem::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return "unreadable";
  std::string kind = S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "symlink" : S_ISREG(st.st_mode) ? "file" : "other";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
  std::string s = kind + " " + mode + " " + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid);
  if (S_ISLNK(st.st_mode)) s += " -> " + std::filesystem::read_symlink(p).string();
  if (S_ISREG(st.st_mode)) {
    if (p.extension() == ".pyc" && st.st_size >= 16) {
      std::string bytes = trainpack::read_file(p, 1u << 30);
      for (std::size_t i = 8; i < 12; ++i) bytes[i] = 0;  // the source mtime
      s += " " + trainpack::image::sha256_of(bytes).str() + " (pyc, mtime masked)";
    } else {
      s += " " + trainpack::image::sha256_of_file(p).str();
    }
  }
  return s;
}

inline std::map<std::string, std::string> tree(const std::filesystem::path& root) {
  std::map<std::string, std::string> out;
  // lexically: fs::relative resolves symlinks (a rootfs's /dev/stderr -> /proc/self/fd/2 would be the host's)
  for (auto it = std::filesystem::recursive_directory_iterator(root); it != std::filesystem::recursive_directory_iterator(); ++it)
    out[it->path().lexically_relative(root).string()] = describe_entry(it->path());
  return out;
}

inline std::string run_ok(const std::vector<std::string>& argv, const std::string& input = "") {
  auto r = run_command(argv, input);
  EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
  return r.out;
}

struct EquivalenceOptions {
  std::string docker_network = "none";  // "host" when the build reaches the test's package index
  std::vector<std::string> trainpack_flags;  // only for `trainpack build` (e.g. --index-url overrides)
  std::string entrypoint_prints;  // when set: trainpack's image is run by docker and must print this, exit 0
};

// Loads the OCI image at `oci_ref` into the test dockerd and runs its entrypoint (no network); returns stdout.
inline std::string run_entrypoint(const std::filesystem::path& work, const std::string& oci_ref) {
  const std::string tag = "trainpack-test/equiv:trainpack";
  const std::string archive = (work / "trainpack-image.tar").string();
  auto r = run_command({"skopeo", "copy", oci_ref, "docker-archive:" + archive + ":" + tag});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_command(docker_command({"load", "-i", archive}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  CommandResult run = run_command(docker_command({"run", "--rm", "--network", "none", tag}));
  run_command(docker_command({"rmi", "-f", tag}));
  EXPECT_EQ(run.exit_code, 0) << "the entrypoint failed:\n" << run.out << run.err;
  return run.out;
}

// "name version" of each package, with Python names canonical (PEP 503).
using PackageSet = std::set<std::string>;

// What pip in a container of the image `tag` lists (the pip gcloud's Dockerfile runs: pip, else pip3).
inline PackageSet pip_list_in(const std::string& tag) {
  const std::string list = "list --format=json --disable-pip-version-check";
  CommandResult r = run_command(docker_command(
      {"run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", tag, "-c",
       "if command -v pip >/dev/null; then exec pip " + list + "; else exec pip3 " + list + "; fi"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  PackageSet out;
  nlohmann::json listed = nlohmann::json::parse(r.out, nullptr, false);
  if (!listed.is_array()) return out;
  for (const auto& d : listed)
    out.insert(python::canonicalize_name(d.at("name").get<std::string>()) + " " + d.at("version").get<std::string>());
  return out;
}

// The installed packages of the dpkg database under `root` (none without one), as dpkg-query reads them.
inline PackageSet dpkg_packages_of(const std::filesystem::path& root) {
  PackageSet out;
  if (!std::filesystem::exists(root / "var/lib/dpkg/status")) return out;
  std::istringstream listed(run_ok({"dpkg-query", "--admindir=" + (root / "var/lib/dpkg").string(), "-W", "-f",
                                    "${db:Status-Abbrev} ${Package} ${Version}\n"}));
  for (std::string line; std::getline(listed, line);)
    if (line.starts_with("ii ")) out.insert(line.substr(4));
  return out;
}

// An SPDX document's packages of one purl type ("pypi", "deb"): "name version".
inline PackageSet spdx_packages(const nlohmann::json& spdx, const std::string& type) {
  PackageSet out;
  for (const auto& p : spdx.at("packages")) {
    bool of_type = false;
    for (const auto& ref : p.value("externalRefs", nlohmann::json::array()))
      of_type = of_type || ref.value("referenceLocator", "").starts_with("pkg:" + type + "/");
    std::string name = p.at("name").get<std::string>();
    if (of_type) out.insert((type == "pypi" ? python::canonicalize_name(name) : name) + " " +
                            p.at("versionInfo").get<std::string>());
  }
  return out;
}

// The SBOM attached to trainpack's image against docker's image (see the top of this file).
inline void expect_sbom_describes(const std::filesystem::path& work, const std::string& oci_ref,
                                  const PackageSet& pip_truth, bool has_pip_steps) {
  std::string text = run_ok({trainpack_bin(), "sbom", oci_ref});
  expect_valid("spdx-2.3.schema.json", text, "the SBOM of trainpack's image");
  nlohmann::json spdx = nlohmann::json::parse(text);
  EXPECT_EQ(spdx_packages(spdx, "pypi"), pip_truth);
  PackageSet dpkg_truth = dpkg_packages_of(work / "bd" / "rootfs");
  if (has_pip_steps) {  // a build without pip steps reads no base layer, and names the base by digest only
    EXPECT_EQ(spdx_packages(spdx, "deb"), dpkg_truth);
  }
  EXPECT_FALSE(spdx.value("files", nlohmann::json::array()).empty()) << "the trainer's files";
  // The SBOM names a file whose name is not UTF-8 with U+FFFD for its stray bytes: found by that name.
  std::map<std::string, std::filesystem::path> by_sbom_name;
  const std::filesystem::path rootfs = work / "bt" / "rootfs";
  if (std::filesystem::is_directory(rootfs / "usr" / "app"))  // gcloud's WORKDIR, where the copies go
    for (const auto& e : std::filesystem::recursive_directory_iterator(rootfs / "usr" / "app"))
      by_sbom_name[valid_utf8(e.path().lexically_relative(rootfs).string())] = e.path();
  for (const auto& f : spdx.value("files", nlohmann::json::array())) {
    std::string path = f.at("fileName").get<std::string>().substr(2);  // "./usr/app/..."
    std::string sha256;
    for (const auto& c : f.at("checksums"))
      if (c.at("algorithm") == "SHA256") sha256 = c.at("checksumValue");
    auto found = by_sbom_name.find(path);
    std::filesystem::path file = found != by_sbom_name.end() ? found->second : rootfs / path;
    EXPECT_EQ("sha256:" + sha256, image::sha256_of_file(file).str()) << path;
  }
}

// Builds `flags` both ways and compares the results. `docker_base` is a docker-archive holding the executor
// image under its --executor-image-uri name (loaded into the test dockerd), or empty when dockerd has it already;
// `trainpack_base` is where trainpack reads the same image. Returns what `trainpack build` wrote to stderr.
inline std::string expect_same_image(const std::filesystem::path& work, const std::vector<std::string>& flags,
                              const std::filesystem::path& docker_base, const std::string& trainpack_base,
                              const EquivalenceOptions& options = {}) {
  namespace fs = std::filesystem;
  if (!docker_base.empty()) run_ok(docker_command({"load", "-i", docker_base.string()}));
  std::vector<std::string> dockerfile_cmd{trainpack_bin(), "dockerfile"};
  dockerfile_cmd.insert(dockerfile_cmd.end(), flags.begin(), flags.end());
  std::string dockerfile = run_ok(dockerfile_cmd);
  std::string pkg;
  for (const auto& f : flags)
    if (f.starts_with("--local-package-path=")) pkg = f.substr(21);

  // What gcloud runs, plus --network (the test dockerd has no bridge) and BuildKit.
  const std::string tag = "trainpack-test/equiv:docker";
  auto docker_build = docker_command({"build", "--no-cache", "--network", options.docker_network, "-t", tag, "--rm", "-f-", pkg});
  docker_build.insert(docker_build.begin(), {"env", "DOCKER_BUILDKIT=1"});
  run_ok(docker_build, dockerfile);
  const bool has_pip_steps = dockerfile.find(" install --no-cache-dir") != std::string::npos;
  PackageSet pip_truth = has_pip_steps ? pip_list_in(tag) : PackageSet{};
  run_ok(docker_command({"save", "-o", (work / "docker.tar").string(), tag}));
  run_command(docker_command({"rmi", "-f", tag}));
  run_ok({"skopeo", "copy", "docker-archive:" + (work / "docker.tar").string(),
          "oci:" + (work / "docker-oci").string() + ":x"});
  run_ok({"umoci", "unpack", "--image", (work / "docker-oci").string() + ":x", (work / "bd").string()});

  std::vector<std::string> build_cmd{trainpack_bin(), "build", "--base-source=" + trainpack_base,
                                     "--output=oci:" + (work / "tp-oci").string() + ":x",
                                     "--cache-dir=" + (work / "cache").string()};
  build_cmd.insert(build_cmd.end(), flags.begin(), flags.end());
  build_cmd.insert(build_cmd.end(), options.trainpack_flags.begin(), options.trainpack_flags.end());
  CommandResult built = run_command(build_cmd);
  EXPECT_EQ(built.exit_code, 0) << describe(build_cmd, built);
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
    nlohmann::json c = nlohmann::json::parse(run_ok({"skopeo", "inspect", "--config", ref}));
    return c.at("config");
  };
  EXPECT_EQ(config_of("oci:" + (work / "docker-oci").string() + ":x"),
            config_of("oci:" + (work / "tp-oci").string() + ":x"));

  expect_sbom_describes(work, "oci:" + (work / "tp-oci").string() + ":x", pip_truth, has_pip_steps);

  if (!options.entrypoint_prints.empty()) {
    std::string printed = run_entrypoint(work, "oci:" + (work / "tp-oci").string() + ":x");
    EXPECT_NE(printed.find(options.entrypoint_prints), std::string::npos) << printed;
  }
  return built.err;
}

}  // namespace trainpack::testing
