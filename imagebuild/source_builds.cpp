#include "imagebuild/source_builds.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "image/digest.h"
#include "python/filenames.h"
#include "python/image_interpreter.h"
#include "python/installed_dists.h"
#include "python/metadata.h"
#include "python/pyproject.h"
#include "python/sdist.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/privileges.h"

namespace trainpack::imagebuild {
namespace fs = std::filesystem;

namespace {

// What pip's non-isolated builds import from the image: setuptools with its helpers, and wheel.
const std::vector<std::string>& setuptools_packages() {
  static const std::vector<std::string> packages{"setuptools", "pkg_resources", "_distutils_hack",
                                                 "distutils-precedence.pth", "wheel"};
  return packages;
}

// Every regular file below `dir` gets `mtime`, so that bytecode setup.py install compiles matches the layer.
void set_tree_mtime(const fs::path& dir, std::int64_t mtime) {
  struct timespec times[2] = {{static_cast<time_t>(mtime), 0}, {static_cast<time_t>(mtime), 0}};
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && !e.is_symlink()) ::utimensat(AT_FDCWD, e.path().c_str(), times, 0);
}

std::string sdist_cache_key(const fs::path& sdist, const std::string& how) {
  return image::sha256_of(image::sha256_of_file(sdist).hex() + "\n" + how).hex();
}

// A copy of a built wheel (written by the build's user, maybe on another filesystem) made by this process into a
// staging directory renamed to `cached`; when another build won the race, its result is the same and stays.
void store_built_wheel(const fs::path& wheel, const fs::path& cached) {
  fs::create_directories(cached.parent_path());
  ScopedDir staging(staging_path_for(cached));
  fs::create_directories(staging.path());
  fs::copy_file(wheel, staging.path() / wheel.filename());
  std::error_code ec;
  fs::rename(staging.path(), cached, ec);
  if (!ec) staging.release();
}

std::optional<fs::path> wheel_in(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".whl") return e.path();
  return std::nullopt;
}

}  // namespace

SourceBuilder::SourceBuilder(std::function<const layers::ScannedImage&()> base, const store::CacheDir& cache,
                             fs::path work, BuildPython mode, std::int64_t mtime,
                             std::function<void(const std::string&)> log,
                             std::chrono::seconds build_timeout)
    : base_(std::move(base)), cache_(cache), work_(std::move(work)), mode_(mode), mtime_(mtime),
      build_timeout_(build_timeout), log_(std::move(log)), user_(unprivileged_build_user()) {
  if (user_ && !reachable_by(work_, *user_)) {
    user_.reset();
    if (log_) log_("builds run as this process's user: no temp directory the build user can reach runs programs");
  }
}

// A host python3.X (the image's exact version preferred), else (auto) or only (image) the base's own interpreter
// run from the cache.
const python::Interpreter& SourceBuilder::interpreter(const python::PythonFacts& facts, const std::string& what) {
  const std::string name = "python" + facts.python_version;
  if (mode_ != BuildPython::kImage) {
    if (!host_checked_) {
      host_checked_ = true;
      host_ = python::find_host_python(facts.python_version, facts.python_full_version, work_ / "python-host");
    }
    if (host_) return *host_;
    if (mode_ == BuildPython::kHost)
      throw Error(what + " needs " + name + " (the image's Python) on this host, and --build-python=host allows "
                  "no other", "install " + name + " here, or pass --build-python=auto to run the base image's own");
  }
  if (image_) return *image_;
  python::ImageInterpreterOptions options;
  options.scratch = work_ / "python-image";
  options.log = log_;
  try {
    image_ = python::image_interpreter(base_(), facts, cache_.area(store::CacheKind::kInterpreters), options);
  } catch (const Error& e) {
    if (mode_ == BuildPython::kImage) throw;
    throw Error(what + " needs " + name + ", which this host lacks, and " + e.what(), e.hint());
  }
  return *image_;
}

const std::vector<std::string>& SourceBuilder::image_site_dirs(const python::PythonFacts& facts) {
  if (!site_dirs_) {
    site_dirs_ = python::image_site_packages(base_(), facts, setuptools_packages(),
                                             cache_.area(store::CacheKind::kSitePackages), log_);
    for (std::string& dir : *site_dirs_) dir = reachable(dir);
  }
  return *site_dirs_;
}

std::string SourceBuilder::reachable(const std::string& dir) {
  if (!user_ || reachable_by(dir, *user_)) return dir;
  std::optional<fs::path> found = cache_.entry_of(dir);
  if (!found) throw Error("internal: " + dir + " is outside the cache, and the build's user cannot reach it");
  const fs::path entry = *found;
  auto [it, fresh] = mirrors_.try_emplace(entry, work_ / ("mirror-" + std::to_string(mirrors_.size())));
  if (fresh) mirror_tree(entry, it->second);
  return (it->second / fs::path(dir).lexically_relative(entry)).lexically_normal().string();
}

void SourceBuilder::open_to_build_user(python::SourceBuild& build, const python::PythonFacts& facts) {
  if (!user_) return;
  build.run_as = user_;
  // The directory directly under work_ that holds the tree (project-..., sdist-...), and the interpreter's scratch.
  fs::path rel = build.tree.lexically_relative(work_);
  if (rel.empty() || *rel.begin() == "..") throw Error("internal: " + build.tree.string() + " is outside the work dir");
  give_tree(work_ / *rel.begin(), *user_);
  if (build.python->from_image && !reachable_by(build.python->argv.back(), *user_)) {
    if (!image_for_user_) {
      // The interpreter's entry mirrored where the user can reach it, and launched from there.
      fs::path entry = reachable(build.python->argv.back());
      while (!fs::exists(entry / "interpreter.json") && entry.has_relative_path()) entry = entry.parent_path();
      image_for_user_ = python::launch_image_interpreter(entry, facts, work_ / "python-image-user");
    }
    build.python = &*image_for_user_;
  }
  give_tree(build.python->scratch, *user_);
}

// importlib.util.find_spec(module) in the image's Python, for a top-level module: a package directory or a
// module file in a sys.path entry (pip asks it about setuptools and wheel).
bool SourceBuilder::importable(const SourceBuildStep& step, const std::string& module) const {
  for (const python::SysPathEntry& entry : python::site_sys_path(step.fs, step.facts.site_dirs)) {
    std::string dir = entry.path.substr(1) + "/" + module;
    if (step.fs.is_dir(dir) || step.fs.is_file(dir + ".py")) return true;
  }
  return false;
}

python::BuildPath SourceBuilder::build_path(const SourceBuildStep& step, const fs::path& tree,
                                            const std::string& display) const {
  python::SourceTree shape;
  shape.use_pep517 = step.facts.pip_config.use_pep517;
  shape.has_pyproject = fs::is_regular_file(tree / "pyproject.toml");
  shape.has_setup_py = fs::is_regular_file(tree / "setup.py");
  if (!shape.has_pyproject && !shape.has_setup_py)
    throw Error(display + " does not appear to be a Python project: neither 'setup.py' nor 'pyproject.toml' found.",
                "pip in the image fails the same way");
  if (shape.has_pyproject)
    shape.has_build_backend =
        python::read_build_system(read_file(tree / "pyproject.toml", 16u << 20), display).build_backend.has_value();
  return step.pip.build_path(shape, importable(step, "setuptools"), importable(step, "wheel"), display);
}

python::SourceBuild SourceBuilder::source_build(const SourceBuildStep& step, const fs::path& tree,
                                                const std::string& display) {
  python::SourceBuild b;
  b.python = &interpreter(step.facts, "building " + display);
  b.tree = tree;
  b.display = display;
  b.timeout = build_timeout_;
  b.sys_executable = step.facts.executable;
  b.sys_prefix = step.facts.prefix;
  b.sys_base_prefix = step.facts.base_prefix.empty() ? step.facts.prefix : step.facts.base_prefix;
  b.image_env = step.image_env;
  open_to_build_user(b, step.facts);
  return b;
}

BuiltDistribution SourceBuilder::from_wheel(const fs::path& wheel, const std::string& display) const {
  auto wf = python::WheelFilename::try_parse(wheel.filename().string());
  if (!wf) throw Error(display + " built " + wheel.filename().string() + ", which is not a valid wheel file name");
  // A compiler on this host would have made a wheel for the host, not for the image.
  if (!python::is_pure_wheel_filename(wheel.filename().string()))
    throw Error(display + " has native code (built here as " + wheel.filename().string() +
                    "), and a wheel compiled on this host would not match the image",
                "publish a wheel built for the image's platform (manylinux) to the index, or pass one with "
                "--extra-packages");
  BuiltDistribution out;
  out.wheel = wheel;
  out.name = wf->name;
  out.version = wf->version;
  out.metadata = candidate_metadata(read_wheel_metadata(wheel, wheel.filename().string()));
  return out;
}

// pip's legacy path: metadata from `setup.py egg_info`, then `setup.py install` with the image's setuptools,
// staged under a root; the caller installs the staged files.
BuiltDistribution SourceBuilder::legacy_install(const SourceBuildStep& step, python::SourceBuild build) {
  build.site_dirs = image_site_dirs(step.facts);
  python::EggInfo egg = python::legacy_metadata(build, make_temp_dir(work_, "egg-base-"));
  python::CoreMetadata core = python::CoreMetadata::parse(egg.pkg_info);
  if (!core.name || !core.version)
    throw Error(build.display + ": setup.py egg_info wrote no Name or no valid Version", "fix its setup.py");
  BuiltDistribution out;
  out.name = *core.name;
  out.version = *core.version;
  python::InstalledMetadata md = python::egg_info_metadata(egg.pkg_info, egg.requires_txt);
  out.metadata.requires_dist = md.requires_dist;
  out.metadata.provides_extra = md.provides_extra;
  out.metadata.requires_python = core.requires_python.value_or("");
  if (log_) log_("installing " + build.display + " with setup.py install (" + build.python->description + ")");
  out.legacy = python::legacy_install(build, step.facts.scheme_for(out.name), make_temp_dir(work_, "stage-"));
  return out;
}

std::pair<python::Pep517Backend, IsolatedEnvironment> SourceBuilder::pep517_environment(const SourceBuildStep& step,
                                                                                        const fs::path& tree,
                                                                                        const std::string& display) {
  python::BuildSystem system;
  if (fs::is_regular_file(tree / "pyproject.toml"))
    system = python::read_build_system(read_file(tree / "pyproject.toml", 16u << 20), display);
  python::Pep517Backend backend{system.build_backend.value_or(std::string(python::kLegacySetuptoolsBackend)),
                                system.backend_path};
  if (!step.facts.pip_config.build_isolation) return {backend, IsolatedEnvironment{{}, "not isolated"}};
  std::vector<std::string> requirements =
      system.has_table ? system.build_requires : step.pip.default_build_requires();
  return {backend, step.install_isolated(requirements, display)};
}

// pip's isolated PEP 517 build: the build requirements, then what get_requires_for_build_wheel adds, each in an
// environment of their own, and the hooks run with nothing from the image on sys.path.
fs::path SourceBuilder::pep517_wheel(const SourceBuildStep& step, python::SourceBuild build,
                                     const python::Pep517Backend& backend, const IsolatedEnvironment& env,
                                     const fs::path& out) {
  if (!step.facts.pip_config.build_isolation) {
    // --no-build-isolation in the image's pip configuration: the backend runs with what the image has.
    build.site_dirs = image_site_dirs(step.facts);
    return python::pep517_build_wheel(build, backend, out);
  }
  build.site_dirs = {env.dir.string()};
  std::vector<std::string> more = python::pep517_requires_for_build_wheel(build, backend);
  if (!more.empty()) build.site_dirs.push_back(step.install_isolated(more, build.display).dir.string());
  if (log_) log_("building " + build.display + " (PEP 517, " + backend.backend + ") with " + build.python->description);
  return python::pep517_build_wheel(build, backend, out);
}

BuiltDistribution SourceBuilder::build_tree(const SourceBuildStep& step, const fs::path& tree,
                                            const std::string& display) {
  set_tree_mtime(tree, mtime_);
  python::BuildPath path = build_path(step, tree, display);
  python::SourceBuild build = source_build(step, tree, display);
  switch (path) {
    case python::BuildPath::kLegacyInstall:
      return legacy_install(step, build);
    case python::BuildPath::kLegacyWheel:
      build.site_dirs = image_site_dirs(step.facts);
      if (log_) log_("building " + display + " with setup.py bdist_wheel (" + build.python->description + ")");
      return from_wheel(python::build_legacy_wheel(build, make_temp_dir(work_, "wheel-")), display);
    case python::BuildPath::kPep517:
      break;
  }
  auto [backend, env] = pep517_environment(step, tree, display);
  return from_wheel(pep517_wheel(step, build, backend, env, make_temp_dir(work_, "wheel-")), display);
}

BuiltDistribution SourceBuilder::build_sdist(const SourceBuildStep& step, const fs::path& sdist,
                                             const std::string& filename, const std::string& display) {
  std::vector<std::string> native = python::native_sources_in_sdist(sdist);
  if (!native.empty())
    throw Error(display + " has native code (" + native.front() +
                    (native.size() > 1 ? " and " + std::to_string(native.size() - 1) + " more" : "") +
                    ") and no wheel for this image",
                "publish a wheel built for the image's platform (manylinux) to the index, or pass one with "
                "--extra-packages");
  fs::path tree = python::unpack_sdist(sdist, make_temp_dir(work_, "sdist-"), mtime_);
  python::BuildPath path = build_path(step, tree, display);
  if (path == python::BuildPath::kLegacyInstall) return legacy_install(step, source_build(step, tree, display));
  // A wheel: cached by the sdist and everything that decides what the build makes of it.
  const python::Interpreter& python = interpreter(step.facts, "building " + display);
  std::string how = "python " + python.version + "\npip " + step.pip.version().str() + "\n";
  std::optional<std::pair<python::Pep517Backend, IsolatedEnvironment>> pep517;
  if (path == python::BuildPath::kPep517) {
    pep517 = pep517_environment(step, tree, display);
    how += "pep517 " + pep517->first.backend + "\n" + pep517->second.identity;
  } else {
    how += "setup.py bdist_wheel\n";
    for (const char* name : {"setuptools", "wheel"})
      if (const python::SiteDistribution* d = step.facts.find_installed(name)) how += d->name + " " + d->version + "\n";
  }
  const store::CacheArea built = cache_.area(store::CacheKind::kBuiltWheels);
  const std::string key = sdist_cache_key(sdist, how);
  fs::path cached = built.path_of(key);
  if (built.use(key))
    if (std::optional<fs::path> hit = wheel_in(cached)) return from_wheel(*hit, display);
  fs::path out = make_temp_dir(work_, "wheel-");
  python::SourceBuild build = source_build(step, tree, display);
  fs::path wheel;
  if (pep517) {
    wheel = pep517_wheel(step, build, pep517->first, pep517->second, out);
  } else {
    build.site_dirs = image_site_dirs(step.facts);
    if (log_) log_("building " + display + " with setup.py bdist_wheel (" + python.description + ")");
    wheel = python::build_legacy_wheel(build, out);
  }
  store_built_wheel(wheel, cached);
  if (std::optional<fs::path> stored = wheel_in(cached)) return from_wheel(*stored, display);
  return from_wheel(wheel, display);
}

}  // namespace trainpack::imagebuild
