// A wheel given by path (--extra-packages; a path line in requirements.txt takes the same check) must have a tag the image's Python
// supports, as pip checks it (resolvelib factory.py _fail_if_link_is_unsupported_wheel): on the Debian 12 test base
// (CPython 3.11, glibc 2.36, x86_64) trainpack refuses the wheels pip refuses there, with pip's text, and installs
// the one pip installs; the image's own pip, run by docker, says the same of each.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"
#include "tests/integration/test_wheels.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

// What pip refuses in a Debian 12 / Python 3.11 / amd64 image: another OS, another CPython, musl, another
// architecture, Python 2 only, and a glibc newer than the image's 2.36.
const std::vector<std::string> kRefusedTags{
    "cp311-cp311-win_amd64",          "cp39-cp39-manylinux_2_17_x86_64", "cp311-cp311-musllinux_1_1_x86_64",
    "cp311-cp311-manylinux_2_17_aarch64", "py2-none-any",                "cp311-cp311-manylinux_2_39_x86_64"};
constexpr const char* kAcceptedTags = "cp311-cp311-manylinux_2_28_x86_64";

std::string refusal(const std::string& where, const std::string& filename) {
  return "trainpack: error: " + where + ": " + filename + " is not a supported wheel on this platform.\n";
}

}  // namespace

TEST(LocalWheelTags, WheelsTheImagesPipRefusesAreRefusedWithPipsText) {
  TempDir dir("tp-wheel-tags");
  const fs::path pkg = dir.path() / "pkg";
  write_file(pkg / "task.py", "print('trained')\n");
  for (const std::string& tags : kRefusedTags) {
    const std::string wheel = write_test_wheel(pkg / "dist", "tp_tagged", tags);
    CommandResult r = build_on_test_base(pkg, dir.path(), {"--extra-packages=dist/" + wheel});
    EXPECT_NE(r.exit_code, 0) << wheel;
    EXPECT_NE(r.err.find(refusal("--extra-packages " + wheel, wheel)), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "out")) << wheel;
    fs::remove(pkg / "dist" / wheel);
  }

  const std::string accepted = write_test_wheel(pkg / "dist", "tp_tagged", kAcceptedTags);
  CommandResult r = build_on_test_base(pkg, dir.path(), {"--extra-packages=dist/" + accepted});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The image's pip 23.0.1 on the same wheels, in docker (the image has no grep: python3 checks the output): each refused one fails with the text trainpack prints, the
// manylinux_2_28 one installs.
TEST(LocalWheelTags, TheImagesOwnPipRefusesTheSameWheels) {
  TempDir dir("tp-wheel-tags-pip");
  const fs::path ctx = dir.path() / "context";
  std::string script = "set -e; cd /wheels";
  for (const std::string& tags : kRefusedTags) {
    const std::string wheel = write_test_wheel(ctx, "tp_tagged", tags);
    script += "; if pip install --no-index --no-deps --break-system-packages " + wheel +
              " >out 2>&1; then echo installed " + wheel + "; exit 1; fi; cat out; python3 -c " +
              "'import sys; sys.exit(sys.argv[1] not in open(\"out\").read())' 'ERROR: " + wheel +
              " is not a supported wheel on this platform.'";
  }
  script += "; pip install --no-index --no-deps --break-system-packages " +
            write_test_wheel(ctx, "tp_tagged", kAcceptedTags) + "; python3 -c 'import tp_tagged'";
  write_file(ctx / "Dockerfile",
             "FROM " + std::string(kBaseArchiveRef) + "\nCOPY *.whl /wheels/\nRUN " + script + "\n");
  CommandResult load = run_command(docker_command({"load", "-i", base_archive()}));
  ASSERT_EQ(load.exit_code, 0) << load.err;
  std::vector<std::string> argv = docker_command({"build", "--network", "none", "-t", "trainpack-test/wheel-tags:1",
                                                  ctx.string()});
  argv.insert(argv.begin(), {"env", "DOCKER_BUILDKIT=1"});
  CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
}
