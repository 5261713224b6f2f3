#include "builder/cli.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "support/error.h"

namespace trainpack::builder {

int run_cli(int argc, char** argv) {
  CLI::App app{"trainpack: build Vertex AI trainer images without a Docker daemon"};
  app.set_version_flag("--version", std::string("trainpack ") + TRAINPACK_VERSION);
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const Error& e) {
    std::cerr << "trainpack: error: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << "hint: " << e.hint() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace trainpack::builder
