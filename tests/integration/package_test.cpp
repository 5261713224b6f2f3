// trainpack's release packages (scripts/package.sh) installed the way a user installs them: the .deb with apt on a
// clean Debian 12 (apt fetches its Depends from the Debian mirror); the self-contained tarball unpacked and run, with
// a build and push of its example trainer, in root filesystems whose libc is older (Debian 11), the same (12), newer
// (13) or missing (a static busybox only). Packages.* tests get (tests/CMakeLists.txt) the fixtures of every
// integration test, the clean rootfs of tests/fixtures/debian-clean.sh (TRAINPACK_TEST_DEBIAN_STATE/env), the roots
// of tests/fixtures/release-roots.sh (TRAINPACK_TEST_RELEASE_ROOTS/env) and the packages scripts/package.sh made of
// the build under test, as it is (PREBUILT=1), once for all of them (TRAINPACK_TEST_RELEASE_DIST).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/debian_clean.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

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

// The file of `dir` whose name starts with `prefix` and ends with `suffix`; a failure unless there is exactly one.
std::string only_file(const fs::path& dir, const std::string& prefix, const std::string& suffix) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(suffix)) found.push_back(name);
  }
  if (found.size() != 1) ADD_FAILURE() << found.size() << " files " << prefix << "*" << suffix << " in " << dir;
  return found.empty() ? "" : found[0];
}

// What every packaged binary must print: the host build's first line (version and commit), and the same libraries.
void expect_same_version(const std::string& packaged, const std::string& host, const std::string& what) {
  EXPECT_EQ(first_line(packaged), first_line(host)) << what << ":\n" << packaged;
  EXPECT_EQ(library_names(packaged), library_names(host)) << what << ":\n" << packaged;
}

}  // namespace

// package.sh's output for the build under test (fixture.release_packages, made once for all Packages.* tests).
class Packages : public ::testing::Test {
 protected:
  static fs::path dist() { return env_or_fail("TRAINPACK_TEST_RELEASE_DIST"); }
  // trainpack-VERSION-linux-ARCH.tar.gz
  static std::string tarball() { return only_file(dist(), "trainpack-", ".tar.gz"); }

  // What the build under test prints for --version, checked to name its version and libraries.
  static CommandResult host_version() {
    auto host = run_command({trainpack_bin(), "--version"});
    EXPECT_EQ(host.exit_code, 0) << describe({"trainpack --version"}, host);
    EXPECT_TRUE(host.out.starts_with(std::string("trainpack ") + TRAINPACK_VERSION + " (commit ")) << host.out;
    EXPECT_GE(library_names(host.out).size(), 3u) << host.out;
    return host;
  }
};

TEST_F(Packages, DebInstallsOnCleanDebian12AndTarballRunsThere) {
  const std::string image = clean_debian_image();
  ASSERT_FALSE(HasFailure());
  auto host = host_version();
  ASSERT_FALSE(HasFailure());
  const fs::path dist = Packages::dist();
  std::vector<std::string> debs{only_file(dist, "trainpack_", "~deb12_amd64.deb")}, tarballs{tarball()};
  ASSERT_FALSE(HasFailure());

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

// The tarball in each root filesystem of tests/fixtures/release-roots.sh, started the way bwrap starts a program in a
// container (the root read-only, the release at /opt/trainpack, shared network so the test registry is reachable):
// --version, then a build of the tarball's example trainer pushed to the test registry. The registry is named by a
// host name only the root's /etc/hosts knows and HOME is unset, so the push resolves the name and finds the user's
// home (getpwuid) through the bundled libc's NSS, not the root's. Each root's push must give the image the build
// under test gives on this machine.
TEST_F(Packages, TarballBuildsAndPushesInDebian11To13AndARootWithNoLibc) {
  auto host = host_version();
  ASSERT_FALSE(HasFailure());
  const std::string name = tarball();
  ASSERT_FALSE(HasFailure());
  TempDir dir("tp-package");
  const fs::path release = dir.path() / "release";
  fs::create_directories(release);
  std::vector<std::string> untar{"tar", "-xzf", (dist() / name).string(), "-C", release.string(),
                                 "--strip-components=1"};
  auto untarred = run_command(untar);
  ASSERT_EQ(untarred.exit_code, 0) << describe(untar, untarred);
  const fs::path hosts = dir.path() / "hosts";
  write_file(hosts, "127.0.0.1 localhost\n127.0.0.1 registry.trainpack.test\n");
  const std::string port = env_or_fail("TRAINPACK_TEST_REGISTRY").substr(std::string("127.0.0.1:").size());
  const std::string registry = "registry.trainpack.test:" + port;
  auto build_args = [](const std::string& base, const std::string& example, const std::string& cache,
                       const std::string& image) {
    return std::vector<std::string>{"build", "--executor-image-uri=oci:" + base + ":3.11",
                                    "--local-package-path=" + example, "--script=trainer/task.py",
                                    "--extra-dirs=config", "--output-image-uri=" + image, "--cache-dir=" + cache,
                                    "--format=json"};
  };

  auto roots = read_env_file(env_or_fail("TRAINPACK_TEST_RELEASE_ROOTS") + "/env");
  const std::vector<std::string> names{"DEBIAN11", "DEBIAN12", "DEBIAN13", "BUSYBOX"};
  for (const auto& root : names)
    ASSERT_TRUE(roots.contains("TRAINPACK_TEST_ROOT_" + root)) << "no " << root << " root in the fixture's env";
  // The root read-only; a tmpfs on /opt holds the mount points of the release and the base.
  auto in_root = [&](const std::string& root, const std::vector<std::string>& args) {
    std::vector<std::string> argv{"bwrap", "--ro-bind", roots.at("TRAINPACK_TEST_ROOT_" + root), "/",
                                  "--tmpfs", "/opt", "--ro-bind", release.string(), "/opt/trainpack",
                                  "--ro-bind", base_oci_dir(), "/opt/base", "--ro-bind", hosts.string(),
                                  "/etc/hosts", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                                  "--unsetenv", "HOME", "--unsetenv", "SSL_CERT_FILE", "--chdir", "/tmp",
                                  "/opt/trainpack/bin/trainpack"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  for (const auto& root : names) {
    auto version = in_root(root, {"--version"});
    auto v = run_command(version);
    ASSERT_EQ(v.exit_code, 0) << describe(version, v);
    EXPECT_EQ(v.out, host.out) << root;
  }

  // The reference: the build under test, run on this machine's root with the paths and arguments used in the roots
  // (the image depends on the paths it was built from). The binary is bound outside /tmp, which the tmpfs hides (a
  // clone under /tmp has its build there).
  std::vector<std::string> reference{"bwrap", "--bind", "/", "/", "--tmpfs", "/opt", "--ro-bind", release.string(),
                                     "/opt/trainpack", "--ro-bind", base_oci_dir(), "/opt/base", "--ro-bind",
                                     trainpack_bin(), "/opt/under-test/trainpack", "--ro-bind", hosts.string(),
                                     "/etc/hosts", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                                     "/opt/under-test/trainpack"};
  auto args = build_args("/opt/base", "/opt/trainpack/share/trainpack/example", "/tmp/cache",
                         registry + "/release/host:v1");
  args.push_back("--insecure-registry=" + registry);
  reference.insert(reference.end(), args.begin(), args.end());
  auto expected = run_command(reference);
  ASSERT_EQ(expected.exit_code, 0) << describe(reference, expected);
  const std::string digest = nlohmann::json::parse(expected.out).at("manifest_digest");

  for (const auto& root : names) {
    std::string repo = "release/" + root;
    std::transform(repo.begin(), repo.end(), repo.begin(), [](unsigned char c) { return std::tolower(c); });
    auto args = build_args("/opt/base", "/opt/trainpack/share/trainpack/example", "/tmp/cache",
                           registry + "/" + repo + ":v1");
    args.push_back("--insecure-registry=" + registry);
    auto push = in_root(root, args);
    auto pushed = run_command(push);
    ASSERT_EQ(pushed.exit_code, 0) << describe(push, pushed);
    auto result = nlohmann::json::parse(pushed.out);
    EXPECT_EQ(result.at("manifest_digest"), digest) << pushed.out;
    EXPECT_EQ(result.at("pushed").at(0), registry + "/" + repo + "@" + digest) << pushed.out;
  }
}

// The step image's OCI layout archive is pushed as a user would (skopeo copy oci-archive:) and runs `--version` from
// the registry; SHA256SUMS checks every file package.sh made, and the tarball's entries are sorted, with one mtime
// and owner 0 (reproducible).
TEST_F(Packages, StepImageArchivePushesAndRunsAndChecksumsCoverEveryFile) {
  auto host = host_version();
  const std::string step = only_file(dist(), "trainpack-step-", ".oci.tar");
  ASSERT_FALSE(HasFailure());
  const std::string target = env_or_fail("TRAINPACK_TEST_REGISTRY") + "/release/step:test";
  std::vector<std::string> copy{"skopeo", "copy", "--quiet", "--insecure-policy", "--dest-tls-verify=false",
                                "oci-archive:" + (dist() / step).string(), "docker://" + target};
  auto copied = run_command(copy);
  ASSERT_EQ(copied.exit_code, 0) << describe(copy, copied);
  std::vector<std::string> run = docker_command({"run", "--rm", "--pull", "always", "--network", "none", target,
                                                 "--version"});
  auto ran = run_command(run);
  ASSERT_EQ(ran.exit_code, 0) << describe(run, ran);
  EXPECT_EQ(first_line(ran.out), first_line(host.out));
  run_command(docker_command({"rmi", "-f", target}));

  std::vector<std::string> check{"sh", "-c", "cd \"$0\" && sha256sum -c SHA256SUMS", dist().string()};
  auto checked = run_command(check);
  ASSERT_EQ(checked.exit_code, 0) << describe(check, checked);
  for (const auto& name : {only_file(dist(), "trainpack_", "~deb12_amd64.deb"), tarball(), step})
    EXPECT_NE(checked.out.find(name + ": OK\n"), std::string::npos) << name << " not in SHA256SUMS:\n" << checked.out;

  std::vector<std::string> list{"tar", "--list", "--verbose", "--full-time", "--numeric-owner", "-zf",
                                (dist() / tarball()).string()};
  auto listed = run_command(list);
  ASSERT_EQ(listed.exit_code, 0) << describe(list, listed);
  std::istringstream lines(listed.out);
  std::vector<std::string> names;
  std::set<std::string> owners, times;
  for (std::string mode, owner, size, day, time, name; lines >> mode >> owner >> size >> day >> time >> name;) {
    std::getline(lines, mode);  // the rest of a link's line
    owners.insert(owner);
    times.insert(day + " " + time);
    names.push_back(name);
  }
  ASSERT_GT(names.size(), 50u) << listed.out;
  // tar --sort=name: each directory's entries by name, each directory's contents right after it.
  auto by_components = [](const std::string& a, const std::string& b) {
    const fs::path pa(a), pb(b);
    return std::lexicographical_compare(pa.begin(), pa.end(), pb.begin(), pb.end());
  };
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end(), by_components)) << listed.out;
  EXPECT_EQ(owners, std::set<std::string>{"0/0"});
  EXPECT_EQ(times.size(), 1u) << listed.out;
}

// Opt-in (`DEB_SUITES=trixie ctest ...`: package.sh then compiles trainpack in a Debian 13 root, about 10 minutes the
// first time): the Debian 13 .deb installs with apt in a copy of the clean Debian 13 root, and runs there.
TEST_F(Packages, Debian13DebInstallsWithAptOnCleanDebian13) {
  if (env_or("DEB_SUITES", "").find("trixie") == std::string::npos)
    GTEST_SKIP() << "run ctest with DEB_SUITES=trixie to build and test the Debian 13 .deb";
  auto host = host_version();
  const std::string deb = only_file(dist(), "trainpack_", "~deb13_amd64.deb");
  ASSERT_FALSE(HasFailure());
  auto roots = read_env_file(env_or_fail("TRAINPACK_TEST_RELEASE_ROOTS") + "/env");
  TempDir dir("tp-package");
  const fs::path root = dir.path() / "debian13";
  std::vector<std::string> copy{"cp", "-a", roots.at("TRAINPACK_TEST_ROOT_DEBIAN13"), root.string()};
  auto copied = run_command(copy);
  ASSERT_EQ(copied.exit_code, 0) << describe(copy, copied);
  // apt and dpkg as root with their capabilities (chown, setuid to _apt), on the copy and its own /tmp (which _apt
  // writes to); its sources are the mirror's.
  std::vector<std::string> install{
      "bwrap", "--bind", root.string(), "/", "--ro-bind", dist().string(), "/dist", "--proc", "/proc", "--dev",
      "/dev", "--cap-add", "ALL", "--setenv", "DEBIAN_FRONTEND", "noninteractive", "sh", "-c",
      "apt-get update -q >&2 && apt-get install -y -q /dist/" + deb + " >&2 && command -v trainpack && "
      "dpkg-query -W -f='${Depends}\\n' trainpack && trainpack --version"};
  fs::create_directories(root / "dist");
  auto installed = run_command(install);
  ASSERT_EQ(installed.exit_code, 0) << describe(install, installed);
  ASSERT_TRUE(installed.out.starts_with("/usr/bin/trainpack\n")) << installed.out;
  // Debian 13's names (the 64-bit time_t transition), which Debian 12 has no package of.
  EXPECT_NE(installed.out.find("libcurl4t64"), std::string::npos) << installed.out;
  const std::string version = installed.out.substr(installed.out.find('\n', installed.out.find('\n') + 1) + 1);
  EXPECT_EQ(first_line(version), first_line(host.out)) << installed.out;
}

// The linux-arm64 tarball (`ARCH=arm64 scripts/package.sh`, cross-built by fixture.release_arm64) under Debian's
// qemu-user: its binary is arm64 and loads only the tarball's libraries, prints what the build under test prints,
// and builds the image of the tarball's example trainer that the build under test builds: the same config (so the
// same layer tars, diff_ids and history); the gzip bytes differ, as ISA-L's arm64 deflate is not its x86 one, and
// each layer is checked to decompress to its diff_id. The launcher itself (an arm64 static binary that execs the
// bundled loader) runs when binfmt_misc hands arm64 programs to qemu (the fixture registers it with update-binfmts);
// the bundled loader is started by qemu either way.
TEST_F(Packages, Arm64TarballRunsUnderQemuAndBuildsTheSameImageConfig) {
  auto host = host_version();
  const fs::path arm64_dist = env_or_fail("TRAINPACK_TEST_RELEASE_DIST_ARM64");
  const std::string name = only_file(arm64_dist, "trainpack-", "-linux-arm64.tar.gz");
  ASSERT_FALSE(HasFailure());
  TempDir dir("tp-arm64");
  const fs::path release = dir.path() / "release";
  fs::create_directories(release);
  std::vector<std::string> untar{"tar", "-xzf", (arm64_dist / name).string(), "-C", release.string(),
                                 "--strip-components=1"};
  auto untarred = run_command(untar);
  ASSERT_EQ(untarred.exit_code, 0) << describe(untar, untarred);
  // ELF e_machine (offset 18, little-endian) 183: EM_AARCH64, for the binary, the loader and the launcher.
  for (const char* file : {"lib/trainpack.bin", "lib/ld-linux-aarch64.so.1", "bin/trainpack"}) {
    const std::string elf = read_file(release / file);
    ASSERT_GT(elf.size(), 20u) << file;
    EXPECT_EQ(elf.substr(0, 4), "\x7f" "ELF") << file;
    EXPECT_EQ(static_cast<unsigned char>(elf[18]) | static_cast<unsigned char>(elf[19]) << 8, 183) << file;
  }
  EXPECT_TRUE(fs::is_regular_file(release / "share/man/man1/trainpack.1"));

  const std::vector<std::string> bundled{"qemu-aarch64", (release / "lib/ld-linux-aarch64.so.1").string(),
                                         "--inhibit-cache", "--library-path", (release / "lib").string(),
                                         (release / "lib/trainpack.bin").string()};
  auto with_args = [](std::vector<std::string> argv, const std::vector<std::string>& args) {
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  auto version = run_command(with_args(bundled, {"--version"}));
  ASSERT_EQ(version.exit_code, 0) << describe(with_args(bundled, {"--version"}), version);
  EXPECT_EQ(version.out, host.out);
  const fs::path binfmt = "/proc/sys/fs/binfmt_misc/qemu-aarch64";
  if (fs::exists(binfmt) && read_file(binfmt).starts_with("enabled")) {
    auto launched = run_command({(release / "bin/trainpack").string(), "--version"});
    ASSERT_EQ(launched.exit_code, 0) << describe({"bin/trainpack --version"}, launched);
    EXPECT_EQ(launched.out, host.out);
  } else {
    std::cout << "binfmt_misc has no enabled qemu-aarch64: the launcher was not run\n";
  }

  // The same build (same base, trainer and paths) by each binary, each into its own cache and layout.
  const std::string example = (release / "share/trainpack/example").string();
  auto build = [&](std::vector<std::string> program, const std::string& out) {
    return with_args(std::move(program),
                     {"build", "--executor-image-uri=" + base_oci_ref(), "--local-package-path=" + example,
                      "--script=trainer/task.py", "--extra-dirs=config",
                      "--output=oci:" + (dir.path() / out).string() + ":latest",
                      "--cache-dir=" + (dir.path() / (out + "-cache")).string(), "--format=json"});
  };
  auto expected = run_command(build({trainpack_bin()}, "amd64"));
  ASSERT_EQ(expected.exit_code, 0) << describe(build({trainpack_bin()}, "amd64"), expected);
  auto built = run_command(build(bundled, "arm64"));
  ASSERT_EQ(built.exit_code, 0) << describe(build(bundled, "arm64"), built);
  const auto arm64_image = nlohmann::json::parse(built.out), amd64_image = nlohmann::json::parse(expected.out);
  EXPECT_EQ(arm64_image.at("config_digest"), amd64_image.at("config_digest")) << built.out << "\n" << expected.out;
  int checked = 0;
  for (const auto& layer : arm64_image.at("layers")) {
    if (!layer.contains("diff_id")) continue;  // the base's, not rewritten
    const std::string digest = layer.at("digest");
    const fs::path blob = dir.path() / "arm64/blobs/sha256" / digest.substr(std::string("sha256:").size());
    auto unzipped = run_command({"sh", "-c", "gzip -dc \"$0\" | sha256sum", blob.string()});
    ASSERT_EQ(unzipped.exit_code, 0) << unzipped.err;
    EXPECT_EQ("sha256:" + unzipped.out.substr(0, 64), layer.at("diff_id").get<std::string>()) << digest;
    ++checked;
  }
  EXPECT_EQ(checked, 3) << built.out;
}
