#pragma once
// The clean Debian 12 of tests/fixtures/debian-clean.sh (an mmdebstrap minbase root whose packages dpkg installed),
// for the tests whose ctest properties name the debian_clean fixture (Packages.*, SbomOsGroundTruth.*).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

namespace trainpack::testing {

// KEY=VALUE lines of the clean-Debian fixture's env file.
inline std::map<std::string, std::string> debian_env() {
  auto out = read_env_file(env_or_fail("TRAINPACK_TEST_DEBIAN_STATE") + "/env");
  if (out.empty()) ADD_FAILURE() << "no debian-clean fixture env: run through ctest";
  return out;
}

// The fixture's rootfs as an image of the test dockerd, imported once per fixture key (the tag carries it).
inline std::string clean_debian_image() {
  auto env = debian_env();
  const std::string image = env.at("TRAINPACK_TEST_DEBIAN_IMAGE");
  if (run_command(docker_command({"image", "inspect", image})).exit_code == 0) return image;
  std::vector<std::string> import = docker_command({"import", env.at("TRAINPACK_TEST_DEBIAN_ROOTFS"), image});
  auto imported = run_command(import);
  if (imported.exit_code != 0) ADD_FAILURE() << describe(import, imported);
  return image;
}

}  // namespace trainpack::testing
