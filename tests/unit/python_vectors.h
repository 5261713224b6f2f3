// The Python packaging test vectors under testdata/python/ (JSON files the python/ tests compare against).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace trainpack::test_support {

// testdata/python/<name> parsed; a missing file fails the test that asked for it.
inline nlohmann::json python_vectors(const std::string& name) {
  std::ifstream in(std::string(TRAINPACK_TESTDATA_DIR) + "/python/" + name);
  EXPECT_TRUE(in.good()) << name;
  return nlohmann::json::parse(in);
}

}  // namespace trainpack::test_support
