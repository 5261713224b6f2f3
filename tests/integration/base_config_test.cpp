// Bases whose config or files change what gcloud's Dockerfile does in docker's build: a WorkingDir the first RUN
// runs in (docker creates it), a non-root User (docker's build fails), no `python` on PATH (the image builds, its
// container cannot start). Each base is the test base with its OCI config edited by umoci, or a whiteout appended.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "support/fs.h"
#include "tests/integration/image_equivalence.h"
#include "tests/integration/pip_test_support.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

struct DerivedBase {
  fs::path archive;     // docker-archive holding it as `name`
  std::string oci_ref;  // where trainpack reads it
};

// The test base, changed by `umoci ARGS --image <layout>:3.11` for each ARGS, named `name` in its docker-archive.
DerivedBase derive_base(const fs::path& dir, const std::string& name,
                        const std::vector<std::vector<std::string>>& umoci_edits) {
  fs::path layout = dir / "derived-base";
  fs::copy(base_oci_dir(), layout, fs::copy_options::recursive);
  const std::string image = layout.string() + ":3.11";
  for (std::vector<std::string> edit : umoci_edits) {
    edit.insert(edit.begin() + 1, {"--image", image});
    edit.insert(edit.begin(), "umoci");
    run_ok(edit);
  }
  fs::path archive = dir / "derived-base.tar";
  run_ok({"skopeo", "copy", "oci:" + image, "docker-archive:" + archive.string() + ":" + name});
  return {archive, "oci:" + image};
}

fs::path trainer(const fs::path& dir) {
  fs::path pkg = dir / "pkg";
  write_file(pkg / "trainer" / "task.py", "print('trained')\n");
  return pkg;
}

std::string mode_of(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) + " " + std::to_string(st.st_mode & 07777);
}

}  // namespace

// docker runs gcloud's first RUN in the base's WorkingDir and creates it (0755, root) when the base lacks it, so
// that RUN's layer holds it; trainpack's image holds it the same way (the comparison is the judge).
TEST(DockerEquivalence, BaseWorkingDirThatDoesNotExistIsCreatedByTheFirstRun) {
  TempDir dir("tp-equiv-workdir");
  const std::string name = "trainpack-test/workdir:3.11";
  DerivedBase base = derive_base(dir.path(), name, {{"config", "--config.workingdir", "/opt/work/data"}});
  std::string err = expect_same_image(
      dir.path(),
      {"--executor-image-uri=" + name, "--local-package-path=" + trainer(dir.path()).string(),
       "--script=trainer/task.py"},
      base.archive, base.oci_ref);
  EXPECT_EQ(mode_of(dir.path() / "bt" / "rootfs" / "opt" / "work" / "data"), "0:0 493") << err;  // 0755
  run_command(docker_command({"rmi", "-f", name}));
}

// The base's WorkingDir is /usr/app itself: docker creates it 0755 before the RUN, and `mkdir -m 777 -p` then
// leaves the directory that exists as it is.
TEST(DockerEquivalence, BaseWorkingDirUsrAppStays0755) {
  TempDir dir("tp-equiv-workdir");
  const std::string name = "trainpack-test/workdir-app:3.11";
  DerivedBase base = derive_base(dir.path(), name, {{"config", "--config.workingdir", "/usr/app"}});
  expect_same_image(dir.path(),
                    {"--executor-image-uri=" + name, "--local-package-path=" + trainer(dir.path()).string(),
                     "--script=trainer/task.py"},
                    base.archive, base.oci_ref);
  EXPECT_EQ(mode_of(dir.path() / "bt" / "rootfs" / "usr" / "app"), "0:0 493");
  run_command(docker_command({"rmi", "-f", name}));
}

// A base that runs as a user other than root (notebook images do): gcloud's `RUN mkdir -m 777 -p /usr/app /home`
// fails in docker's build; trainpack's build fails the same way, on one line naming the user and the step.
TEST(DockerEquivalence, NonRootBaseUserFailsLikeDockersBuild) {
  TempDir dir("tp-equiv-user");
  const std::string name = "trainpack-test/user:3.11";
  DerivedBase base = derive_base(dir.path(), name, {{"config", "--config.user", "1000"}});
  fs::path pkg = trainer(dir.path());
  std::vector<std::string> flags{"--executor-image-uri=" + name, "--local-package-path=" + pkg.string(),
                                 "--script=trainer/task.py"};

  run_ok(docker_command({"load", "-i", base.archive.string()}));
  std::vector<std::string> dockerfile_cmd{trainpack_bin(), "dockerfile"};
  dockerfile_cmd.insert(dockerfile_cmd.end(), flags.begin(), flags.end());
  auto docker_build = docker_command({"build", "--no-cache", "--network", "none", "-f-", pkg.string()});
  docker_build.insert(docker_build.begin(), {"env", "DOCKER_BUILDKIT=1"});
  CommandResult docker = run_command(docker_build, run_ok(dockerfile_cmd));
  EXPECT_NE(docker.exit_code, 0);
  EXPECT_NE((docker.out + docker.err).find("Permission denied"), std::string::npos) << docker.out << docker.err;
  run_command(docker_command({"rmi", "-f", name}));

  std::vector<std::string> build{trainpack_bin(), "build", "--base-source=" + base.oci_ref,
                                 "--output=oci:" + (dir.path() / "out").string() + ":x",
                                 "--cache-dir=" + (dir.path() / "cache").string()};
  build.insert(build.end(), flags.begin(), flags.end());
  CommandResult r = run_command(build);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("trainpack: error: the base image runs as user 1000 (its config's User), so gcloud's "
                       "`RUN mkdir -m 777 -p /usr/app /home` fails in docker's build (Permission denied)\n"
                       "hint: build on a base that runs as root, or derive one from it with `USER root`"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

// A Debian base with python3 only: docker builds gcloud's Dockerfile (its ENTRYPOINT runs `python`) all the same,
// and so does trainpack, warning when it has the base's listing (here: read for the base's WorkingDir).
TEST(DockerEquivalence, BaseWithoutPythonBuildsLikeDockerWithAWarning) {
  TempDir dir("tp-equiv-nopython");
  const std::string name = "trainpack-test/nopython:3.11";
  DerivedBase base = derive_base(dir.path(), name,
                                 {{"insert", "--whiteout", "/usr/bin/python"},
                                  {"config", "--config.workingdir", "/srv/job"}});
  std::string err = expect_same_image(
      dir.path(),
      {"--executor-image-uri=" + name, "--local-package-path=" + trainer(dir.path()).string(),
       "--script=trainer/task.py"},
      base.archive, base.oci_ref);
  EXPECT_NE(err.find("warning: the image's entrypoint program python is not on the base image's PATH "
                     "(/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(dir.path() / "bt" / "rootfs" / "usr" / "bin" / "python"));
  run_command(docker_command({"rmi", "-f", name}));
}

// The same base with a pip step: the pip step reads the base, so the build warns without being asked to.
TEST(PipEntrypoint, ABaseWithoutPythonIsWarnedAboutWhenAPipStepReadsIt) {
  TempDir dir("tp-pip-nopython");
  DerivedBase base = derive_base(dir.path(), "trainpack-test/nopython:3.11",
                                 {{"insert", "--whiteout", "/usr/bin/python"}});
  CommandResult r = run_command({trainpack_bin(), "build", "--base-source=" + base.oci_ref,
                                 "--executor-image-uri=trainpack-test/nopython:3.11",
                                 "--local-package-path=" + trainer(dir.path()).string(), "--script=trainer/task.py",
                                 "--requirements=tp-beta==1.0", "--index-url=" + index_url(),
                                 "--break-system-packages", "--output=oci:" + (dir.path() / "out").string() + ":x",
                                 "--cache-dir=" + (dir.path() / "cache").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: the image's entrypoint program python is not on the base image's PATH"),
            std::string::npos)
      << r.err;
}

// local-run through docker on that base: docker's status 127 could be the trainer's own; the build's check of the
// image's PATH (the pip step read the base) says it is the missing entrypoint program.
TEST(PipEntrypoint, LocalRunThroughDockerNamesTheMissingProgramTheBuildFound) {
  TempDir dir("tp-pip-nopython");
  DerivedBase base = derive_base(dir.path(), "trainpack-test/nopython:3.11",
                                 {{"insert", "--whiteout", "/usr/bin/python"}});
  CommandResult r = run_command({"env", "PATH=/usr/bin:/usr/sbin:/bin:/sbin:/usr/local/bin", trainpack_bin(),
                                 "local-run", "-q", "--engine=docker", "--base-source=" + base.oci_ref,
                                 "--executor-image-uri=trainpack-test/nopython:3.11",
                                 "--local-package-path=" + trainer(dir.path()).string(), "--script=trainer/task.py",
                                 "--requirements=tp-beta==1.0", "--index-url=" + index_url(),
                                 "--break-system-packages", "--cache-dir=" + (dir.path() / "cache").string()});
  EXPECT_EQ(r.exit_code, 127) << r.err;
  EXPECT_NE(r.err.find("hint: the image's entrypoint program python was not found in the image's PATH "
                       "(/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin), so the trainer never started"),
            std::string::npos)
      << r.err;
}
