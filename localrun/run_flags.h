#pragma once
// The flags only `trainpack local-run` has: how the image runs (engine, the trainer's arguments, Vertex AI's AIP_*
// directories), not what is built. The build flags it shares with `trainpack build` stay with cli/cli.cpp.
#include <string>
#include <vector>

#include "localrun/runner.h"

namespace CLI {
class App;
}

namespace trainpack::localrun {

struct RunFlags {
  std::vector<std::string> args;  // after --
  std::string engine = "auto";
  bool aip_env = false;
  std::string aip_dir = "aip-output";
};

// Registers --engine, --aip-env, --aip-dir and the positional trainer arguments on `cmd`, writing into `flags`
// (which must outlive parsing).
void add_run_flags(CLI::App& cmd, RunFlags& flags);

// The run flags checked before anything is built: --engine names an engine, and --gpu is not asked of runc, which
// runs without GPU support. Throws UsageError.
void check_run_flags(const RunFlags& flags, bool gpu);

// The engine this run uses (choose_engine's pick for --engine), settled before anything is built: throws Error when
// the one asked for does not answer, or when --gpu leaves auto with no engine that has GPU support.
std::string settle_engine(const RunFlags& flags, bool gpu);

// How gcloud's run goes for these flags: the arguments and engine; the key it is given (--service-account-key-file),
// else the user's application default credentials when that file exists; with --aip-env, AIP_MODEL_DIR,
// AIP_CHECKPOINT_DIR and AIP_TENSORBOARD_LOG_DIR set to directories made under --aip-dir and mounted. The image
// name is left for the caller. Throws Error when a directory cannot be made.
RunOptions run_options(const RunFlags& flags, const std::string& service_account_key_file, bool gpu);

}  // namespace trainpack::localrun
