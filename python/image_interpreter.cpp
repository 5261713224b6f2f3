#include "python/image_interpreter.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>
#include <set>

#include "image/digest.h"
#include "layers/image_extract.h"
#include "python/names.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"

namespace trainpack::python {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Bump whenever what is extracted or interpreter.json changes: it is part of the cache key.
constexpr int kFormat = 1;
constexpr std::uint64_t kLibraryCandidateCap = 64u << 20;

std::string image_path(std::string_view p) { return "/" + normalize_path(p); }

std::string host_machine() {
  struct utsname u {};
  return ::uname(&u) == 0 ? u.machine : "";
}

void check_host_can_run(const PythonFacts& facts) {
  std::string host = host_machine();
  if (facts.machine != host)
    throw Error("the base image's Python is a " + facts.machine + " program and this host is " + host +
                    ", so it cannot run here",
                "build on a " + facts.machine + " machine, install python" + facts.python_version +
                    " here (--build-python=host), or pass --no-compile");
  if (!facts.elf_interpreter.empty() && facts.libc != "glibc" && facts.libc != "musl")
    throw Error("the base image's " + facts.interpreter + " uses the loader " + facts.elf_interpreter +
                    ", which trainpack does not know how to start",
                "install python" + facts.python_version + " on this host (--build-python=host), or pass --no-compile");
}

// The dynamic section's loader, resolved inside the image (Debian 11: /lib64/ld-linux-x86-64.so.2 is an absolute
// symlink to /lib/x86_64-linux-gnu/ld-2.31.so).
std::string resolve_loader(const layers::ImageFilesystem& fs, const PythonFacts& facts) {
  if (facts.elf_interpreter.empty()) return {};
  std::string loader = image_path(fs.resolve(facts.elf_interpreter));
  if (!fs.is_file(loader))
    throw Error("the base image has no " + facts.elf_interpreter + ", the loader its " + facts.interpreter + " names",
                "the base image is incomplete; install python" + facts.python_version + " on this host");
  return loader;
}

void plan_stdlib(const layers::ImageFilesystem& fs, const PythonFacts& facts, InterpreterPlan& plan) {
  std::string stdlib = facts.stdlib.empty() ? plan.home + "/lib/python" + facts.python_version : facts.stdlib;
  std::string platstdlib = plan.home + "/" + facts.platlibdir + "/python" + facts.python_version;
  for (const std::string& dir : {stdlib, platstdlib}) {
    std::string resolved = image_path(fs.resolve(dir));
    if (fs.is_dir(resolved) && std::find(plan.stdlib.begin(), plan.stdlib.end(), resolved) == plan.stdlib.end())
      plan.stdlib.push_back(resolved);
  }
  if (plan.stdlib.empty())
    throw Error("the base image has no standard library for " + facts.interpreter + " at " + stdlib,
                "install python" + facts.python_version + " on this host (--build-python=host)");
  for (const std::string& dir : {platstdlib, stdlib})
    if (plan.lib_dynload.empty() && fs.is_dir(dir + "/lib-dynload"))
      plan.lib_dynload = image_path(fs.resolve(dir + "/lib-dynload"));
}

void plan_site_items(const layers::ImageFilesystem& fs, const PythonFacts& facts,
                     const std::vector<std::string>& packages, InterpreterPlan& plan) {
  if (packages.empty()) return;
  for (const std::string& dir : facts.site_dirs) {
    bool used = false;
    for (const std::string& child : fs.children(dir)) {
      if (!names_package(child, packages)) continue;
      plan.site_items.push_back(image_path(dir + "/" + child));
      used = true;
    }
    if (used) plan.site_dirs.push_back(image_path(dir));
  }
  // Debian's pip is "debundled": pip/_vendor/__init__.py puts the wheels of its dependencies from
  // <sys.prefix>/share/python-wheels on sys.path.
  std::string wheels = plan.home + "/share/python-wheels";
  if (std::find(packages.begin(), packages.end(), "pip") != packages.end() && fs.is_dir(wheels))
    plan.extras.push_back(image_path(wheels));
}

bool is_library_name(std::string_view name) { return name.find(".so") != std::string_view::npos; }

// The search directories (resolved in the image) whose libraries are worth copying while their layer is read.
std::set<std::string> candidate_dirs(const layers::ImageFilesystem& fs, const distro::LibrarySearch& search) {
  std::set<std::string> out;
  for (const auto* list : {&search.library_path, &search.configured, &search.system})
    for (const std::string& d : *list) out.insert(fs.resolve(d));
  return out;
}

// The ELF objects whose libraries are needed: the interpreter and every extension module in lib-dynload.
std::vector<std::string> closure_roots(const layers::ImageFilesystem& fs, const InterpreterPlan& plan) {
  std::vector<std::string> roots{plan.interpreter};
  if (!plan.lib_dynload.empty())
    for (const std::string& child : fs.children(plan.lib_dynload))
      if (child.ends_with(".so")) roots.push_back(plan.lib_dynload + "/" + child);
  return roots;
}

// Copies the loader, the interpreter, the trees of the plan, and the libraries: those in the search directories
// of the layers read anyway are copied on the chance they are needed, then the closure is worked out from the
// copies; what it needs and was not copied is read in one more pass (rarely), what it does not need is dropped.
distro::LibraryClosure extract_plan(const layers::ScannedImage& image, const InterpreterPlan& plan,
                                    layers::ImageExtraction& extraction) {
  if (!plan.loader.empty()) extraction.add(plan.loader);
  extraction.add(plan.interpreter);
  for (const std::string& dir : plan.stdlib) {
    const std::string base = normalize_path(dir);  // the paths below it come without the leading "/"
    extraction.add(dir, [&base](std::string_view p) { return left_out_of_stdlib(p.substr(base.size())); });
  }
  for (const std::string& tree : plan.extras) extraction.add(tree);
  for (const std::string& item : plan.site_items) extraction.add(item);
  const std::set<std::string> dirs = candidate_dirs(image, plan.search);
  auto candidate = [&dirs](std::string_view path, std::uint64_t size) {
    return size <= kLibraryCandidateCap && is_library_name(path_base(path)) && dirs.count(std::string(path_dir(path)));
  };
  extraction.copy(candidate);
  auto read = [&extraction](const std::string& path) -> std::optional<std::string> {
    std::string rel = normalize_path(path);
    if (!extraction.has(rel)) return std::nullopt;
    return read_file(extraction.destination() / rel, 1u << 30);
  };
  const std::vector<std::string> roots = closure_roots(image, plan);
  for (int round = 0;; ++round) {
    distro::LibraryClosure closure = distro::library_closure(image, plan.search, plan.interpreter, roots, read);
    if (closure.unread.empty() || round == 8) {
      for (const distro::FoundLibrary& lib : closure.libraries) extraction.add(lib.path);
      extraction.copy();  // the names the loader looks up (libz.so.1 -> libz.so.1.2.13); no layer is read again
      return closure;
    }
    for (const std::string& path : closure.unread) extraction.add(path);
    extraction.copy(candidate);
  }
}

void drop_unneeded_candidates(const layers::ImageFilesystem& fs, const distro::LibraryClosure& closure,
                              layers::ImageExtraction& extraction) {
  std::set<std::string> needed;
  for (const distro::FoundLibrary& lib : closure.libraries) needed.insert(fs.resolve(lib.path));
  std::vector<std::string> unneeded;
  for (const std::string& path : extraction.opportunistic())
    if (!needed.count(path)) unneeded.push_back(path);
  for (const std::string& path : unneeded) extraction.drop_opportunistic(path);
}

// --library-path: the directories the image's loader searches for everyone (LD_LIBRARY_PATH, the configured and
// built-in ones, and absolute run paths, which would otherwise lead to the host) that hold a needed library, in
// the loader's order. Libraries found through $ORIGIN are found again by the loader itself, inside the copy.
std::vector<std::string> library_dirs(const layers::ImageFilesystem& fs, const InterpreterPlan& plan,
                                      const distro::LibraryClosure& closure) {
  std::vector<std::string> order = plan.search.library_path;
  for (const distro::FoundLibrary& lib : closure.libraries)
    if (lib.from_rpath && !lib.origin_relative) order.push_back(lib.directory);
  for (const auto* list : {&plan.search.configured, &plan.search.system})
    order.insert(order.end(), list->begin(), list->end());
  std::set<std::string> used;
  for (const distro::FoundLibrary& lib : closure.libraries)
    if (!lib.origin_relative) used.insert(image_path(fs.resolve(lib.directory)));
  std::vector<std::string> out;
  for (const std::string& dir : order) {
    std::string resolved = image_path(fs.resolve(dir));
    if (used.count(resolved) && std::find(out.begin(), out.end(), resolved) == out.end()) out.push_back(resolved);
  }
  return out;
}

void check_closure(const InterpreterPlan& plan, const distro::LibraryClosure& closure,
                   const std::function<void(const std::string&)>& log) {
  for (const auto& m : closure.missing) {
    if (m.root == plan.interpreter)
      throw Error("the base image's " + plan.interpreter + " needs " + m.name + " (for " + m.needer +
                      "), which its loader would not find in the image",
                  "the base image's Python is broken; install a python of its version on this host "
                  "(--build-python=host), or pass --no-compile");
    if (log) log("the base image's " + m.root + " needs " + m.name + ", which the image lacks; it cannot be imported");
  }
  if (!closure.unread.empty())
    throw Error("internal: the libraries of the base image's " + plan.interpreter + " kept asking for more passes");
}

std::string cache_key(const layers::ScannedImage& image, const InterpreterPlan& plan) {
  json key = {{"format", kFormat}, {"plan", plan.to_json()}, {"layers", json::array()}};
  for (std::size_t i = 0; i < image.layer_count(); ++i) key["layers"].push_back(image.layer_digest(i).str());
  return image::sha256_of(key.dump()).hex().substr(0, 32);
}

// Extracts into a staging directory beside the entry and renames it into place (another build may win the race:
// then its entry is used). Returns the entry.
fs::path extract_to_cache(const layers::ScannedImage& image, const InterpreterPlan& plan,
                          const store::CacheArea& entries, const std::function<void(const std::string&)>& log) {
  const std::string key = cache_key(image, plan);
  fs::path entry = entries.path_of(key);
  std::error_code ec;
  if (entries.use(key) && fs::exists(entry / "interpreter.json", ec)) return entry;
  fs::create_directories(entries.dir());
  if (log) log("copying the base image's " + plan.interpreter + " with its standard library and libraries into " +
               entry.string());
  ScopedDir staging(make_temp_dir(entry.parent_path(), ".extract-"));
  layers::ImageExtraction extraction(image, staging.path() / "root");
  distro::LibraryClosure closure = extract_plan(image, plan, extraction);
  check_closure(plan, closure, log);
  drop_unneeded_candidates(image, closure, extraction);
  json manifest = {{"loader", plan.loader},     {"interpreter", plan.interpreter},
                   {"home", plan.home},         {"musl", plan.search.musl},
                   {"site_dirs", plan.site_dirs}, {"library_dirs", library_dirs(image, plan, closure)}};
  write_file_atomic(staging.path() / "interpreter.json", manifest.dump(2));
  fs::rename(staging.path(), entry, ec);
  if (!ec) staging.release();
  else if (!fs::exists(entry / "interpreter.json")) throw Error("cannot store " + entry.string() + ": " + ec.message());
  return entry;
}

// Single-quoted for sh(1).
std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// sys.executable is the copy's interpreter, which only runs through the image's loader: children started with it
// (pip's build subprocesses) go through a launcher instead, set by a sitecustomize that site.py imports.
void add_launcher(Interpreter& python) {
  fs::path launcher = python.scratch / "bin" / ("python" + python.major_minor);
  std::string script = "#!/bin/sh\nexec";
  for (const std::string& a : python.argv) script += " " + sh_quote(a);
  fs::create_directories(launcher.parent_path());
  write_file_atomic(launcher, script + " \"$@\"\n");
  fs::permissions(launcher, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  fs::path site = python.scratch / "site";
  fs::create_directories(site);
  std::string literal = json(launcher.string()).dump();  // a JSON string is a valid Python string literal
  write_file_atomic(site / "sitecustomize.py", "import sys\nsys.executable = " + literal + "\n");
  python.sys_path.insert(python.sys_path.begin(), site.string());
}

}  // namespace

Interpreter launch_image_interpreter(const fs::path& entry, const PythonFacts& facts, const fs::path& scratch) {
  json manifest = json::parse(read_file(entry / "interpreter.json"));
  const fs::path root = entry / "root";
  auto host = [&root](const std::string& p) { return (root / normalize_path(p)).string(); };
  if (root.string().find(':') != std::string::npos)
    throw Error("the cache directory " + entry.string() + " has a ':' in its path, which --library-path and "
                "PYTHONPATH cannot hold", "pass a --cache-dir without ':'");
  Interpreter python;
  python.from_image = true;
  python.scratch = scratch;
  python.major_minor = facts.python_version;
  python.description = "the base image's " + facts.interpreter + ", run from the cache";
  if (!manifest["loader"].get<std::string>().empty()) {
    python.argv.push_back(host(manifest["loader"]));
    // glibc's ld.so(8) option keeps the host's /etc/ld.so.cache out; musl's loader has no cache and stops at
    // options it does not know (ldso/dynlink.c __dls3 takes --library-path, --preload, --argv0, --list).
    if (!manifest["musl"].get<bool>()) python.argv.push_back("--inhibit-cache");
    std::string dirs;
    for (const auto& d : manifest["library_dirs"]) dirs += (dirs.empty() ? "" : ":") + host(d);
    if (!dirs.empty()) python.argv.insert(python.argv.end(), {"--library-path", dirs});
  }
  python.argv.push_back(host(manifest["interpreter"]));
  python.env = clean_environment(scratch, "C");
  python.env.push_back("PYTHONHOME=" + host(manifest["home"]));
  for (const auto& d : manifest["site_dirs"]) python.sys_path.push_back(host(d));
  add_launcher(python);
  return python;
}

namespace {

// Runs it once: the version, the bytecode magic number, and where everything it uses comes from.
constexpr const char* kCheckScript = R"py(
import importlib.util, json, os, platform, sys
allowed = sys.argv[1:]
def inside(p):
    return any(p == a or p.startswith(a + os.sep) for a in allowed)
mapped = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            mapped.add(fields[5].rstrip("\n"))
print(json.dumps({"version": platform.python_version(), "magic": importlib.util.MAGIC_NUMBER.hex(),
                  "prefix": sys.prefix, "executable": sys.executable,
                  "outside": sorted(p for p in sys.path + sorted(mapped)
                                    if p and os.path.exists(p) and not inside(p))}))
)py";

void check_runs(Interpreter& python, const fs::path& root, const PythonFacts& facts,
                const std::function<void(const std::string&)>& log) {
  std::vector<std::string> args{"-s", "-c", kCheckScript, fs::canonical(root).string(), root.string(),
                                fs::canonical(python.scratch).string(), python.scratch.string()};
  ProcessResult r = run_process(python.command(args), "", 60s, python.process_options());
  std::string first_error = r.err.substr(0, r.err.find('\n'));
  if (r.exit_code != 0 || r.timed_out)
    throw Error("the base image's " + facts.interpreter + " does not start from the cache" +
                    (first_error.empty() ? std::string() : ": " + first_error),
                "install python" + facts.python_version + " on this host (--build-python=host), or pass --no-compile");
  json answer = json::parse(r.out, nullptr, false);
  if (!answer.is_object())
    throw Error("the base image's " + facts.interpreter + " gave an unreadable answer: " + r.out);
  python.version = answer.value("version", "");
  if (!python.version.starts_with(facts.python_version + "."))
    throw Error("the base image's " + facts.interpreter + " says it is Python " + python.version + ", not " +
                    facts.python_version, "the base image's Python facts are inconsistent");
  if (!answer["outside"].empty())
    throw Error("the base image's " + facts.interpreter + " run from the cache uses " +
                    answer["outside"][0].get<std::string>() + " from the host",
                "install python" + facts.python_version + " on this host (--build-python=host), or pass --no-compile");
  if (log) log("using " + python.description + " (Python " + python.version + ", bytecode magic " +
               answer.value("magic", "") + ")");
}

}  // namespace

json InterpreterPlan::to_json() const {
  return {{"loader", loader},         {"interpreter", interpreter},
          {"home", home},             {"stdlib", stdlib},
          {"lib_dynload", lib_dynload}, {"extras", extras},
          {"site_items", site_items}, {"site_dirs", site_dirs},
          {"musl", search.musl},      {"library_path", search.library_path},
          {"configured", search.configured}, {"system", search.system}};
}

const std::vector<std::string>& build_packages() {
  static const std::vector<std::string> packages{"pip", "setuptools", "pkg_resources", "_distutils_hack",
                                                 "distutils-precedence.pth", "wheel"};
  return packages;
}

bool left_out_of_stdlib(std::string_view relative) {
  std::vector<std::string_view> parts = path_components(relative);
  if (parts.empty()) return false;
  std::string_view top = parts.front();
  if (top == "site-packages" || top == "dist-packages" || top.starts_with("config-")) return true;
  return std::any_of(parts.begin(), parts.end(),
                     [](std::string_view p) { return p == "test" || p == "tests" || p == "idle_test"; });
}

bool names_package(std::string_view entry, const std::vector<std::string>& packages) {
  const bool metadata = entry.ends_with(".dist-info") || entry.ends_with(".egg-info");
  std::string_view project = metadata ? entry.substr(0, std::min(entry.find('-'), entry.rfind('.'))) : entry;
  for (const std::string& p : packages) {
    if (entry == p || entry == p + ".py") return true;
    if (metadata && canonicalize_name(project) == canonicalize_name(p)) return true;
  }
  return false;
}

InterpreterPlan plan_image_interpreter(const layers::ImageFilesystem& fs, const PythonFacts& facts,
                                       const std::vector<std::string>& packages) {
  check_host_can_run(facts);
  InterpreterPlan plan;
  plan.interpreter = image_path(fs.resolve(facts.interpreter));
  if (!fs.is_file(plan.interpreter))
    throw Error("the base image has no interpreter at " + facts.interpreter, "the base image's Python is broken");
  plan.loader = resolve_loader(fs, facts);
  plan.home = image_path(facts.base_prefix.empty() ? facts.prefix : facts.base_prefix);
  plan_stdlib(fs, facts, plan);
  plan_site_items(fs, facts, packages, plan);
  plan.search = distro::image_library_search(fs, facts.elf_interpreter, facts.multiarch,
                                             facts.env_value("LD_LIBRARY_PATH"));
  return plan;
}

std::vector<std::string> image_site_packages(const layers::ScannedImage& image, const PythonFacts& facts,
                                             const std::vector<std::string>& packages,
                                             const store::CacheArea& entries,
                                             const std::function<void(const std::string&)>& log) {
  InterpreterPlan plan;
  plan_site_items(image, facts, packages, plan);
  if (plan.site_items.empty()) return {};
  json key = {{"format", kFormat}, {"site_items", plan.site_items}, {"layers", json::array()}};
  for (std::size_t i = 0; i < image.layer_count(); ++i) key["layers"].push_back(image.layer_digest(i).str());
  const std::string name = image::sha256_of(key.dump()).hex().substr(0, 32);
  fs::path entry = entries.path_of(name);
  std::error_code ec;
  if (!entries.use(name) || !fs::exists(entry / "complete", ec)) {
    fs::create_directories(entries.dir());
    if (log) log("copying the base image's own setuptools and wheel into " + entry.string());
    ScopedDir staging(make_temp_dir(entry.parent_path(), ".extract-"));
    layers::ImageExtraction extraction(image, staging.path() / "root");
    for (const std::string& item : plan.site_items) extraction.add(item);
    extraction.copy();
    write_file_atomic(staging.path() / "complete", "");
    fs::rename(staging.path(), entry, ec);
    if (!ec) staging.release();
    else if (!fs::exists(entry / "complete")) throw Error("cannot store " + entry.string() + ": " + ec.message());
  }
  std::vector<std::string> dirs;
  for (const std::string& d : plan.site_dirs) dirs.push_back((entry / "root" / normalize_path(d)).string());
  return dirs;
}

Interpreter image_interpreter(const layers::ScannedImage& image, const PythonFacts& facts,
                              const store::CacheArea& entries, const ImageInterpreterOptions& options) {
  InterpreterPlan plan = plan_image_interpreter(image, facts, options.packages);
  fs::path entry = extract_to_cache(image, plan, entries, options.log);
  Interpreter python = launch_image_interpreter(entry, facts, options.scratch);
  check_runs(python, entry / "root", facts, options.log);
  return python;
}

}  // namespace trainpack::python
