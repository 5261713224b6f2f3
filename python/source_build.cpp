#include "python/source_build.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "python/records.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"
#include "support/process.h"

namespace trainpack::python {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// One script for every build action, run with the standard library only (-S) and given its request on stdin.
// It makes the process look like the image's pip process to the build (sys.executable, sys.prefix), adds the
// directories it is given with site.addsitedir (so their .pth files apply, as in pip's environments), then runs
// setup.py through pip's setuptools shim (utils/setuptools_build.py) or a PEP 517 hook as pyproject-hooks'
// _in_process does. Works on Python 3.6 and later.
constexpr const char* kBuildScript = R"py(
import json, os, sys
req = json.load(sys.stdin)
os.umask(0o022)
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]
sys.executable = req["sys_executable"]
sys.prefix = sys.exec_prefix = req["sys_prefix"]
sys.base_prefix = sys.base_exec_prefix = req["sys_base_prefix"]
import site
for d in req["site_dirs"]:
    site.addsitedir(d)
os.chdir(req["tree"])
action = req["action"]
if action == "setup.py":
    setup_py = os.path.join(req["tree"], "setup.py")
    sys.argv = [setup_py] + req["args"]
    try:
        import setuptools
    except ImportError:
        sys.stderr.write("ERROR: Can not execute `setup.py` since setuptools is not available in the "
                         "build environment.\n")
        sys.exit(1)
    import tokenize
    with getattr(tokenize, "open", open)(setup_py) as f:
        code = f.read().replace("\r\n", "\n")
    sys.dont_write_bytecode = req["dont_write_bytecode"]
    exec(compile(code, setup_py, "exec"), {"__name__": "__main__", "__file__": setup_py, "__builtins__": __builtins__})
    sys.exit(0)
for p in reversed(req["backend_path"]):
    sys.path.insert(0, os.path.abspath(p))
import importlib
module, _, obj = req["backend"].partition(":")
backend = importlib.import_module(module)
for part in filter(None, obj.split(".")):
    backend = getattr(backend, part)
result = None
if action == "get_requires_for_build_wheel":
    hook = getattr(backend, action, None)
    result = hook(None) if hook else []
elif action == "prepare_metadata_for_build_wheel":
    hook = getattr(backend, action, None)
    result = hook(req["metadata_dir"], None) if hook else None
elif action == "build_wheel":
    result = backend.build_wheel(req["out_dir"], None, req["metadata_dir"] or None)
with open(req["result"], "w") as f:
    json.dump({"result": result}, f)
)py";

std::vector<std::string> non_empty_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos = eol == std::string::npos ? text.size() : eol + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace

// The line that says why: the exception of the last traceback (its first unindented line: "ValueError: ..."),
// else the last line distutils or pip-style code prints for an error ("error: ...", "ERROR: ..."), else the last.
std::string build_failure_reason(const std::string& output) {
  std::vector<std::string> lines = non_empty_lines(output);
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (!lines[i].starts_with("Traceback (most recent call last)")) continue;
    for (std::size_t j = i + 1; j < lines.size(); ++j)
      if (lines[j][0] != ' ' && lines[j][0] != '\t') return lines[j];
    break;
  }
  for (std::size_t i = lines.size(); i-- > 0;)
    if (lines[i].starts_with("error:") || lines[i].starts_with("ERROR:")) return lines[i];
  return lines.empty() ? "it printed nothing" : lines.back();
}

// The last `n` non-empty lines of a build's output, indented.
std::string build_output_tail(const std::string& output, std::size_t n) {
  std::vector<std::string> lines = non_empty_lines(output);
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "\n    " + lines[i];
  return out;
}

namespace {

json request(const SourceBuild& b, const std::string& action) {
  return {{"sys_executable", b.sys_executable}, {"sys_prefix", b.sys_prefix}, {"sys_base_prefix", b.sys_base_prefix},
          {"site_dirs", b.site_dirs},           {"tree", b.tree.string()},  {"action", action},
          {"args", json::array()},              {"backend", ""},            {"backend_path", json::array()},
          {"metadata_dir", ""},                 {"out_dir", ""},            {"result", ""},
          {"dont_write_bytecode", false}};
}

bool image_env_set(const SourceBuild& b, std::string_view key) {
  for (const std::string& kv : b.image_env)
    if (kv.starts_with(std::string(key) + "=") && kv.size() > key.size() + 1) return true;
  return false;
}

// Runs the build script; throws Error naming the project, with the end of what the build said, when it fails.
void run_build(const SourceBuild& b, const json& req, const std::string& what) {
  if (!b.python) throw Error("internal: no interpreter for " + b.display);
  // Only what the request names goes on sys.path: the interpreter's own extra directories (the image's packages
  // for its pip) would break an isolated build.
  Interpreter python = *b.python;
  python.sys_path.clear();
  ProcessOptions options = python.process_options();
  for (const std::string& kv : b.image_env) options.env.push_back(kv);
  options.output_cap = 4u << 20;
  options.merge_stderr = true;
  options.run_as = b.run_as;  // a traceback (stderr) stays after what the build printed before it (stdout)
  options.confine = true;     // nothing the package's code starts outlives the call
  ProcessResult r = run_process(python.command({"-s", "-S", "-c", kBuildScript}), req.dump(), b.timeout, options);
  if (r.timed_out)
    throw Error(what + " " + b.display + " did not finish within " + std::to_string(b.timeout.count()) +
                    " s (--build-timeout), and was stopped",
                "raise --build-timeout if it needs longer, or publish a wheel for it");
  if (r.exit_code != 0)
    throw Error(what + " " + b.display + " with " + b.python->description + " failed: " +
                    build_failure_reason(r.out),
                "the end of its output:" + build_output_tail(r.out, 12) +
                    "\ncheck that it builds with pip in the image, or publish a wheel for it");
}

// A directory the build writes into: created and, when the build runs as another user, handed to it.
void writable_dir(const SourceBuild& b, const fs::path& dir) {
  fs::create_directories(dir);
  if (b.run_as) give_tree(dir, *b.run_as);
}

// A file the build left under `base`, read without following a symlink anywhere below `base`: the build runs as a
// user that cannot read what this process can, and must not get it read for it.
std::string read_build_output(const SourceBuild& b, const fs::path& base, const fs::path& file,
                              std::uintmax_t limit) {
  fs::path at = base;
  for (const fs::path& part : file.lexically_relative(base)) {
    at /= part;
    if (part == ".." || fs::is_symlink(at))
      throw Error("building " + b.display + " left a symlink at " + at.string() + " where its result is read",
                  "a build's results must be regular files");
  }
  return read_file(file, limit);
}

fs::path only_wheel_in(const fs::path& dir, const SourceBuild& b) {
  std::vector<fs::path> wheels;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".whl" && entry.symlink_status().type() == fs::file_type::regular)
      wheels.push_back(entry.path());
  std::sort(wheels.begin(), wheels.end());
  if (wheels.empty()) throw Error("building " + b.display + " left no wheel", "check its setup.py or build backend");
  return wheels.front();  // pip: more than one is a warning, and the first after sorting is used
}

}  // namespace

fs::path build_legacy_wheel(const SourceBuild& build, const fs::path& out_dir) {
  writable_dir(build, out_dir);
  json req = request(build, "setup.py");
  req["args"] = {"bdist_wheel", "-d", out_dir.string()};
  run_build(build, req, "building (setup.py bdist_wheel)");
  return only_wheel_in(out_dir, build);
}

EggInfo legacy_metadata(const SourceBuild& build, const fs::path& egg_base) {
  writable_dir(build, egg_base);
  json req = request(build, "setup.py");
  req["args"] = {"egg_info", "--egg-base", egg_base.string()};
  run_build(build, req, "preparing the metadata (setup.py egg_info) of");
  for (const auto& entry : fs::directory_iterator(egg_base)) {
    if (entry.path().extension() != ".egg-info" || entry.symlink_status().type() != fs::file_type::directory)
      continue;
    EggInfo out;
    out.pkg_info = read_build_output(build, egg_base, entry.path() / "PKG-INFO", 16u << 20);
    if (fs::exists(fs::symlink_status(entry.path() / "requires.txt")))
      out.requires_txt = read_build_output(build, egg_base, entry.path() / "requires.txt", 16u << 20);
    return out;
  }
  throw Error("setup.py egg_info of " + build.display + " wrote no .egg-info directory",
              "pip in the image fails the same way");
}

LegacyInstall legacy_install(const SourceBuild& build, const InstallScheme& scheme, const fs::path& stage) {
  writable_dir(build, stage);
  ScopedDir record_dir(make_temp_dir(build.python->scratch, "record-"));
  writable_dir(build, record_dir.path());
  fs::path record = record_dir.path() / "record.txt";
  json req = request(build, "setup.py");
  // pip passes no install directories; the image's pip computes them from its own sys.prefix, which is the
  // scheme trainpack already knows: given explicitly, they hold whichever interpreter runs the build.
  req["args"] = {"install", "--record", record.string(), "--single-version-externally-managed",
                 "--root", stage.string(), "--compile", "--install-headers", scheme.headers,
                 "--install-purelib", scheme.purelib, "--install-platlib", scheme.platlib,
                 "--install-scripts", scheme.scripts, "--install-data", scheme.data};
  req["dont_write_bytecode"] = image_env_set(build, "PYTHONDONTWRITEBYTECODE");
  run_build(build, req, "installing (setup.py install)");
  std::vector<std::string> lines;
  std::string text = read_build_output(build, record_dir.path(), record, 64u << 20);
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos = eol == std::string::npos ? text.size() : eol + 1;
    if (!line.empty()) lines.push_back(line);
  }
  LegacyInstall out = installed_files_from_record(lines, build.display);
  out.stage = stage;
  return out;
}

LegacyInstall installed_files_from_record(const std::vector<std::string>& record_lines, const std::string& display) {
  LegacyInstall out;
  for (const std::string& line : record_lines) {
    std::string dir(path_dir(line));
    if (dir.ends_with(".egg-info")) {
      out.egg_info_dir = dir;
      break;
    }
  }
  if (out.egg_info_dir.empty())
    throw Error(display + " did not indicate that it installed an .egg-info directory. Only setup.py projects "
                "generating .egg-info directories are supported.",
                "pip in the image fails the same way");
  std::vector<std::string> lines;
  for (std::string line : record_lines) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
    // pip appends os.sep to a directory first, which os.path.relpath drops again.
    lines.push_back(record_relative_path(line, out.egg_info_dir));
  }
  std::sort(lines.begin(), lines.end());
  for (const std::string& l : lines) out.installed_files_txt += l + "\n";
  if (lines.empty()) out.installed_files_txt = "\n";
  return out;
}

std::vector<std::string> pep517_requires_for_build_wheel(const SourceBuild& build, const Pep517Backend& backend) {
  ScopedDir work(make_temp_dir(build.python->scratch, "hook-"));
  writable_dir(build, work.path());
  json req = request(build, "get_requires_for_build_wheel");
  req["backend"] = backend.backend;
  req["backend_path"] = backend.backend_path;
  req["result"] = (work.path() / "result.json").string();
  run_build(build, req, "getting the build requirements of");
  json result =
      json::parse(read_build_output(build, work.path(), work.path() / "result.json", 1u << 20), nullptr, false);
  std::vector<std::string> out;
  if (result.is_object() && result["result"].is_array())
    for (const auto& r : result["result"])
      if (r.is_string()) out.push_back(r.get<std::string>());
  return out;
}

fs::path pep517_build_wheel(const SourceBuild& build, const Pep517Backend& backend, const fs::path& out_dir) {
  ScopedDir work(make_temp_dir(build.python->scratch, "hook-"));
  writable_dir(build, out_dir);
  fs::path metadata_dir = work.path() / "metadata";
  fs::create_directories(metadata_dir);
  writable_dir(build, work.path());
  json req = request(build, "prepare_metadata_for_build_wheel");
  req["backend"] = backend.backend;
  req["backend_path"] = backend.backend_path;
  req["metadata_dir"] = metadata_dir.string();
  req["result"] = (work.path() / "metadata.json").string();
  run_build(build, req, "preparing the metadata of");
  json prepared =
      json::parse(read_build_output(build, work.path(), work.path() / "metadata.json", 1u << 20), nullptr, false);
  std::string dist_info;
  if (prepared.is_object() && prepared["result"].is_string())
    dist_info = (metadata_dir / prepared["result"].get<std::string>()).string();
  req["action"] = "build_wheel";
  req["metadata_dir"] = dist_info;
  req["out_dir"] = out_dir.string();
  req["result"] = (work.path() / "wheel.json").string();
  run_build(build, req, "building");
  json built =
      json::parse(read_build_output(build, work.path(), work.path() / "wheel.json", 1u << 20), nullptr, false);
  if (built.is_object() && built["result"].is_string()) {
    std::string name = built["result"].get<std::string>();
    fs::path wheel = out_dir / name;
    if (name.find('/') == std::string::npos && fs::symlink_status(wheel).type() == fs::file_type::regular)
      return wheel;
  }
  return only_wheel_in(out_dir, build);
}

}  // namespace trainpack::python
