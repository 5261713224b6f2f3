#include "gcloud/gcloud_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "support/byte_regex.h"
#include "support/error.h"
#include "support/suggest.h"
#include "support/utf8.h"

namespace trainpack::gcloud {

std::vector<std::string> split_gcloud_list(std::string_view value) {
  // ArgList.__call__: '^' (ALT_DELIM_CHAR) opens an alternate delimiter only when another '^' follows.
  std::string delim = ",";
  if (value.starts_with('^') && value.find('^', 1) != std::string_view::npos) {
    const std::size_t close = value.find('^', 1);
    delim = std::string(value.substr(1, close - 1));
    value = value.substr(close + 1);
    if (delim.empty()) {
      // gcloud's text, its spelling included.
      throw Error("Invalid delimeter. Please see `gcloud topic flags-file` or `gcloud topic escaping` for information "
                  "on providing list or dictionary flag values with special characters.",
                  "to split on something other than ',', put it between two carets first: ^;^a,b;c is [a,b] and [c]");
    }
  }
  // _SplitOnDelim: arg_value.split(delim)[:-1] after appending delim unless it already ends with one.
  std::vector<std::string> items;
  if (value.empty()) return items;
  std::string text(value);
  if (!text.ends_with(delim)) text += delim;
  for (std::size_t start = 0, at; (at = text.find(delim, start)) != std::string::npos; start = at + delim.size()) {
    items.push_back(text.substr(start, at - start));
  }
  return items;
}

namespace {

// One occurrence of a list flag, as argparse's Action.__call__ sees it.
void apply_list_value(const std::string& flag, const std::string& value, std::vector<std::string>& target,
                      RepeatedList repeated) {
  std::vector<std::string> items;
  try {
    items = split_gcloud_list(value);
  } catch (const Error& e) {
    throw Error("argument " + flag + ": " + e.what(), e.hint());  // argparse names the flag of a type error
  }
  if (repeated == RepeatedList::kLastWins) {
    target = std::move(items);
    return;
  }
  for (auto& item : items) {
    // UpdateAction.__call__ -> OnDuplicateKeyRaiseError
    if (std::find(target.begin(), target.end(), item) != target.end()) {
      throw Error("argument " + flag + ": \"" + item + "\" cannot be specified multiple times",
                  "gcloud keeps each " + flag + " item once (arg_parsers.UpdateAction); join a flag and its value "
                  "into one item (--lr=0.1,--epochs=1 rather than --lr,0.1,--epochs,1)");
    }
    target.push_back(std::move(item));
  }
}

}  // namespace

void add_list_flag(CLI::App& cmd, const std::string& name, std::vector<std::string>& target, RepeatedList repeated,
                   const std::string& metavar, const std::string& help) {
  cmd.add_option(
         name,
         [&target, name, repeated](const CLI::results_t& values) {
           for (const auto& value : values) apply_list_value(name, value, target, repeated);
           return true;
         },
         help)
      ->type_name("[" + metavar + ",...]")  // ArgList.GetUsageMetavar
      ->type_size(1)
      ->expected(0, 1)  // parse_like_argparse hands every occurrence exactly one value
      ->allow_extra_args(false)
      ->trigger_on_parse();  // one callback per occurrence, in order, like an argparse Action
}

void add_value_flag(CLI::App& cmd, const std::string& name, std::string& target, const std::string& metavar,
                    const std::string& help) {
  cmd.add_option(name, target, help)
      ->type_name(metavar)
      ->expected(0, 1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

namespace {

// argparse's _parse_optional: whether an argument is read as a flag (and so cannot be the value of the flag before it).
bool looks_like_flag(const CLI::App& cmd, const std::string& arg) {
  if (arg.size() < 2 || arg.front() != '-') return false;  // "" and "-" are values
  const std::string name = arg.substr(0, arg.find('='));
  if (cmd.get_option_no_throw(name) != nullptr) return true;
  // argparse's _negative_number_matcher, '^-\d+$|^-\d*\.\d+$': Python's \d is any Unicode decimal digit, and its
  // $ matches before a final newline too.
  static const RE2 negative_number(R"(-\p{Nd}+\n?|-\p{Nd}*\.\p{Nd}+\n?)");
  if (RE2::FullMatch(regex_text(arg), negative_number)) return false;
  return arg.find(' ') == std::string::npos;
}

// The option of `cmd` that `arg` ("--name" or "--name=...") sets, when that option takes a value.
const CLI::Option* value_option(const CLI::App& cmd, const std::string& arg) {
  if (!arg.starts_with("--") || arg.size() == 2) return nullptr;
  const CLI::Option* opt = cmd.get_option_no_throw(arg.substr(0, arg.find('=')));
  return opt != nullptr && opt->get_items_expected_max() > 0 ? opt : nullptr;
}

// The subcommand of `app` named `arg`, or nullptr.
CLI::App* subcommand_named(CLI::App& app, const std::string& arg) {
  auto found = app.get_subcommands([&arg](CLI::App* sub) { return sub->check_name(arg); });
  return found.empty() ? nullptr : found.front();
}

// "trainpack build" for a subcommand, "trainpack" for the app.
std::string command_path(const CLI::App& cmd) {
  return cmd.get_parent() != nullptr ? command_path(*cmd.get_parent()) + " " + cmd.get_name() : cmd.get_name();
}

// The hint for a mistyped `typed` among `names` (compared without `prefix`, "--": a third of "--x" is not the
// budget of "x"): the closest one, then where the valid ones are listed.
std::string did_you_mean(const std::string& prefix, const std::string& typed, const std::vector<std::string>& names,
                         const std::string& listed) {
  std::optional<std::string> near = closest_match(typed, names);
  return near ? "did you mean " + prefix + *near + "? " + listed : listed;
}

UnknownArgument unknown_flag(const CLI::App& cmd, const std::string& flag) {
  std::vector<std::string> names;  // long ones only: a one-letter typo has no meaningful neighbour
  for (const CLI::Option* opt : cmd.get_options())
    for (const std::string& l : opt->get_lnames()) names.push_back(l);
  const std::string path = command_path(cmd);
  const std::string listed = path + " --help lists its flags";
  return UnknownArgument("unknown flag " + flag + " for " + path,
                         flag.starts_with("--") ? did_you_mean("--", flag.substr(2), names, listed) : listed);
}

bool takes_positionals(const CLI::App& cmd) {
  return !cmd.get_options([](const CLI::Option* opt) { return opt->get_positional(); }).empty();
}


// Throws UnknownArgument when `arg`, not a flag's value, is a flag `cmd` does not have ("--bogus", "-x" or a
// bundle of short flags "-qx"), or an argument where `cmd` takes none.
void check_known(const CLI::App& cmd, const std::string& arg) {
  if (arg.starts_with("--")) {
    const std::string name = arg.substr(0, arg.find('='));
    if (cmd.get_option_no_throw(name) == nullptr) throw unknown_flag(cmd, name);
    return;
  }
  if (!looks_like_flag(cmd, arg)) {
    if (!takes_positionals(cmd)) throw unknown_command(cmd, arg);
    return;
  }
  for (std::size_t k = 1; k < arg.size(); ++k) {  // CLI11 reads "-qv" as -q -v, and "-jVALUE" as -j VALUE
    const CLI::Option* opt = cmd.get_option_no_throw(std::string("-") + arg[k]);
    if (opt == nullptr) throw unknown_flag(cmd, k == 1 ? arg.substr(0, 2) : std::string("-") + arg[k]);
    if (opt->get_items_expected_max() > 0) return;
  }
}

// Flag values and arguments are text that trainpack writes into JSON documents (the image config and manifest, the
// provenance statement, a job spec, a container's runtime config), and JSON holds only UTF-8 (RFC 8259 section
// 8.1): bytes that are not UTF-8 are refused before any work, naming where they were given.
void check_utf8_value(const std::string& flag, const std::string& value) {
  if (is_utf8(value)) return;
  throw UsageError(flag + ": the value \"" + value + "\" is not UTF-8",
                   "flag values end up in JSON (the image's config and manifest, its provenance, a job spec), which "
                   "holds UTF-8 text only; write the value in UTF-8");
}

void check_utf8_argument(const std::string& arg, bool after_double_dash) {
  if (is_utf8(arg)) return;
  if (after_double_dash)
    throw UsageError("the argument \"" + arg + "\" after -- is not UTF-8",
                     "arguments reach the container (or the job spec) as JSON strings, which hold UTF-8 text only: "
                     "docker, podman and runc would replace the other bytes; write the argument in UTF-8");
  throw UsageError("the argument \"" + arg + "\" is not UTF-8", "write it in UTF-8");
}

}  // namespace

UnknownArgument unknown_command(const CLI::App& app, const std::string& arg) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) names.push_back(sub->get_name());  // hidden commands are not offered
  std::string listed = command_path(app) + " --help lists the commands";
  if (app.get_parent() == nullptr)
    return UnknownArgument("unknown command \"" + arg + "\"", did_you_mean("", arg, names, listed));
  return UnknownArgument(command_path(app) + " takes no argument \"" + arg + "\"",
                         "flags start with --; " + command_path(app) + " --help lists them");
}

void parse_like_argparse(CLI::App& app, int argc, const char* const* argv) {
  if (app.get_name().empty() && argc > 0) app.name(argv[0]);
  std::vector<std::string> args;  // every flag value as "--flag=VALUE", or "--flag" "" when VALUE is empty
  CLI::App* cmd = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      for (int k = i + 1; k < argc; ++k) check_utf8_argument(argv[k], true);
      args.insert(args.end(), argv + i, argv + argc);
      break;
    }
    if (cmd == &app) {
      if (CLI::App* sub = subcommand_named(app, arg)) {
        cmd = sub;
        args.push_back(arg);
        continue;
      }
    }
    const CLI::Option* opt = value_option(*cmd, arg);
    if (opt == nullptr) {
      check_known(*cmd, arg);
      check_utf8_argument(arg, false);
      args.push_back(arg);
      continue;
    }
    const std::size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq), value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc && !looks_like_flag(*cmd, argv[i + 1])) {
      value = argv[++i];
    } else {
      throw CLI::ArgumentMismatch("argument " + flag + ": expected one argument");
    }
    // argparse's _get_values drops every "--" among a flag's arguments, so "--flag=--" has no value, as "--flag=".
    if (value == "--") value.clear();
    check_utf8_value(flag, value);
    if (value.empty()) {
      args.push_back(flag);
      args.emplace_back();
    } else {
      args.push_back(flag + "=" + value);
    }
  }
  std::reverse(args.begin(), args.end());  // CLI::App::parse(std::vector) takes the arguments last first
  app.parse(std::move(args));
}

}  // namespace trainpack::gcloud
