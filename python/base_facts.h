#pragma once
// The facts `pip install` would act on inside a base image, read from the image's files without running anything:
// which pip/python PATH finds, sys.executable (pip's shebang), the interpreter version and ABI (_sysconfigdata,
// build-details.json, pyvenv.cfg, ENV PYTHON_VERSION, patchlevel.h, dpkg/apk/conda records), venv/conda, the
// install scheme pip picks (CPython sysconfig plus the Debian/Fedora patches and pip's venv headers rule), the site
// dirs in sys.path order, PEP 668 EXTERNALLY-MANAGED, installed distributions (importlib.metadata's first-on-path
// rule), the pip version, libc and architecture (the interpreter's ELF), and the pip configuration the image sets
// (pip's configuration.py file order and cli/parser.py option handling, PIP_* environment last).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "image/config.h"
#include "layers/image_filesystem.h"
#include "python/pip_config.h"
#include "python/sysconfigdata.h"
#include "python/installed_dists.h"
#include "python/scheme.h"

namespace trainpack::python {

// What the image config contributes (config.Env, config.User, architecture/variant of the image).
struct ImageConfigFacts {
  std::vector<std::string> env;  // "K=V"
  std::string user;              // "" = root; "name", "uid", "name:group", "uid:gid"
  std::string architecture;      // "amd64", "arm64", ...
  std::string variant;           // "v7", "v8", or ""

  static ImageConfigFacts of(const image::ImageConfig& config) {
    return {config.env().entries(), config.user(), config.architecture(), config.variant()};
  }
};

struct PythonFacts {
  // PATH lookup.
  std::vector<std::string> path;  // PATH entries from Env (or the default PATH)
  std::string pip_command;        // "pip" / "pip3"
  std::string pip_path;           // where PATH found it: "/usr/bin/pip3"
  std::string python_command;
  std::string python_path;        // "" when PATH has no such command
  // The interpreter.
  std::string executable;   // sys.executable, from pip's shebang: "/usr/bin/python3", "/opt/venv/bin/python"
  std::string interpreter;  // executable with symlinks resolved: "/usr/bin/python3.11"
  std::string python_version;       // "3.11"
  std::string python_full_version;  // "3.11.2", "3.13.0rc1"
  std::string version_source;       // which record gave the micro version (see base_facts.cpp)
  bool free_threaded = false;       // "t" builds (3.13+)
  std::string sysconfigdata;        // "/usr/lib/python3.11/_sysconfigdata__x86_64-linux-gnu.py" ("" if none)
  std::string soabi;                // "cpython-311-x86_64-linux-gnu"
  std::string ext_suffix;           // ".cpython-311-x86_64-linux-gnu.so"
  std::string abiflags;
  std::string multiarch;            // "x86_64-linux-gnu"
  std::string platlibdir = "lib";
  bool py_debug = false;
  std::string sysconfig_prefix;     // build_time_vars['prefix']
  std::string libdir;               // build_time_vars['LIBDIR']
  std::string stdlib;               // "/usr/lib/python3.11"
  std::string prefix;               // sys.prefix
  std::string base_prefix;          // sys.base_prefix
  // Environments.
  bool venv = false;
  std::string venv_home;                 // pyvenv.cfg home
  bool include_system_site_packages = false;
  bool conda = false;
  // Distro (/etc/os-release).
  std::string distro_id;
  std::string distro_version_id;
  std::string distro_id_like;
  // Where pip installs (absolute, resolved through the image's own symlinks).
  std::string scheme_name;  // "posix_prefix", "venv", "deb_posix_local", "deb_system", "rpm_posix_local", "conda"
  std::string purelib;
  std::string platlib;
  std::string include;      // headers go to include + "/" + project name
  std::string scripts;
  std::string data;
  std::vector<std::string> site_dirs;  // site-packages dirs in sys.path order (existing or not)
  std::vector<SysPathEntry> sys_path;  // the existing site dirs and what their .pth files add, in sys.path order
  // PEP 668.
  std::string externally_managed;        // path of EXTERNALLY-MANAGED, "" when absent or in a venv
  std::string externally_managed_error;  // its [externally-managed] Error= text (pip's default when missing)
  // Installed distributions, first occurrence on sys.path per canonical name, in path order.
  std::vector<SiteDistribution> installed;
  std::string pip_version;  // "23.0.1"
  // Platform.
  std::string elf_interpreter;  // PT_INTERP: "/lib64/ld-linux-x86-64.so.2"
  std::string libc;             // "glibc", "musl", or "" (static / unknown)
  std::string libc_version;     // "2.36", "1.2.4", or "" when unknown
  std::string machine;          // platform_machine: "x86_64", "aarch64", "armv7l", ...
  // The user pip runs as.
  std::string user;  // config User ("" = root)
  std::string home;  // $HOME pip sees
  PipConfig pip_config;
  std::vector<std::pair<std::string, std::string>> env;  // the image Env in its order (pip reads PIP_* in order)

  // pip's scheme for installing `project_name` (headers = include/<name as written>).
  InstallScheme scheme_for(std::string_view project_name) const;
  // sys.implementation.cache_tag: "cpython-311" (free-threaded builds share it).
  std::string cache_tag() const;
  // The installed distribution pip sees for a name (any spelling); nullptr when none.
  const SiteDistribution* find_installed(std::string_view name) const;
  // The image Env's value of `key` ("" when unset), as the process started from the image sees it.
  std::string env_value(std::string_view key) const;
  bool operator==(const PythonFacts&) const = default;
};

// Reads every fact. use_python3_names: look up pip3/python3 (gcloud's Vertex prebuilt images) instead of pip/python.
// Throws trainpack::Error (one-line cause + hint) when pip cannot be found or understood, and for a non-root User
// that cannot write the install directories (pip would fall back to --user, which trainpack does not reproduce).
PythonFacts read_python_facts(const layers::ImageFilesystem& fs, const ImageConfigFacts& cfg, bool use_python3_names);

// Where a container's exec finds `command` (its entrypoint's program) in the image: the first executable file of
// that name in the directories of env's PATH (Docker's default PATH when env sets none), symlinks resolved in the
// image; an absolute name as it is. "" when there is none. A relative name with a '/' is returned unchecked.
std::string find_command(const layers::ImageFilesystem& fs, const std::vector<std::string>& env,
                         std::string_view command);

// JSON form for the builder's per-base-digest cache; from_json(to_json(f)) == f. from_json throws on a malformed cache.
nlohmann::json to_json(const PythonFacts& facts);
PythonFacts python_facts_from_json(const nlohmann::json& j);

}  // namespace trainpack::python
