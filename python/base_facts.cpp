#include "python/base_facts.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>

#include "distro/libc.h"
#include "distro/os_release.h"
#include "distro/package_db.h"
#include "distro/users.h"
#include "image/config.h"
#include "python/configparser.h"
#include "python/image_root.h"
#include "python/names.h"
#include "python/text.h"
#include "python/version.h"
#include "support/elf.h"
#include "support/error.h"
#include "support/paths.h"
#include "support/text.h"

namespace trainpack::python {
namespace {

using layers::ImageFilesystem;
using layers::PathInfo;

constexpr std::string_view kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr std::size_t kSmallFile = 1u << 20;     // scripts, cfg, ini files
constexpr std::size_t kMediumFile = 16u << 20;   // sysconfigdata, sysconfig.py, passwd
constexpr std::size_t kBinaryCap = 64u << 20;    // the interpreter and libpython, scanned for PY_VERSION

constexpr std::string_view kDefaultExternallyManaged =
    "The Python environment under {prefix} is managed externally, and may not be\n"
    "manipulated by the user. Please use specific tooling from the distributor of\n"
    "the Python installation to interact with the packages installed in this\n"
    "environment.";

// "pythonX.Y" or "pythonX.Yt" -> ("X.Y", free-threaded).
std::optional<std::pair<std::string, bool>> python_xy_name(std::string_view name) {
  if (!name.starts_with("python")) return std::nullopt;
  std::string_view rest = name.substr(6);
  bool t = !rest.empty() && rest.back() == 't';
  if (t) rest.remove_suffix(1);
  std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || !all_digits(rest.substr(0, dot)) || !all_digits(rest.substr(dot + 1)))
    return std::nullopt;
  return std::make_pair(std::string(rest), t);
}

std::string machine_from_config(std::string_view arch, std::string_view variant) {
  if (arch == "amd64") return "x86_64";
  if (arch == "arm64") return "aarch64";
  if (arch == "386") return "i686";
  if (arch == "arm") {
    if (variant.size() == 2 && variant[0] == 'v') return "armv" + std::string(1, variant[1]) + "l";
    return "armv7l";
  }
  if (arch == "loong64") return "loongarch64";
  return std::string(arch);  // ppc64le, s390x, riscv64 are spelled the same
}

// A micro version that belongs to X.Y, normalised the way platform.python_version() spells it.
std::string accept_version(std::string_view candidate, std::string_view xy) {
  std::string c(py_strip(candidate));
  while (!c.empty() && c.back() == '+') c.pop_back();  // "3.12.0+" dev builds
  auto v = Version::try_parse(c);
  if (!v || v->release().size() < 3 || v->epoch() != 0 || v->has_local() || v->post() || v->dev()) return {};
  if (std::to_string(v->major()) + "." + std::to_string(v->minor()) != xy) return {};
  std::string out = std::to_string(v->major()) + "." + std::to_string(v->minor()) + "." + std::to_string(v->micro());
  if (v->pre()) out += v->pre()->letter + std::to_string(v->pre()->number);
  return out;
}

std::string env_or(const std::map<std::string, std::string>& env, const std::string& key, std::string_view fallback) {
  auto it = env.find(key);
  return it == env.end() ? std::string(fallback) : it->second;
}

bool is_root_user(std::string_view user) {
  std::string_view name = user.substr(0, user.find(':'));
  return name.empty() || name == "root" || name == "0";
}

// The absolute directories of a PATH value, in order (a relative entry names no place in the image).
std::vector<std::string> path_dirs(std::string_view path_var) {
  std::vector<std::string> dirs;
  for (const std::string& d : split_nonempty(path_var, ":"))
    if (d.front() == '/') dirs.push_back(abs_path(d));
  return dirs;
}

// The first dirs[i]/name that is an executable file (symlinks resolved in the image), as exec's PATH search finds it.
std::string first_executable(const ImageRoot& root, const std::vector<std::string>& dirs, std::string_view name) {
  for (const std::string& d : dirs) {
    std::string candidate = abs_join(d, name);
    const PathInfo* info = root.info(candidate);
    if (info && (info->type == PathInfo::Type::kRegular || info->type == PathInfo::Type::kHardlink) &&
        (info->mode & 0111))
      return candidate;
  }
  return {};
}

// Reads the facts one at a time, each from what the earlier ones found (the order of read_python_facts).
class FactsReader {
 public:
  FactsReader(const ImageFilesystem& fs, const ImageConfigFacts& cfg) : fs_(fs), root_{fs}, cfg_(cfg) {}

  PythonFacts& facts() { return f_; }

  void read_env();
  void find_commands(bool use_python3_names);
  void read_sys_executable();
  void find_venv();
  void read_python_version();
  void find_python_version();
  void read_sysconfig();
  void read_micro_version();
  void read_distro();
  void read_install_scheme();
  void read_home();
  void read_site_dirs();
  void read_externally_managed();
  void read_installed();
  void read_platform();
  void check_user_can_install() const;
  void read_pip_configuration();

 private:
  std::string which(std::string_view name) const;
  std::string pyvenv_version() { return pyvenv_.count("version_info") ? pyvenv_["version_info"] : pyvenv_["version"]; }
  const std::string& pydir() const { return pydir_; }
  // The micro version candidates, best record first: the first one that fits X.Y wins.
  void try_version(const std::string& candidate, const char* source);
  void build_details_version();
  void patchlevel_version();
  void package_record_versions();
  void interpreter_binary_version();
  bool is_debian_python() const;
  bool is_rpm_python() const;
  std::vector<std::string> base_site_dirs(bool debian, bool rpm) const;

  const ImageFilesystem& fs_;
  ImageRoot root_;
  const ImageConfigFacts& cfg_;
  PythonFacts f_;
  std::map<std::string, std::string> env_;     // the image Env, last value of each name
  std::string path_var_;                       // $PATH as the image sets it
  std::map<std::string, std::string> pyvenv_;  // pyvenv.cfg
  std::string venv_dir_;
  std::string pydir_;  // "python3.11" or "python3.13t", as the interpreter's name or the lib dir spells it
  std::optional<std::string> dpkg_status_;     // read for a Python under /usr only
  std::optional<std::string> apk_db_;
  std::string stdlib_sysconfig_py_, stdlib_site_py_;
  std::vector<std::string> base_sites_;
  std::optional<distro::PasswdEntry> passwd_entry_;  // the config User's account (root when none)
};

void FactsReader::read_env() {
  f_.env = image::EnvList(cfg_.env).pairs();
  env_ = std::map<std::string, std::string>(f_.env.begin(), f_.env.end());
  f_.user = cfg_.user;
}

std::string FactsReader::which(std::string_view name) const { return first_executable(root_, f_.path, name); }

// PATH lookup of pip and python (gcloud's Vertex images name them pip3 and python3).
void FactsReader::find_commands(bool use_python3_names) {
  path_var_ = env_or(env_, "PATH", kDefaultPath);
  f_.path = path_dirs(path_var_);
  f_.pip_command = use_python3_names ? "pip3" : "pip";
  f_.python_command = use_python3_names ? "python3" : "python";
  f_.pip_path = which(f_.pip_command);
  if (f_.pip_path.empty())
    throw Error("the base image has no `" + f_.pip_command + "` on its PATH (" + path_var_ + ")",
                "use a base image with pip installed, or add its directory to ENV PATH");
  f_.python_path = which(f_.python_command);
}

// sys.executable: the interpreter named by pip's shebang (distlib's long form: /bin/sh + '''exec' <exe>).
void FactsReader::read_sys_executable() {
  auto script = root_.head(f_.pip_path, 4096);
  std::vector<std::string_view> lines = split_lines(script ? std::string_view(*script) : std::string_view());
  if (lines.empty() || !lines[0].starts_with("#!"))
    throw Error(f_.pip_path + " in the base image does not start with a #! line",
                "trainpack reads the interpreter pip runs under from that line; a pip wrapper or binary is not "
                "supported");
  auto words = py_split(lines[0].substr(2));
  std::string exe = words.empty() ? "" : words[0];
  if (exe == "/bin/sh" && lines.size() > 1 && lines[1].starts_with("'''exec' ")) {
    std::string_view rest = py_strip(lines[1].substr(9));
    if (!rest.empty() && rest.front() == '"') exe = std::string(rest.substr(1, rest.find('"', 1) - 1));
    else exe = py_split(rest).empty() ? "" : py_split(rest)[0];
  } else if (base_of(exe) == "env") {
    std::string name;
    for (std::size_t i = 1; i < words.size() && name.empty(); ++i)
      if (!words[i].starts_with("-")) name = words[i];
    exe = name.empty() ? "" : which(name);
    if (exe.empty())
      throw Error(f_.pip_path + " runs `" + std::string(lines[0].substr(2)) + "` but PATH has no " + name,
                  "fix the base image's PATH");
  }
  if (exe.empty() || exe.front() != '/')
    throw Error(f_.pip_path + " has no absolute interpreter on its #! line: " + std::string(lines[0]),
                "reinstall pip in the base image so its script names the interpreter");
  f_.executable = abs_path(exe);
  f_.interpreter = root_.resolve(f_.executable);
  if (!root_.is_file(f_.interpreter))
    throw Error("pip's interpreter " + f_.executable + " (first line of " + f_.pip_path + ") is not in the image",
                "the base image's pip script points at a missing Python");
}

// venv (PEP 405): pyvenv.cfg beside the (unresolved) executable or one directory up, like getpath.
void FactsReader::find_venv() {
  for (const std::string& dir : {parent_of(f_.executable), parent_of(parent_of(f_.executable))}) {
    if (auto text = root_.read(abs_join(dir, "pyvenv.cfg"), kSmallFile)) {
      pyvenv_ = parse_pyvenv_cfg(*text);
      venv_dir_ = dir;
      break;
    }
  }
  f_.venv = !venv_dir_.empty();
  if (f_.venv) {
    f_.venv_home = pyvenv_["home"];
    f_.include_system_site_packages = ascii_lower(pyvenv_["include-system-site-packages"]) == "true";
  }
}

// sys.prefix, sys.base_prefix and X.Y: the interpreter's file name, else pyvenv.cfg, else the one pythonX.Y under
// the base prefix.
void FactsReader::read_python_version() {
  find_python_version();
  pydir_ = "python" + f_.python_version + (f_.free_threaded ? "t" : "");
}

void FactsReader::find_python_version() {
  std::string interp_dir = parent_of(f_.interpreter);
  f_.base_prefix = parent_of(interp_dir);
  if (f_.venv && !f_.venv_home.empty() && f_.interpreter.starts_with(venv_dir_ + "/"))
    f_.base_prefix = parent_of(root_.resolve(f_.venv_home));  // a --copies venv: the base is found through `home`
  f_.prefix = f_.venv ? venv_dir_ : f_.base_prefix;
  if (auto xy = python_xy_name(base_of(f_.interpreter))) {
    f_.python_version = xy->first;
    f_.free_threaded = xy->second;
    return;
  }
  auto v = Version::try_parse(pyvenv_version());
  if (v && v->release().size() >= 2) {
    f_.python_version = std::to_string(v->major()) + "." + std::to_string(v->minor());
    return;
  }
  std::set<std::pair<std::string, bool>> found;
  for (const char* lib : {"lib", "lib64"})
    for (const std::string& name : root_.children(abs_join(f_.base_prefix, lib)))
      if (auto xy = python_xy_name(name); xy && xy->first.starts_with("3.")) found.insert(*xy);
  if (found.size() != 1)
    throw Error("cannot tell which Python version " + f_.interpreter + " is (" + std::to_string(found.size()) +
                    " candidates under " + f_.base_prefix + "/lib)",
                "make pip's #! line name a versioned interpreter such as python3.11");
  f_.python_version = found.begin()->first;
  f_.free_threaded = found.begin()->second;
}

// The stdlib dir and what its _sysconfigdata says (SOABI, EXT_SUFFIX, MULTIARCH, LIBDIR, ...); conda's marker.
void FactsReader::read_sysconfig() {
  for (const char* lib : {"lib", "lib64"}) {
    std::string dir = abs_join(abs_join(f_.base_prefix, lib), pydir());
    auto names = root_.children(dir);
    bool landmark = std::any_of(names.begin(), names.end(), [](const std::string& n) {
      return n == "os.py" || n == "os.pyc" || n.starts_with("_sysconfigdata_");
    });
    if (landmark || (f_.stdlib.empty() && std::string(lib) == "lib" && root_.is_dir(dir))) f_.stdlib = dir;
    if (landmark) break;
  }
  f_.conda = root_.is_dir(abs_join(f_.base_prefix, "conda-meta"));
  if (f_.stdlib.empty()) return;
  std::vector<std::string> candidates;
  for (const std::string& n : root_.children(f_.stdlib))
    if (n.starts_with("_sysconfigdata_") && n.ends_with(".py")) candidates.push_back(n);
  // Debug builds (_sysconfigdata_d_*) only when nothing else is there.
  std::stable_partition(candidates.begin(), candidates.end(),
                        [](const std::string& n) { return !n.starts_with("_sysconfigdata_d"); });
  if (candidates.empty()) return;
  f_.sysconfigdata = abs_join(f_.stdlib, candidates.front());
  auto text = root_.read(f_.sysconfigdata, kMediumFile);
  auto vars = parse_sysconfigdata(text ? *text : "");
  auto get = [&vars](const char* k) { return vars.count(k) ? vars[k] : std::string(); };
  if (!get("VERSION").empty() && get("VERSION") != f_.python_version)
    throw Error(f_.sysconfigdata + " is for Python " + get("VERSION") + ", not " + f_.python_version,
                "the base image's Python installation is inconsistent");
  f_.soabi = get("SOABI");
  f_.ext_suffix = get("EXT_SUFFIX");
  f_.abiflags = get("ABIFLAGS");
  f_.multiarch = get("MULTIARCH");
  f_.sysconfig_prefix = get("prefix");
  f_.libdir = get("LIBDIR");
  if (!get("PLATLIBDIR").empty()) f_.platlibdir = get("PLATLIBDIR");
  f_.py_debug = get("Py_DEBUG") == "1";
  if (get("Py_GIL_DISABLED") == "1") f_.free_threaded = true;
}

void FactsReader::try_version(const std::string& candidate, const char* source) {
  if (!f_.python_full_version.empty()) return;
  std::string v = accept_version(candidate, f_.python_version);
  if (v.empty()) return;
  f_.python_full_version = v;
  f_.version_source = source;
}

// build-details.json (PEP 739), written by CPython 3.14 and later.
void FactsReader::build_details_version() {
  if (f_.stdlib.empty()) return;
  auto text = root_.read(abs_join(f_.stdlib, "build-details.json"), kSmallFile);
  if (!text) return;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("implementation") || !j["implementation"].contains("version")) return;
  const auto& v = j["implementation"]["version"];
  if (v.value("major", -1) < 0 || v.value("minor", -1) < 0 || v.value("micro", -1) < 0) return;
  std::string s = std::to_string(v["major"].get<int>()) + "." + std::to_string(v["minor"].get<int>()) + "." +
                  std::to_string(v["micro"].get<int>());
  std::string level = v.value("releaselevel", "final");
  if (level != "final") {
    s += level == "alpha" ? "a" : level == "beta" ? "b" : "rc";
    s += std::to_string(v.value("serial", 0));
  }
  try_version(s, "build-details.json");
}

// #define PY_VERSION "3.11.2" in the installed headers.
void FactsReader::patchlevel_version() {
  std::string include_dir = abs_join(abs_join(f_.base_prefix, "include"), "python" + f_.python_version + f_.abiflags);
  auto text = root_.read(abs_join(include_dir, "patchlevel.h"), kSmallFile);
  if (!text) return;
  for (std::string_view line : split_lines(*text)) {
    auto words = py_split(line);
    if (words.size() >= 3 && words[0] == "#define" && words[1] == "PY_VERSION" && words[2].size() > 2 &&
        words[2].front() == '"')
      try_version(words[2].substr(1, words[2].size() - 2), "patchlevel.h");
  }
}

// The distribution's package records: dpkg (status, or distroless's status.d), apk, conda-meta.
void FactsReader::package_record_versions() {
  if (f_.base_prefix == "/usr") {
    dpkg_status_ = distro::read_dpkg_status(fs_);
    for (const char* suffix : {"", "-minimal"}) {
      std::string pkg = "python" + f_.python_version + suffix;
      if (dpkg_status_) try_version(distro::upstream_version(distro::dpkg_version(*dpkg_status_, pkg)), "dpkg");
      for (const std::string& v : distro::dpkg_status_d_versions(fs_, pkg)) try_version(distro::upstream_version(v), "dpkg");
    }
  }
  apk_db_ = distro::read_apk_installed(fs_);
  if (apk_db_ && f_.base_prefix == "/usr")
    try_version(distro::upstream_version(distro::apk_version(*apk_db_, "python3")), "apk");
  if (!f_.conda) return;
  for (const std::string& n : root_.children(abs_join(f_.base_prefix, "conda-meta"))) {
    if (!n.starts_with("python-") || !n.ends_with(".json")) continue;
    std::string rest = n.substr(7);
    try_version(rest.substr(0, rest.find('-')), "conda-meta");
  }
}

// Last resort (no package records, e.g. an image assembled without dpkg): PY_VERSION is a NUL-terminated literal
// in the interpreter (or its libpython); accepted only when exactly one such string is there.
void FactsReader::interpreter_binary_version() {
  if (!f_.python_full_version.empty() || f_.interpreter.empty()) return;
  std::set<std::string> found;
  std::vector<std::string> binaries{f_.interpreter};
  if (!f_.libdir.empty())
    binaries.push_back(abs_join(f_.libdir, "libpython" + f_.python_version + f_.abiflags + ".so.1.0"));
  for (const std::string& bin : binaries) {
    std::optional<std::string> bytes = root_.read(bin, kBinaryCap);
    if (!bytes) continue;
    const std::string needle = '\0' + f_.python_version + ".";
    for (std::size_t at = bytes->find(needle); at != std::string::npos; at = bytes->find(needle, at + 1)) {
      std::size_t end = bytes->find('\0', at + 1);
      if (end == std::string::npos || end - at > 16) continue;
      std::string literal = bytes->substr(at + 1, end - at - 1);
      std::string v = accept_version(literal, f_.python_version);
      if (!v.empty() && v == literal) found.insert(v);
    }
    if (!found.empty()) break;
  }
  if (found.size() == 1) try_version(*found.begin(), "interpreter binary");
}

// The micro version (platform.python_version()), best record first.
void FactsReader::read_micro_version() {
  build_details_version();
  if (f_.venv) try_version(pyvenv_version(), "pyvenv.cfg");
  // Official images set it for their /usr/local build; a distro Python under /usr is not what it describes.
  if (env_.count("PYTHON_VERSION") && f_.base_prefix != "/usr") try_version(env_["PYTHON_VERSION"], "ENV PYTHON_VERSION");
  patchlevel_version();
  package_record_versions();
  interpreter_binary_version();
  if (f_.python_full_version.empty())
    throw Error("cannot tell the micro version of Python " + f_.python_version + " in the base image",
                "trainpack looks at build-details.json, pyvenv.cfg, ENV PYTHON_VERSION, patchlevel.h and the "
                "dpkg/apk/conda records; set ENV PYTHON_VERSION=" + f_.python_version + ".N in the base image");
}

void FactsReader::read_distro() {
  distro::OsRelease os = distro::read_os_release(fs_);
  f_.distro_id = os.id;
  f_.distro_version_id = os.version_id;
  f_.distro_id_like = os.id_like;
}

// Debian's Python: its sysconfig schemes (3.10 and later), or, before them (Debian 11's 3.9 keeps deb_system in
// distutils), its site.py putting dist-packages on sys.path.
bool FactsReader::is_debian_python() const {
  return (stdlib_sysconfig_py_.find("'posix_local'") != std::string::npos &&
          stdlib_sysconfig_py_.find("'deb_system'") != std::string::npos) ||
         stdlib_site_py_.find("\"dist-packages\"") != std::string::npos;
}

// Fedora/RHEL's system Python installs to /usr/local (their rpm_posix_local patch).
bool FactsReader::is_rpm_python() const {
  auto id_words = py_split(f_.distro_id + " " + f_.distro_id_like);
  bool rpm_distro = std::any_of(id_words.begin(), id_words.end(), [](const std::string& w) {
    return w == "fedora" || w == "rhel" || w == "centos";
  });
  return !f_.venv && !f_.conda && f_.base_prefix == "/usr" && rpm_distro && f_.platlibdir == "lib64";
}

// The base interpreter's site-packages dirs in site.py's order.
std::vector<std::string> FactsReader::base_site_dirs(bool debian, bool rpm) const {
  std::vector<std::string> sites;
  if (debian) {
    sites = {abs_join(f_.base_prefix, "local/lib/python" + f_.python_version + "/dist-packages"),
             abs_join(f_.base_prefix, "lib/python3/dist-packages"),
             abs_join(f_.base_prefix, "lib/python" + f_.python_version + "/dist-packages")};
  } else if (rpm) {
    for (const char* p : {"/usr/local", "/usr"})
      for (const char* lib : {"lib64", "lib"}) sites.push_back(abs_join(abs_join(p, lib), pydir() + "/site-packages"));
  } else {
    sites.push_back(abs_join(abs_join(f_.base_prefix, f_.platlibdir), pydir() + "/site-packages"));
    if (f_.platlibdir != "lib") sites.push_back(abs_join(abs_join(f_.base_prefix, "lib"), pydir() + "/site-packages"));
  }
  return sites;
}

// The scheme pip installs with: CPython's sysconfig plus the Debian/Fedora patches and pip's venv headers rule.
void FactsReader::read_install_scheme() {
  if (!f_.stdlib.empty()) {
    if (auto text = root_.read(abs_join(f_.stdlib, "sysconfig.py"), kMediumFile)) stdlib_sysconfig_py_ = *text;
    if (auto text = root_.read(abs_join(f_.stdlib, "site.py"), kMediumFile)) stdlib_site_py_ = *text;
  }
  bool debian = is_debian_python();
  bool rpm = is_rpm_python();
  std::string abi_include = "python" + f_.python_version + f_.abiflags;
  base_sites_ = base_site_dirs(debian, rpm);
  if (f_.venv) {
    f_.scheme_name = "venv";
    f_.purelib = abs_join(venv_dir_, "lib/" + pydir() + "/site-packages");
    f_.platlib = abs_join(abs_join(venv_dir_, f_.platlibdir), pydir() + "/site-packages");
    f_.scripts = abs_join(venv_dir_, "bin");
    f_.data = venv_dir_;
    f_.include = abs_join(venv_dir_, "include/site/python" + f_.python_version);  // pip's venv headers rule
  } else if (debian) {
    std::string layout = env_or(env_, "DEB_PYTHON_INSTALL_LAYOUT", "posix_local");
    bool deb_system = layout == "deb" || layout == "deb_system";
    f_.scheme_name = deb_system ? "deb_system" : "deb_posix_local";
    std::string base = deb_system ? f_.base_prefix : abs_join(f_.base_prefix, "local");
    f_.purelib = deb_system ? abs_join(base, "lib/python3/dist-packages")
                            : abs_join(base, "lib/python" + f_.python_version + "/dist-packages");
    f_.platlib = f_.purelib;
    f_.scripts = abs_join(base, "bin");
    f_.data = base;
    f_.include = abs_join(abs_join(f_.base_prefix, "include"), abi_include);
  } else if (rpm) {
    f_.scheme_name = "rpm_posix_local";
    f_.purelib = abs_join("/usr/local/lib", pydir() + "/site-packages");
    f_.platlib = abs_join("/usr/local/lib64", pydir() + "/site-packages");
    f_.scripts = "/usr/local/bin";
    f_.data = "/usr/local";
    f_.include = abs_join("/usr/include", abi_include);
  } else {
    f_.scheme_name = f_.conda ? "conda" : "posix_prefix";
    f_.purelib = abs_join(f_.base_prefix, "lib/" + pydir() + "/site-packages");
    f_.platlib = abs_join(abs_join(f_.base_prefix, f_.platlibdir), pydir() + "/site-packages");
    f_.scripts = abs_join(f_.base_prefix, "bin");
    f_.data = f_.base_prefix;
    f_.include = abs_join(abs_join(f_.base_prefix, "include"), abi_include);
  }
  for (std::string* p : {&f_.purelib, &f_.platlib, &f_.scripts, &f_.data, &f_.include}) *p = root_.resolve(*p);
}

// $HOME pip sees: the Env's, else the config User's home in /etc/passwd.
void FactsReader::read_home() {
  std::string user_name = cfg_.user.substr(0, cfg_.user.find(':'));
  auto passwd = distro::parse_passwd(root_.read("/etc/passwd", kMediumFile).value_or(""));
  if (const distro::PasswdEntry* entry = distro::find_user(passwd, user_name.empty() ? "root" : user_name))
    passwd_entry_ = *entry;
  if (env_.count("HOME")) f_.home = env_["HOME"];
  else if (passwd_entry_ && !passwd_entry_->home.empty()) f_.home = passwd_entry_->home;
  else f_.home = is_root_user(cfg_.user) ? "/root" : "/";
}

// site-packages dirs in sys.path order: the venv's, then (without a venv, or with system site packages) the user
// site when it exists and the base interpreter's.
void FactsReader::read_site_dirs() {
  std::vector<std::string> sites;
  if (f_.venv) sites.push_back(abs_join(venv_dir_, "lib/" + pydir() + "/site-packages"));
  if (f_.venv && f_.platlibdir != "lib")
    sites.push_back(abs_join(abs_join(venv_dir_, f_.platlibdir), pydir() + "/site-packages"));
  if (!f_.venv || f_.include_system_site_packages) {
    std::string user_site = abs_join(f_.home, ".local/lib/" + pydir() + "/site-packages");
    if (root_.is_dir(user_site)) sites.push_back(user_site);
    sites.insert(sites.end(), base_sites_.begin(), base_sites_.end());
  }
  for (const std::string& s : sites) {
    std::string r = root_.resolve(s);
    if (std::find(f_.site_dirs.begin(), f_.site_dirs.end(), r) == f_.site_dirs.end()) f_.site_dirs.push_back(r);
  }
}

// PEP 668, ignored in a venv (pip's check_externally_managed).
void FactsReader::read_externally_managed() {
  if (f_.venv || f_.stdlib.empty()) return;
  std::string marker = abs_join(f_.stdlib, "EXTERNALLY-MANAGED");
  auto text = root_.read(marker, kSmallFile);
  if (!text) return;
  f_.externally_managed = marker;
  IniFile ini = parse_ini(*text);
  if (auto* section = ini_section(ini, "externally-managed"))
    for (const auto& [k, v] : *section)
      if (k == "error") f_.externally_managed_error = v;
  if (f_.externally_managed_error.empty()) {
    f_.externally_managed_error = kDefaultExternallyManaged;
    f_.externally_managed_error.replace(f_.externally_managed_error.find("{prefix}"), 8, f_.prefix);
  }
}

// Installed distributions: first per canonical name along sys.path; pip's own version among them.
void FactsReader::read_installed() {
  f_.sys_path = site_sys_path(fs_, f_.site_dirs);
  f_.installed = find_installed_distributions(fs_, f_.sys_path);
  const SiteDistribution* pip = f_.find_installed("pip");
  if (!pip)
    throw Error(f_.pip_path + " is there but no pip distribution is on " + f_.executable + "'s sys.path",
                "the base image's pip installation is broken; reinstall pip in the base image");
  f_.pip_version = pip->version;
}

// platform.machine() and the libc from the interpreter's ELF, checked against the image config's architecture.
void FactsReader::read_platform() {
  std::optional<ElfFile> elf;
  if (auto head = root_.head(f_.interpreter, 64u << 10)) elf = parse_elf(*head);
  if (elf) {
    f_.elf_interpreter = elf->interpreter;
    f_.machine = elf->machine;
  }
  std::string config_machine =
      cfg_.architecture.empty() ? std::string() : machine_from_config(cfg_.architecture, cfg_.variant);
  if (!f_.machine.empty() && !config_machine.empty()) {
    bool arm32 = f_.machine.starts_with("armv") && config_machine.starts_with("armv");
    if (f_.machine != config_machine && !arm32)
      throw Error(f_.interpreter + " is a " + f_.machine + " binary but the image config says " + cfg_.architecture,
                  "the base image is inconsistent; pick the platform variant that matches its binaries");
    if (arm32) f_.machine = config_machine;  // the ELF header does not say v6 or v7
  }
  if (f_.machine.empty()) f_.machine = config_machine;
  if (f_.machine.empty())
    throw Error("cannot tell the architecture of " + f_.interpreter,
                "the image config has no architecture and the interpreter is not a readable ELF file");
  distro::Libc libc = distro::read_libc(fs_, f_.elf_interpreter, f_.multiarch, dpkg_status_, apk_db_);
  f_.libc = libc.name;
  f_.libc_version = libc.version;
}

// A non-root user who cannot write the install dirs makes pip choose --user, which trainpack does not reproduce.
void FactsReader::check_user_can_install() const {
  if (is_root_user(cfg_.user)) return;
  std::optional<std::uint32_t> uid, gid;
  std::string user_name = cfg_.user.substr(0, cfg_.user.find(':'));
  std::string group = cfg_.user.find(':') == std::string::npos ? "" : cfg_.user.substr(cfg_.user.find(':') + 1);
  if (passwd_entry_) {
    uid = passwd_entry_->uid;
    gid = passwd_entry_->gid;
  } else {
    uid = distro::parse_id(user_name);
  }
  if (!group.empty()) {
    auto groups = distro::parse_group(root_.read("/etc/group", kMediumFile).value_or(""));
    const distro::GroupEntry* entry = distro::find_group(groups, group);
    gid = entry ? std::optional(entry->gid) : distro::parse_id(group);
  }
  if (!uid)
    throw Error("the base image's User " + cfg_.user + " is not in its /etc/passwd",
                "set USER to a known user or a numeric uid");
  std::string dir = f_.purelib;
  const PathInfo* info = nullptr;
  while (true) {
    info = root_.info(dir);
    if (info || dir == "/") break;
    dir = parent_of(dir);
  }
  bool writable = info && ((info->uid == *uid && (info->mode & 0200)) ||
                           (gid && info->gid == *gid && (info->mode & 0020)) || (info->mode & 0002));
  if (!writable)
    throw Error("the base image runs as user " + cfg_.user + ", who cannot write " + dir +
                    ", so pip would install with --user",
                "user installs are not supported: build from a base whose USER can write " + f_.purelib +
                    " (a venv owned by that user), or USER root");
}

void FactsReader::read_pip_configuration() { f_.pip_config = read_pip_config(fs_, f_.env, f_.prefix, f_.home); }

}  // namespace

PythonFacts read_python_facts(const ImageFilesystem& fs, const ImageConfigFacts& cfg, bool use_python3_names) {
  FactsReader reader(fs, cfg);
  reader.read_env();
  reader.find_commands(use_python3_names);
  reader.read_sys_executable();
  reader.find_venv();
  reader.read_python_version();
  reader.read_sysconfig();
  reader.read_micro_version();
  reader.read_distro();
  reader.read_install_scheme();
  reader.read_home();
  reader.read_site_dirs();
  reader.read_externally_managed();
  reader.read_installed();
  reader.read_platform();
  reader.check_user_can_install();
  reader.read_pip_configuration();
  return std::move(reader.facts());
}

InstallScheme PythonFacts::scheme_for(std::string_view project_name) const {
  return InstallScheme{purelib, platlib, include + "/" + std::string(project_name), scripts, data};
}

std::string PythonFacts::cache_tag() const {
  std::string nodot = python_version;
  nodot.erase(std::remove(nodot.begin(), nodot.end(), '.'), nodot.end());
  return "cpython-" + nodot;
}

std::string PythonFacts::env_value(std::string_view key) const {
  std::string found;
  for (const auto& [name, value] : env)
    if (name == key) found = value;  // the last one, as Docker applies Env
  return found;
}

const SiteDistribution* PythonFacts::find_installed(std::string_view name) const {
  std::string want = canonicalize_name(name);
  for (const auto& d : installed)
    if (canonicalize_name(d.name) == want) return &d;
  return nullptr;
}

// ---- JSON ----

}  // namespace trainpack::python

// std::optional<bool> as null or a boolean (PipConfig::use_pep517).
template <>
struct nlohmann::adl_serializer<std::optional<bool>> {
  static void to_json(nlohmann::json& j, const std::optional<bool>& v) {
    if (v) j = *v;
    else j = nullptr;
  }
  static void from_json(const nlohmann::json& j, std::optional<bool>& v) {
    if (j.is_null()) v.reset();
    else v = j.get<bool>();
  }
};

namespace trainpack::python {

NLOHMANN_JSON_SERIALIZE_ENUM(DistributionForm, {{DistributionForm::kDistInfo, "dist-info"},
                                                {DistributionForm::kEggInfo, "egg-info"},
                                                {DistributionForm::kDistutilsEggInfo, "distutils-egg-info"},
                                                {DistributionForm::kEgg, "egg"},
                                                {DistributionForm::kDevelop, "develop"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SiteDistribution, name, version, metadata_dir, record, site_dir, form, installer,
                                   egg_link, pth_file)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SysPathEntry, path, pth_file)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PipConfig, files, index_url, extra_index_urls, find_links, trusted_hosts,
                                   no_index, pre, compile, break_system_packages, prefer_binary, require_hashes,
                                   user, no_deps, ignore_installed, upgrade, upgrade_strategy, build_isolation,
                                   use_pep517, only_binary, no_binary, target, prefix, root, items)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PythonFacts, path, pip_command, pip_path, python_command, python_path,
                                   executable, interpreter, python_version, python_full_version, version_source,
                                   free_threaded, sysconfigdata, soabi, ext_suffix, abiflags, multiarch, platlibdir,
                                   py_debug, sysconfig_prefix, libdir, stdlib, prefix, base_prefix, venv, venv_home,
                                   include_system_site_packages, conda, distro_id, distro_version_id, distro_id_like,
                                   scheme_name, purelib, platlib, include, scripts, data, site_dirs, sys_path,
                                   externally_managed, externally_managed_error, installed, pip_version,
                                   elf_interpreter, libc, libc_version, machine, user, home, pip_config, env)

namespace {
constexpr int kJsonFormat = 2;
}

nlohmann::json to_json(const PythonFacts& facts) {
  nlohmann::json j;
  to_json(j, facts);
  return nlohmann::json{{"format", kJsonFormat}, {"facts", j}};
}

PythonFacts python_facts_from_json(const nlohmann::json& j) {
  try {
    if (j.at("format").get<int>() != kJsonFormat) throw Error("cached Python facts have another format version");
    PythonFacts f;
    from_json(j.at("facts"), f);
    return f;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("cached Python facts are malformed: ") + e.what(), "delete the cache entry");
  }
}

std::string find_command(const ImageFilesystem& fs, const std::vector<std::string>& env, std::string_view command) {
  if (command.find('/') != std::string_view::npos) {
    if (command.front() != '/') return std::string(command);  // relative to the working directory: not looked up
    return first_executable(ImageRoot{fs}, {"/"}, command);
  }
  std::map<std::string, std::string> vars;
  for (const auto& [key, value] : image::EnvList(env).pairs()) vars[key] = value;
  return first_executable(ImageRoot{fs}, path_dirs(env_or(vars, "PATH", kDefaultPath)), command);
}

}  // namespace trainpack::python
