#include "cli/cli_help.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <sstream>

namespace trainpack::cli {

namespace {

// The help groups, in the order they are shown.
constexpr const char* kGcloud = "gcloud flags (as gcloud ai custom-jobs local-run takes them)";
constexpr const char* kImage = "Where the image comes from and goes";
constexpr const char* kNetwork = "Registry and network";
constexpr const char* kPython = "Python and pip";
constexpr const char* kCaching = "Caching";
constexpr const char* kRun = "Running the trainer";
constexpr const char* kJobSpec = "Job spec (Vertex AI CustomJob)";
constexpr const char* kOutput = "Output and diagnostics";
constexpr const char* kGroupOrder[] = {kGcloud, kImage, kNetwork, kPython, kCaching, kRun, kJobSpec, kOutput};

// Which group a flag is in: for one command, or for every command that has it (command ""). A new flag needs its
// line here (CliHelp.EveryFlagIsInAHelpGroup fails otherwise).
struct OptionGroup {
  const char* command;
  const char* flag;
  const char* group;
};
constexpr OptionGroup kOptionGroups[] = {
    {"", "--executor-image-uri", kGcloud},
    {"", "--local-package-path", kGcloud},
    {"", "--script", kGcloud},
    {"", "--python-module", kGcloud},
    {"", "--requirements", kGcloud},
    {"", "--extra-packages", kGcloud},
    {"", "--extra-dirs", kGcloud},
    {"", "--output-image-uri", kGcloud},
    {"", "--service-account-key-file", kGcloud},
    {"", "--gpu", kGcloud},
    {"build", "--output", kImage},
    {"", "--base-source", kImage},
    {"", "--platform", kImage},
    {"", "--compression", kImage},
    {"", "--compression-level", kImage},
    {"", "--tag", kImage},
    {"", "--label", kImage},
    {"", "--annotation", kImage},
    {"", "--annotations-from-ci", kImage},
    {"", "--fail-on-secrets", kImage},
    {"", "--sbom", kImage},
    {"sbom", "--generate", kOutput},
    {"sbom", "--provenance", kOutput},
    {"sbom", "--format", kOutput},
    {"sbom", "--all", kOutput},
    {"", "--provenance", kImage},
    {"", "--insecure-registry", kNetwork},
    {"", "--ca-file", kNetwork},
    {"", "--http1.1", kNetwork},
    {"", "--http-timeout", kNetwork},
    {"", "--jobs", kNetwork},
    {"", "--index-url", kPython},
    {"", "--extra-index-url", kPython},
    {"", "--find-links", kPython},
    {"", "--no-compile", kPython},
    {"", "--own-layer-mb", kPython},
    {"", "--break-system-packages", kPython},
    {"", "--build-python", kPython},
    {"", "--build-timeout", kPython},
    {"", "--cache-dir", kCaching},
    {"", "--cache-max-size", kCaching},
    {"cache", "--max-size", kCaching},
    {"cache", "--older-than", kCaching},
    {"cache", "--all", kCaching},
    {"cache", "--format", kOutput},
    {"", "--cache-repo", kCaching},
    {"", "--refresh-pip-steps", kCaching},
    {"", "--engine", kRun},
    {"", "--aip-env", kRun},
    {"", "--aip-dir", kRun},
    {"", "--image-uri", kJobSpec},
    {"", "--display-name", kJobSpec},
    {"", "--machine-type", kJobSpec},
    {"", "--replica-count", kJobSpec},
    {"", "--accelerator-type", kJobSpec},
    {"", "--accelerator-count", kJobSpec},
    {"", "--args", kJobSpec},
    {"", "--env", kJobSpec},
    {"", "--command", kJobSpec},
    {"", "--service-account", kJobSpec},
    {"", "--base-output-dir", kJobSpec},
    {"", "--network", kJobSpec},
    {"", "--timeout", kJobSpec},
    {"", "--boot-disk-type", kJobSpec},
    {"", "--boot-disk-size-gb", kJobSpec},
    {"", "--job-spec-format", kJobSpec},
    {"", "--job-spec-out", kJobSpec},
    {"job-spec", "--format", kJobSpec},
    {"job-spec", "--output", kOutput},
    {"build", "--format", kOutput},
    {"", "--digest-file", kOutput},
    {"", "--image-name-with-digest-file", kOutput},
    {"", "--dry-run", kOutput},
    {"", "--quiet", kOutput},
    {"", "--verbose", kOutput},
    {"", "--markdown", kOutput},
    {"", "--help", kOutput},
    {"", "--version", kOutput},
};

constexpr const char* kPrebuilt = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest";

// Two or three real command lines per command, shown at the end of its help, in the man page and docs/cli.md.
std::vector<Example> examples_of(const std::string& command) {
  const std::string base = std::string("--executor-image-uri=") + kPrebuilt;
  const std::string pushed = "us-central1-docker.pkg.dev/my-project/trainers/mnist";
  if (command.empty())
    return {{"Build the image gcloud ai custom-jobs local-run builds and push it to Artifact Registry",
             "trainpack build " + base + " --script=trainer/task.py --output-image-uri=" + pushed + ":v1"},
            {"Build and run the trainer here, as gcloud ai custom-jobs local-run does",
             "trainpack local-run " + base + " --script=trainer/task.py -- --epochs=1"},
            {"Complete commands and flags in bash", "source <(trainpack completion bash)"}};
  if (command == "dockerfile")
    return {{"The Dockerfile of a script", "trainpack dockerfile " + base + " --script=trainer/task.py"},
            {"The Dockerfile of a module with its requirements",
             "trainpack dockerfile " + base + " --python-module=trainer.task --requirements=pandas,scikit-learn"}};
  if (command == "build")
    return {{"Push to Artifact Registry with the credentials gcloud uses",
             "trainpack build " + base + " --local-package-path=. --script=trainer/task.py --output-image-uri=" +
                 pushed + ":v1 --digest-file=digest.txt"},
            {"Write an OCI layout instead of pushing",
             "trainpack build --executor-image-uri=python:3.11-slim --python-module=trainer.task "
             "--requirements=numpy --output=oci:out/mnist:v1"},
            {"See which layers a build would make, and write nothing",
             "trainpack build " + base + " --script=trainer/task.py --output=oci:out --dry-run"}};
  if (command == "local-run")
    return {{"Build, then run the trainer with its arguments",
             "trainpack local-run " + base + " --script=trainer/task.py -- --epochs=1"},
            {"Run daemonless with runc, with Vertex AI's AIP_* directories under ./aip-output",
             "trainpack local-run --engine=runc --executor-image-uri=python:3.11-slim --python-module=trainer.task "
             "--aip-env"}};
  if (command == "job-spec")
    return {{"A spec for gcloud ai custom-jobs create --config, of the image a build pushed",
             "trainpack job-spec --image-uri=" + pushed + "@$(cat digest.txt) --machine-type=n1-standard-8 "
             "--output=job.json -- --epochs=10"},
            {"The REST API's CustomJob, with a GPU",
             "trainpack job-spec --image-uri=" + pushed + "@$(cat digest.txt) --accelerator-type=NVIDIA_TESLA_T4 "
             "--display-name=mnist --format=rest"}};
  if (command == "sbom")
    return {{"The SBOM a build attached to its image", "trainpack sbom " + pushed + ":v1"},
            {"Its provenance statement: the flags, the base digest, each downloaded artifact's sha256",
             "trainpack sbom --provenance " + pushed + ":v1"},
            {"An SBOM of any image, from its layers",
             std::string("trainpack sbom --generate --format=cyclonedx ") + kPrebuilt}};
  if (command == "cache")
    return {{"How much the cache holds, by kind", "trainpack cache du"},
            {"Keep at most 5 GB, least recently used entries first", "trainpack cache prune --max-size=5GB"},
            {"Drop what no build has used for a week", "trainpack cache prune --older-than=7d"}};
  if (command == "help")
    return {{"The flags of build, by concern, and its examples", "trainpack help build"},
            {"Every command", "trainpack help"}};
  if (command == "completion")
    return {{"bash, for this shell", "source <(trainpack completion bash)"},
            {"zsh, for every shell", "trainpack completion zsh > \"${fpath[1]}/_trainpack\""},
            {"fish", "trainpack completion fish > ~/.config/fish/completions/trainpack.fish"}};
  return {};
}

const char* group_of(const std::string& command, const CLI::Option& opt) {
  const char* found = nullptr;
  for (const OptionGroup& g : kOptionGroups) {
    if (!opt.check_lname(std::string(g.flag).substr(2))) continue;
    if (command == g.command) return g.group;
    if (*g.command == '\0') found = g.group;
  }
  return found;
}

std::string examples_text(const std::vector<Example>& examples) {
  std::string text = "Examples:\n";
  for (const Example& e : examples) text += "  # " + e.what + "\n  " + e.command + "\n";
  return text;
}

std::string exit_codes_text() {
  std::string text = "Exit status:\n";
  std::size_t width = 0;
  for (const auto& [code, meaning] : exit_codes()) width = std::max(width, code.size() + 2);
  for (const auto& [code, meaning] : exit_codes()) text += "  " + code + std::string(width - code.size(), ' ') + meaning + "\n";
  return text;
}

// CLI11's help with the option groups in kGroupOrder (CLI11 shows them in the order their first option was added).
class GroupedFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::ostringstream out;
    out << make_description(app) << make_usage(app, name) << make_positionals(app);
    bool first = true;
    for (const std::string& group : ordered_groups(*app)) {
      auto opts = app->get_options([&group](const CLI::Option* opt) {
        return opt->get_group() == group && opt->nonpositional();
      });
      if (opts.empty()) continue;
      out << (first ? "" : "\n") << make_group(group, false, opts);
      first = false;
    }
    out << make_subcommands(app, mode) << '\n' << make_footer(app);
    return out.str();
  }

  static std::vector<std::string> ordered_groups(const CLI::App& app) {
    std::vector<std::string> groups(std::begin(kGroupOrder), std::end(kGroupOrder));
    for (const std::string& g : app.get_groups())
      if (!g.empty() && std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    return groups;
  }
};

void document_command(CLI::App& cmd, const std::string& name, const std::shared_ptr<CLI::Formatter>& formatter) {
  for (CLI::Option* opt : cmd.get_options())
    if (const char* group = group_of(name, *opt)) opt->group(group);
  cmd.formatter(formatter);
  std::vector<Example> examples = examples_of(name);
  std::string footer = examples.empty() ? "" : examples_text(examples);
  if (name.empty()) footer += "\n" + exit_codes_text();
  cmd.footer(footer);
}

// A flag's value: "{a,b}" when it takes fixed values, else its type name without CLI11's validator descriptions.
std::string value_name(const CLI::Option& opt, const std::vector<std::string>& choices) {
  if (opt.get_items_expected_max() == 0) return "";
  if (!choices.empty()) {
    std::string joined;
    for (const std::string& c : choices) joined += (joined.empty() ? "" : ",") + c;
    return "{" + joined + "}";
  }
  std::string type = opt.get_type_name();
  return type.substr(0, type.find(':'));
}

// The fixed values of an option: CLI11 writes IsMember's set into the type name as "{a,b,c}".
std::vector<std::string> choices_of(const CLI::Option& opt) {
  std::string type = opt.get_type_name();
  std::size_t open = type.rfind('{'), close = type.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  std::vector<std::string> out;
  std::istringstream items(type.substr(open + 1, close - open - 1));
  for (std::string item; std::getline(items, item, ',');) out.push_back(item);
  return out;
}

FlagDoc flag_doc(const CLI::Option& opt) {
  FlagDoc f;
  for (const std::string& s : opt.get_snames()) f.names.push_back("-" + s);
  for (const std::string& l : opt.get_lnames()) f.names.push_back("--" + l);
  if (f.names.empty()) f.names.push_back(opt.get_name());
  f.choices = choices_of(opt);
  f.value_name = value_name(opt, f.choices);
  f.help = opt.get_description();
  f.required = opt.get_required();
  f.positional = opt.get_positional();
  return f;
}

CommandDoc command_doc(const CLI::App& cmd, const std::string& name) {
  CommandDoc doc;
  doc.name = name;
  doc.description = cmd.get_description();
  doc.usage = name.empty() ? "trainpack COMMAND [OPTIONS]" : "trainpack " + name + " [OPTIONS]";
  for (const CLI::Option* opt : cmd.get_options()) {
    if (!opt->get_positional()) continue;
    doc.positionals.push_back(flag_doc(*opt));
    doc.usage += " " + std::string(opt->get_name() == "args" || opt->get_name() == "job-args" ? "[-- ARGS...]"
                                                                                              : opt->get_name());
  }
  for (const std::string& group : GroupedFormatter::ordered_groups(cmd)) {
    GroupDoc g{group, {}};
    for (const CLI::Option* opt : cmd.get_options())
      if (opt->nonpositional() && opt->get_group() == group) g.flags.push_back(flag_doc(*opt));
    if (!g.flags.empty()) doc.groups.push_back(std::move(g));
  }
  doc.examples = examples_of(name);
  return doc;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& exit_codes() {
  static const std::vector<std::pair<std::string, std::string>> codes{
      {"0", "success"},
      {"1", "the build or the command failed (the message says why, its hint what to do)"},
      {std::to_string(kExitUsage), "usage error: an unknown command or flag, a missing required flag, a flag "
                                   "without its value, a value that is not one of its choices or not UTF-8, flags "
                                   "that exclude each other, a tag of the referrers tag's shape (sha256-HEX)"},
      {std::to_string(kExitInternal), "internal error: a bug in trainpack"},
      {"other", "local-run: the trainer's own exit status when it fails, as gcloud ai custom-jobs local-run exits "
                "with docker run's"},
  };
  return codes;
}

void document_cli(CLI::App& app) {
  auto formatter = std::make_shared<GroupedFormatter>();
  document_command(app, "", formatter);
  for (CLI::App* sub : app.get_subcommands({})) document_command(*sub, sub->get_name(), formatter);
}

std::vector<CommandDoc> command_docs(const CLI::App& app) {
  std::vector<CommandDoc> docs{command_doc(app, "")};
  for (const CLI::App* sub : app.get_subcommands({}))
    if (!sub->get_group().empty()) docs.push_back(command_doc(*sub, sub->get_name()));
  return docs;
}

}  // namespace trainpack::cli
