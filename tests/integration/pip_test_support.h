#pragma once
// Helpers for the Pip* integration tests: the local package index fixture (tests/fixtures/python-index.sh), whose
// state directory CTest passes as TRAINPACK_TEST_INDEX_STATE.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/integration/test_support.h"

namespace trainpack::testing {

// KEY=VALUE lines of a fixture's env file.
inline std::map<std::string, std::string> read_env_file(const std::filesystem::path& file) {
  std::map<std::string, std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  return out;
}

// TRAINPACK_TEST_INDEX_URL / TRAINPACK_TEST_INDEX_DIR from the index fixture's env file.
inline std::map<std::string, std::string> index_env() {
  return read_env_file(std::filesystem::path(env_or_fail("TRAINPACK_TEST_INDEX_STATE")) / "env");
}

inline std::string index_url() { return index_env().at("TRAINPACK_TEST_INDEX_URL"); }
inline std::filesystem::path index_dir() { return index_env().at("TRAINPACK_TEST_INDEX_DIR"); }

}  // namespace trainpack::testing
