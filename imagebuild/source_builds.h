#pragma once
// The project in setup.py and sdists turned into what the image's pip would install. python/pip_behaviour.h picks
// pip's build path for a tree (legacy `setup.py install`, `setup.py bdist_wheel`, or an isolated PEP 517 build),
// python/source_build.h runs it with an interpreter of the image's X.Y, and this file supplies what each path
// needs: the interpreter (--build-python), the image's own setuptools and wheel for the paths pip does not
// isolate, an environment of build requirements from the index for PEP 517, and a cache of wheels built from
// sdists. Nothing here runs pip.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "layers/image_filesystem.h"
#include "layers/scanned_image.h"
#include "python/base_facts.h"
#include "python/index_candidates.h"
#include "python/interpreter.h"
#include "python/pip_behaviour.h"

namespace trainpack::imagebuild {

// The candidate source adapter lives in python/ (python/index_candidates.h); the builder names its types unqualified.
using python::BuiltDistribution;
using python::candidate_metadata;
using python::IndexCandidates;
using python::LocalDistribution;
using python::read_wheel_metadata;
using python::SdistBuilder;
using python::tags_for;

// Which interpreter runs builds and compiles bytecode (--build-python).
enum class BuildPython {
  kAuto,   // a host python3.X of the image's X.Y (its exact version preferred), else the base image's own
  kHost,   // only a host one
  kImage,  // always the base image's own, run from the cache
};

// An isolated build environment: the build requirements installed into one directory.
struct IsolatedEnvironment {
  std::filesystem::path dir;  // added with site.addsitedir
  std::string identity;       // what was installed (the wheels' file names): part of a built wheel's cache key
};

// What one pip step knows that its builds need.
struct SourceBuildStep {
  const python::PythonFacts& facts;
  const python::PipBehaviour& pip;
  const layers::ImageFilesystem& fs;   // the image as that step sees it (is setuptools or wheel importable?)
  std::vector<std::string> image_env;  // the step's Env entries a build inherits (PYTHONDONTWRITEBYTECODE, ...)
  // Installs PEP 508 `requirements` for an isolated build into a new directory and returns it (pip's
  // BuildEnvironment: resolved against the step's index, nothing installed in the image counts).
  std::function<IsolatedEnvironment(const std::vector<std::string>& requirements, const std::string& display)>
      install_isolated;
};

class SourceBuilder {
 public:
  SourceBuilder(std::function<const layers::ScannedImage&()> base, const store::CacheDir& cache,
                std::filesystem::path work, BuildPython mode, std::int64_t mtime,
                std::function<void(const std::string&)> log,
                std::chrono::seconds build_timeout = python::kDefaultBuildTimeout);

  // An interpreter of the image's X.Y for `what` (a build, or the bytecode pip writes). Throws Error with a cause
  // and a hint when none can be had.
  const python::Interpreter& interpreter(const python::PythonFacts& facts, const std::string& what);

  // A project directory, built where it is, as pip >= 21.3 builds `.` (what the build writes into `tree` is the
  // caller's to keep or drop).
  BuiltDistribution build_tree(const SourceBuildStep& step, const std::filesystem::path& tree,
                               const std::string& display);

  // An sdist (downloaded, or given by path), unpacked and built in a scratch directory, as pip builds it. Wheels
  // built from it are cached by the sdist's sha256 and what built them; native code is refused before building.
  BuiltDistribution build_sdist(const SourceBuildStep& step, const std::filesystem::path& sdist,
                                const std::string& filename, const std::string& display);

 private:
  python::SourceBuild source_build(const SourceBuildStep& step, const std::filesystem::path& tree,
                                   const std::string& display);
  BuiltDistribution legacy_install(const SourceBuildStep& step, python::SourceBuild build);
  // The build requirements from pyproject.toml (or pip's default) installed, and the backend to call.
  std::pair<python::Pep517Backend, IsolatedEnvironment> pep517_environment(const SourceBuildStep& step,
                                                                           const std::filesystem::path& tree,
                                                                           const std::string& display);
  std::filesystem::path pep517_wheel(const SourceBuildStep& step, python::SourceBuild build,
                                     const python::Pep517Backend& backend, const IsolatedEnvironment& env,
                                     const std::filesystem::path& out);
  python::BuildPath build_path(const SourceBuildStep& step, const std::filesystem::path& tree,
                               const std::string& display) const;
  BuiltDistribution from_wheel(const std::filesystem::path& wheel, const std::string& display) const;
  const std::vector<std::string>& image_site_dirs(const python::PythonFacts& facts);
  // For a build run as an unprivileged user: its tree and scratch handed to it, the interpreter reachable.
  void open_to_build_user(python::SourceBuild& build, const python::PythonFacts& facts);
  // `dir` under the cache, or a mirror of its cache entry in the work directory when the build's
  // user cannot reach the cache (a root-only home, say).
  std::string reachable(const std::string& dir);
  bool importable(const SourceBuildStep& step, const std::string& module) const;

  std::function<const layers::ScannedImage&()> base_;
  const store::CacheDir& cache_;
  std::filesystem::path work_;
  BuildPython mode_;
  std::int64_t mtime_;
  std::chrono::seconds build_timeout_;
  std::function<void(const std::string&)> log_;
  std::optional<python::Interpreter> host_;
  bool host_checked_ = false;
  std::optional<python::Interpreter> image_;
  std::optional<std::vector<std::string>> site_dirs_;
  std::optional<UserIds> user_;                  // who builds run as (support/privileges.h); nullopt: this process
  std::map<std::filesystem::path, std::filesystem::path> mirrors_;  // cache entry -> its mirror in work_
  std::optional<python::Interpreter> image_for_user_;  // image_ with its paths in a mirror
};

}  // namespace trainpack::imagebuild
