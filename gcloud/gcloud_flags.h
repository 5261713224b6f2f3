#pragma once
// gcloud's flag values on top of CLI11: list flags as calliope's ArgList reads them, what a repeated flag means, and
// which argument is a flag's value (Cloud SDK 578.0.0: lib/googlecloudsdk/calliope/arg_parsers.py and the argparse
// gcloud bundles, lib/third_party/argparse/__init__.py).
#include <CLI/Error.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace trainpack::gcloud {

// ArgList.__call__ without element type or length bounds, as every list flag trainpack mirrors is declared
// (type=arg_parsers.ArgList()): "" -> []; split on ',' with one trailing delimiter dropped ("a,b," -> [a, b]);
// empty items and spaces kept ("a,,b" -> [a, "", b], "a, b" -> [a, " b"]); a value starting "^DELIM^" is split on
// DELIM, one or more characters ("^;^x>=1,<2;y" -> ["x>=1,<2", "y"]), a lone leading '^' is literal ("^a,b" ->
// ["^a", "b"]). Throws Error for "^^..." (gcloud's "Invalid delimeter").
std::vector<std::string> split_gcloud_list(std::string_view value);

// What a list flag given more than once means.
enum class RepeatedList {
  // argparse's default action, 'store': each occurrence replaces the list ("--requirements=a --requirements=b" is
  // [b]; "--requirements=a --requirements=" is []). local-run's --requirements, --extra-packages, --extra-dirs.
  kLastWins,
  // arg_parsers.UpdateAction: occurrences add up ("--args=a,b --args=c" is [a, b, c]), and an item already in the
  // list is an error, also within one value ("--args=--lr,1,--epochs,1": "1" twice). custom-jobs create's --args,
  // --command.
  kConcatenate,
};

// A list flag: one value per occurrence, read with split_gcloud_list into `target` (which must outlive parsing).
// Errors name the flag as argparse does ("argument --args: ..."). `metavar` is gcloud's (REQUIREMENTS, ARG, ...).
void add_list_flag(CLI::App& cmd, const std::string& name, std::vector<std::string>& target, RepeatedList repeated,
                   const std::string& metavar, const std::string& help);

// A single-value flag with argparse's 'store': the last occurrence wins; "--flag=" is "".
void add_value_flag(CLI::App& cmd, const std::string& name, std::string& target, const std::string& metavar,
                    const std::string& help);

// A command line naming a command or flag that does not exist, or an argument a command takes none of: what()
// says which, hint() the closest valid name when one is near ("did you mean build?").
class UnknownArgument : public CLI::ParseError {
 public:
  UnknownArgument(const std::string& cause, std::string hint)
      : CLI::ParseError(cause, CLI::ExitCodes::ExtrasError), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// `arg` where `app` expects a command: "unknown command" with the closest visible one at the top level, "takes no
// argument" below it.
UnknownArgument unknown_command(const CLI::App& app, const std::string& arg);

// Parses argv with `app` after settling which argument is a flag's value as argparse does, where CLI11 2.1.2 reads
// differently: "--flag=" and "--flag=--" are the value "" (CLI11 would take the next argument instead, or "--"),
// "--flag VALUE" takes VALUE even when it starts with '-' but holds a space ("--args '-x 1'"), and a flag with no
// value after it (the end, or an argument that looks like a flag) is argparse's error "argument --flag: expected one
// argument". Arguments after "--" are left alone. An unknown command or flag, or an argument where a command takes
// none, is reported as UnknownArgument before a missing required flag or command; a flag followed by another where
// its value is due stays argparse's error ("--args --lr=0.1": the value was meant, written as gcloud cannot read it).
// A value or argument (those after "--" too) that is not UTF-8 is a UsageError naming its flag, before any
// command's callback runs. Otherwise throws what CLI::App::parse throws.
void parse_like_argparse(CLI::App& app, int argc, const char* const* argv);

}  // namespace trainpack::gcloud
