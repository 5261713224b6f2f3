#include "localrun/run_flags.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <system_error>
#include <utility>

#include "support/error.h"
#include "support/suggest.h"

namespace trainpack::localrun {
namespace fs = std::filesystem;

void add_run_flags(CLI::App& cmd, RunFlags& flags) {
  cmd.add_option("--engine", flags.engine, "auto (docker, then podman, then runc), docker, podman or runc (daemonless)")
      ->type_name("{auto,docker,podman,runc}");
  cmd.add_flag("--aip-env", flags.aip_env,
               "Set AIP_MODEL_DIR, AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR to local directories "
               "mounted into the container, as Vertex AI sets them");
  cmd.add_option("--aip-dir", flags.aip_dir, "Where --aip-env's directories are made (default ./aip-output)");
  cmd.add_option("args", flags.args, "Arguments for the trainer, after --");
}

void check_run_flags(const RunFlags& flags, bool gpu) {
  check_choice("--engine", flags.engine, {"auto", "docker", "podman", "runc"});
  if (gpu && flags.engine == "runc")
    throw UsageError("--gpu needs docker or podman: --engine=runc runs the container without GPU support",
                     "use --engine=docker or --engine=podman (with the NVIDIA Container Toolkit), or drop --gpu");
}

std::string settle_engine(const RunFlags& flags, bool gpu) {
  std::string engine = choose_engine(flags.engine);
  if (gpu && engine == "runc")
    throw Error("--gpu needs docker or podman, and neither answers here",
                "start docker or podman (with the NVIDIA Container Toolkit), or drop --gpu");
  return engine;
}

RunOptions run_options(const RunFlags& flags, const std::string& service_account_key_file, bool gpu) {
  RunOptions run;
  run.args = flags.args;
  run.gpu = gpu;
  run.engine = flags.engine;
  // gcloud mounts the key it is given, else the user's ADC file; a default that does not exist is left out rather
  // than turned into a directory by docker.
  run.credentials_file = service_account_key_file;
  if (run.credentials_file.empty()) {
    std::string adc = default_credentials_file();
    std::error_code ec;
    if (!adc.empty() && fs::is_regular_file(adc, ec)) run.credentials_file = adc;
  }
  if (flags.aip_env) {
    // What Vertex AI gives a training container, as local directories mounted into it.
    fs::path root = fs::absolute(flags.aip_dir);
    for (auto [name, sub] : {std::pair{"AIP_MODEL_DIR", "model"}, std::pair{"AIP_CHECKPOINT_DIR", "checkpoints"},
                             std::pair{"AIP_TENSORBOARD_LOG_DIR", "tensorboard"}}) {
      std::error_code ec;
      fs::create_directories(root / sub, ec);
      if (ec) throw Error("cannot create " + (root / sub).string() + ": " + ec.message(), "pass --aip-dir=DIR");
      std::string in_container = std::string("/tmp/aip/") + sub + "/";
      run.extra_env[name] = in_container;
      run.mounts.emplace_back(root / sub, in_container);
    }
  }
  return run;
}

}  // namespace trainpack::localrun
