// pip refuses a wheel it is given by path when none of its tags is the image's (resolvelib factory.py
// _fail_if_link_is_unsupported_wheel): the image's tags as packaging computes them inside a Debian 12 image
// (CPython 3.11, glibc 2.36, x86_64).
#include <gtest/gtest.h>

#include <string>

#include "python/base_facts.h"
#include "python/filenames.h"
#include "python/index_candidates.h"
#include "support/error.h"

using namespace trainpack;
using namespace trainpack::python;

namespace {

PythonFacts debian12_amd64() {
  PythonFacts f;
  f.python_version = "3.11";
  f.python_full_version = "3.11.2";
  f.libc = "glibc";
  f.libc_version = "2.36";
  f.machine = "x86_64";
  return f;
}

// The error require_supported_wheel throws for `filename`, "" when it accepts the wheel.
std::string refusal(const std::string& filename, const PythonFacts& facts = debian12_amd64()) {
  auto wheel = WheelFilename::try_parse(filename);
  EXPECT_TRUE(wheel) << filename;
  if (!wheel) return "unparsable";
  try {
    require_supported_wheel(*wheel, filename, tags_for(facts), "--extra-packages dist/" + filename);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PythonWheelSupport, WheelsForAnotherPlatformInterpreterOrLibcAreRefusedWithPipsText) {
  for (const std::string filename : {"tp_local-1.0-cp311-cp311-win_amd64.whl",
                                     "tp_local-1.0-cp39-cp39-manylinux_2_17_x86_64.whl",
                                     "tp_local-1.0-cp311-cp311-musllinux_1_1_x86_64.whl",
                                     "tp_local-1.0-cp311-cp311-manylinux_2_17_aarch64.whl",
                                     "tp_local-1.0-py2-none-any.whl",
                                     "tp_local-1.0-cp311-cp311-manylinux_2_39_x86_64.whl"}) {
    EXPECT_EQ(refusal(filename), "--extra-packages dist/" + filename + ": " + filename +
                                     " is not a supported wheel on this platform.");
  }
}

TEST(PythonWheelSupport, WheelsTheImagesPythonAcceptsAreKept) {
  for (const std::string filename : {"tp_local-1.0-cp311-cp311-manylinux_2_28_x86_64.whl",
                                     "tp_local-1.0-cp311-cp311-manylinux_2_36_x86_64.whl",
                                     "tp_local-1.0-cp38-abi3-manylinux2014_x86_64.whl",
                                     "tp_local-1.0-cp311-cp311-linux_x86_64.whl",
                                     "tp_local-1.0-py2.py3-none-any.whl", "tp_local-1.0-py3-none-any.whl"}) {
    EXPECT_EQ(refusal(filename), "") << filename;
  }
}

TEST(PythonWheelSupport, MuslImagesTakeMusllinuxWheelsNotManylinuxOnes) {
  PythonFacts alpine = debian12_amd64();
  alpine.libc = "musl";
  alpine.libc_version = "1.2";
  EXPECT_EQ(refusal("tp_local-1.0-cp311-cp311-musllinux_1_1_x86_64.whl", alpine), "");
  EXPECT_NE(refusal("tp_local-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", alpine), "");
}
