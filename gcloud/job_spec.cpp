#include "gcloud/job_spec.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "gcloud/gcloud_flags.h"
#include "support/error.h"
#include "support/fs.h"

namespace trainpack::gcloud {
using nlohmann::json;

namespace {

bool is_lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool is_env_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool is_enum_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool has_control_chars(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

// A protobuf Duration as JSON: seconds with an optional fraction, then "s" ("3600s", "1.5s").
bool is_duration(std::string_view s) {
  if (s.size() < 2 || s.back() != 's') return false;
  s.remove_suffix(1);
  bool dot = false, digit = false;
  for (char c : s) {
    if (c == '.' && !dot) dot = true;
    else if (c >= '0' && c <= '9') digit = true;
    else return false;
  }
  return digit && s.front() != '.' && s.back() != '.';
}

}  // namespace

JobSpecFormat parse_job_spec_format(std::string_view s) {
  if (s == "config") return JobSpecFormat::kConfig;
  if (s == "rest") return JobSpecFormat::kRest;
  throw Error("unknown job spec format '" + std::string(s) + "'",
              "use config (the CustomJobSpec for gcloud ai custom-jobs create --config) or rest (the CustomJob "
              "body for the REST API: {displayName, jobSpec})");
}

void check_digest_pinned(std::string_view uri) {
  const std::string hint =
      "Vertex AI should run exactly the image that was built: pass REGISTRY/REPOSITORY@sha256:<digest> (the "
      "digest trainpack build prints or writes with --digest-file)";
  if (uri.empty()) throw Error("no image URI for the job spec", hint);
  if (has_control_chars(uri) || uri.find(' ') != std::string_view::npos)
    throw Error("image URI '" + std::string(uri) + "' contains spaces or control characters", hint);
  size_t at = uri.find('@');
  if (at == std::string_view::npos)
    throw Error("image URI '" + std::string(uri) + "' is not pinned by digest (a tag can be moved)", hint);
  std::string_view name = uri.substr(0, at), digest = uri.substr(at + 1);
  if (name.empty() || name.front() == '/' || name.back() == '/' || name.back() == ':')
    throw Error("image URI '" + std::string(uri) + "' has no repository name before '@'", hint);
  if (digest.substr(0, 7) != "sha256:" || digest.size() != 7 + 64 || !is_lower_hex(digest.substr(7)))
    throw Error("image URI '" + std::string(uri) + "' has a malformed digest (want sha256: and 64 lowercase hex digits)",
                hint);
}

std::string pin_image_uri(std::string_view reference, std::string_view digest) {
  std::string_view name = reference.substr(0, reference.find('@'));
  size_t slash = name.rfind('/');
  size_t colon = name.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash))
    name = name.substr(0, colon);  // drop the tag, not a registry port
  std::string pinned = std::string(name) + "@" + std::string(digest);
  check_digest_pinned(pinned);
  return pinned;
}

namespace {

// Checks each option on its own; the --env items are checked as env_list reads them.
void check_job_spec_options(const JobSpecOptions& o) {
  check_digest_pinned(o.image_uri);
  if (o.format == JobSpecFormat::kRest && o.display_name.empty())
    throw Error("the rest format needs a display name", "pass --display-name=NAME");
  if (has_control_chars(o.display_name))
    throw Error("the display name contains control characters", "pass a plain one-line --display-name");
  if (o.display_name.size() > 128)
    throw Error("the display name is longer than 128 characters", "pass a shorter --display-name");
  if (o.machine_type.empty())
    throw Error("the machine type is empty", "pass --machine-type, e.g. n1-standard-4 (the default)");
  if (has_control_chars(o.machine_type) || o.machine_type.find(' ') != std::string::npos)
    throw Error("machine type '" + o.machine_type + "' contains spaces or control characters",
                "pass a Compute Engine machine type such as n1-standard-4");
  if (o.replica_count < 1)
    throw Error("replica count must be at least 1, not " + std::to_string(o.replica_count),
                "the first worker pool is the chief and runs exactly one replica per count; pass --replica-count=1");
  if (o.accelerator_count < 0)
    throw Error("accelerator count must not be negative", "pass --accelerator-count=N with N >= 1");
  if (o.accelerator_count > 0 && o.accelerator_type.empty())
    throw Error("--accelerator-count without --accelerator-type",
                "pass --accelerator-type too, e.g. --accelerator-type=NVIDIA_TESLA_T4");
  if (!o.accelerator_type.empty() && !is_enum_name(o.accelerator_type))
    throw Error("accelerator type '" + o.accelerator_type + "' is not an AcceleratorType name",
                "use the API's upper-case name, e.g. NVIDIA_TESLA_T4 or NVIDIA_L4");
  if (o.boot_disk_size_gb < 0)
    throw Error("boot disk size must not be negative", "pass --boot-disk-size-gb=N, e.g. 100");
  if (!o.boot_disk_type.empty() && o.boot_disk_type != "pd-ssd" && o.boot_disk_type != "pd-standard")
    throw Error("boot disk type '" + o.boot_disk_type + "' is not pd-ssd or pd-standard",
                "pass --boot-disk-type=pd-ssd or --boot-disk-type=pd-standard");
  if (!o.base_output_dir.empty() && (o.base_output_dir.rfind("gs://", 0) != 0 || o.base_output_dir.size() <= 5 ||
                                     o.base_output_dir[5] == '/' || has_control_chars(o.base_output_dir)))
    throw Error("base output directory '" + o.base_output_dir + "' is not a Cloud Storage URI",
                "pass --base-output-dir=gs://BUCKET/PATH");
  if (!o.service_account.empty() && o.service_account.find('@') == std::string::npos)
    throw Error("service account '" + o.service_account + "' is not an email address",
                "pass --service-account=NAME@PROJECT.iam.gserviceaccount.com");
  if (!o.timeout.empty() && !is_duration(o.timeout))
    throw Error("timeout '" + o.timeout + "' is not a duration in seconds", "pass e.g. --timeout=7200s");
}

nlohmann::ordered_json env_list(const std::vector<std::string>& assignments) {
  using json = nlohmann::ordered_json;
  json env = json::array();
  std::set<std::string> seen;
  for (const auto& kv : assignments) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos)
      throw Error("--env '" + kv + "' is not KEY=VALUE", "pass --env=NAME=VALUE (the value may be empty: NAME=)");
    std::string name = kv.substr(0, eq);
    if (!is_env_name(name))
      throw Error("environment variable name '" + name + "' is not valid",
                  "use letters, digits and underscores, not starting with a digit");
    if (!seen.insert(name).second)
      throw Error("environment variable '" + name + "' is given twice", "pass each --env NAME once");
    env.push_back({{"name", name}, {"value", kv.substr(eq + 1)}});
  }
  return env;
}

nlohmann::ordered_json worker_pool(const JobSpecOptions& o) {
  using json = nlohmann::ordered_json;
  json machine{{"machineType", o.machine_type}};
  if (!o.accelerator_type.empty()) {
    machine["acceleratorType"] = o.accelerator_type;
    machine["acceleratorCount"] = o.accelerator_count > 0 ? o.accelerator_count : 1;
  }

  json container{{"imageUri", o.image_uri}};
  if (!o.command.empty()) container["command"] = o.command;
  if (!o.args.empty()) container["args"] = o.args;
  if (!o.env.empty()) container["env"] = env_list(o.env);

  json pool{{"machineSpec", machine}, {"replicaCount", o.replica_count}};
  if (!o.boot_disk_type.empty() || o.boot_disk_size_gb > 0) {
    json disk = json::object();
    if (!o.boot_disk_type.empty()) disk["bootDiskType"] = o.boot_disk_type;
    if (o.boot_disk_size_gb > 0) disk["bootDiskSizeGb"] = o.boot_disk_size_gb;
    pool["diskSpec"] = disk;
  }
  pool["containerSpec"] = container;
  return pool;
}

// Built in document order (ordered_json) so the text reads like Google's examples: machine, replicas, container.
nlohmann::ordered_json make_ordered(const JobSpecOptions& o) {
  using json = nlohmann::ordered_json;
  check_job_spec_options(o);
  json spec{{"workerPoolSpecs", json::array({worker_pool(o)})}};
  if (!o.base_output_dir.empty()) spec["baseOutputDirectory"] = {{"outputUriPrefix", o.base_output_dir}};
  if (!o.service_account.empty()) spec["serviceAccount"] = o.service_account;
  if (!o.network.empty()) spec["network"] = o.network;
  if (!o.timeout.empty()) spec["scheduling"] = {{"timeout", o.timeout}};

  if (o.format == JobSpecFormat::kRest) return json{{"displayName", o.display_name}, {"jobSpec", spec}};
  return spec;
}

}  // namespace

json make_job_spec(const JobSpecOptions& opts) { return json(make_ordered(opts)); }

std::string job_spec_text(const JobSpecOptions& opts) { return make_ordered(opts).dump(2) + "\n"; }

namespace {

// The job flags shared by `job-spec` and `build`; `format` is the flag that sets opts.format.
void add_shared_flags(CLI::App& cmd, JobSpecOptions& opts, const std::string& format_flag) {
  cmd.add_option("--display-name", opts.display_name,
                 "Job display name (in the rest format; with config, give it to gcloud's --display-name)");
  cmd.add_option("--machine-type", opts.machine_type, "Compute Engine machine type (default n1-standard-4)");
  cmd.add_option("--replica-count", opts.replica_count, "Replicas in the worker pool (default 1)");
  cmd.add_option("--accelerator-type", opts.accelerator_type, "Accelerator, e.g. NVIDIA_TESLA_T4 (default: none)");
  cmd.add_option("--accelerator-count", opts.accelerator_count, "Accelerators per replica (default 1 with a type)");
  // custom_jobs/flags.py _CUSTOM_JOB_ARGS, _CUSTOM_JOB_COMMAND: type=arg_parsers.ArgList(),
  // action=arg_parsers.UpdateAction.
  add_list_flag(cmd, "--args", opts.args, RepeatedList::kConcatenate, "ARG",
                "Arguments appended to the image's ENTRYPOINT (a gcloud list; repeated flags add up; each item once)");
  cmd.add_option("--env", opts.env, "KEY=VALUE environment variable for the container (repeatable)")
      ->allow_extra_args(false);
  add_list_flag(cmd, "--command", opts.command, RepeatedList::kConcatenate, "COMMAND",
                "Command replacing the ENTRYPOINT (a gcloud list; repeated flags add up; each item once)");
  cmd.add_option("--service-account", opts.service_account, "Service account email the job runs as");
  cmd.add_option("--base-output-dir", opts.base_output_dir, "gs://BUCKET/PATH for the job's output (AIP_MODEL_DIR…)");
  cmd.add_option("--network", opts.network, "VPC network to peer with: projects/NUMBER/global/networks/NAME");
  cmd.add_option("--timeout", opts.timeout, "Maximum job run time, e.g. 7200s");
  cmd.add_option("--boot-disk-type", opts.boot_disk_type, "pd-ssd or pd-standard");
  cmd.add_option("--boot-disk-size-gb", opts.boot_disk_size_gb, "Boot disk size in GB");
  cmd.add_option_function<std::string>(
         format_flag, [&opts](const std::string& s) { opts.format = parse_job_spec_format(s); },
         "config (default): the CustomJobSpec for gcloud ai custom-jobs create --config; rest: the REST CustomJob "
         "{displayName, jobSpec}")
      ->check(CLI::IsMember({"config", "rest"}));
}

struct JobSpecCommand {
  JobSpecOptions opts;
  std::vector<std::string> trailing_args;
  std::string output;
};

}  // namespace

void add_job_spec_command(CLI::App& app) {
  auto state = std::make_shared<JobSpecCommand>();
  CLI::App* cmd = app.add_subcommand(
      "job-spec", "Write a Vertex AI CustomJob spec (JSON) that runs a digest-pinned image, for gcloud ai "
                  "custom-jobs create --config=FILE or the REST API");
  cmd->add_option("--image-uri", state->opts.image_uri, "The image, pinned: REGISTRY/REPOSITORY@sha256:DIGEST")
      ->required();
  add_shared_flags(*cmd, state->opts, "--format");
  cmd->add_option("--output", state->output, "Write the spec to FILE instead of stdout (a regular file atomically)");
  cmd->add_option("job-args", state->trailing_args,
                  "Arguments after -- are appended to --args as they are (not split, repeats allowed)");
  for (CLI::Option* opt : cmd->get_options())
    if (opt->get_items_expected_max() == 1) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->callback([state] {
    JobSpecOptions opts = state->opts;
    opts.args.insert(opts.args.end(), state->trailing_args.begin(), state->trailing_args.end());
    std::string text = job_spec_text(opts);
    if (state->output.empty() || state->output == "-") std::cout << text << std::flush;
    else write_output_file(state->output, text);
  });
}

void add_job_spec_flags(CLI::App& build_cmd, JobSpecOptions& opts, std::string& job_spec_out) {
  add_shared_flags(build_cmd, opts, "--job-spec-format");
  build_cmd.add_option("--job-spec-out", job_spec_out,
                       "Also write a Vertex AI job spec for the pushed image (REF@sha256:…) to FILE");
}

}  // namespace trainpack::gcloud
