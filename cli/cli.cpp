#include "cli/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "imagebuild/build.h"
#include "gcloud/build_plan.h"
#include "cli/cache_command.h"
#include "imagebuild/cache_repo.h"
#include "cli/cli_help.h"
#include "gcloud/gcloud_flags.h"
#include "cli/image_metadata.h"
#include "gcloud/job_spec.h"
#include "gcloud/local_run_spec.h"
#include "imagebuild/progress.h"
#include "cli/version.h"
#include "localrun/run_flags.h"
#include "localrun/runner.h"
#include "layers/layer_writer.h"
#include "net/google_credentials.h"
#include "net/http_client.h"
#include "net/url.h"
#include "registry/reference.h"
#include "registry/registries.h"
#include "store/cache_dir.h"
#include "transports/oci_layout.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/redact.h"
#include "support/suggest.h"
#include "support/text.h"
#include "gcloud/dockerfile.h"

namespace trainpack::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

gcloud::PlanInput plan_input(const gcloud::LocalRunSpec& spec) {
  gcloud::PlanInput in;
  in.prebuilt = spec.prebuilt;
  in.has_setup_py = spec.has_setup_py;
  in.has_requirements_txt = spec.has_requirements_txt;
  in.extra_packages = spec.extra_packages;
  in.requirements = spec.requirements;
  in.extra_dirs = spec.extra_dirs;
  in.main_dir = spec.parent_dir;
  in.entrypoint = spec.entrypoint;
  return in;
}

// The tag an OCI layout output gets when its location names none: --output-image-uri's ("latest" when that names
// none, names a digest, or was generated).
std::string oci_tag_for(const gcloud::LocalRunSpec& spec) {
  if (spec.output_image_generated) return "latest";
  std::string tag = registry::Reference::parse(spec.output_image).tag;
  return tag.empty() ? "latest" : tag;
}

struct BuildFlags {
  std::vector<std::string> outputs;
  std::string base_source;
  std::string cache_dir;
  std::string cache_max_size;  // --cache-max-size: SIZE or none (cli/cache_command.h)
  std::string cache_repo;  // --cache-repo=REGISTRY/REPOSITORY (imagebuild/cache_repo.h)
  std::string platform;  // --platform; empty: linux/amd64, or whatever a single-platform base is
  std::string format = "text";
  std::string digest_file;
  std::string compression = "gzip";  // --compression: gzip or zstd
  std::optional<int> compression_level;  // not given: the fast default (layers::GzipOptions, layers::ZstdOptions)
  bool quiet = false;
  bool verbose = false;
  bool dry_run = false;
  bool refresh_pip_steps = false;
  bool fail_on_secrets = false;
  std::string sbom = "spdx";        // --sbom: spdx, cyclonedx or none
  std::string provenance = "slsa";  // --provenance: slsa or none
  std::vector<std::string> insecure_registries;
  std::string ca_file;
  bool http1_only = false;
  int http_timeout = 60;  // seconds a registry or index request may go without progress
  int jobs = 4;
  std::string index_url;
  std::vector<std::string> extra_index_urls;
  std::vector<std::string> find_links;
  bool no_compile = false;
  bool break_system_packages = false;
  std::string build_python = "auto";
  int build_timeout = static_cast<int>(python::kDefaultBuildTimeout.count());
  int own_layer_mb = 100;
  // What the image carries besides gcloud's build, and kaniko's side file (add_image_metadata_flags).
  std::vector<std::string> tags;
  std::vector<std::string> labels;
  std::vector<std::string> annotations;
  bool annotations_from_ci = false;
  std::string image_name_with_digest_file;
};

// The flags of commands that talk to registries and package indexes, shared by build and local-run.
void add_network_flags(CLI::App& cmd, BuildFlags& bf) {
  cmd.add_option("--http-timeout", bf.http_timeout,
                 "Seconds a registry or package index request may go without an answer or progress (connecting, "
                 "waiting, stalled transfers, retries) before the command fails; default 60. A transfer that keeps "
                 "moving is never cut");
}

// The pip steps' flags, shared by build and local-run.
void add_python_flags(CLI::App& cmd, BuildFlags& bf) {
  cmd.add_option("--index-url", bf.index_url, "Python package index for the pip steps (replaces the image's pip config)");
  cmd.add_option("--extra-index-url", bf.extra_index_urls, "More package indexes (replace the image's); repeatable");
  cmd.add_option("--find-links", bf.find_links, "A directory or page of distribution files; repeatable");
  cmd.add_flag("--no-compile", bf.no_compile, "Install Python packages without .pyc files");
  cmd.add_option("--own-layer-mb", bf.own_layer_mb,
                 "A Python distribution installing at least this many MB gets a layer of its own (default 100)");
  cmd.add_flag("--break-system-packages", bf.break_system_packages,
               "Install into an externally managed Python (PEP 668), as pip's flag of that name");
  cmd.add_option("--build-python", bf.build_python,
                 "Python of the image's version for .pyc files and wheel builds: auto (a host one, else the base "
                 "image's own), host, or image")
      ->check(CLI::IsMember({"auto", "host", "image"}));
  cmd.add_option("--build-timeout", bf.build_timeout,
                 "Seconds one setup.py or build backend call (metadata, wheel) may run before the build stops it and "
                 "fails; default " + std::to_string(python::kDefaultBuildTimeout.count()));
}

// Tags, labels and annotations: none unless asked, so the default image is byte for byte gcloud's.
void add_image_metadata_flags(CLI::App& cmd, BuildFlags& bf) {
  cmd.add_option("--tag", bf.tags,
                 "Also tag the image TAG in every output: pushed under REPOSITORY:TAG after the output's own tag, "
                 "another ref.name in an oci: layout, another RepoTag of a docker-archive; repeatable");
  cmd.add_option("--label", bf.labels,
                 "Add KEY=VALUE to the image config's Labels (over the base's), as docker build --label; repeatable");
  cmd.add_option("--annotation", bf.annotations, "Add KEY=VALUE to the manifest's annotations; repeatable");
  cmd.add_flag("--annotations-from-ci", bf.annotations_from_ci,
               "Annotate org.opencontainers.image.source, .revision and .created from GitHub Actions, GitLab CI or "
               "Cloud Build variables (.created: SOURCE_DATE_EPOCH, else the commit time); --annotation wins");
  cmd.add_option("--image-name-with-digest-file", bf.image_name_with_digest_file,
                 "Write REGISTRY/REPOSITORY@sha256:... per pushed tag to this file, one a line, as kaniko's flag of "
                 "that name");
}

// The image's tags, labels and annotations from the flags, checked before any work.
void apply_image_metadata(imagebuild::BuildRequest& req, const BuildFlags& bf) {
  check_tags(bf.tags);
  for (const transports::ImageLocation& out : req.outputs) {
    if (out.transport == "oci")
      for (const std::string& tag : bf.tags) transports::check_oci_layout_tag(tag);
    if (out.is_registry()) refuse_referrers_tag(out.registry_reference().tag, out.str());
  }
  req.extra_tags = bf.tags;
  req.labels = parse_key_values(bf.labels, "--label");
  std::map<std::string, std::string> explicit_annotations = parse_key_values(bf.annotations, "--annotation");
  if (bf.annotations_from_ci) {
    std::optional<std::int64_t> epoch;
    if (const char* sde = std::getenv("SOURCE_DATE_EPOCH"); sde && *sde) epoch = req.mtime;
    CiAnnotations ci = annotations_from_ci(process_environment(), epoch);
    if (ci.ci.empty())
      std::cerr << "trainpack: warning: --annotations-from-ci: no GitHub Actions, GitLab CI or Cloud Build "
                   "variables found"
                << (ci.annotations.empty() ? "; no annotation added\n" : "; only .created (SOURCE_DATE_EPOCH) added\n");
    req.annotations = std::move(ci.annotations);
  }
  for (const auto& [key, value] : explicit_annotations) req.annotations[key] = value;
}

// The flags a provenance statement records as the build's external parameters: gcloud's, as given, and trainpack's
// that change what is installed or how layers are written; URLs without userinfo, query or fragment (credentials,
// signatures), other values with any password masked.
std::vector<std::pair<std::string, std::string>> build_parameters(const gcloud::LocalRunFlags& flags,
                                                                  const BuildFlags& bf) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&out](const std::string& flag, const std::string& value) {
    if (!value.empty()) out.emplace_back(flag, mask_userinfo(value));
  };
  auto joined = [](const std::vector<std::string>& list) {
    std::string text;
    for (const std::string& item : list)
      text += (text.empty() ? "" : ",") + (item.find("://") != std::string::npos ? net::url_for_display(item) : item);
    return text;
  };
  add("--executor-image-uri", flags.executor_image_uri);
  add("--local-package-path", flags.local_package_path);
  add("--script", flags.script);
  add("--python-module", flags.python_module);
  add("--requirements", joined(flags.requirements));
  add("--extra-packages", joined(flags.extra_packages));
  add("--extra-dirs", joined(flags.extra_dirs));
  add("--output-image-uri", flags.output_image_uri);
  add("--index-url", joined({bf.index_url}));
  add("--extra-index-url", joined(bf.extra_index_urls));
  add("--find-links", joined(bf.find_links));
  add("--platform", bf.platform);
  add("--compression", bf.compression);
  if (bf.no_compile) add("--no-compile", "true");
  return out;
}

// What --format=json says of likely credentials in the context: where they are and what they look like, never
// their contents.
json secrets_json(const std::vector<secrets::Finding>& found) {
  json list = json::array();
  for (const secrets::Finding& f : found)
    list.push_back({{"path", f.context_path}, {"image_path", "/" + f.image_path}, {"kind", f.kind}});
  return list;
}

// kaniko's --image-name-with-digest-file: "REGISTRY/REPOSITORY@DIGEST\n" per destination tag
// (GoogleContainerTools/kaniko pkg/executor/push.go), and per output pushed by digest.
std::string image_names_with_digest(const imagebuild::BuildResult& result) {
  std::string digest = result.manifest_digest.str();
  std::string text;
  std::set<std::string> tagged_names;
  for (const std::string& tag : result.tags) {
    std::string name = tag.substr(0, tag.rfind(':'));  // a tag has no ':'; a registry's port comes before a '/'
    tagged_names.insert(name);
    text += name + "@" + digest + "\n";
  }
  for (const std::string& pinned : result.pushed)
    if (!tagged_names.count(pinned.substr(0, pinned.find('@')))) text += pinned + "\n";
  return text;
}

void run_dockerfile(const gcloud::LocalRunFlags& flags) {
  gcloud::LocalRunSpec spec = gcloud::validate_local_run(flags);
  if (!spec.builds_image())
    throw Error("no image is built without --script or --python-module, so there is no Dockerfile",
                "pass --script=PATH or --python-module=NAME");
  std::cout << gcloud::render_dockerfile(spec.dockerfile_spec()) << std::flush;
}

// What every build starts from: the plan of gcloud's Dockerfile, where the base is read, the cache.
imagebuild::BuildRequest request_for(const gcloud::LocalRunSpec& spec, const BuildFlags& bf) {
  if (bf.jobs < 1 || bf.jobs > 32) throw Error("--jobs must be between 1 and 32");
  if (bf.http_timeout < 1 || bf.http_timeout > 86400)
    throw Error("--http-timeout must be between 1 and 86400 seconds, not " + std::to_string(bf.http_timeout),
                "it is how long one request may go without progress; the default is 60");
  imagebuild::BuildRequest req;
  req.package_dir = spec.package_dir;
  req.base_name = spec.executor_image_uri;
  std::string base_text = bf.base_source.empty() ? spec.executor_image_uri : bf.base_source;
  req.base_location = transports::parse_image_location_or_throw(
      base_text, bf.base_source.empty() ? "--executor-image-uri" : "--base-source", /*bare_is_registry=*/true);
  // Absolute, as the cache directory below: local-run's runc unpacker reads the base's blobs from another directory.
  if (!req.base_location.path.empty()) req.base_location.path = fs::absolute(req.base_location.path).lexically_normal();
  if (spec.builds_image()) req.steps = gcloud::plan_steps(plan_input(spec));
  // Absolute from the start: parts of a build change directory (the runc unpacker) and must still find it.
  fs::path cache = bf.cache_dir.empty() ? store::default_cache_dir(&std::cerr) : fs::path(bf.cache_dir);
  req.cache_dir = fs::absolute(cache).lexically_normal();
  req.cache_max_size = cache_cap_setting(bf.cache_max_size);
  if (!bf.cache_repo.empty()) req.cache_repo = imagebuild::parse_cache_repo(bf.cache_repo);
  req.platform = image::Platform::parse(bf.platform.empty() ? "linux/amd64" : bf.platform);
  req.platform_required = !bf.platform.empty();
  req.mtime = layers::default_layer_mtime();
  // --compression-level asks for zlib at that level (gzip's own scale); otherwise ISA-L at GzipOptions' level. For
  // zstd, it is zstd's level.
  if (bf.compression == "zstd") {
    req.compression = layers::LayerCompression::kZstd;
    if (bf.compression_level) req.zstd.level = *bf.compression_level;
  } else if (bf.compression_level) {
    req.gzip = {.engine = layers::DeflateEngine::kZlib, .level = *bf.compression_level};
  }
  req.jobs = bf.jobs;
  if (!bf.index_url.empty()) req.python.index_url = bf.index_url;
  req.python.extra_index_urls = bf.extra_index_urls;
  for (const auto& f : bf.find_links) {
    std::error_code ec;
    // A local directory is read on the host: make it absolute so it does not depend on pip's /usr/app.
    req.python.find_links.push_back(fs::exists(f, ec) ? fs::absolute(f).string() : f);
  }
  req.python.no_compile = bf.no_compile;
  req.python.break_system_packages = bf.break_system_packages;
  req.python.build_python = bf.build_python == "host"    ? imagebuild::BuildPython::kHost
                            : bf.build_python == "image" ? imagebuild::BuildPython::kImage
                                                         : imagebuild::BuildPython::kAuto;
  if (bf.build_timeout < 1 || bf.build_timeout > 604800)
    throw Error("--build-timeout must be between 1 and 604800 seconds, not " + std::to_string(bf.build_timeout),
                "it is how long one setup.py or build backend call may run");
  req.python.build_timeout = std::chrono::seconds(bf.build_timeout);
  if (bf.own_layer_mb < 0) throw Error("--own-layer-mb must not be negative");
  req.python.separate_layer_bytes = static_cast<std::uint64_t>(bf.own_layer_mb) << 20;
  req.python.jobs = bf.jobs;
  return req;
}

// The run's network: one HttpClient and one set of Google credentials, shared by registry access (the base, the
// outputs) and the pip steps' index client. Members are destroyed in reverse order: users before the client.
struct Network {
  std::unique_ptr<net::HttpClient> http;
  std::shared_ptr<net::DefaultGoogleCredentials> google;
  std::unique_ptr<registry::Registries> registries;
};

net::HttpOptions http_options(const BuildFlags& bf) {
  net::HttpOptions http;
  http.insecure_hosts = bf.insecure_registries;
  if (!bf.ca_file.empty()) http.ca_file = bf.ca_file;
  http.http1_only = bf.http1_only;
  http.timeout = std::chrono::seconds(bf.http_timeout);
  http.user_agent = std::string("trainpack/") + TRAINPACK_VERSION;
  return http;
}

Network make_network(const BuildFlags& bf) {
  Network network;
  network.http = std::make_unique<net::HttpClient>(http_options(bf));
  network.google = std::make_shared<net::DefaultGoogleCredentials>(net::google_adc_options(*network.http));
  network.registries =
      std::make_unique<registry::Registries>(*network.http, registry::Keychain::from_environment(network.google));
  return network;
}

// Makes the run's network and hands it to the request (registry access and the pip steps).
Network network_for(imagebuild::BuildRequest& req, const BuildFlags& bf) {
  Network network = make_network(bf);
  req.registries = network.registries.get();
  req.python.http = network.http.get();
  req.python.google = network.google;
  return network;
}

// A file the build writes besides its outputs (--digest-file, --job-spec-out) is opened before any work starts, so
// that one that cannot be written fails first (a FIFO is opened as `> FILE` opens it: its reader waits for the end).
std::optional<OutputFile> open_side_output(const std::string& path, const std::string& flag) {
  if (path.empty()) return std::nullopt;
  try {
    return std::optional<OutputFile>(std::in_place, path);
  } catch (const Error& e) {
    throw Error(flag + ": " + e.what(), e.hint());
  }
}

// {"base": s, ..., "output": s, "total": s}: every phase, 0 when it did not occur; seconds to the millisecond.
json timings_json(const imagebuild::PhaseTimes& times) {
  auto ms = [](double seconds) { return std::round(seconds * 1000) / 1000; };
  json j = json::object();
  for (std::size_t k = 0; k < imagebuild::kPhaseCount; ++k)
    j[std::string(imagebuild::phase_name(imagebuild::Phase(k)))] = ms(times.seconds[k]);
  j["total"] = ms(times.total);
  return j;
}

// The outputs a build writes: --output as given, else gcloud's --output-image-uri pushed when it names a registry.
// An oci: output without a tag gets local-run's and keeps its one manifest (no SBOM or provenance beside it).
void add_outputs(imagebuild::BuildRequest& req, const gcloud::LocalRunSpec& spec, const BuildFlags& bf) {
  std::vector<std::string> outputs = bf.outputs;
  if (outputs.empty()) {
    // gcloud's --output-image-uri names where the image goes; with a registry host in it, that means a push.
    if (spec.output_image_generated || !registry::starts_with_registry(spec.output_image))
      throw Error("nowhere to put the image: no --output, and no --output-image-uri naming a registry",
                  "pass --output-image-uri=REGISTRY/REPOSITORY:TAG to push, or --output=oci:DIR or "
                  "--output=docker-archive:FILE");
    outputs.push_back("docker://" + spec.output_image);
  }
  for (const auto& o : outputs) {
    transports::ImageLocation loc = transports::parse_image_location_or_throw(o, "--output");
    if (loc.ref.empty()) {
      loc.ref = loc.transport == "oci" ? oci_tag_for(spec) : spec.output_image;
      if (loc.transport == "oci") req.outputs_without_attachments.insert(loc.str());
    }
    req.outputs.push_back(loc);
  }
}

bool pushes_any(const imagebuild::BuildRequest& req) {
  return std::any_of(req.outputs.begin(), req.outputs.end(), [](const auto& o) { return o.is_registry(); });
}

// The choices and levels of the flags `build` has beyond local-run's.
void check_build_flags(const BuildFlags& bf) {
  check_choice("--compression", bf.compression, {"gzip", "zstd"});
  check_choice("--format", bf.format, {"text", "json"});
  int max_level = bf.compression == "zstd" ? 19 : 9;
  if (bf.compression_level && (*bf.compression_level < 1 || *bf.compression_level > max_level))
    throw Error("--compression-level must be between 1 and " + std::to_string(max_level) + " for " + bf.compression +
                    ", not " + std::to_string(*bf.compression_level),
                "leave it out for the fast default");
}

// The side files that name a pushed image need one; the job spec's flags are checked before any work.
void check_side_files(const imagebuild::BuildRequest& req, const BuildFlags& bf, const gcloud::JobSpecOptions& job,
                      const std::string& job_spec_out) {
  if (!job_spec_out.empty()) {
    if (!pushes_any(req))
      throw Error("--job-spec-out needs an image in a registry, and this build pushes none",
                  "add --output-image-uri=REGISTRY/REPOSITORY:TAG (Vertex AI pulls the image from there)");
    gcloud::JobSpecOptions check = job;  // every job flag is validated before any work, with a placeholder digest
    check.image_uri = "registry.invalid/check@sha256:" + std::string(64, '0');
    gcloud::make_job_spec(check);
  }
  if (!bf.image_name_with_digest_file.empty() && !pushes_any(req))
    throw Error("--image-name-with-digest-file names pushed images, and this build pushes none",
                "add --output=docker://REGISTRY/REPOSITORY:TAG, or use --digest-file for the digest alone");
}

// `trainpack build`'s request: local-run's, with the outputs, what is added to the image and how it is attested.
imagebuild::BuildRequest build_request(const gcloud::LocalRunSpec& spec, const gcloud::LocalRunFlags& flags,
                                       const BuildFlags& bf) {
  imagebuild::BuildRequest req = request_for(spec, bf);
  add_outputs(req, spec, bf);
  apply_image_metadata(req, bf);
  req.dry_run = bf.dry_run;
  req.refresh_pip_steps = bf.refresh_pip_steps;
  req.fail_on_secrets = bf.fail_on_secrets;
  req.sbom = *imagebuild::parse_sbom_format(bf.sbom);
  req.provenance = bf.provenance == "slsa";
  req.parameters = build_parameters(flags, bf);
  req.ci = ci_run(process_environment());
  return req;
}

// A dry run's plan as --format=json prints it: the layers a build would make, and what it would do with each.
json dry_run_json(const imagebuild::BuildRequest& req, const imagebuild::BuildResult& result) {
  json plan{{"dry_run", true},
            {"base", {{"name", req.base_name}, {"digest", result.base_digest}}},
            {"excluded", result.excluded},
            {"secrets", secrets_json(result.secrets)},
            {"layers", json::array()},
            {"timings", timings_json(result.timings)}};
  for (const auto& l : result.layers) {
    if (l.origin != "planned") continue;
    json lj{{"created_by", l.instruction}, {"entries", l.entries}, {"plan", l.plan}, {"files", l.files}};
    if (l.plan != "build") lj.update({{"digest", l.digest.str()}, {"diff_id", l.diff_id.str()}, {"size", l.size}});
    plan["layers"].push_back(lj);
  }
  return plan;
}

// A build's result as --format=json prints it.
json result_json(const gcloud::LocalRunSpec& spec, const imagebuild::BuildRequest& req,
                 const imagebuild::BuildResult& result) {
  json j{{"manifest_digest", result.manifest_digest.str()},
         {"manifest_size", result.manifest_size},
         {"config_digest", result.config_digest.str()},
         {"base", {{"name", req.base_name}, {"digest", result.base_digest}}},
         {"image", spec.output_image},
         {"outputs", result.outputs},
         {"pushed", result.pushed},
         {"tags", result.tags},
         {"blobs", {{"existing", result.blobs_existing}, {"mounted", result.blobs_mounted},
                    {"uploaded", result.blobs_uploaded}, {"bytes_uploaded", result.bytes_uploaded}}},
         {"layers_built", result.layers_built},
         {"layers_cached", result.layers_cached},
         {"layers", json::array()},
         {"secrets", secrets_json(result.secrets)},
         {"attached", json::array()},
         {"not_attached", json::array()},
         {"timings", timings_json(result.timings)}};
  for (const imagebuild::BuildResult::Attached& a : result.attached)
    j["attached"].push_back({{"artifact_type", a.artifact_type}, {"digest", a.digest.str()}});
  for (const imagebuild::BuildResult::NotAttached& n : result.not_attached)
    j["not_attached"].push_back({{"output", n.output}, {"reason", n.reason}});
  for (const auto& l : result.layers) {
    json lj{{"digest", l.digest.str()}, {"size", l.size}, {"media_type", l.media_type}, {"origin", l.origin}};
    if (!l.diff_id.empty()) lj["diff_id"] = l.diff_id.str();
    if (l.origin != "base") {
      lj["created_by"] = l.instruction;
      lj["entries"] = l.entries;
    }
    j["layers"].push_back(lj);
  }
  return j;
}

// The files a build writes besides its outputs (--digest-file, --image-name-with-digest-file, --job-spec-out),
// opened before any work starts so that one that cannot be written fails first.
struct SideOutputs {
  std::optional<OutputFile> digest, names, job_spec;

  SideOutputs(const BuildFlags& bf, const std::string& job_spec_out)
      : digest(open_side_output(bf.digest_file, "--digest-file")),
        names(open_side_output(bf.image_name_with_digest_file, "--image-name-with-digest-file")),
        job_spec(open_side_output(job_spec_out, "--job-spec-out")) {}

  // Written after the image is committed (pushed or written), so a failure here cannot undo it: returns the first
  // that failed ("--digest-file CAUSE"), or "".
  std::string write(const imagebuild::BuildResult& result, gcloud::JobSpecOptions job) {
    std::string failed;
    auto write_one = [&failed](const std::string& flag, OutputFile& file, const std::string& text) {
      try {
        file.write(text);
        file.commit();
      } catch (const Error& e) {
        if (failed.empty()) failed = flag + " " + e.what();
      }
    };
    if (digest) write_one("--digest-file", *digest, result.manifest_digest.str() + "\n");
    if (names) write_one("--image-name-with-digest-file", *names, image_names_with_digest(result));
    if (job_spec) {
      job.image_uri = result.pushed.front();  // REGISTRY/REPOSITORY@sha256:…, pinned by digest
      write_one("--job-spec-out", *job_spec, gcloud::job_spec_text(job));
    }
    return failed;
  }
};

// What a build prints on stdout: its JSON, else the pushed references (and tags asked for), else the digest.
void print_result(const BuildFlags& bf, const imagebuild::BuildResult& result, const json& j) {
  if (bf.format == "json") {
    std::cout << j.dump(2) << "\n";
  } else if (!result.pushed.empty()) {
    for (const auto& ref : result.pushed) std::cout << ref << "\n";
    if (!bf.tags.empty())
      for (const auto& ref : result.tags) std::cout << ref << "\n";
  } else {
    std::cout << result.manifest_digest.str() << "\n";
  }
}

void run_build_command(const gcloud::LocalRunFlags& flags, const BuildFlags& bf, gcloud::JobSpecOptions job,
                       const std::string& job_spec_out) {
  check_build_flags(bf);
  gcloud::LocalRunSpec spec = gcloud::validate_local_run(flags);
  if (!spec.builds_image())
    throw Error("nothing to build: neither --script nor --python-module was given",
                "pass --script=PATH or --python-module=NAME");
  imagebuild::BuildRequest req = build_request(spec, flags, bf);
  check_side_files(req, bf, job, job_spec_out);
  Network network = network_for(req, bf);
  SideOutputs side(bf, job_spec_out);

  // A dry run's plan is the command's output (stdout); a build's progress goes to stderr.
  const imagebuild::Progress::Mode mode =
      bf.dry_run && !bf.quiet ? imagebuild::Progress::Mode::kPlain : imagebuild::Progress::detect(bf.quiet);
  imagebuild::Progress progress(mode, bf.verbose, bf.dry_run ? std::cout : std::cerr);
  imagebuild::BuildResult result = imagebuild::run_build(req, progress);
  if (bf.verbose && !bf.quiet) {  // on stderr even in a dry run, whose progress is its plan on stdout
    progress.finish();
    std::cerr << "timings: " << result.timings.summary() << "\n";
  }
  if (bf.dry_run) {
    if (bf.format == "json") std::cout << dry_run_json(req, result).dump(2) << "\n";
    return;
  }
  json j = result_json(spec, req, result);
  if (!job_spec_out.empty()) j["job_spec"] = job_spec_out;
  const std::string side_error = side.write(result, std::move(job));
  print_result(bf, result, j);
  if (!side_error.empty())
    throw Error("the image is built and in every --output (" + result.manifest_digest.str() + "), but writing " +
                    side_error,
                "the image stands as printed above; only that file is missing");
}

// gcloud ai custom-jobs local-run: build (when --script or --python-module is given), then run the image with the
// arguments after --, through docker or podman when one answers, else daemonless with runc.
void run_local_run(const gcloud::LocalRunFlags& flags, const BuildFlags& bf, const localrun::RunFlags& rf) {
  localrun::check_run_flags(rf, flags.gpu);
  gcloud::LocalRunSpec spec = gcloud::validate_local_run(flags);
  std::cerr << "Package is set to " << spec.package_dir.string() << ".\n";
  imagebuild::BuildRequest req = request_for(spec, bf);
  Network network = network_for(req, bf);
  localrun::RunOptions run = localrun::run_options(rf, spec.service_account_key_file, spec.gpu);
  run.engine = localrun::settle_engine(rf, spec.gpu);  // an engine that cannot run it is found before the build

  std::shared_ptr<const image::Image> image;
  // Open until the container ends: what the image reads from the cache is not pruned meanwhile.
  store::CacheDir cache(req.cache_dir);
  // Outlives the build: the image's base blobs are downloaded when run_image unpacks them, with a row each.
  imagebuild::Progress progress(imagebuild::Progress::detect(bf.quiet), bf.verbose, std::cerr);
  if (spec.builds_image()) {
    imagebuild::BuildResult built = imagebuild::run_build(req, progress);
    progress.detail("timings: " + built.timings.summary());
    image = built.image;
    run.entrypoint_found = built.entrypoint_found;
    std::cerr << "A training image is built.\n";
    run.image_name = spec.output_image;
  } else {
    image = imagebuild::open_image(req.base_location, req.platform, cache.blobs(), req.registries,
                                   req.platform_required);
    run.image_name = spec.executor_image_uri;
  }
  run.layer_trees = localrun::LayerTreeCache{cache.area(store::CacheKind::kLayerTrees), cache.temp_dir()};
  run.progress = [&progress](const std::string& line) { progress.line(line); };
  run.detail = [&progress](const std::string& line) { progress.detail(line); };
  localrun::run_image(*image, run, cache.run_dir());
}

void add_cache_max_size_flag(CLI::App& cmd, BuildFlags& bf) {
  cmd.add_option("--cache-max-size", bf.cache_max_size,
                 "After the build, remove least recently used cache entries while the cache holds more than SIZE "
                 "(20GB, 1.5GiB; none: never; default: TRAINPACK_CACHE_MAX_SIZE, else the smaller of 20 GiB and a "
                 "quarter of its filesystem)");
}

// Like gcloud's flags: a repeated single-value flag takes the last value.
void take_last_value(CLI::App& cmd) {
  for (CLI::Option* opt : cmd.get_options())
    if (opt->get_items_expected_max() == 1) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

CLI::App* add_subcommand_with_local_run_flags(CLI::App& app, const std::string& name, const std::string& description,
                                              gcloud::LocalRunFlags& flags) {
  CLI::App* cmd = app.add_subcommand(name, description);
  gcloud::add_local_run_flags(*cmd, flags);
  return cmd;
}

CLI::App* add_build_command(CLI::App& app, gcloud::LocalRunFlags& build_flags, BuildFlags& bf,
                            gcloud::JobSpecOptions& job,
                            std::string& job_spec_out) {
  CLI::App* build = add_subcommand_with_local_run_flags(
      app, "build", "Build the image gcloud's Dockerfile describes, without Docker; push it or write it to --output",
      build_flags);
  build->add_option("--output", bf.outputs,
                    "Where the image goes: docker://REF, oci:DIR[:TAG] or docker-archive:FILE[:NAME:TAG] (repeatable; "
                    "default: push to --output-image-uri when it names a registry)");
  build->add_option("--base-source", bf.base_source,
                    "Read the base image from docker://REF, oci:DIR[:TAG] or docker-archive:FILE[:NAME:TAG] "
                    "(default: --executor-image-uri, a registry reference or such a location)");
  build->add_option("--cache-dir", bf.cache_dir, "Blob store and layer cache (default: ~/.cache/trainpack)");
  add_cache_max_size_flag(*build, bf);
  build->add_option("--cache-repo", bf.cache_repo,
                    "Share the pip steps and base scans through this registry repository (REGISTRY/REPOSITORY; the "
                    "push's credentials): a runner with an empty --cache-dir reuses what another stored there. "
                    "Entries are tags pip-* and facts-*; delete them to expire them");
  build->add_option("--platform", bf.platform, "Platform to pick from a multi-platform base (default linux/amd64)");
  build->add_option("--format", bf.format, "Result on stdout: text (the manifest digest) or json")
      ->type_name("{text,json}");
  build->add_option("--digest-file", bf.digest_file, "Also write the manifest digest to this file");
  build->add_option("--compression", bf.compression,
                    "Compression of new layers: gzip (default; every client reads it) or zstd (smaller and faster to "
                    "unpack; docker 23+, containerd 1.5+, podman)")
      ->type_name("{gzip,zstd}");
  build->add_option_function<int>(
      "--compression-level", [&bf](int level) { bf.compression_level = level; },
      "gzip: compress new layers with zlib at this level, 1-9 (default: ISA-L, level 2); zstd: its level, 1-19 "
      "(default 3)");
  build->add_flag("--quiet,-q", bf.quiet, "No progress lines on stderr");
  build->add_flag("--verbose,-v", bf.verbose, "More detail in the progress lines");
  build->add_option("--insecure-registry", bf.insecure_registries,
                    "Talk plain HTTP to this registry host[:port] (localhost and 127.0.0.0/8 always are); repeatable");
  build->add_option("--ca-file", bf.ca_file, "Also trust the CA certificates in this PEM file for registries");
  build->add_flag("--http1.1", bf.http1_only, "Use HTTP/1.1 only (some proxies mishandle HTTP/2)");
  build->add_option("--jobs", bf.jobs, "Parallel blob uploads (default 4)");
  add_network_flags(*build, bf);
  build->add_flag("--dry-run", bf.dry_run,
                  "Show each new layer (to build, reused from the layer cache, or already in the registry) with its "
                  "files, and the paths .dockerignore excludes; write nothing");
  build->add_flag("--refresh-pip-steps", bf.refresh_pip_steps,
                  "Resolve and install every pip step again, even one whose inputs are unchanged since it last ran");
  build->add_option("--sbom", bf.sbom,
                    "Attach an SBOM of the image (its base's OS and Python packages, what the pip steps installed "
                    "with URL and sha256, the trainer's files) as an OCI referrer: spdx (SPDX 2.3 JSON, the default), "
                    "cyclonedx (CycloneDX 1.6 JSON) or none. The image and its digest stay the same")
      ->check(CLI::IsMember({"spdx", "cyclonedx", "none"}))
      ->type_name("{spdx,cyclonedx,none}");
  build->add_option("--provenance", bf.provenance,
                    "Attach a SLSA v1 provenance statement (flags, base digest, every downloaded artifact's sha256, "
                    "the CI run) as an OCI referrer: slsa (the default) or none")
      ->check(CLI::IsMember({"slsa", "none"}))
      ->type_name("{slsa,none}");
  build->add_flag("--fail-on-secrets", bf.fail_on_secrets,
                  "Fail, before anything is pushed or written, when files the image would copy from the package path "
                  "look like credentials (service-account keys, private keys, .env secrets, ...); without it each is "
                  "a warning. A .dockerignore entry leaves such a file out");
  add_python_flags(*build, bf);
  add_image_metadata_flags(*build, bf);
  gcloud::add_job_spec_flags(*build, job, job_spec_out);
  take_last_value(*build);
  return build;
}

CLI::App* add_local_run_command(CLI::App& app, gcloud::LocalRunFlags& lr_flags, BuildFlags& lr_bf,
                                localrun::RunFlags& lr) {
  CLI::App* local_run = add_subcommand_with_local_run_flags(
      app, "local-run",
      "Build like gcloud ai custom-jobs local-run, then run the trainer with the arguments after --", lr_flags);
  local_run->add_option("--base-source", lr_bf.base_source, "Read the base image from this location instead");
  local_run->add_option("--cache-dir", lr_bf.cache_dir, "Blob store and layer cache (default: ~/.cache/trainpack)");
  add_cache_max_size_flag(*local_run, lr_bf);
  local_run->add_option("--platform", lr_bf.platform, "Platform to pick from a multi-platform base");
  local_run->add_option("--insecure-registry", lr_bf.insecure_registries, "Plain HTTP to this registry; repeatable");
  local_run->add_option("--ca-file", lr_bf.ca_file, "Also trust these CA certificates for registries");
  local_run->add_flag("--quiet,-q", lr_bf.quiet, "No progress lines on stderr (the build's and the run's)");
  local_run->add_flag("--verbose,-v", lr_bf.verbose, "More detail in the progress lines, with each step's time");
  add_network_flags(*local_run, lr_bf);
  add_python_flags(*local_run, lr_bf);
  localrun::add_run_flags(*local_run, lr);
  take_last_value(*local_run);
  return local_run;
}

}  // namespace

// `trainpack sbom IMAGE`: what an image says of itself (its attached SBOM or provenance), or an SBOM computed from
// its layers.
struct SbomFlags {
  std::string image;
  bool generate = false;
  bool provenance = false;
  bool all = false;    // every attached one, not only the newest
  std::string format;  // "", spdx, cyclonedx
  BuildFlags network;  // --platform, --cache-dir and the registry flags
};

CLI::App* add_sbom_command(CLI::App& app, SbomFlags& f) {
  CLI::App* cmd = app.add_subcommand(
      "sbom", "Print the SBOM attached to an image (trainpack build attaches one), or with --generate compute one "
              "from the layers of any image");
  cmd->add_option("image", f.image,
                  "The image: REGISTRY/REPOSITORY[:TAG|@DIGEST], docker://REF, oci:DIR[:TAG] or docker-archive:FILE")
      ->required();
  cmd->add_flag("--generate", f.generate,
                "Compute the SBOM from the image's layers (its OS package database and Python distributions; the "
                "layers are downloaded and scanned once, then cached) instead of printing the attached one");
  cmd->add_flag("--provenance", f.provenance, "Print the attached SLSA provenance statement instead of the SBOM");
  cmd->add_flag("--all", f.all,
                "Print every attached one (each rebuild in another CI run attaches its own statement), newest "
                "first, as a JSON array of {referrer, artifactType, time, document}; without it the newest is "
                "printed as attached");
  cmd->add_option("--format", f.format,
                  "spdx or cyclonedx: which attached SBOM to print (default: whichever is attached), or what "
                  "--generate writes (default spdx)")
      ->check(CLI::IsMember({"spdx", "cyclonedx"}))
      ->type_name("{spdx,cyclonedx}");
  cmd->add_option("--platform", f.network.platform,
                  "Platform to pick from a multi-platform image (default linux/amd64)");
  cmd->add_option("--cache-dir", f.network.cache_dir, "Blob store and scan cache (default: ~/.cache/trainpack)");
  cmd->add_option("--insecure-registry", f.network.insecure_registries,
                  "Talk plain HTTP to this registry host[:port] (localhost and 127.0.0.0/8 always are); repeatable");
  cmd->add_option("--ca-file", f.network.ca_file, "Also trust the CA certificates in this PEM file for registries");
  add_network_flags(*cmd, f.network);
  take_last_value(*cmd);
  return cmd;
}

// `trainpack sbom --all`: every attachment asked for, newest first, as [{"referrer", "artifactType", "time",
// "document"}]; "time" is null when the document gives none.
json attachments_json(const std::vector<imagebuild::Attachment>& attached) {
  json list = json::array();
  for (const imagebuild::Attachment& a : attached)
    list.push_back({{"referrer", a.referrer.str()},
                    {"artifactType", a.type},
                    {"time", a.time.empty() ? json() : json(a.time)},
                    {"document", json::parse(a.content)}});
  return list;
}

void run_sbom(const SbomFlags& f) {
  if (f.generate && f.provenance)
    throw Error("--generate computes an SBOM; a provenance statement can only be read from the image",
                "leave out one of --generate and --provenance");
  if (f.generate && f.all)
    throw UsageError("--all lists the SBOMs attached to the image; --generate computes one",
                     "leave out one of --generate and --all");
  transports::ImageLocation location = transports::parse_image_location_or_throw(f.image, "IMAGE", true);
  Network network = make_network(f.network);
  fs::path cache = fs::absolute(f.network.cache_dir.empty() ? store::default_cache_dir(&std::cerr)
                                                            : fs::path(f.network.cache_dir));
  store::CacheDir cache_dir(cache);
  const store::BlobStore& store = cache_dir.blobs();
  image::Platform platform = image::Platform::parse(f.network.platform.empty() ? "linux/amd64" : f.network.platform);
  std::shared_ptr<const image::Image> image =
      imagebuild::open_image(location, platform, store, network.registries.get(), !f.network.platform.empty());
  if (f.generate) {
    imagebuild::SbomFormat format =
        f.format == "cyclonedx" ? imagebuild::SbomFormat::kCycloneDx : imagebuild::SbomFormat::kSpdx;
    std::cout << imagebuild::sbom_json(imagebuild::generated_sbom(image, f.image, cache_dir), format) << std::flush;
    return;
  }
  std::vector<std::string> types;
  if (f.provenance) types = {std::string(imagebuild::kInTotoType)};
  else if (f.format == "cyclonedx") types = {std::string(imagebuild::kCycloneDxType)};
  else if (f.format == "spdx") types = {std::string(imagebuild::kSpdxType)};
  else types = {std::string(imagebuild::kSpdxType), std::string(imagebuild::kCycloneDxType)};
  transports::OpenContext context{platform, store, network.registries.get(), {}};
  std::vector<imagebuild::Attachment> checked;
  for (const image::AttachedDocument& found :
       transports::read_attached(location, context, image->manifest_digest(), types))
    if (std::optional<imagebuild::Attachment> a = imagebuild::checked_attachment(found, image->manifest_digest()))
      checked.push_back(*a);
  std::vector<imagebuild::Attachment> shown = imagebuild::newest_first(std::move(checked), types, f.all);
  if (shown.empty())
    throw Error(f.image + " has no " + (f.provenance ? "provenance statement" : f.format.empty() ? "SBOM" : f.format +
                " SBOM") + " attached",
                f.provenance ? "trainpack build attaches one unless --provenance=none"
                             : "trainpack sbom --generate " + f.image + " computes one from its layers");
  if (f.all) {
    std::cout << attachments_json(shown).dump(2) << "\n" << std::flush;
    return;
  }
  if (std::string note = imagebuild::choice_note(shown); !note.empty())
    std::cerr << "trainpack: note: " << note << "\n";
  std::cout << shown.front().content << std::flush;
}

namespace {

// A message as it is printed: every password it quotes masked, and on one line, whatever names it quotes (a hint may
// have several lines of its own).
std::string shown(std::string_view text) { return visible_text(mask_userinfo(text)); }
std::string shown_lines(std::string_view text) { return visible_lines(mask_userinfo(text)); }

int report_error(const Error& e, int exit_code) {
  std::cout << std::flush;
  std::cerr << "trainpack: error: " << shown(e.what()) << "\n";
  if (!e.hint().empty()) std::cerr << "hint: " << shown_lines(e.hint()) << "\n";
  return exit_code;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"trainpack: build Vertex AI trainer images without a Docker daemon", "trainpack"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);

  gcloud::LocalRunFlags df_flags;
  CLI::App* dockerfile = add_subcommand_with_local_run_flags(
      app, "dockerfile", "Print the Dockerfile gcloud ai custom-jobs local-run would generate for these flags",
      df_flags);
  gcloud::LocalRunFlags build_flags;
  BuildFlags bf;
  gcloud::JobSpecOptions job;
  std::string job_spec_out;
  CLI::App* build = add_build_command(app, build_flags, bf, job, job_spec_out);
  gcloud::LocalRunFlags lr_flags;
  BuildFlags lr_bf;
  localrun::RunFlags lr;
  CLI::App* local_run = add_local_run_command(app, lr_flags, lr_bf, lr);
  gcloud::add_job_spec_command(app);
  SbomFlags sbom_flags;
  CLI::App* sbom = add_sbom_command(app, sbom_flags);
  add_cache_command(app);
  add_doc_commands(app);
  document_cli(app);

  try {
    gcloud::parse_like_argparse(app, argc, argv);
    // The flags are parsed into strings of their own: passwords in --index-url, references and the like leave
    // /proc/PID/cmdline, which every user (among them the one running a project's setup.py) may read.
    blank_secret_arguments(argc, argv);
    if (dockerfile->parsed()) run_dockerfile(df_flags);
    else if (build->parsed()) run_build_command(build_flags, bf, job, job_spec_out);
    else if (local_run->parsed()) run_local_run(lr_flags, lr_bf, lr);
    else if (sbom->parsed()) run_sbom(sbom_flags);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const gcloud::UnknownArgument& e) {
    std::cerr << "trainpack: error: " << shown(e.what()) << "\n"
              << "hint: " << shown_lines(e.hint()) << "\n";
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    std::cerr << "trainpack: error: " << shown(e.what()) << "\n"
              << "hint: see trainpack --help, or trainpack COMMAND --help\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    return report_error(e, kExitUsage);
  } catch (const localrun::RunError& e) {
    // gcloud's local-run exits with the status of its `docker run` (googlecloudsdk/command_lib/ai/docker/run.py
    // RunContainer raises DockerError(exit_code=return_code), calliope/exceptions.py _Exit does
    // sys.exit(exc.exit_code)): the trainer's own status, which a script running local-run may act on.
    return report_error(e, e.exit_code() > 0 && e.exit_code() < 256 ? e.exit_code() : 1);  // a status is one byte
  } catch (const Error& e) {
    return report_error(e, 1);
  } catch (const std::exception& e) {
    std::cerr << "trainpack: internal error: " << shown(e.what()) << "\n";
    return kExitInternal;
  }
  return 0;
}

}  // namespace trainpack::cli
