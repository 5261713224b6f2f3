#pragma once
// The build plan: the instructions of gcloud's Dockerfile as data, in the Dockerfile's order. Each step says
// what it does to the filesystem or the config; imagebuild/build.cpp carries them out without running anything.
#include <string>
#include <variant>
#include <vector>

#include "gcloud/dockerfile.h"  // kWorkdir, kHome

namespace trainpack::gcloud {

// What the plan is derived from (the validated local-run flags).
struct PlanInput {
  bool prebuilt = false;            // gcloud's Vertex prebuilt-image rule matched
  bool has_setup_py = false;        // <package>/setup.py is a file
  bool has_requirements_txt = false;
  std::vector<std::string> extra_packages;  // as given (context-relative)
  std::vector<std::string> requirements;
  std::vector<std::string> extra_dirs;
  std::string main_dir;                  // the script's parent dir as in the COPY line, "." for a root script
  std::vector<std::string> entrypoint;   // argv
};

// RUN mkdir -m 777 -p DIRS...
struct MkdirStep {
  std::vector<std::string> dirs;
};
// WORKDIR DIR
struct WorkdirStep {
  std::string dir;
};
// ENV KEY=VALUE
struct EnvStep {
  std::string key;
  std::string value;
};
// RUN rm -rf PATH
struct RemovePathStep {
  std::string path;
};
// COPY ["SRC", "DEST"]: SRC relative to the package dir, DEST to the work dir.
struct CopyStep {
  std::string src;
  std::string dest;
};
// ENTRYPOINT [ARGV...]
struct EntrypointStep {
  std::vector<std::string> argv;
};

// What a `RUN pip install` step installs: the project of setup.py (`pip install .`), ...
struct ProjectSource {
  std::string dir;  // "."
};
// ... a requirements file (`-r ./requirements.txt`), ...
struct RequirementsFileSource {
  std::string path;  // "./requirements.txt", relative to the work dir
};
// ... an --extra-packages file, copied into the work dir under its base name first, ...
struct ExtraPackageSource {
  std::string given;  // the flag's value, relative to the package dir: "dist/x.whl"
  std::string file;   // its base name, relative to the work dir: "x.whl"
};
// ... or a --requirements specifier (`--upgrade`).
struct RequirementSource {
  std::string requirement;  // "pandas==1.2.0"
};
using PipSource = std::variant<ProjectSource, RequirementsFileSource, ExtraPackageSource, RequirementSource>;

// RUN pip[3] install --no-cache-dir ...
struct PipInstallStep {
  PipSource source;
  bool pip3 = false;  // gcloud runs pip3 (and python3) on Vertex prebuilt images, pip elsewhere

  // How the step names what it installs in messages: "requirements.txt", "--extra-packages dist/x.whl"...
  std::string description() const;
};

using Instruction =
    std::variant<MkdirStep, WorkdirStep, EnvStep, RemovePathStep, CopyStep, PipInstallStep, EntrypointStep>;

struct BuildStep {
  std::string instruction;  // the Dockerfile line, recorded as history created_by
  Instruction action;       // what it does; dispatch with std::visit (StepVisitor below)
};

// One callable per instruction type for std::visit: std::visit(StepVisitor{[](const CopyStep&) {...}, ...}, action).
template <class... Handlers>
struct StepVisitor : Handlers... {
  using Handlers::operator()...;
};
template <class... Handlers>
StepVisitor(Handlers...) -> StepVisitor<Handlers...>;

std::vector<BuildStep> plan_steps(const PlanInput& input);

// Throws Error when `steps` have a RUN that a base running as `user` (its config's User: "", "uid", "name",
// "uid:gid"...) cannot run, as docker's build of gcloud's Dockerfile cannot: any user but root.
void check_runs_as_root(const std::string& user, const std::vector<BuildStep>& steps);

}  // namespace trainpack::gcloud
