// The documents made from the CLI's definitions (cli/cli_help.h): completion scripts for bash, zsh and fish,
// the man page, and the Markdown reference.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_help.h"
#include "gcloud/gcloud_flags.h"
#include "support/text.h"

namespace trainpack::cli {

namespace {

const CommandDoc& top(const std::vector<CommandDoc>& commands) { return commands.front(); }

// Each command but trainpack itself.
std::vector<const CommandDoc*> subcommands(const std::vector<CommandDoc>& commands) {
  std::vector<const CommandDoc*> out;
  for (const CommandDoc& c : commands)
    if (!c.name.empty()) out.push_back(&c);
  return out;
}

std::vector<const FlagDoc*> flags_of(const CommandDoc& c) {
  std::vector<const FlagDoc*> out;
  for (const GroupDoc& g : c.groups)
    for (const FlagDoc& f : g.flags) out.push_back(&f);
  return out;
}

// A help text's first sentence, for the one-line descriptions shells show next to a candidate.
std::string summary(const std::string& help) {
  std::size_t end = 0;
  for (int depth = 0; end < help.size(); ++end) {  // a ". " or "; " inside parentheses does not end it
    depth += help[end] == '(' ? 1 : help[end] == ')' ? -1 : 0;
    if (depth == 0 && (help[end] == '.' || help[end] == ';') && end + 1 < help.size() && help[end + 1] == ' ') break;
  }
  std::string s = help.substr(0, end);
  return s.size() > 72 ? s.substr(0, 69) + "..." : s;
}

// `text` in single quotes for sh (bash, zsh): ' becomes '\''.
std::string sh_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `text` in single quotes for fish, where \ and ' are escaped inside them.
std::string fish_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string bash_script(const std::vector<CommandDoc>& commands) {
  std::string names, flags, values, choices;
  for (const CommandDoc& c : commands) {
    std::vector<std::string> all, takes;
    for (const FlagDoc* f : flags_of(c)) {
      all.insert(all.end(), f->names.begin(), f->names.end());
      if (!f->value_name.empty()) takes.insert(takes.end(), f->names.begin(), f->names.end());
      for (const std::string& n : f->names)
        if (!f->choices.empty()) choices += "    " + sh_quoted(c.name + " " + n) + ") echo " + sh_quoted(join(f->choices, " ")) + " ;;\n";
    }
    for (const FlagDoc& p : c.positionals)
      if (!p.choices.empty()) choices += "    " + sh_quoted(c.name + " ") + ") echo " + sh_quoted(join(p.choices, " ")) + " ;;\n";
    if (!c.name.empty()) names += (names.empty() ? "" : " ") + c.name;
    flags += "    " + sh_quoted(c.name) + ") echo " + sh_quoted(join(all, " ")) + " ;;\n";
    if (!takes.empty()) values += "    " + sh_quoted(c.name) + ") echo " + sh_quoted(join(takes, " ")) + " ;;\n";
  }
  return "# bash completion for trainpack, made by `trainpack completion bash` from its flag definitions.\n"
         "# Load it with: source <(trainpack completion bash)\n\n"
         "_trainpack_commands=" + sh_quoted(names) + "\n\n"
         "# The flags of a command (\"\": trainpack itself).\n"
         "_trainpack_flags() {\n  case \"$1\" in\n" + flags + "  esac\n}\n\n"
         "# The flags of a command that take a value.\n"
         "_trainpack_value_flags() {\n  case \"$1\" in\n" + values + "  esac\n}\n\n"
         "# The fixed values of a command's flag, or of its argument (flag \"\").\n"
         "_trainpack_choices() {\n  case \"$1 $2\" in\n" + choices + "  esac\n}\n\n" +
         R"SH(_trainpack() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= flag= value i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    # After --, the trainer's arguments: the shell's own completion (files) applies.
    [[ ${COMP_WORDS[i]} == -- ]] && return 0
    if [[ -z $cmd && ${COMP_WORDS[i]} != -* ]]; then cmd=${COMP_WORDS[i]}; fi
  done
  value=$cur
  # A flag's value: "--flag=VALUE" is three words when '=' breaks words (bash's default), one otherwise.
  if [[ $cur == = ]]; then
    flag=$prev value=
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    flag=${COMP_WORDS[COMP_CWORD-2]}
  elif [[ $cur == --*=* ]]; then
    flag=${cur%%=*} value=${cur#*=}
  elif [[ " $(_trainpack_value_flags "$cmd") " == *" $prev "* ]]; then
    flag=$prev
  fi
  if [[ -n $flag ]]; then
    COMPREPLY=($(compgen -W "$(_trainpack_choices "$cmd" "$flag")" -- "$value"))
    [[ $cur == --*=* ]] && COMPREPLY=("${COMPREPLY[@]/#/$flag=}")
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_trainpack_flags "$cmd")" -- "$cur"))
  elif [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W "$_trainpack_commands" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_trainpack_choices "$cmd" "")" -- "$cur"))
  fi
  return 0
}
# -o default: where trainpack offers nothing (a path, the trainer's arguments), the shell completes file names.
complete -o default -F _trainpack trainpack
)SH";
}

// A zsh _arguments spec's description: [ ] and : have meanings there.
std::string zsh_description(const std::string& help) {
  std::string out;
  for (char c : summary(help)) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string zsh_script(const std::vector<CommandDoc>& commands) {
  std::string described, cases;
  for (const CommandDoc* c : subcommands(commands)) {
    described += "    " + sh_quoted(c->name + ":" + summary(c->description)) + "\n";
    std::string specs;
    for (const FlagDoc* f : flags_of(*c)) {
      for (const std::string& n : f->names) {
        std::string spec = "*" + n;
        if (f->value_name.empty()) {
          spec += "[" + zsh_description(f->help) + "]";
        } else {
          spec += (n.starts_with("--") ? "=" : "") + std::string("[") + zsh_description(f->help) + "]:" +
                  "value:" + (f->choices.empty() ? "_files" : "(" + join(f->choices, " ") + ")");
        }
        specs += "        " + sh_quoted(spec) + " \\\n";
      }
    }
    for (const FlagDoc& p : c->positionals)
      specs += "        " + sh_quoted(p.choices.empty() ? "*::argument:_files" : "1:" + p.names.front() + ":(" + join(p.choices, " ") + ")") + " \\\n";
    cases += "    " + c->name + ")\n      _arguments -s \\\n" + specs + "      ;;\n";
  }
  return "#compdef trainpack\n"
         "# zsh completion for trainpack, made by `trainpack completion zsh` from its flag definitions.\n"
         "# Install it as _trainpack in a directory of $fpath, or load it with: source <(trainpack completion zsh)\n\n"
         "_trainpack() {\n"
         "  local -a commands\n"
         "  commands=(\n" + described + "  )\n"
         "  if (( CURRENT == 2 )); then\n"
         "    _describe -t commands 'trainpack command' commands\n"
         "    return\n"
         "  fi\n"
         "  local cmd=$words[2]\n"
         "  shift words\n"
         "  (( CURRENT-- ))\n"
         "  case $cmd in\n" + cases +
         "  esac\n"
         "}\n\n"
         "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
         "  _trainpack \"$@\"\n"
         "else\n"
         "  compdef _trainpack trainpack\n"
         "fi\n";
}

std::string fish_script(const std::vector<CommandDoc>& commands) {
  std::string out =
      "# fish completion for trainpack, made by `trainpack completion fish` from its flag definitions.\n"
      "# Install it as ~/.config/fish/completions/trainpack.fish\n\n"
      "complete -c trainpack -f\n";
  for (const CommandDoc* c : subcommands(commands))
    out += "complete -c trainpack -n __fish_use_subcommand -a " + c->name + " -d " +
           fish_quoted(summary(c->description)) + "\n";
  for (const CommandDoc& c : commands) {
    const std::string when =
        c.name.empty() ? "__fish_use_subcommand" : fish_quoted("__fish_seen_subcommand_from " + c.name);
    for (const FlagDoc* f : flags_of(c)) {
      std::string line = "complete -c trainpack -n " + when;
      for (const std::string& n : f->names) line += (n.starts_with("--") ? " -l " : " -s ") + n.substr(n.find_first_not_of('-'));
      if (!f->choices.empty()) line += " -x -a " + fish_quoted(join(f->choices, " "));
      else if (!f->value_name.empty()) line += " -r -F";
      out += line + " -d " + fish_quoted(summary(f->help)) + "\n";
    }
    for (const FlagDoc& p : c.positionals)
      out += "complete -c trainpack -n " + when +
             (p.choices.empty() ? std::string(" -F") : " -x -a " + fish_quoted(join(p.choices, " "))) + "\n";
  }
  return out;
}

// Text for roff: a backslash is \e, a leading . or ' is kept as text, non-ASCII characters are \[uXXXX] (groff reads
// its input as Latin-1 unless told otherwise).
std::string roff(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\\') out += "\\e";
      else if (c == '-') out += "\\-";
      else if ((c == '.' || c == '\'') && (out.empty() || out.back() == '\n')) out += "\\&" + std::string(1, char(c));
      else out += char(c);
      ++i;
      continue;
    }
    int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
    char32_t cp = c & (0x3F >> extra);
    for (int k = 1; k <= extra && i + k < text.size(); ++k) cp = (cp << 6) | (text[i + k] & 0x3F);
    char hex[16];
    std::snprintf(hex, sizeof hex, "\\[u%04X]", static_cast<unsigned>(cp));
    out += hex;
    i += 1 + extra;
  }
  return out;
}

std::string roff_flag(const FlagDoc& f) {
  std::string names;
  for (const std::string& n : f.names) names += (names.empty() ? "" : ", ") + ("\\fB" + roff(n) + "\\fR");
  if (!f.value_name.empty()) names += " \\fI" + roff(f.value_name) + "\\fR";
  if (f.required) names += " (required)";
  return names;
}

std::string roff_examples(const std::vector<Example>& examples) {
  std::string out;
  for (const Example& e : examples)
    out += ".PP\n" + roff(e.what) + ":\n.RS 4\n.nf\n" + roff(e.command) + "\n.fi\n.RE\n";
  return out;
}

// trainpack's description without its "trainpack: " (the man page's NAME line is "trainpack \- WHAT").
std::string what_it_does(const CommandDoc& trainpack) {
  const std::string& d = trainpack.description;
  return d.starts_with("trainpack: ") ? d.substr(11) : d;
}

std::string man_command(const CommandDoc& c) {
  std::string out = ".SS \"trainpack " + c.name + "\"\n" + roff(c.description) + "\n.PP\n\\fB" + roff(c.usage) +
                    "\\fR\n";
  for (const FlagDoc& p : c.positionals) out += ".TP\n\\fI" + roff(p.names.front()) + "\\fR\n" + roff(p.help) + "\n";
  for (const GroupDoc& g : c.groups) {
    out += ".PP\n\\fI" + roff(g.name) + "\\fR\n";
    for (const FlagDoc& f : g.flags) out += ".TP\n" + roff_flag(f) + "\n" + roff(f.help) + "\n";
  }
  return out + roff_examples(c.examples);
}

// Help text in Markdown: "<script>" is not an HTML tag, "pip-* and facts-*" no emphasis, '|' no table column.
std::string markdown_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '*' || c == '|' || c == '\\' || c == '`') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

std::string markdown_examples(const std::vector<Example>& examples) {
  // The examples name the user's images, files and shell paths: tests/docs/doc_commands.py checks their flags
  // against --help without running them.
  std::string out = "Examples:\n\n<!-- not run: the user's images, files and shell paths -->\n```sh\n";
  for (const Example& e : examples) out += "# " + e.what + "\n" + e.command + "\n";
  return out + "```\n\n";
}

std::string markdown_flag(const FlagDoc& f) {
  std::string names;
  for (const std::string& n : f.names) {
    std::string shown = n + (f.value_name.empty() ? "" : (n.starts_with("--") ? "=" : " ") + f.value_name);
    names += (names.empty() ? "" : ", ") + ("`" + shown + "`");
  }
  return "| " + names + (f.required ? " (required)" : "") + " | " + markdown_text(f.help) + " |\n";
}

std::string markdown_command(const CommandDoc& c) {
  std::string out = "## trainpack " + c.name + "\n\n" + markdown_text(c.description) + "\n\n```\n" + c.usage +
                    "\n```\n\n";
  for (const FlagDoc& p : c.positionals) out += "`" + p.names.front() + "`: " + markdown_text(p.help) + "\n\n";
  for (const GroupDoc& g : c.groups) {
    out += "**" + g.name + "**\n\n| flag | meaning |\n|---|---|\n";
    for (const FlagDoc& f : g.flags) out += markdown_flag(f);
    out += "\n";
  }
  return c.examples.empty() ? out : out + markdown_examples(c.examples);
}

}  // namespace

std::string completion_script(const std::vector<CommandDoc>& commands, std::string_view shell) {
  if (shell == "bash") return bash_script(commands);
  if (shell == "zsh") return zsh_script(commands);
  return fish_script(commands);
}

std::string man_page(const std::vector<CommandDoc>& commands, std::string_view version) {
  std::string out = ".TH TRAINPACK 1 \"\" \"trainpack " + roff(std::string(version)) + "\" \"User Commands\"\n" +
                    ".SH NAME\ntrainpack \\- " + roff(what_it_does(top(commands))) + "\n" +
                    ".SH SYNOPSIS\n\\fBtrainpack\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\-\\- \\fIARGS\\fR...]\n" +
                    ".SH DESCRIPTION\n" +
                    roff("trainpack builds the image gcloud ai custom-jobs local-run builds from the same flags, "
                         "without a container engine, and pushes it to a registry or writes it as an OCI layout or "
                         "a docker-archive; local-run then runs the trainer in it.") +
                    "\n.PP\nEach command's flags are grouped by concern; \\fBtrainpack \\fICOMMAND\\fB \\-\\-help\\fR "
                    "shows them too.\n.SH COMMANDS\n";
  for (const CommandDoc* c : subcommands(commands)) out += man_command(*c);
  out += ".SH OPTIONS\n";
  for (const GroupDoc& g : top(commands).groups)
    for (const FlagDoc& f : g.flags) out += ".TP\n" + roff_flag(f) + "\n" + roff(f.help) + "\n";
  out += ".SH EXIT STATUS\n";
  for (const auto& [code, meaning] : exit_codes()) out += ".TP\n\\fB" + roff(code) + "\\fR\n" + roff(meaning) + "\n";
  out += ".SH EXAMPLES\n" + roff_examples(top(commands).examples);
  return out;
}

std::string markdown_reference(const std::vector<CommandDoc>& commands) {
  std::string out = "# trainpack command line reference\n\n"
                    "<!-- Made by `build/trainpack man --markdown > docs/cli.md` from the flag definitions; "
                    "CliDocs.MarkdownReferenceIsUpToDate fails when it is stale. -->\n\n" +
                    top(commands).description + "\n\n```\n" + top(commands).usage + "\n```\n\n" +
                    markdown_examples(top(commands).examples) +
                    "`trainpack --version` prints the version; `trainpack COMMAND --help` shows a command's flags as "
                    "below; `man trainpack` shows this reference as a man page.\n\n";
  for (const CommandDoc* c : subcommands(commands)) out += markdown_command(*c);
  out += "## Exit status\n\n| status | meaning |\n|---|---|\n";
  for (const auto& [code, meaning] : exit_codes()) out += "| " + code + " | " + meaning + " |\n";
  return out;
}

void add_doc_commands(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* completion = app.add_subcommand(
      "completion", "Print a shell completion script for trainpack's commands, flags and their fixed values");
  completion->add_option("shell", *shell, "The shell: bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion->callback([&app, shell] { std::cout << completion_script(command_docs(app), *shell) << std::flush; });

  // `trainpack help build` as `trainpack build --help`: the form git, go and kubectl users type.
  auto topic = std::make_shared<std::string>();
  CLI::App* help = app.add_subcommand("help", "Print the help of trainpack, or of one command (as COMMAND --help)");
  // Its value's type names the commands, for completion (choices_of) and --help; not a check, so that an unknown
  // one is answered with the closest command (unknown_command).
  help->add_option("command", *topic, "The command whose flags and examples to print")->type_name_fn([&app] {
    std::string names;
    for (const CLI::App* cmd : app.get_subcommands({}))
      if (!cmd->get_group().empty()) names += (names.empty() ? "" : ",") + cmd->get_name();
    return "{" + names + "}";
  });
  help->callback([&app, topic] {
    if (topic->empty()) {
      // Not app.help(): while `help` is the parsed command, CLI11 answers with the help of that command.
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal) << std::flush;
      return;
    }
    for (const CLI::App* cmd : app.get_subcommands({}))
      if (cmd->get_name() == *topic && !cmd->get_group().empty()) {
        std::cout << cmd->help(app.get_name()) << std::flush;
        return;
      }
    throw gcloud::unknown_command(app, *topic);
  });

  auto markdown = std::make_shared<bool>(false);
  CLI::App* man = app.add_subcommand("man", "Print the man page trainpack(1), or the Markdown reference docs/cli.md");
  man->group("");  // hidden: the build makes trainpack.1 with it, the docs test docs/cli.md
  man->add_flag("--markdown", *markdown, "The Markdown reference instead of roff");
  man->callback([&app, markdown] {
    std::vector<CommandDoc> docs = command_docs(app);
    std::cout << (*markdown ? markdown_reference(docs) : man_page(docs, TRAINPACK_VERSION)) << std::flush;
  });
}

}  // namespace trainpack::cli
