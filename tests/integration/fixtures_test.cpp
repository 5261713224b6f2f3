// Proves the CTest fixtures are real: the base image is a valid OCI layout, the docker-archive loads into the test
// dockerd, and the image runs Python there.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/integration/test_support.h"

namespace tt = trainpack::testing;

namespace {

// docker load is idempotent but takes a few seconds; each test may run alone (ctest runs one test per process).
void ensure_base_loaded() {
  auto inspect = tt::docker_command({"image", "inspect", "--format", "{{.Id}}", tt::kBaseArchiveRef});
  if (tt::run_command(inspect).exit_code == 0) return;
  auto load = tt::docker_command({"load", "-i", tt::base_archive()});
  auto r = tt::run_command(load);
  ASSERT_EQ(r.exit_code, 0) << tt::describe(load, r);
}

}  // namespace

TEST(Fixtures, BaseOciLayoutValidates) {
  ASSERT_TRUE(std::filesystem::is_regular_file(tt::base_oci_dir() + "/index.json")) << tt::base_oci_dir();
  std::vector<std::string> argv{"oci-image-tool", "validate", "--type", "image", "--ref", "name=3.11",
                                tt::base_oci_dir()};
  auto r = tt::run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << tt::describe(argv, r);
  EXPECT_NE(r.out.find("Validation succeeded"), std::string::npos) << tt::describe(argv, r);
}

TEST(Fixtures, DockerLoadsBaseArchive) {
  auto load = tt::docker_command({"load", "-i", tt::base_archive()});
  auto r = tt::run_command(load);
  ASSERT_EQ(r.exit_code, 0) << tt::describe(load, r);
  EXPECT_NE(r.out.find(tt::kBaseArchiveRef), std::string::npos) << tt::describe(load, r);
}

TEST(Fixtures, DockerRunsPythonFromBase) {
  ASSERT_NO_FATAL_FAILURE(ensure_base_loaded());
  auto run = tt::docker_command(
      {"run", "--rm", "--network", "none", tt::kBaseArchiveRef, "python3", "-c", "print(42)"});
  auto r = tt::run_command(run);
  ASSERT_EQ(r.exit_code, 0) << tt::describe(run, r);
  EXPECT_EQ(r.out, "42\n") << tt::describe(run, r);
}

TEST(Fixtures, BaseHasUsersShellAndPythonAlias) {
  ASSERT_NO_FATAL_FAILURE(ensure_base_loaded());
  // /etc/passwd from the extract hook, /bin/sh (dash, merged /usr) and the `python` name gcloud's ENTRYPOINT uses.
  auto run = tt::docker_command({"run", "--rm", "--network", "none", "--user", "nobody", tt::kBaseArchiveRef,
                                 "/bin/sh", "-c", "id -un; python -c 'import ssl, json; print(\"ok\")'"});
  auto r = tt::run_command(run);
  ASSERT_EQ(r.exit_code, 0) << tt::describe(run, r);
  EXPECT_EQ(r.out, "nobody\nok\n") << tt::describe(run, r);
}

TEST(Fixtures, RunCommandFeedsStdinAndSeparatesStreams) {
  std::string big(1 << 20, 'x');  // larger than a pipe buffer in both directions
  auto r = tt::run_command({"sh", "-c", "cat; echo oops >&2; exit 3"}, big);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out.size(), big.size());
  EXPECT_EQ(r.err, "oops\n");
  auto missing = tt::run_command({"/nonexistent/trainpack-test-binary"});
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_NE(missing.err.find("cannot execute"), std::string::npos);
}

TEST(Fixtures, RegistryAnswers) {
  std::string registry = tt::env_or_fail("TRAINPACK_TEST_REGISTRY");
  std::vector<std::string> argv{"curl", "-sf", "http://" + registry + "/v2/"};
  auto r = tt::run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << tt::describe(argv, r);
  EXPECT_EQ(r.out, "{}") << tt::describe(argv, r);
}
