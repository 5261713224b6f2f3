// gcloud's flag values (gcloud/gcloud_flags): ArgList splitting, and argv read as argparse reads it. The input is
// a list value on its first line, then one argument per line for a command with list and value flags. A value
// split on ',' joins back to itself with one trailing delimiter dropped.
#include <CLI/CLI.hpp>

#include "gcloud/gcloud_flags.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::fuzz::require;
using namespace trainpack::gcloud;

void check_split(std::string_view value) {
  std::vector<std::string> items;
  try {
    items = split_gcloud_list(value);
  } catch (const trainpack::Error&) {
    return;
  }
  bool alternate = value.starts_with('^') && value.find('^', 1) != std::string_view::npos;
  if (alternate) return;
  std::string joined;
  for (std::size_t i = 0; i < items.size(); ++i) joined += (i ? "," : "") + items[i];
  std::string_view expected = value;
  if (expected.ends_with(',')) expected.remove_suffix(1);
  require(joined == expected);
}

void parse_arguments(const std::vector<std::string_view>& lines) {
  std::vector<std::string> args = {"trainpack"};
  for (std::string_view line : lines) args.emplace_back(line);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  CLI::App app("fuzz");
  std::vector<std::string> requirements, command_args;
  std::string script;
  add_list_flag(app, "--requirements", requirements, RepeatedList::kLastWins, "REQUIREMENTS", "");
  add_list_flag(app, "--args", command_args, RepeatedList::kConcatenate, "ARG", "");
  add_value_flag(app, "--script", script, "SCRIPT", "");
  app.allow_extras();
  try {
    parse_like_argparse(app, static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error&) {
  } catch (const trainpack::Error&) {
  }
  for (std::size_t i = 0; i < command_args.size(); ++i)
    for (std::size_t j = i + 1; j < command_args.size(); ++j) require(command_args[i] != command_args[j]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string_view> lines = trainpack::fuzz::split_lines(trainpack::fuzz::as_text(data, size));
  if (lines.empty()) return 0;
  check_split(lines.front());
  parse_arguments({lines.begin() + 1, lines.end()});
  return 0;
}
