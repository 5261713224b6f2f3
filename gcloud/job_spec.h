#pragma once
// A Vertex AI CustomJob spec for the image trainpack built, as the JSON `gcloud ai custom-jobs create` and the REST
// API accept. Two shapes:
//
//   config (default): a CustomJobSpec, the file for `gcloud ai custom-jobs create --config=FILE --display-name=NAME
//                     --region=REGION`. `workerPoolSpecs` is at the top level; the display name is NOT in it (gcloud
//                     rejects unknown keys and takes the name from its required --display-name flag).
//   rest:             a CustomJob resource, the body of `POST .../locations/REGION/customJobs`:
//                     {"displayName": NAME, "jobSpec": <the CustomJobSpec above>}.
//
// One worker pool (the chief), running the image by digest:
//   workerPoolSpecs[0] = { machineSpec { machineType, acceleratorType?, acceleratorCount? }, replicaCount,
//                          diskSpec? { bootDiskType?, bootDiskSizeGb? },
//                          containerSpec { imageUri, command?, args?, env?[{name, value}] } }
// plus, when given, baseOutputDirectory { outputUriPrefix }, serviceAccount, network, scheduling { timeout }.
// Field names are the camelCase JSON names of google.cloud.aiplatform.v1 CustomJobSpec / WorkerPoolSpec /
// MachineSpec / DiskSpec / ContainerSpec / EnvVar / GcsDestination / Scheduling.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace CLI {
class App;
}

namespace trainpack::gcloud {

enum class JobSpecFormat { kConfig, kRest };

// "config" or "rest"; anything else throws Error.
JobSpecFormat parse_job_spec_format(std::string_view s);

struct JobSpecOptions {
  std::string display_name;             // required for the rest format; not part of the config format
  std::string image_uri;                // REGISTRY/REPO@sha256:<64 hex> (a tag before the digest is allowed)
  std::string machine_type = "n1-standard-4";
  std::int64_t replica_count = 1;
  std::string accelerator_type;         // e.g. NVIDIA_TESLA_T4; empty = none
  int accelerator_count = 0;            // 0 with a type means 1; non-zero without a type is an error
  std::vector<std::string> args;        // containerSpec.args: appended to the image's ENTRYPOINT
  std::vector<std::string> env;         // KEY=VALUE, each becomes {name, value}
  std::vector<std::string> command;     // containerSpec.command: replaces the ENTRYPOINT; empty = keep it
  std::string service_account;          // run-as service account email
  std::string base_output_dir;          // gs://BUCKET[/PATH] -> baseOutputDirectory.outputUriPrefix
  std::string network;                  // projects/NUMBER/global/networks/NAME (VPC peering)
  std::string timeout;                  // scheduling.timeout, a protobuf Duration such as "7200s"
  std::string boot_disk_type;           // diskSpec.bootDiskType: pd-ssd or pd-standard
  int boot_disk_size_gb = 0;            // diskSpec.bootDiskSizeGb; 0 = Vertex's default
  JobSpecFormat format = JobSpecFormat::kConfig;
};

// Throws Error (one-line cause + hint) unless `uri` is pinned by digest: NAME[:TAG]@sha256:<64 lowercase hex>.
void check_digest_pinned(std::string_view uri);

// "host/repo:tag" (or "host/repo", or "host/repo@sha256:old") + "sha256:…" -> "host/repo@sha256:…".
// For `trainpack build`: the pushed reference and the manifest digest it produced.
std::string pin_image_uri(std::string_view reference, std::string_view digest);

// Validates everything (throws Error) and builds the JSON in opts.format.
nlohmann::json make_job_spec(const JobSpecOptions& opts);

// make_job_spec, pretty-printed (2-space indent) with a trailing newline.
std::string job_spec_text(const JobSpecOptions& opts);

// Registers `trainpack job-spec`: writes the spec for --image-uri to --output (atomically) or stdout.
void add_job_spec_command(CLI::App& app);

// Adds to `trainpack build` the job flags (--display-name, --machine-type, --replica-count, --accelerator-type,
// --accelerator-count, --args, --env, --command, --service-account, --base-output-dir, --network, --timeout,
// --boot-disk-type, --boot-disk-size-gb), --job-spec-format=config|rest (build's own --format is taken) into
// `opts.format`, and --job-spec-out FILE into `job_spec_out`. The caller fills opts.image_uri with the pushed
// REF@sha256:… and writes job_spec_text(opts) with write_output_file when job_spec_out is non-empty.
void add_job_spec_flags(CLI::App& build_cmd, JobSpecOptions& opts, std::string& job_spec_out);

}  // namespace trainpack::gcloud
