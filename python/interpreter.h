#pragma once
// A CPython that trainpack may run, for the jobs only an interpreter of the image's exact X.Y can do (bytecode,
// setup.py/PEP 517 builds): a host python3.X, or the base image's own interpreter extracted into the cache and
// started through the image's own dynamic loader (python/image_interpreter.h). Either way it gets an environment
// built from nothing, never the caller's: no credentials, no PIP_* or PYTHON* of the user, a private HOME and
// TMPDIR, UTF-8, and no bytecode written next to the sources it imports (the extracted copy is shared).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"

namespace trainpack::python {

struct Interpreter {
  // What to exec; Python's own options and arguments follow. A host Python: {"/usr/bin/python3.11"}. The image's:
  // {ROOT/lib/x86_64-linux-gnu/ld-2.31.so, "--inhibit-cache", "--library-path", "ROOT/lib/...:ROOT/usr/lib/...",
  //  ROOT/usr/bin/python3.9}.
  std::vector<std::string> argv;
  std::vector<std::string> env;  // the environment, "K=V", without PYTHONPATH (environment() adds it)
  std::string version;           // "3.9.2", as the interpreter reports it
  std::string major_minor;       // "3.9"
  std::string description;       // "the host's /usr/bin/python3.11", "the base image's /usr/bin/python3.9, run from
                                 // the cache": for messages
  bool from_image = false;
  // Host directories put on sys.path ahead of the standard library (as PYTHONPATH; -I and -E would ignore them),
  // e.g. the image's own setuptools.
  std::vector<std::string> sys_path;
  // Private to this interpreter's runs: HOME and TMPDIR are inside it, and it is where commands run by default.
  std::filesystem::path scratch;

  // argv followed by `args`.
  std::vector<std::string> command(const std::vector<std::string>& args) const;
  // argv, the options that keep site-packages and user settings out (a host Python: -I -S; the image's: -s -S,
  // since -I would drop the PYTHONHOME it needs), then `args`: for scripts that need the standard library only.
  std::vector<std::string> stdlib_command(const std::vector<std::string>& args) const;
  // The complete environment: env, then PYTHONPATH from sys_path.
  std::vector<std::string> environment() const;
  // environment(), in the scratch directory (so the caller's working directory never lands on sys.path).
  ProcessOptions process_options() const;
};

// The environment an interpreter starts from: PATH, LC_ALL, PYTHONUTF8, PYTHONNOUSERSITE, PYTHONDONTWRITEBYTECODE,
// PYTHONHASHSEED=0, HOME and TMPDIR under `scratch` (created). `locale` is "C.UTF-8" for a host Python; the image's
// gets "C", the one locale its libc has built in (glibc looks for any other in the host's /usr/lib/locale, even
// with LOCPATH set), and UTF-8 all the same through PYTHONUTF8 (PEP 540).
std::vector<std::string> clean_environment(const std::filesystem::path& scratch, std::string_view locale = "C.UTF-8");

// A host CPython whose X.Y is `major_minor` ("3.11"): python3.X on PATH, /usr/bin or /usr/local/bin, checked by
// asking it; the one whose full version is `preferred_version` (the image's) when there is one, else the first.
// nullopt when none. `scratch` becomes its private directory.
std::optional<Interpreter> find_host_python(std::string_view major_minor, std::string_view preferred_version,
                                            const std::filesystem::path& scratch);

}  // namespace trainpack::python
