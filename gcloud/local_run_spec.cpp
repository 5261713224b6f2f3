#include "gcloud/local_run_spec.h"

#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <system_error>

#include "gcloud/gcloud_flags.h"
#include "support/error.h"
#include "support/paths.h"
#include "support/python_strings.h"
#include "support/redact.h"
#include "support/utf8.h"

namespace trainpack::gcloud {

namespace fs = std::filesystem;

namespace {

// ----- Python path semantics (posixpath), which gcloud's checks are written in -----

// posixpath.normpath: lexical; keeps exactly two leading slashes, drops "." and empty components, folds "..".
std::string normpath(std::string_view path) {
  if (path.empty()) return ".";
  std::size_t initial_slashes = 0;
  if (path.starts_with('/')) initial_slashes = (path.starts_with("//") && !path.starts_with("///")) ? 2 : 1;
  std::vector<std::string_view> comps;
  for (std::string_view comp : path_components(path)) {
    if (comp != ".." || (initial_slashes == 0 && comps.empty()) || (!comps.empty() && comps.back() == "..")) {
      comps.push_back(comp);
    } else if (!comps.empty()) {
      comps.pop_back();
    }
  }
  std::string out(initial_slashes, '/');
  for (std::size_t i = 0; i < comps.size(); ++i) {
    if (i) out += '/';
    out += comps[i];
  }
  return out.empty() ? "." : out;
}

// os.path.expanduser: "~" and "~/..." from $HOME (else the password database), "~user/..." from the database;
// anything else, or an unknown user, unchanged.
std::string expanduser(std::string_view path) {
  if (!path.starts_with('~')) return std::string(path);
  std::size_t end = path.find('/', 1);
  if (end == std::string_view::npos) end = path.size();
  std::string home;
  if (end == 1) {
    if (const char* env = std::getenv("HOME")) {
      home = env;
    } else if (const passwd* pw = getpwuid(getuid())) {
      home = pw->pw_dir;
    } else {
      return std::string(path);
    }
  } else {
    const std::string user(path.substr(1, end - 1));
    const passwd* pw = getpwnam(user.c_str());
    if (!pw) return std::string(path);
    home = pw->pw_dir;
  }
  while (!home.empty() && home.back() == '/') home.pop_back();
  std::string out = home + std::string(path.substr(end));
  return out.empty() ? "/" : out;
}

// os.path.abspath
std::string abspath(std::string_view path) {
  if (path.starts_with('/')) return normpath(path);
  return normpath(fs::current_path().string() + "/" + std::string(path));
}

// True when following the components of a relative path goes above its starting directory at some point
// ("../x", "a/../../x", and also "../pkg/x" which normpath would fold back into the package).
bool climbs_out(std::string_view rel) {
  long depth = 0;
  for (std::string_view comp : path_components(rel)) {
    if (comp != "..") ++depth;
    else if (--depth < 0) return true;
  }
  return false;
}

// `inner` is `outer` or below it (both absolute and normalized).
bool is_within(const fs::path& outer, const fs::path& inner) {
  auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end() || (std::next(o) == outer.end() && o->empty());  // tolerate a trailing separator
}

// ----- messages -----

// calliope's InvalidArgumentException text.
std::string invalid_value(std::string_view flag, std::string_view message) {
  return "Invalid value for [" + std::string(flag) + "]: " + std::string(message);
}

std::string single_quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

enum class Expect { kFile, kDirectory };

// One path that must lie in the package dir: gcloud's existence check (os.path.normpath(os.path.join(pkg, p)) must be
// an existing file or directory), preceded and followed by trainpack's containment checks. `path` is what is
// checked, `shown` what the user typed.
void check_package_member(const std::string& pkg, std::string_view flag, std::string_view shown, std::string_view path,
                          Expect expect, std::string_view not_found_what) {
  const std::string pkg_hint = "paths are relative to the package dir " + single_quoted(pkg) +
                               " (--local-package-path), the build context; Docker sees nothing outside it";
  if (path.starts_with('/')) {
    const fs::path absolute = normpath(path);
    std::string hint = "Docker resolves an absolute COPY source inside the build context, not on the host; ";
    if (is_within(fs::path(pkg), absolute)) {
      hint += "write it relative to the package dir: " +
              single_quoted(absolute.lexically_relative(fs::path(pkg)).generic_string());
    } else {
      hint += pkg_hint;
    }
    throw Error(invalid_value(flag, "path outside the package dir: " + single_quoted(shown) +
                                        " is an absolute path; it must be relative to " + single_quoted(pkg) + "."),
                hint);
  }
  if (climbs_out(path)) {
    throw Error(invalid_value(flag, "path outside the package dir: " + single_quoted(shown) + " leaves " +
                                        single_quoted(pkg) + "."),
                pkg_hint);
  }
  const fs::path target = normpath(pkg + "/" + std::string(path));
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);  // follows symlinks, like os.path.isfile / isdir
  const bool ok = expect == Expect::kFile ? fs::is_regular_file(status) : fs::is_directory(status);
  if (!ok) {
    std::string hint;
    if (fs::exists(status)) {
      hint = single_quoted(target.string()) + (expect == Expect::kFile ? " is not a regular file" : " is not a directory");
    } else if (fs::is_symlink(fs::symlink_status(target, ec))) {
      hint = single_quoted(target.string()) + " is a dangling symlink";
    } else {
      hint = pkg_hint;
    }
    throw Error(invalid_value(flag, std::string(not_found_what) + " " + single_quoted(shown) +
                                        " is not found under the package: " + single_quoted(pkg) + "."),
                hint);
  }
  // Symlinks: the file Docker would copy must really be inside the package dir.
  std::error_code ec_real, ec_pkg;
  const fs::path real = fs::canonical(target, ec_real);
  const fs::path real_pkg = fs::canonical(fs::path(pkg), ec_pkg);
  if (!ec_real && !ec_pkg && !is_within(real_pkg, real)) {
    throw Error(invalid_value(flag, "path outside the package dir: " + single_quoted(shown) + " resolves to " +
                                        single_quoted(real.string()) + ", outside " + single_quoted(real_pkg.string()) +
                                        "."),
                "a symlink leads out of the build context; copy the file into the package dir instead");
  }
}

// build.py's os.path.isfile for setup.py and requirements.txt, except that a FIFO, a device or a socket there (or
// a link to one) is refused: gcloud would skip it and docker build would then copy or read it.
bool is_root_file(const fs::path& p) {
  std::error_code ec;
  const fs::file_status status = fs::status(p, ec);
  if (fs::is_regular_file(status) || !fs::exists(status) || fs::is_directory(status)) return fs::is_regular_file(status);
  const char* kind = fs::is_fifo(status) ? "a FIFO" : fs::is_socket(status) ? "a socket" : "a device";
  throw Error(p.lexically_normal().string() + " is " + kind + ", not a regular file",
              "replace it with a regular file, or remove it");
}

// ----- the Docker reference grammar gcloud checks (utils.py ValidateRepositoryAndTag) -----

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }
bool is_lower_alnum(char32_t c) { return (c >= U'a' && c <= U'z') || is_digit(c); }
bool is_alnum(char32_t c) { return is_lower_alnum(c) || (c >= U'A' && c <= U'Z'); }
bool is_word(char32_t c) { return is_alnum(c) || c == U'_'; }  // \w, ASCII only (see the header)

// ^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$
bool is_host_component(std::u32string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char32_t c) { return is_alnum(c) || c == U'-'; });
}

// ^[0-9]+$
bool is_port(std::u32string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

// ^[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*$ : lowercase alphanumeric runs, each maximal run between them being
// ".", "_", "__" or one or more "-".
bool is_path_component(std::u32string_view s) {
  if (s.empty() || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) return false;
  std::size_t i = 0;
  while (i < s.size()) {
    if (is_lower_alnum(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && !is_lower_alnum(s[j])) ++j;
    const std::u32string_view sep = s.substr(i, j - i);
    const bool dashes = std::all_of(sep.begin(), sep.end(), [](char32_t c) { return c == U'-'; });
    if (!(sep == U"." || sep == U"_" || sep == U"__" || dashes)) return false;
    i = j;
  }
  return true;
}

// ^[\w][\w.-]{0,127}$
bool is_tag(std::u32string_view s) {
  if (s.empty() || s.size() > 128 || !is_word(s.front())) return false;
  return std::all_of(s.begin(), s.end(), [](char32_t c) { return is_word(c) || c == U'.' || c == U'-'; });
}

std::vector<std::u32string_view> split_on(std::u32string_view s, char32_t sep) {
  std::vector<std::u32string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::u32string_view::npos ? at : at - start));
    if (at == std::u32string_view::npos) return parts;
    start = at + 1;
  }
}

// Code points back to the bytes they came from (python_code_points is lossless).
std::string to_bytes(std::u32string_view s) {
  std::string out;
  for (const char32_t c : s) {
    if (c >= 0xDC80 && c <= 0xDCFF) out += static_cast<char>(c - 0xDC00);  // an undecodable byte
    else append_utf8(out, c);
  }
  return out;
}

constexpr std::string_view kNameRules =
    "Docker image names are [HOST[:PORT]/]path/components[:tag]: path components use lowercase letters, digits and "
    "single '.', '_', '__' or runs of '-' between them";
constexpr std::string_view kTagRules =
    "a tag is 1 to 128 characters from [A-Za-z0-9_.-] and does not start with '.' or '-'";

}  // namespace

void add_local_run_flags(CLI::App& cmd, LocalRunFlags& flags) {
  add_value_flag(cmd, "--executor-image-uri", flags.executor_image_uri, "IMAGE_URI",
                 "URI or ID of the image that runs the application (FROM), e.g. a Vertex AI prebuilt training image");
  cmd.get_option("--executor-image-uri")->required();
  add_value_flag(cmd, "--local-package-path", flags.local_package_path, "LOCAL_PATH",
                 "Directory holding the script or module; the build context (default: the current directory)");
  add_value_flag(cmd, "--script", flags.script, "SCRIPT",
                 "Path of the file to run, relative to the package path: a Python file or a bash script");
  add_value_flag(cmd, "--python-module", flags.python_module, "PYTHON_MODULE",
                 "Python module to run (trainer.task), relative to the package path");
  // custom_jobs/flags.py AddLocalRunCustomJobFlags: type=arg_parsers.ArgList(), argparse's default action 'store'.
  add_list_flag(cmd, "--requirements", flags.requirements, RepeatedList::kLastWins, "REQUIREMENTS",
                "PyPI requirements, each installed with pip install --upgrade (a gcloud list; given twice, the last "
                "counts)");
  add_list_flag(cmd, "--extra-packages", flags.extra_packages, RepeatedList::kLastWins, "PACKAGE",
                "Local Python archives under the package path to pip install (a gcloud list; the last counts)");
  add_list_flag(cmd, "--extra-dirs", flags.extra_dirs, RepeatedList::kLastWins, "EXTRA_DIR",
                "Directories under the package path to copy besides the script's directory (a gcloud list; the last "
                "counts)");
  add_value_flag(cmd, "--output-image-uri", flags.output_image_uri, "OUTPUT_IMAGE",
                 "Name of the image to build (default: cloudai-autogenerated/<script>:<timestamp>)");
  add_value_flag(cmd, "--service-account-key-file", flags.service_account_key_file, "KEY_FILE",
                 "Key file mounted into the container at run time (never copied into the image)");
  cmd.add_flag("--gpu", flags.gpu, "Run the container with GPU support");
}

DockerfileSpec LocalRunSpec::dockerfile_spec() const {
  if (!builds_image()) {
    throw Error("no image is built: neither --script nor --python-module was given",
                "the executor image runs unchanged; pass --script or --python-module to build one");
  }
  DockerfileSpec spec;
  spec.base_image = executor_image_uri;
  spec.has_setup_py = has_setup_py;
  spec.has_requirements_txt = has_requirements_txt;
  spec.extra_packages = extra_packages;
  spec.requirements = requirements;
  spec.extra_dirs = extra_dirs;
  spec.script = script;
  spec.python_module = python_module;
  spec.derive();
  return spec;
}

namespace {

// ValidateLocalRunArgs: the package path is made absolute (after "~" expansion) and must be a directory.
std::string package_dir_of(const LocalRunFlags& flags) {
  if (flags.local_package_path.empty()) return fs::current_path().string();
  std::string pkg = abspath(expanduser(flags.local_package_path));
  std::error_code ec;
  const fs::file_status status = fs::status(pkg, ec);
  if (ec == std::errc::permission_denied || (fs::is_directory(status) && ::access(pkg.c_str(), R_OK | X_OK) != 0))
    throw Error(invalid_value("--local-package-path", "Directory " + single_quoted(pkg) +
                                                         " cannot be read: Permission denied."),
                "the user running the build needs to read it, and to search every directory above it");
  if (!fs::is_directory(status)) {
    throw Error(invalid_value("--local-package-path", "Directory " + single_quoted(pkg) + " is not found."),
                fs::exists(status) ? single_quoted(pkg) + " exists but is not a directory"
                                   : "the package path is the directory that holds your training code");
  }
  return pkg;
}

// _ValidBuildArgsOfLocalRun: which build-only flags were given (gcloud tests truthiness: empty means absent).
std::vector<std::string> build_args_given(const LocalRunFlags& flags) {
  std::vector<std::string> build_args;
  if (!flags.script.empty()) build_args.push_back("script");
  if (!flags.python_module.empty()) build_args.push_back("python-module");
  if (!flags.requirements.empty()) build_args.push_back("requirements");
  if (!flags.extra_packages.empty()) build_args.push_back("extra-packages");
  if (!flags.extra_dirs.empty()) build_args.push_back("extra-dirs");
  if (!flags.output_image_uri.empty()) build_args.push_back("output-image-uri");
  return build_args;
}

void require_script_or_module(const LocalRunFlags& flags, std::vector<std::string> build_args) {
  if (!flags.script.empty() || !flags.python_module.empty()) return;
  std::sort(build_args.begin(), build_args.end());
  std::string names;
  for (const auto& name : build_args) names += (names.empty() ? "" : ", ") + name;
  // calliope's MinimumArgumentException; the doubled final period is gcloud's ("...`." + ".").
  throw Error("One of [--script, --python-module] must be supplied: They are required to build a training "
              "container image. Otherwise, please remove flags [" +
                  names + "] to directly run the `executor-image-uri`..",
              "add --script or --python-module to build an image, or drop those flags to run the executor image");
}

// The files the image is built from, each checked to be in the package directory `pkg`.
void set_build_inputs(LocalRunSpec& spec, const LocalRunFlags& flags, const std::string& pkg) {
  // The main script. For --python-module gcloud checks (and names the image after) ModuleToPath(module).
  const bool is_module = flags.script.empty();
  spec.python_module = flags.python_module;
  spec.script = is_module ? module_to_path(flags.python_module) : flags.script;
  std::string script_path = spec.script;  // the Dockerfile turns '\' into '/', so that is the file it needs
  std::replace(script_path.begin(), script_path.end(), '\\', '/');
  check_package_member(pkg, is_module ? "--python-module" : "--script", spec.script, script_path, Expect::kFile,
                       "File");

  for (const auto& package : flags.extra_packages) {
    check_package_member(pkg, "--extra-packages", package, package, Expect::kFile, "Package file");
  }
  for (const auto& dir : flags.extra_dirs) {
    check_package_member(pkg, "--extra-dirs", dir, dir, Expect::kDirectory, "Directory");
  }
  spec.requirements = flags.requirements;
  spec.extra_packages = flags.extra_packages;
  spec.extra_dirs = flags.extra_dirs;

  // build.py BuildImage: only these two root files are looked for.
  spec.has_setup_py = is_root_file(fs::path(pkg + "/./setup.py"));
  spec.has_requirements_txt = is_root_file(fs::path(pkg + "/./requirements.txt"));
}

void set_output_image(LocalRunSpec& spec, const LocalRunFlags& flags) {
  if (flags.output_image_uri.empty()) {
    spec.output_image = default_local_image_name(spec, std::chrono::system_clock::now());
    spec.output_image_generated = true;
    return;
  }
  try {
    validate_repository_and_tag(flags.output_image_uri);
  } catch (const Error& e) {
    throw Error(invalid_value("--output-image-uri", e.what()), e.hint());
  }
  spec.output_image = flags.output_image_uri;
}

}  // namespace

LocalRunSpec validate_local_run(const LocalRunFlags& flags) {
  // argparse's mutually exclusive group, checked while parsing, i.e. before anything else (argparse exits 2).
  if (!flags.script.empty() && !flags.python_module.empty()) {
    throw UsageError("argument --script: At most one of --python-module | --script can be specified.",
                "--python-module a.b.c runs a/b/c.py as a module; give either it or --script");
  }
  if (flags.executor_image_uri.empty()) {
    throw Error(invalid_value("--executor-image-uri", "the base image must not be empty."),
                "e.g. --executor-image-uri=us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest");
  }

  LocalRunSpec spec;
  spec.executor_image_uri = flags.executor_image_uri;
  spec.service_account_key_file = flags.service_account_key_file;
  spec.gpu = flags.gpu;
  spec.prebuilt = is_vertex_prebuilt_image(flags.executor_image_uri);
  const std::string pkg = package_dir_of(flags);
  spec.package_dir = pkg;

  std::vector<std::string> build_args = build_args_given(flags);
  if (build_args.empty()) return spec;  // nothing to build: the executor image runs as is
  require_script_or_module(flags, std::move(build_args));
  set_build_inputs(spec, flags, pkg);
  const DockerfileSpec dockerfile = spec.dockerfile_spec();
  spec.parent_dir = dockerfile.parent_dir;
  spec.entrypoint = dockerfile.entrypoint;
  set_output_image(spec, flags);
  return spec;
}

std::string sanitize_repository_name(std::string_view name) {
  // GenerateImageName passes `base_name or "unnamed"`.
  const std::u32string in = python_code_points(name.empty() ? std::string_view("unnamed") : name);
  // str.lower(). Only two non-ASCII characters lowercase to anything ASCII (U+0130 to "i" + U+0307, KELVIN SIGN
  // U+212A to "k"); every other non-ASCII character stays non-ASCII and is replaced below anyway.
  std::u32string lower;
  for (const char32_t c : in) {
    if (c >= U'A' && c <= U'Z') {
      lower += static_cast<char32_t>(c - U'A' + U'a');
    } else if (c == 0x130) {
      lower += U"i\u0307";
    } else if (c == 0x212A) {
      lower += U'k';
    } else {
      lower += c;
    }
  }
  // re.sub("[._][._]+|[^a-z0-9._-]+", ".", ...): left to right, the first alternative tried first.
  const auto allowed = [](char32_t c) { return is_lower_alnum(c) || c == U'.' || c == U'_' || c == U'-'; };
  const auto dot_or_underscore = [](char32_t c) { return c == U'.' || c == U'_'; };
  std::string out;
  std::size_t i = 0;
  while (i < lower.size()) {
    if (dot_or_underscore(lower[i]) && i + 1 < lower.size() && dot_or_underscore(lower[i + 1])) {
      while (i < lower.size() && dot_or_underscore(lower[i])) ++i;
      out += '.';
    } else if (!allowed(lower[i])) {
      while (i < lower.size() && !allowed(lower[i])) ++i;
      out += '.';
    } else {
      out += static_cast<char>(lower[i++]);
    }
  }
  // .strip("._-")
  const std::size_t first = out.find_first_not_of("._-");
  if (first == std::string::npos) return {};
  return out.substr(first, out.find_last_not_of("._-") - first + 1);
}

std::string local_image_tag(std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  const auto seconds = floor<std::chrono::seconds>(when);
  const auto micros = duration_cast<microseconds>(when - seconds).count();
  const std::time_t t = system_clock::to_time_t(seconds);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y%m%d.%H.%M.%S", &local);
  std::string tag(buf, n);
  std::string us = std::to_string(micros);
  tag += '.' + std::string(6 - std::min<std::size_t>(6, us.size()), '0') + us;  // %f
  return tag;
}

std::string default_local_image_name(const LocalRunSpec& spec, std::chrono::system_clock::time_point when) {
  return "cloudai-autogenerated/" + sanitize_repository_name(spec.script) + ":" + local_image_tag(when);
}

void validate_repository_and_tag(std::string_view image_name) {
  const auto fail = [&](const std::string& reason, std::string_view hint) {
    throw Error(mask_userinfo(single_quoted(image_name) + " is not a valid container image uri: " + reason),
                std::string(hint));
  };
  const std::u32string name = python_code_points(image_name);

  // _ParseRepositoryTag
  if (std::count(name.begin(), name.end(), U':') > 2) {
    fail("Unable to parse repository and tag.", "an image name has at most two ':' (HOST:PORT/NAME:TAG)");
  }
  std::u32string_view repository = name;
  std::u32string_view tag;
  bool has_tag = false;
  if (const std::size_t colon = name.rfind(U':'); colon != std::u32string::npos) {
    const std::u32string_view after = std::u32string_view(name).substr(colon + 1);
    if (after.find(U'/') == std::u32string_view::npos) {
      repository = std::u32string_view(name).substr(0, colon);
      tag = after;
      has_tag = true;
    }
  }
  if (repository.size() > 255) {
    fail("Repository name must not be more than 255 characters.", kNameRules);
  }

  // _ParseRepositoryHost: the first of several components is a host if it has a '.' or ':'.
  std::vector<std::u32string_view> components = split_on(repository, U'/');
  if (components.size() > 1 &&
      components[0].find_first_of(U".:") != std::u32string_view::npos) {
    const std::u32string_view host = components[0];
    components.erase(components.begin());
    // _ParseHostPort
    std::u32string_view host_name = host;
    std::u32string_view port;
    bool has_port = false;
    if (const std::size_t colon = host.rfind(U':'); colon != std::u32string_view::npos) {
      host_name = host.substr(0, colon);
      port = host.substr(colon + 1);
      has_port = true;
    }
    const auto parts = split_on(host_name, U'.');
    // gcloud skips an empty port ("host:/name"); Docker rejects it, so do we.
    if (!std::all_of(parts.begin(), parts.end(), is_host_component) || (has_port && !is_port(port))) {
      fail("Invalid hostname/port \"" + to_bytes(host) + "\" in repository name.",
           "a registry host is DNS labels of letters, digits and '-' separated by '.', optionally :PORT");
    }
  }
  for (const auto component : components) {
    if (component.empty()) fail("Empty path component in repository name.", "remove the doubled or outer '/'");
    if (!is_path_component(component)) {
      fail("Invalid path component \"" + to_bytes(component) + "\" in repository name.", kNameRules);
    }
  }
  // gcloud validates the tag only when it is non-empty; Docker rejects "name:", so an empty tag is refused too.
  if (has_tag) {
    if (tag.size() > 128) fail("Tag name must not be more than 128 characters.", kTagRules);
    if (!is_tag(tag)) fail("Invalid tag.", kTagRules);
  }
}

}  // namespace trainpack::gcloud
