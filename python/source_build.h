#pragma once
// Source trees (the project in setup.py, sdists) built the way the image's pip builds them, by an interpreter of
// the image's X.Y (python/interpreter.h), never by pip itself: the three paths of python/pip_behaviour.h.
//  - kLegacyWheel: `setup.py bdist_wheel -d DIR` through pip's setuptools shim, with the image's own setuptools and
//    wheel on sys.path (pip's NoOpBuildEnvironment: not isolated);
//  - kLegacyInstall: `setup.py install --record R --single-version-externally-managed --compile
//    --install-headers H` (operations/install/legacy.py), staged under a root directory, its record turned into the
//    installed-files.txt pip writes (write_installed_files_from_setuptools_record);
//  - kPep517: the backend's hooks (get_requires_for_build_wheel, prepare_metadata_for_build_wheel, build_wheel) as
//    pyproject-hooks calls them, each in a fresh process whose sys.path is the isolated build environment
//    (directories the caller filled with the build requirements) plus the backend path.
// The image's settings that change a build travel with it (its sys.executable for the shebangs setuptools writes,
// its sys.prefix, PYTHONDONTWRITEBYTECODE and friends from its Env); credentials never do: the interpreter's
// environment is built from nothing.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "python/interpreter.h"
#include "python/scheme.h"
#include "support/privileges.h"

namespace trainpack::python {

// How long one setup.py or backend call may run: generous, for a large pure-Python build on a slow host.
inline constexpr std::chrono::seconds kDefaultBuildTimeout{1800};

struct SourceBuild {
  const Interpreter* python = nullptr;   // of the image's X.Y (its own sys_path is not used: site_dirs is)
  std::filesystem::path tree;            // the project directory (setup.py / pyproject.toml in it)
  std::string display;                   // "the project in setup.py", "tp-pure-sdist 1.0": for messages
  std::vector<std::string> site_dirs;    // host directories added with site.addsitedir before the build runs
  std::string sys_executable;            // the image's sys.executable ("/usr/bin/python3")
  std::string sys_prefix;                // the image's sys.prefix and sys.base_prefix
  std::string sys_base_prefix;
  std::vector<std::string> image_env;    // the image's Env that a build inherits: "PYTHONDONTWRITEBYTECODE=1", ...
  std::chrono::seconds timeout{kDefaultBuildTimeout};  // for each call (--build-timeout)
  // The user the build runs as (support/privileges.h); the directories it writes are handed to that user, and
  // what it leaves is read without following a symlink it may have planted.
  std::optional<UserIds> run_as;
};

// kLegacyWheel. Returns the one wheel the build wrote into `out_dir`.
std::filesystem::path build_legacy_wheel(const SourceBuild& build, const std::filesystem::path& out_dir);

// operations/build/metadata_legacy.py: `setup.py egg_info --egg-base DIR`, which pip runs first on the legacy
// paths to learn the project's name, version and requirements.
struct EggInfo {
  std::string pkg_info;
  std::string requires_txt;  // "" when there is none
};
EggInfo legacy_metadata(const SourceBuild& build, const std::filesystem::path& egg_base);

struct LegacyInstall {
  std::filesystem::path stage;       // the root the files were installed under: stage + image path
  std::string egg_info_dir;          // the installed .egg-info, an image path
  std::string installed_files_txt;   // what pip writes into egg_info_dir/installed-files.txt
};
// kLegacyInstall into `stage` with `scheme` (the image's; headers already carry the project name).
LegacyInstall legacy_install(const SourceBuild& build, const InstallScheme& scheme,
                             const std::filesystem::path& stage);

// pip's write_installed_files_from_setuptools_record: the record's lines (image paths) relative to the .egg-info
// directory among them, sorted, "\n"-separated with a final "\n". Throws Error when no line is inside an .egg-info
// directory (pip: "did not indicate that it installed an .egg-info directory").
LegacyInstall installed_files_from_record(const std::vector<std::string>& record_lines, const std::string& display);

struct Pep517Backend {
  std::string backend;                    // "setuptools.build_meta:__legacy__"
  std::vector<std::string> backend_path;  // relative to the tree
};
// get_requires_for_build_wheel: the backend's extra build requirements (PEP 508 strings).
std::vector<std::string> pep517_requires_for_build_wheel(const SourceBuild& build, const Pep517Backend& backend);
// prepare_metadata_for_build_wheel (when the backend has it), then build_wheel with that metadata directory, as
// pip does. Returns the wheel, written into `out_dir`.
std::filesystem::path pep517_build_wheel(const SourceBuild& build, const Pep517Backend& backend,
                                         const std::filesystem::path& out_dir);

// What a failed build's output (stdout and stderr in order) says for a one-line error: the exception of its last
// traceback, else its last "error:" line, else its last line.
std::string build_failure_reason(const std::string& output);
// The last `n` non-empty lines of that output, each on a new line and indented: for the hint under the error.
std::string build_output_tail(const std::string& output, std::size_t n);

}  // namespace trainpack::python
