#pragma once
// Running the trainpack command line in the test process, with stdout and stderr captured.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace trainpack::testing {

struct CliResult {
  int exit_code;
  std::string out, err;
};

// trainpack ARGS..., with stdout and stderr captured.
inline CliResult trainpack(std::vector<std::string> args) {
  args.insert(args.begin(), "trainpack");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  const int code = trainpack::cli::run_cli(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {code, out.str(), err.str()};
}

}  // namespace trainpack::testing
