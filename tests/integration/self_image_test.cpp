// trainpack's own image, built by trainpack (scripts/self-image.sh), pushed to the test registry, pulled by docker,
// and run: `trainpack --version` inside it.
#include <gtest/gtest.h>

#include "tests/integration/test_support.h"

using namespace trainpack::testing;

TEST(SelfImage, BuiltByTrainpackPushedAndRunsVersion) {
  TempDir dir("tp-self");
  const std::string target = env_or_fail("TRAINPACK_TEST_REGISTRY") + "/trainpack/self:test";
  std::vector<std::string> argv{"env", "TRAINPACK_BIN=" + trainpack_bin(), "bash",
                                source_dir() + "/scripts/self-image.sh", "trainpack-test/python:3.11", target,
                                "--base-source=" + base_oci_ref(), "--cache-dir=" + (dir.path() / "cache").string(),
                                "-q"};
  auto built = run_command(argv);
  ASSERT_EQ(built.exit_code, 0) << describe(argv, built);
  EXPECT_TRUE(built.out.starts_with(env_or_fail("TRAINPACK_TEST_REGISTRY") + "/trainpack/self@sha256:")) << built.out;

  auto pull = run_command(docker_command({"pull", target}));
  ASSERT_EQ(pull.exit_code, 0) << describe({"docker pull"}, pull);
  auto run = run_command(docker_command({"run", "--rm", "--network", "none", target, "--version"}));
  EXPECT_EQ(run.exit_code, 0) << describe({"docker run"}, run);
  // The image holds this very binary: it names the same version, commit and libraries.
  auto host = run_command({trainpack_bin(), "--version"});
  ASSERT_EQ(host.exit_code, 0) << describe({"trainpack --version"}, host);
  EXPECT_TRUE(run.out.starts_with(std::string("trainpack ") + TRAINPACK_VERSION + " (commit ")) << run.out;
  EXPECT_EQ(run.out, host.out);
  auto help = run_command(docker_command({"run", "--rm", "--network", "none", target, "build", "--help"}));
  EXPECT_EQ(help.exit_code, 0) << describe({"docker run ... build --help"}, help);
  EXPECT_NE(help.out.find("--output-image-uri"), std::string::npos) << help.out;
  run_command(docker_command({"rmi", "-f", target}));
}
