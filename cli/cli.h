#pragma once
// The trainpack command line: subcommands, flag parsing, and turning errors into one-line messages.
namespace trainpack::cli {
int run_cli(int argc, char** argv);
}
