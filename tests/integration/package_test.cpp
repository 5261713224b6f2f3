// trainpack's release packages (scripts/package.sh) installed the way a user installs them, on a clean Debian 12:
// the .deb with apt (which fetches its Depends from the Debian mirror), the self-contained tarball unpacked and run
// with no library installed. Packages.* tests get (tests/CMakeLists.txt) the test dockerd, the clean rootfs of
// tests/fixtures/debian-clean.sh (TRAINPACK_TEST_DEBIAN_STATE/env) and the build under test
// (TRAINPACK_TEST_BUILD_DIR), which package.sh packages as it is (PREBUILT=1).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

// KEY=VALUE lines of the clean-Debian fixture's env file.
std::map<std::string, std::string> debian_env() {
  auto out = read_env_file(env_or_fail("TRAINPACK_TEST_DEBIAN_STATE") + "/env");
  if (out.empty()) ADD_FAILURE() << "no debian-clean fixture env: run through ctest";
  return out;
}

// The fixture's rootfs as an image of the test dockerd, imported once per fixture key (the tag carries it).
std::string clean_debian_image() {
  auto env = debian_env();
  const std::string image = env.at("TRAINPACK_TEST_DEBIAN_IMAGE");
  if (run_command(docker_command({"image", "inspect", image})).exit_code == 0) return image;
  std::vector<std::string> import = docker_command({"import", env.at("TRAINPACK_TEST_DEBIAN_ROOTFS"), image});
  auto imported = run_command(import);
  if (imported.exit_code != 0) ADD_FAILURE() << describe(import, imported);
  return image;
}

// The library names of --version's second line ("libcurl 7.88.1, libarchive 3.6.2, ..."), without versions: the
// .deb's libraries come from the mirror and may be newer point releases than the build machine's.
std::vector<std::string> library_names(const std::string& version_output) {
  std::istringstream lines(version_output);
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  std::vector<std::string> names;
  std::istringstream items(line);
  for (std::string item; std::getline(items, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    names.push_back(item.substr(0, item.find(' ')));
  }
  return names;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// What every packaged binary must print: the host build's first line (version and commit), and the same libraries.
void expect_same_version(const std::string& packaged, const std::string& host, const std::string& what) {
  EXPECT_EQ(first_line(packaged), first_line(host)) << what << ":\n" << packaged;
  EXPECT_EQ(library_names(packaged), library_names(host)) << what << ":\n" << packaged;
}

}  // namespace

TEST(Packages, DebInstallsOnCleanDebian12AndTarballRunsThere) {
  const std::string image = clean_debian_image();
  ASSERT_FALSE(HasFailure());
  auto host = run_command({trainpack_bin(), "--version"});
  ASSERT_EQ(host.exit_code, 0) << describe({"trainpack --version"}, host);
  ASSERT_TRUE(host.out.starts_with(std::string("trainpack ") + TRAINPACK_VERSION + " (commit ")) << host.out;
  ASSERT_GE(library_names(host.out).size(), 3u) << host.out;

  TempDir dir("tp-package");
  const fs::path dist = dir.path() / "dist";
  std::vector<std::string> package{"env", "PREBUILT=1", "BUILD_DIR=" + env_or_fail("TRAINPACK_TEST_BUILD_DIR"),
                                   "DIST_DIR=" + dist.string(), "bash", source_dir() + "/scripts/package.sh"};
  auto packaged = run_command(package);
  ASSERT_EQ(packaged.exit_code, 0) << describe(package, packaged);
  std::vector<std::string> debs, tarballs;
  for (const auto& e : fs::directory_iterator(dist)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("trainpack_") && name.ends_with(".deb")) debs.push_back(name);
    if (name.starts_with("trainpack-") && name.ends_with(".tar.gz")) tarballs.push_back(name);
  }
  ASSERT_EQ(debs.size(), 1u) << packaged.out;
  ASSERT_EQ(tarballs.size(), 1u) << packaged.out;

  // The .deb: apt resolves its Depends from the mirror (the rootfs's only apt source); apt's own output goes to
  // stderr so that stdout is trainpack's.
  std::vector<std::string> deb_run = docker_command(
      {"run", "--rm", "--network", "host", "-e", "DEBIAN_FRONTEND=noninteractive", "-v", dist.string() + ":/dist:ro",
       image, "sh", "-c",
       "apt-get update -q >&2 && apt-get install -y -q /dist/" + debs[0] +
           " >&2 && command -v trainpack && trainpack --version"});
  auto deb = run_command(deb_run);
  ASSERT_EQ(deb.exit_code, 0) << describe(deb_run, deb);
  ASSERT_TRUE(deb.out.starts_with("/usr/bin/trainpack\n")) << deb.out;
  expect_same_version(deb.out.substr(deb.out.find('\n') + 1), host.out, "the .deb's trainpack");

  // The tarball, in a fresh container of the same image (none of trainpack's libraries installed), as any user.
  const std::string top = tarballs[0].substr(0, tarballs[0].size() - std::string(".tar.gz").size());
  std::vector<std::string> tar_run = docker_command(
      {"run", "--rm", "--network", "none", "--user", "12345:12345", "-v", dist.string() + ":/dist:ro", image, "sh",
       "-c", "cd /tmp && tar -xzf /dist/" + tarballs[0] + " && ./" + top + "/bin/trainpack --version"});
  auto tarball = run_command(tar_run);
  ASSERT_EQ(tarball.exit_code, 0) << describe(tar_run, tarball);
  expect_same_version(tarball.out, host.out, "the tarball's trainpack");
  // The tarball carries the build machine's libraries, so it names the very same versions.
  EXPECT_EQ(tarball.out, host.out);
  // Without them the clean system cannot run the binary at all: the test would not notice a missing lib/ otherwise.
  std::vector<std::string> bare_run = docker_command(
      {"run", "--rm", "--network", "none", "-v", dist.string() + ":/dist:ro", image, "sh", "-c",
       "cd /tmp && tar -xzf /dist/" + tarballs[0] + " && rm -r " + top + "/lib && ./" + top +
           "/bin/trainpack --version"});
  auto bare = run_command(bare_run);
  EXPECT_NE(bare.exit_code, 0) << describe(bare_run, bare);
}
