// The image trainpack builds must hold the same root filesystem and config as the image docker builds from
// the Dockerfile trainpack prints (gcloud's), for trainers without pip steps. Both are unpacked by umoci and
// compared entry by entry: path, type, mode, owner, symlink target, bytes. Mtimes differ by design.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/fs.h"
#include "tests/integration/image_equivalence.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;

namespace fs = std::filesystem;

// A script in a subdirectory, an extra dir, .dockerignore excluding build debris; names that are not UTF-8 (a file
// name on Linux is any bytes: Latin-1 from an old archive), kept byte for byte as Docker keeps them.
TEST(DockerEquivalence, ScriptDirAndExtraDirOnAPlainPythonBase) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir(env_or("TRAINPACK_TEST_TMPDIR", ""), "tp-equiv-"));
  fs::path pkg = dir.path() / "pkg";
  fs::copy(fs::path(source_dir()) / "testdata" / "example-trainer", pkg, fs::copy_options::recursive);
  write_file(pkg / "trainer" / "train.log", "excluded by **/*.log\n");
  write_file(pkg / "trainer" / "__pycache__" / "task.cpython-311.pyc", "excluded by **/__pycache__");
  write_file(pkg / "trainer" / "caf\xe9.txt", "a Latin-1 name\n");
  write_file(pkg / "trainer" / "d\xff" / "r\xe9sum\xe9.csv", "a,b\n");
  fs::create_symlink("caf\xe9.txt", pkg / "trainer" / "to-caf\xe9");
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
