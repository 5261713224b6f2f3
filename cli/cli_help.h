#pragma once
// The CLI explaining itself, all from its CLI11 definitions: --help grouped by concern with examples and the exit
// codes (cli_help.cpp); shell completion scripts, the man page and the Markdown reference docs/cli.md
// (cli_docs.cpp). A new flag joins a help group by a line in kOptionGroups (cli_help.cpp); a test fails for a flag
// in none.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/error.h"

namespace CLI {
class App;
}

namespace trainpack::cli {

// The exit statuses of trainpack, as --help, the man page and docs/cli.md list them.
inline constexpr int kExitUsage = 2;     // an unknown command or flag, a missing or malformed flag
inline constexpr int kExitInternal = 70;  // sysexits.h EX_SOFTWARE: a bug in trainpack
const std::vector<std::pair<std::string, std::string>>& exit_codes();

// An example of a command: what it does, and the command line.
struct Example {
  std::string what;
  std::string command;
};

// What the documents are made of, read from the CLI11 definitions.
struct FlagDoc {
  std::vector<std::string> names;    // "-q", "--quiet"
  std::string value_name;            // "TEXT", "[REQUIREMENTS,...]", "{gzip,zstd}"; empty for a flag without value
  std::string help;
  std::vector<std::string> choices;  // the fixed values it takes (IsMember, or a type name "{a,b}")
  bool required = false;
  bool positional = false;
};
struct GroupDoc {
  std::string name;
  std::vector<FlagDoc> flags;
};
struct CommandDoc {
  std::string name;  // "build"; "" for trainpack itself
  std::string description;
  std::string usage;  // "trainpack build [OPTIONS]"
  std::vector<FlagDoc> positionals;
  std::vector<GroupDoc> groups;  // in the help's order
  std::vector<Example> examples;
};

// Puts every option of `app` and of its subcommands in its help group, sets the formatter that shows the groups in
// their order, and ends each command's help with its examples (and trainpack's with the exit codes). Call once
// every command is defined.
void document_cli(CLI::App& app);

// trainpack itself, then each visible command.
std::vector<CommandDoc> command_docs(const CLI::App& app);

// The scripts of `trainpack completion bash|zsh|fish`.
std::string completion_script(const std::vector<CommandDoc>& commands, std::string_view shell);
// The man page trainpack(1), roff for groff -man.
std::string man_page(const std::vector<CommandDoc>& commands, std::string_view version);
// docs/cli.md.
std::string markdown_reference(const std::vector<CommandDoc>& commands);

// Adds `trainpack completion SHELL` and the hidden `trainpack man [--markdown]`, which print what they make from
// `app` on stdout.
void add_doc_commands(CLI::App& app);

}  // namespace trainpack::cli
