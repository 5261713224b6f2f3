#pragma once
// The build plan: the instructions of gcloud's Dockerfile as data, in the Dockerfile's order. Each step says
// what it does to the filesystem or the config; build.cpp carries them out without running anything.
#include <string>
#include <vector>

namespace trainpack::builder {

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

struct BuildStep {
  enum class Kind { kMkdir, kWorkdir, kEnv, kRemovePath, kCopy, kPipInstall, kEntrypoint };
  Kind kind;
  std::string instruction;        // the Dockerfile line, recorded as history created_by
  std::vector<std::string> args;  // mkdir: dirs; workdir: dir; env: key, value; remove: path; copy: src, dest;
                                  // entrypoint: argv; pip: description, kind ("project",
                                  // "requirements-file", "archive", "requirement" (with --upgrade)), what, "pip"/"pip3"
};

inline constexpr const char* kWorkdir = "/usr/app";
inline constexpr const char* kHome = "/home";

std::vector<BuildStep> plan_steps(const PlanInput& input);

}  // namespace trainpack::builder
