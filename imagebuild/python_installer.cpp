#include "imagebuild/python_installer.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>

#include "image/digest.h"
#include "layers/layer_writer.h"
#include "layers/rootfs_index.h"
#include "layers/scanned_image.h"
#include "layers/stacked_filesystem.h"
#include "net/url.h"
#include "python/base_facts.h"
#include "python/bytecode.h"
#include "python/filenames.h"
#include "python/image_interpreter.h"
#include "python/index_client.h"
#include "python/index_page.h"
#include "python/installed_dists.h"
#include "python/marker_compare.h"
#include "python/metadata.h"
#include "python/names.h"
#include "python/pip_behaviour.h"
#include "python/requirements_file.h"
#include "python/resolver.h"
#include "python/tags.h"
#include "python/uninstall.h"
#include "python/sdist.h"
#include "python/wheel_installer.h"
#include "store/cache_dir.h"
#include "support/error.h"
#include "support/serial_queue.h"
#include "support/text.h"
#include "support/fs.h"
#include "support/privileges.h"
#include "support/paths.h"

namespace trainpack::imagebuild {
namespace fs = std::filesystem;
using layers::FileEntries;
using layers::FileEntry;
using layers::PathInfo;
using nlohmann::json;

namespace {

constexpr std::size_t kMetadataCap = 16u << 20;

// What the base scan keeps while listing each layer: everything python/base_facts.cpp reads, so facts come from
// the cache without a second pass. Bump the name whenever this changes.
constexpr const char* kPythonScanName = "python-facts-4";  // 4: sealed listings (store/sealed_text.h)

layers::ScanSelection python_selection() {
  return {kPythonScanName, [](std::string_view path, std::uint64_t size) {
            std::string_view base = path_base(path);
            bool interpreter_or_pip = path.find("bin/") != std::string_view::npos &&
                                      (base.starts_with("python") || base.starts_with("pip"));
            if (interpreter_or_pip) return true;  // the interpreter's ELF header names libc and the machine
            if (size > (4u << 20)) return false;
            return path.starts_with("etc/") || path.find(".dist-info/") != std::string_view::npos ||
                   path.find(".egg-info") != std::string_view::npos || base.ends_with(".pth") ||
                   base.ends_with(".egg-link") || path.find(".egg/EGG-INFO/") != std::string_view::npos ||
                   base == "pyvenv.cfg" ||
                   base == "EXTERNALLY-MANAGED" || base == "patchlevel.h" || base == "build-details.json" ||
                   base == "sysconfig.py" || base == "site.py" || base.starts_with("_sysconfigdata") ||
                   base.starts_with("libc.so") ||
                   base.starts_with("libc-") || base.starts_with("ld-musl") || base.starts_with("ld-linux") ||
                   path.starts_with("var/lib/dpkg/status") || path == "lib/apk/db/installed" ||
                   path.find("conda-meta/") != std::string_view::npos;
          }};
}

// "/usr/app/./x" or "x" (relative to /usr/app) → "usr/app/x".
std::string image_relative(std::string_view path, std::string_view cwd) {
  return normalize_path(path.starts_with('/') ? std::string(path) : std::string(cwd) + "/" + std::string(path));
}

}  // namespace

namespace {

// Where the Python steps work: under the cache, unless builds run as a user who cannot reach it (a cache in root's
// 0700 home); then in a temp directory it can reach and run programs from (the image's interpreter may be mirrored
// there), searchable but not listable by others. None such: under the cache, and builds keep this process's user.
fs::path make_work_dir(const fs::path& cache_temp) {
  fs::create_directories(cache_temp);
  std::optional<UserIds> user = unprivileged_build_user();
  if (!user) return make_temp_dir(cache_temp, "pip-");
  std::error_code ec;
  std::vector<fs::path> candidates{cache_temp, fs::temp_directory_path(ec), "/var/tmp"};
  for (const fs::path& parent : candidates) {
    struct statvfs mount {};
    if (parent.empty() || !reachable_by(parent, *user) || ::statvfs(parent.c_str(), &mount) != 0 ||
        (mount.f_flag & ST_NOEXEC))
      continue;
    fs::path dir = make_temp_dir(parent, "trainpack-pip-");
    fs::permissions(dir, fs::perms(0711));
    return dir;
  }
  return make_temp_dir(cache_temp, "pip-");
}

}  // namespace

std::string python_scan_name() { return kPythonScanName; }
layers::ScanSelection python_scan_selection() { return python_selection(); }

struct PythonInstaller::State {
  std::shared_ptr<const image::Image> base;
  const store::CacheDir& cache;
  const store::BlobStore& store;
  PythonOptions options;
  std::int64_t mtime;
  std::function<void(const std::string&)> log;
  Timings& timings;
  python::DownloadReporter on_download;

  std::unique_ptr<layers::ScannedImage> scanned;
  std::map<std::string, python::PythonFacts> facts_by_config;  // facts()'s, by config and name choice
  ScopedDir work;
  SourceBuilder builder;  // interpreters and builds of source trees, for the whole build

  State(std::shared_ptr<const image::Image> b, const store::CacheDir& c, PythonOptions o, std::int64_t m,
        std::function<void(const std::string&)> l, Timings& t, python::DownloadReporter d)
      : base(std::move(b)), cache(c), store(c.blobs()), options(std::move(o)), mtime(m), log(std::move(l)),
        timings(t), on_download(std::move(d)),
        work(make_work_dir(cache.temp_dir())),
        builder([this]() -> const layers::ScannedImage& { return filesystem(); }, cache, work.path(),
                options.build_python, mtime, log, options.build_timeout) {}

  const layers::ScannedImage& filesystem() {
    if (!scanned) {
      log("reading the base's Python installation (each base layer is listed once, then cached)");
      scanned = std::make_unique<layers::ScannedImage>(base, cache, python_selection());
    }
    return *scanned;
  }

  // The base's Python under `config` (each pip step's, the SBOM's), read once for each config and name choice.
  python::PythonFacts facts(const image::ImageConfig& config, bool python3_names) {
    const python::ImageConfigFacts cfg = python::ImageConfigFacts::of(config);
    std::string key = std::string(python3_names ? "python3" : "python") + "\n" + cfg.user + "\n" + cfg.architecture +
                      "\n" + cfg.variant;
    for (const std::string& entry : cfg.env) key += "\n" + entry;
    auto read = facts_by_config.find(key);
    if (read == facts_by_config.end())
      read = facts_by_config.emplace(key, python::read_python_facts(filesystem(), cfg, python3_names)).first;
    return read->second;
  }

  net::HttpClient& http_client() {
    if (options.http == nullptr) throw Error("internal: no HTTP client configured for the pip steps");
    return *options.http;
  }

  // Artifact Registry Python repositories: the same Google credentials as the registry, found only when asked.
  std::string google_token(const std::string& host) {
    std::shared_ptr<net::GoogleCredentials> google = options.google ? options.google->get() : nullptr;
    if (!google)
      throw Error("no Google credentials for the Python repository " + host,
                  "set GOOGLE_APPLICATION_CREDENTIALS, run on Cloud Build/GCE, or put the token in ~/.netrc");
    return google->token().token;
  }
};

// One `pip install` step, in pip's order: what to install, where from, what must be built first, resolution,
// installation into entries, then the layers.
class PythonInstaller::Step {
 public:
  Step(State& st, const gcloud::PipInstallStep& step, const image::ImageConfig& config,
       const std::vector<const FileEntries*>& own_layers);
  PipStepResult run();

 private:
  // Files and directories given by path: handled once the index settings are known (builds may need them).
  struct LocalItem {
    std::string image_rel;  // "usr/app/dist/x.whl", "usr/app" for the project
    std::string display;
  };
  struct Installed {
    const python::ResolvedDist* dist;
    python::InstalledWheel wheel;  // for a legacy install, the files setup.py staged (already compiled as it does)
    bool legacy = false;
  };
  struct Prepared {
    Installed installed;
    std::optional<std::future<FileEntries>> bytecode;  // the .pyc entries; none: no .py, or --no-compile
  };
  struct SeparateLayer {
    std::string what;  // "torch 2.1.0"
    std::map<std::string, FileEntry> files;
    std::set<std::string> dirs;
  };

  void check_pip_would_install() const;
  void collect_requirements();
  void collect_requirements_file(const std::string& path);
  void configure_index();
  void prepare_local_items();
  python::Resolution resolve(IndexCandidates& source);
  void check_hashes(const python::Resolution& resolution, IndexCandidates& source);
  void install(const python::Resolution& resolution, IndexCandidates& source);
  std::vector<InstalledArtifact> installed_artifacts(const python::Resolution& resolution,
                                                     IndexCandidates& source) const;
  Prepared prepare(const python::ResolvedDist& d, IndexCandidates& source);
  std::optional<std::future<FileEntries>> start_bytecode(const Installed& installed);
  void add_bytecode(Installed& installed, FileEntries compiled);
  void uninstall(const python::SiteDistribution& old);
  std::vector<PipLayer> layers();

  std::optional<std::string> read_image_file(const std::string& rel) const;
  std::optional<fs::path> host_path_of(const std::string& rel) const;
  bool markers_match(const python::Requirement& r) const;
  SourceBuildStep build_step();
  python::ResolveOptions resolve_options() const;
  IsolatedEnvironment install_isolated(const std::vector<std::string>& requirements, const std::string& display);
  BuiltDistribution build_project(const LocalItem& item);
  python::InstalledWheel staged_files(const python::LegacyInstall& legacy) const;
  std::set<std::string> directories_for(const std::map<std::string, FileEntry>& files,
                                        const std::set<std::string>& leaf_dirs, FileEntries& into) const;

  State& st_;
  const gcloud::PipInstallStep& step_;
  const image::ImageConfig& config_;
  python::PythonFacts facts_;
  python::TagPriority tags_;  // the wheel tags the image's Python takes, most preferred first
  const python::PipConfig& pip_;
  python::PipBehaviour behaviour_;                      // what the image's pip version (and Debian's patches) change
  const std::string cwd_ = gcloud::kWorkdir;
  layers::StackedFilesystem fs_;                        // the filesystem pip sees: the base, then this build's layers
  const layers::RootfsIndex& merged_;                   // its listing
  std::map<std::string, const FileEntry*> own_files_;  // what this build's layers wrote, last writer wins
  std::vector<python::SiteDistribution> site_distributions_;  // what pip finds installed on that filesystem

  // What to install.
  std::vector<python::RootRequirement> roots_;
  std::vector<python::Requirement> constraints_;
  std::vector<LocalItem> local_items_;
  std::map<std::string, LocalDistribution> local_dists_;
  python::RequirementsOptions file_options_;
  bool hash_mode_ = false;
  std::map<std::string, std::set<std::string>> allowed_sha256_;  // hash-checking mode: canonical name → hex digests
  std::map<std::string, std::string> hash_origin_;               // canonical name → the line that gave them
  python::IndexClientOptions index_;
  std::map<std::string, python::SiteDistribution> installed_sites_;

  // What the step writes.
  std::vector<FileEntry> build_artifacts_;     // what an in-tree build leaves in /usr/app
  std::map<std::string, FileEntry> out_;       // path → entry (files, whiteouts)
  std::set<std::string> dirs_;                 // directories the step writes into
  std::set<std::string> recreated_dirs_;       // removed by an uninstall, then written again
  std::set<std::string> removed_dirs_;
  std::set<std::string> removed_files_;
  std::vector<SeparateLayer> separate_layers_;
  std::unique_ptr<python::BytecodeCompiler> compiler_;  // made by the first wheel with modules
  SerialQueue compiling_;  // bytecode of the installed wheels, one wheel after another; last: joined first
};

PythonInstaller::Step::Step(State& st, const gcloud::PipInstallStep& step, const image::ImageConfig& config,
                            const std::vector<const FileEntries*>& own_layers)
    : st_(st), step_(step), config_(config), facts_(st.facts(config, step.pip3)), tags_(tags_for(facts_)),
      pip_(facts_.pip_config),
      behaviour_(python::PipBehaviour::of(facts_)), fs_(st.filesystem(), st.filesystem().index(), own_layers),
      merged_(fs_.index()),
      site_distributions_(python::find_installed_distributions(fs_, python::site_sys_path(fs_, facts_.site_dirs))) {
  for (const FileEntries* layer : own_layers)
    for (const FileEntry& e : *layer) own_files_[e.path] = &e;
}

// Timings: reading requirements and resolving (index pages, PEP 658 metadata, wheels downloaded only for their
// METADATA) are resolve; builds (even those resolution needs for an sdist's metadata), downloads of the picked
// files, hash checks and installing into entries are install. Wheel members are decompressed only when the layer is
// written, so that part of installing is charged to layers.
PipStepResult PythonInstaller::Step::run() {
  Timings::Scope resolving = st_.timings.scope(Phase::kResolve);
  check_pip_would_install();
  collect_requirements();
  configure_index();
  {
    Timings::Scope building = st_.timings.scope(Phase::kInstall);
    prepare_local_items();
  }

  python::IndexClient client(st_.http_client(), st_.cache, index_);
  python::FormatControl formats = file_options_.format_control;
  for (const auto& n : pip_.only_binary) formats.add_only_binary(n);
  for (const auto& n : pip_.no_binary) formats.add_no_binary(n);
  IndexCandidates source(client, st_.store, tags_, formats, local_dists_,
                         [this](const fs::path& file, const std::string& filename, const std::string& display) {
                           Timings::Scope building = st_.timings.scope(Phase::kInstall);
                           return st_.builder.build_sdist(build_step(), file, filename, display);
                         },
                         behaviour_);

  python::Resolution resolution = resolve(source);
  resolving.stop();
  Timings::Scope installing = st_.timings.scope(Phase::kInstall);
  if (hash_mode_) check_hashes(resolution, source);
  install(resolution, source);
  return {layers(), installed_artifacts(resolution, source)};
}

std::vector<InstalledArtifact> PythonInstaller::Step::installed_artifacts(const python::Resolution& resolution,
                                                                          IndexCandidates& source) const {
  std::vector<InstalledArtifact> out;
  for (const python::ResolvedDist& d : resolution.dists) {
    if (!d.file) continue;
    python::ArtifactOrigin origin = source.origin(d.file->handle);
    out.push_back({source.built(d.file->handle).name, d.version.str(), origin.filename,
                   origin.url.empty() ? "" : net::url_for_display(origin.url), origin.sha256, origin.local,
                   origin.built});
  }
  return out;
}

void PythonInstaller::Step::check_pip_would_install() const {
  if (!pip_.target.empty() || !pip_.prefix.empty() || !pip_.root.empty() || pip_.user)
    throw Error("the image's pip configuration installs elsewhere (--target, --prefix, --root or --user), which "
                "trainpack does not reproduce",
                "remove that setting from the base image's pip config or environment");
  if (!facts_.externally_managed.empty() && !pip_.break_system_packages && !st_.options.break_system_packages)
    throw Error("the base image's Python is externally managed (" + facts_.externally_managed +
                    "): pip in the image would refuse to install " + step_.description(),
                "use a base with a virtual environment, allow it in the image (PIP_BREAK_SYSTEM_PACKAGES=1 or "
                "break-system-packages = true in /etc/pip.conf), or pass --break-system-packages");
}

std::optional<std::string> PythonInstaller::Step::read_image_file(const std::string& rel) const {
  return fs_.read(rel, kMetadataCap);
}

std::optional<fs::path> PythonInstaller::Step::host_path_of(const std::string& rel) const {
  auto it = own_files_.find(rel);
  if (it == own_files_.end() || it->second->source.empty() || !it->second->zip_member.empty()) return std::nullopt;
  return it->second->source;
}

// pip's "Ignoring x: markers '...' don't match your environment" for a requirement given by the user.
bool PythonInstaller::Step::markers_match(const python::Requirement& r) const {
  if (!r.marker) return true;
  if (r.marker->evaluate(python::MarkerEnvironment::cpython_linux(facts_.python_full_version, facts_.machine),
                         python::pep440_version_compare))
    return true;
  st_.log("Ignoring " + r.name + ": markers '" + r.marker->str() + "' don't match your environment");
  return false;
}

namespace {
[[noreturn]] void refuse_url(const std::string& what) {
  throw Error(what + ": direct URL requirements are not supported", "download the file and pass it with "
              "--extra-packages, or publish it to the index");
}
}  // namespace

void PythonInstaller::Step::collect_requirements() {
  std::visit(gcloud::StepVisitor{
                 [this](const gcloud::RequirementsFileSource& s) { collect_requirements_file(s.path); },
                 [this](const gcloud::ExtraPackageSource& s) {
                   local_items_.push_back({image_relative(s.file, cwd_), "--extra-packages " + s.file});
                 },
                 [this](const gcloud::RequirementSource& s) {
                   python::Requirement r = python::Requirement::parse(s.requirement);
                   if (!r.url.empty()) refuse_url("--requirements " + s.requirement);
                   if (markers_match(r)) roots_.push_back({r, true, true});
                 },
                 [this](const gcloud::ProjectSource& s) {
                   local_items_.push_back({image_relative(s.dir, cwd_), "the project in setup.py"});
                 },
             },
             step_.source);
}

void PythonInstaller::Step::collect_requirements_file(const std::string& path) {
  python::RequirementsEnv renv;
  for (const auto& [key, value] : config_.env().pairs()) renv.vars[key] = value;
  renv.cwd = cwd_;
  renv.read_file = [this](const std::string& path) { return read_image_file(image_relative(path, cwd_)); };
  renv.path_exists = [this](const std::string& path) { return merged_.find(image_relative(path, cwd_)) != nullptr; };
  python::RequirementsFile file = python::parse_requirements_file(path, renv);
  file_options_ = file.options;
  hash_mode_ = file.hash_checking_mode();
  for (const python::RequirementLine& line : file.lines) {
    std::string display =
        line.file + ":" + std::to_string(line.line_number) + ": " + visible_text(line.requirement_text);
    if (line.editable) throw Error(display + ": editable installs are not supported", "drop the -e");
    if (line.kind == python::RequirementLine::Kind::vcs)
      throw Error(display + ": VCS requirements are not supported", "build a wheel and pass it with --extra-packages");
    if (line.constraint) {
      if (line.requirement && line.kind == python::RequirementLine::Kind::named) constraints_.push_back(*line.requirement);
      continue;
    }
    if (line.kind == python::RequirementLine::Kind::named) {
      if (!markers_match(*line.requirement)) continue;
      if (!line.requirement->url.empty()) refuse_url(display);
      roots_.push_back({*line.requirement, true, false});
      std::string n = python::canonicalize_name(line.requirement->name);
      for (const auto& [algorithm, hex] : line.hashes) {
        if (algorithm != "sha256")
          throw Error(display + ": only sha256 hashes are checked by trainpack, not " + algorithm,
                      "add --hash=sha256:... for the same file (pip hash FILE prints it)");
        allowed_sha256_[n].insert(hex);
        hash_origin_[n] = line.file + ":" + std::to_string(line.line_number);
      }
    } else if (line.kind == python::RequirementLine::Kind::path) {
      local_items_.push_back({image_relative(line.location, cwd_), display});
    } else {
      refuse_url(display);
    }
  }
}

// Where from: the flags, else the image's pip config; then the requirements file's own options, as pip applies them.
void PythonInstaller::Step::configure_index() {
  std::vector<std::string> cli_indexes{st_.options.index_url.value_or(pip_.index_url)};
  for (const auto& u : st_.options.extra_index_urls.empty() ? pip_.extra_index_urls : st_.options.extra_index_urls)
    cli_indexes.push_back(u);
  index_.index_urls = file_options_.effective_index_urls(cli_indexes, pip_.no_index);
  index_.find_links = st_.options.find_links.empty() ? pip_.find_links : st_.options.find_links;
  for (const auto& f : file_options_.find_links) index_.find_links.push_back(f);
  index_.access_token = [&st = st_](const std::string& host) { return st.google_token(host); };
  index_.max_attempts = 3;  // an index request is tried fewer times than a registry's
  index_.on_download = st_.on_download;
}

// What this step's builds see of it: the image at this step, its pip, and how to make an isolated environment.
SourceBuildStep PythonInstaller::Step::build_step() {
  std::vector<std::string> inherited;
  for (const auto& [key, value] : facts_.env)
    if (key == "PYTHONDONTWRITEBYTECODE" || key == "SOURCE_DATE_EPOCH" || key == "DEB_PYTHON_INSTALL_LAYOUT" ||
        key.starts_with("SETUPTOOLS_") || key.starts_with("DISTUTILS_"))
      inherited.push_back(key + "=" + value);
  return SourceBuildStep{facts_, behaviour_, fs_, inherited,
                         [this](const std::vector<std::string>& requirements, const std::string& display) {
                           return install_isolated(requirements, display);
                         }};
}

// pip's BuildEnvironment for a PEP 517 build: `requirements` resolved against this step's index for the image's
// Python, as if nothing were installed (pip installs them with --ignore-installed), and installed into a fresh
// directory. Build requirements are taken as wheels; pip would build an sdist-only one in turn.
IsolatedEnvironment PythonInstaller::Step::install_isolated(const std::vector<std::string>& requirements,
                                                            const std::string& display) {
  std::vector<python::RootRequirement> roots;
  for (const std::string& r : requirements) {
    python::Requirement req = python::Requirement::parse(r);
    if (markers_match(req)) roots.push_back({req, true, false});
  }
  python::IndexClient client(st_.http_client(), st_.cache, index_);
  python::FormatControl formats = file_options_.format_control;
  auto no_sdists = [&display](const fs::path&, const std::string& filename, const std::string&) -> BuiltDistribution {
    throw Error("the build requirement " + filename + " of " + display + " has no wheel",
                "publish a wheel of it to the index");
  };
  IndexCandidates source(client, st_.store, tags_, formats, {}, no_sdists, behaviour_);
  python::ResolveOptions ro = resolve_options();
  ro.constraints.clear();
  python::Resolution resolution = python::resolve(roots, ro, source);
  const fs::path prefix = make_temp_dir(st_.work.path(), "build-env-");
  fs::permissions(prefix, fs::perms(0755));  // read by a build that runs as another user (support/privileges.h)
  IsolatedEnvironment env;
  env.dir = prefix / "site";
  python::InstallScheme scheme;
  scheme.purelib = scheme.platlib = env.dir.string();
  scheme.scripts = (prefix / "bin").string();
  scheme.data = prefix.string();
  scheme.headers = (prefix / "include").string();
  layers::EntryContentReader reader;
  std::string installed;
  for (const python::ResolvedDist& d : resolution.dists) {
    const BuiltDistribution& built = source.built(d.file->handle);
    python::WheelInstallRequest req;
    req.wheel = built.wheel;
    req.name = built.name;
    req.version = built.version.str();
    req.scheme = scheme;
    req.sys_executable = facts_.executable;
    req.pip_version = behaviour_.version();
    req.python_version = facts_.python_version;
    for (const FileEntry& e : python::install_wheel(req).files) {
      fs::path to = "/" + e.path;
      fs::create_directories(to.parent_path());
      reader.copy_to(e, to);
    }
    env.identity += source.filename(d.file->handle) + "\n";
    installed += (installed.empty() ? "" : ", ") + built.name + " " + built.version.str();
  }
  st_.log("installed the build requirements of " + display + ": " + (installed.empty() ? "none" : installed));
  return env;
}

// pip builds the project in place, in /usr/app, where gcloud has copied only setup.py (and what COPY put there
// before): that tree is reproduced on the host and built; what the build leaves next to it stays when this pip
// builds in place (21.3+; older ones build a copy under /tmp).
BuiltDistribution PythonInstaller::Step::build_project(const LocalItem& item) {
  fs::path tree = make_temp_dir(st_.work.path(), "project-");
  std::set<std::string> original;
  const std::string prefix = item.image_rel + "/";
  layers::EntryContentReader reader;
  for (const auto& [path, entry] : own_files_) {
    if (!path.starts_with(prefix)) continue;
    std::string rel = path.substr(prefix.size());
    original.insert(rel);
    if (entry->type == FileEntry::Type::kDirectory) {
      fs::create_directories(tree / rel);
    } else if (entry->type == FileEntry::Type::kRegular) {
      fs::create_directories((tree / rel).parent_path());
      reader.copy_to(*entry, tree / rel);
    }
  }
  BuiltDistribution built = st_.builder.build_tree(build_step(), tree, item.display);
  if (!behaviour_.builds_in_place()) return built;
  for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = it->path().lexically_relative(tree).string();
    if (original.count(rel)) continue;
    std::string image = item.image_rel + "/" + rel;
    if (it->is_directory() && !it->is_symlink()) {
      build_artifacts_.push_back(FileEntry::directory(image, 0755));
    } else if (it->is_regular_file() && !it->is_symlink()) {
      bool exec = (fs::status(it->path()).permissions() & fs::perms::owner_exec) != fs::perms::none;
      build_artifacts_.push_back(FileEntry::inline_file(image, read_file(it->path(), 1u << 30), exec ? 0755 : 0644));
    }
  }
  return built;
}

// Local wheels, sdists and project directories, each the only candidate of its project.
void PythonInstaller::Step::prepare_local_items() {
  for (const LocalItem& item : local_items_) {
    LocalDistribution local;
    const std::string url = "file:///" + item.image_rel;
    if (std::holds_alternative<gcloud::ProjectSource>(step_.source)) {
      local.built = build_project(item);
      local.direct_url = json{{"dir_info", json::object()}, {"url", url}};
      local.reinstall_same_version = true;
    } else {
      std::optional<fs::path> host = host_path_of(item.image_rel);
      if (!host) throw Error(item.display + " is not a file in the image at this step", "check the path");
      std::string filename = host->filename().string();
      local.file = *host;
      if (filename.ends_with(".whl")) {
        auto wf = python::WheelFilename::try_parse(filename);
        if (!wf) throw Error(item.display + ": " + filename + " is not a valid wheel file name",
                             "wheel names are NAME-VERSION-TAGS.whl");
        python::require_supported_wheel(*wf, filename, tags_, item.display);
        local.built.wheel = *host;
        local.built.name = wf->name;
        local.built.version = wf->version;
        local.built.metadata = candidate_metadata(read_wheel_metadata(*host, filename));
      } else if (python::is_archive_filename(filename)) {
        local.built = st_.builder.build_sdist(build_step(), *host, filename, item.display);
        local.reinstall_same_version = true;
      } else {
        throw Error(item.display + " is neither a wheel nor an sdist archive", "pass a .whl, .tar.gz or .zip");
      }
      // PEP 610; pip >= 23.1 records the sha256 of the file the user gave (the sdist for an sdist).
      json archive_info = json::object();
      if (behaviour_.hashes_local_archives()) {
        std::string hex = image::sha256_of_file(*host).hex();
        archive_info = json{{"hash", "sha256=" + hex}, {"hashes", {{"sha256", hex}}}};
      }
      local.direct_url = json{{"archive_info", archive_info}, {"url", url}};
    }
    std::string name = python::canonicalize_name(local.built.name);
    roots_.push_back({python::Requirement::parse(name + "==" + local.built.version.str()), true, false});
    local_dists_[name] = std::move(local);
  }
}

// The resolver's settings for this step's image and pip, before what is installed.
python::ResolveOptions PythonInstaller::Step::resolve_options() const {
  python::ResolveOptions ro;
  ro.environment = python::MarkerEnvironment::cpython_linux(facts_.python_full_version, facts_.machine);
  ro.python_version = facts_.python_full_version;
  ro.constraints = constraints_;
  ro.pre = pip_.pre || file_options_.pre;
  ro.yanked_rule = behaviour_.yanked_rule();
  ro.prerelease_fallback = behaviour_.prereleases_when_only_prereleases_match();
  ro.log = [this](std::string_view line) { st_.log(std::string(line)); };
  return ro;
}

python::Resolution PythonInstaller::Step::resolve(IndexCandidates& source) {
  python::ResolveOptions ro = resolve_options();
  ro.require_hashes = hash_mode_ || pip_.require_hashes;
  for (const python::SiteDistribution& d : site_distributions_) {
    python::InstalledDist dist;
    try {
      dist.name = python::canonicalize_name(d.name);
      dist.version = python::Version::parse(d.version);
      python::InstalledMetadata md = python::read_installed_metadata(fs_, d);
      dist.requires_dist = md.requires_dist;
      dist.provides_extra = md.provides_extra;
    } catch (const Error& e) {
      st_.log("ignoring the installed " + d.name + " " + d.version + ": " + e.what());
      continue;
    }
    installed_sites_[dist.name] = d;
    ro.installed.push_back(std::move(dist));
  }
  python::Resolution resolution = python::resolve(roots_, ro, source);
  // pip's resolver: a local sdist or project directory at the installed version is reinstalled (a local wheel is
  // left alone, as the resolver already did).
  for (python::ResolvedDist& d : resolution.dists) {
    auto local = local_dists_.find(d.name);
    if (!d.already_installed || local == local_dists_.end() || !local->second.reinstall_same_version) continue;
    d.file = source.candidates(d.name).front();
    d.already_installed = false;
    d.replaces_installed = d.version;
  }

  std::vector<std::size_t> to_fetch;
  std::string summary;
  for (const python::ResolvedDist& d : resolution.dists) {
    if (d.file) to_fetch.push_back(d.file->handle);
    summary += (summary.empty() ? "" : ", ") + d.name + "==" + d.version.str() + (d.already_installed ? " (kept)" : "");
  }
  st_.log(step_.description() + ": " + (summary.empty() ? "nothing to install" : summary));
  Timings::Scope downloading = st_.timings.scope(Phase::kInstall);
  source.prefetch(to_fetch, st_.options.jobs);
  return resolution;
}

// Hash-checking mode (pip's --require-hashes, or any --hash): every file installed must match a hash given for it.
void PythonInstaller::Step::check_hashes(const python::Resolution& resolution, IndexCandidates& source) {
  for (const python::ResolvedDist& d : resolution.dists) {
    if (!d.file) continue;
    auto it = allowed_sha256_.find(d.name);
    std::string filename = source.archive(d.file->handle).filename().string();
    if (!source.local(d.file->handle)) filename = source.filename(d.file->handle);
    if (it == allowed_sha256_.end())
      throw Error("hashes are required for every package in hash-checking mode, but " + d.name + "==" +
                      d.version.str() + " (" + filename + ") has none",
                  "add --hash=sha256:... lines for it (and pin it with ==) in the requirements file");
    std::string got = image::sha256_of_file(source.archive(d.file->handle)).hex();
    if (!it->second.count(got))
      throw Error(filename + " does not match the hashes in " + hash_origin_[d.name] + ": got sha256:" + got,
                  "update the --hash on that line (pip hash FILE prints it), or check where the file came from");
  }
}

// pip uninstalls a replaced distribution before it installs the new one: the paths it would remove become
// whiteouts, and a .pth file it edits is written again without the distribution's entry.
void PythonInstaller::Step::uninstall(const python::SiteDistribution& old) {
  python::UninstallContext context;
  context.bin_dir = behaviour_.uninstall_bin_dir(facts_);
  context.cache_tag = facts_.cache_tag();
  context.permitted = [this](const std::string& p) { return behaviour_.is_local(p, facts_); };
  python::UninstallSet set = python::uninstall_set(fs_, old, context);
  python::UninstallPaths removed = python::compress_for_rename(fs_, set.paths);
  removed_dirs_.insert(removed.directories.begin(), removed.directories.end());
  removed_files_.insert(removed.files.begin(), removed.files.end());
  for (const auto& [pth, entries] : set.pth_entries) {
    std::string rel = pth.substr(1);
    std::optional<std::string> text = fs_.read(rel, kMetadataCap);
    if (!text) continue;  // pip warns "Cannot remove entries from nonexistent file" and goes on
    const PathInfo* info = merged_.find(merged_.resolve(rel));
    out_[rel] = FileEntry::inline_file(rel, python::remove_pth_entries(*text, entries), info ? info->mode : 0644);
  }
}

// A distribution made ready to install: its files as entries (install_wheel, or what setup.py install staged), its
// bytecode compiling in the background.
PythonInstaller::Step::Prepared PythonInstaller::Step::prepare(const python::ResolvedDist& d, IndexCandidates& source) {
  const BuiltDistribution& built = source.built(d.file->handle);
  // operations/install/legacy.py: what setup.py install staged, no INSTALLER or RECORD; its --compile did (or
  // skipped) the bytecode.
  if (built.legacy) return {{&d, staged_files(*built.legacy), true}, std::nullopt};
  const LocalDistribution* local = source.local(d.file->handle);
  python::WheelInstallRequest req;
  req.wheel = built.wheel;
  req.name = built.name;
  req.version = d.version.str();
  req.scheme = facts_.scheme_for(built.name);
  req.sys_executable = facts_.executable;
  req.pip_version = behaviour_.version();
  req.python_version = facts_.python_version;
  req.requested = d.user_requested;
  if (local) req.direct_url = local->direct_url;
  Prepared prepared{{&d, python::install_wheel(req)}, std::nullopt};
  for (const auto& w : prepared.installed.wheel.warnings) st_.log(built.wheel.filename().string() + ": " + w);
  prepared.bytecode = start_bytecode(prepared.installed);
  return prepared;
}

// Distributions are installed in resolution order as their downloads (prefetch) arrive. A wheel that arrives out of
// turn is prepared as soon as it is seen, so its bytecode compiles while an earlier, larger download goes on;
// uninstalling and merging files keep pip's order.
void PythonInstaller::Step::install(const python::Resolution& resolution, IndexCandidates& source) {
  std::vector<const python::ResolvedDist*> dists;
  for (const python::ResolvedDist& d : resolution.dists)
    if (d.file) dists.push_back(&d);
  std::vector<std::optional<Prepared>> prepared(dists.size());
  for (std::size_t i = 0; i < dists.size(); ++i) {
    const python::ResolvedDist& d = *dists[i];
    if (auto replaced = installed_sites_.find(d.name); replaced != installed_sites_.end() && d.replaces_installed) {
      // req_uninstall.py from_dist: a distribution outside pip's environment stays (shadowed by the new one).
      if (behaviour_.is_local(replaced->second.site_dir, facts_)) uninstall(replaced->second);
      else st_.log("Not uninstalling " + d.name + " at " + replaced->second.site_dir + ", outside environment " +
                   facts_.prefix);
    }
    for (std::size_t later = i + 1; later < dists.size(); ++later)
      if (!prepared[later] && source.wheel_at_hand(dists[later]->file->handle))
        prepared[later] = prepare(*dists[later], source);
    if (!prepared[i]) prepared[i] = prepare(d, source);
  }
  std::vector<Installed> installed;
  for (std::optional<Prepared>& p : prepared) {
    if (p->bytecode) add_bytecode(p->installed, p->bytecode->get());
    installed.push_back(std::move(p->installed));
  }

  for (Installed& i : installed) {
    // A very large distribution (torch-sized) gets a layer of its own after the step's layer, so changing another
    // requirement does not rewrite it: its layer's inputs stay the same and the layer cache keeps it.
    std::uint64_t bytes = 0;
    for (const FileEntry& e : i.wheel.files) bytes += e.size;
    if (bytes >= st_.options.separate_layer_bytes) {
      SeparateLayer separate{i.dist->name + " " + i.dist->version.str(), {}, i.wheel.directories};
      for (FileEntry& e : i.wheel.files) separate.files[e.path] = std::move(e);
      separate_layers_.push_back(std::move(separate));
    } else {
      for (FileEntry& e : i.wheel.files) out_[e.path] = std::move(e);
      dirs_.insert(i.wheel.directories.begin(), i.wheel.directories.end());
    }
  }
}

// What `setup.py install` put under its stage, as layer entries at their image paths (the files keep the modes
// setuptools gave them under umask 022), and the installed-files.txt pip writes beside them.
python::InstalledWheel PythonInstaller::Step::staged_files(const python::LegacyInstall& legacy) const {
  python::InstalledWheel out;
  for (auto it = fs::recursive_directory_iterator(legacy.stage); it != fs::recursive_directory_iterator(); ++it) {
    std::string image = it->path().lexically_relative(legacy.stage).string();
    if (it->is_symlink()) {
      FileEntry e;
      e.path = image;
      e.type = FileEntry::Type::kSymlink;
      e.mode = 0777;
      e.link_target = fs::read_symlink(it->path()).string();
      out.files.push_back(std::move(e));
    } else if (it->is_directory()) {
      out.directories.insert(image);
    } else if (it->is_regular_file()) {
      bool exec = (fs::status(it->path()).permissions() & fs::perms::owner_exec) != fs::perms::none;
      FileEntry e;
      e.path = image;
      e.mode = exec ? 0755 : 0644;
      e.source = it->path();
      e.size = fs::file_size(it->path());
      e.source_stamp = "sha256:" + image::sha256_of_file(it->path()).hex();  // the stage is new on every build
      out.files.push_back(std::move(e));
    }
  }
  std::string listing = legacy.egg_info_dir.substr(1) + "/installed-files.txt";
  out.files.push_back(FileEntry::inline_file(listing, legacy.installed_files_txt, 0644));
  for (const FileEntry& e : out.files) out.directories.insert(std::string(path_dir(e.path)));
  return out;
}

// pip compiles every installed .py (compileall, failures ignored) and lists the .pyc in RECORD. A Python of the
// image's X.Y compiles them; without one the build fails rather than leave the .pyc out. Queued here, compiled in the
// background (compiling_), added to the wheel by add_bytecode. Each .pyc goes to the blob store as its batch
// arrives and its entry reads it from there: a framework's tens of thousands of .pyc files (hundreds of MB) are never
// held in memory, and the pip-step cache keeps them from the store as they are.
std::optional<std::future<FileEntries>> PythonInstaller::Step::start_bytecode(
    const Installed& installed) {
  if (!pip_.compile || st_.options.no_compile) return std::nullopt;
  // operations/install/wheel.py compiles os.path.join(lib_dir, record_path), unnormalised.
  std::vector<FileEntry> modules;
  std::vector<std::string> compiled_as;
  const std::string& lib_dir = installed.wheel.lib_dir;
  for (const FileEntry& e : installed.wheel.files) {
    if (!e.path.ends_with(".py")) continue;
    modules.push_back(e);
    compiled_as.push_back(lib_dir + "/" + python::record_relative_path("/" + e.path, lib_dir));
  }
  if (modules.empty()) return std::nullopt;
  python::BytecodeOptions options;
  options.mtime = st_.mtime;
  options.optimization = std::min(2, std::max(0, leading_int(facts_.env_value("PYTHONOPTIMIZE"))));
  if (!facts_.env_value("PYTHONOPTIMIZE").empty() && options.optimization == 0) options.optimization = 1;
  options.invalidation = python::default_invalidation(facts_.env_value("SOURCE_DATE_EPOCH"));
  if (!compiler_) {
    try {
      compiler_ = std::make_unique<python::BytecodeCompiler>(
          st_.builder.interpreter(facts_, "compiling the .pyc files pip writes"));
    } catch (const Error& e) {
      if (e.hint().find("--no-compile") != std::string::npos) throw;
      throw Error(e.what(), "pass --no-compile to install without .pyc files" +
                                (e.hint().empty() ? std::string() : "; or " + e.hint()));
    }
  }
  python::BytecodeCompiler* compiler = compiler_.get();
  const store::BlobStore& store = st_.store;
  return compiling_.post([compiler, options, &store, modules = std::move(modules),
                          compiled_as = std::move(compiled_as)] {
    layers::EntryContentReader reader;
    std::vector<python::BytecodeSource> sources;
    for (std::size_t i = 0; i < modules.size(); ++i)
      sources.push_back({modules[i].path, compiled_as[i], modules[i].size,
                         [&reader, &e = modules[i]] { return reader.read(e, 1u << 30); }});
    std::mutex stored_mutex;
    std::map<std::string, store::StoredBlob> stored;  // .pyc path → its blob
    std::vector<python::Bytecode> compiled = compiler->compile(sources, options, [&](python::Bytecode& b) {
      store::StoredBlob blob = store.put(b.pyc);
      std::string().swap(b.pyc);
      std::lock_guard lock(stored_mutex);
      stored.insert_or_assign(b.image_path, blob);
    });
    FileEntries entries;
    entries.reserve(compiled.size());
    for (const python::Bytecode& b : compiled) {
      const store::StoredBlob& blob = stored.at(b.image_path);
      FileEntry e;
      e.path = b.image_path;
      e.mode = 0644;
      e.source = store.path_of(blob.digest);
      e.size = blob.size;
      e.source_stamp = blob.digest.str();  // the blob's name is its content
      entries.push_back(std::move(e));
    }
    return entries;
  });
}

void PythonInstaller::Step::add_bytecode(Installed& installed, FileEntries compiled) {
  python::InstalledWheel& w = installed.wheel;
  std::vector<std::string> record_paths;
  for (FileEntry& e : compiled) {
    record_paths.push_back(python::record_relative_path("/" + e.path, w.lib_dir));
    w.directories.insert(std::string(path_dir(e.path)));
    w.files.push_back(std::move(e));
  }
  if (!record_paths.empty()) w.add_unhashed_record_paths(record_paths);
}

// Every ancestor directory of a layer's entries: with the image's attributes where it has that directory (unless
// this step removed and recreates it), else as pip's os.makedirs makes them under RUN's umask 022.
std::set<std::string> PythonInstaller::Step::directories_for(const std::map<std::string, FileEntry>& files,
                                                             const std::set<std::string>& leaf_dirs,
                                                             FileEntries& into) const {
  std::set<std::string> all;
  for (const auto& dir : leaf_dirs)
    for (std::string p = dir; !p.empty(); p = std::string(path_dir(p))) all.insert(p);
  for (const auto& [p, e] : files)
    for (std::string d = std::string(path_dir(e.path)); !d.empty(); d = std::string(path_dir(d))) all.insert(d);
  for (const auto& dir : all) {
    const PathInfo* info = recreated_dirs_.count(dir) ? nullptr : merged_.find(dir);
    if (info && info->type == PathInfo::Type::kDirectory)
      into.push_back(FileEntry::directory(dir, info->mode, info->uid, info->gid));
    else if (info)
      throw Error("RUN " + facts_.pip_command + " install would write under /" + dir +
                  ", which is not a directory in the image");
    else
      into.push_back(FileEntry::directory(dir, 0755));
  }
  return all;
}

// The step's layer (whiteouts, installed files, the in-tree build's leftovers), then one per very large distribution.
std::vector<PipLayer> PythonInstaller::Step::layers() {
  for (const auto& dir : removed_dirs_) {
    if (dirs_.count(dir)) {
      recreated_dirs_.insert(dir);
      out_[dir + "/.wh..wh..opq"] = FileEntry::inline_file(dir + "/.wh..wh..opq", "", 0644);
    } else {
      out_[dir] = FileEntry::whiteout(dir);  // keyed by the removed path; written as .wh.<name>
    }
  }
  for (const auto& f : removed_files_)
    if (!out_.count(f)) out_[f] = FileEntry::whiteout(f);

  FileEntries entries;
  std::set<std::string> all_dirs = directories_for(out_, dirs_, entries);
  entries.reserve(entries.size() + out_.size() + build_artifacts_.size());
  for (auto& [p, e] : out_) entries.push_back(std::move(e));
  out_.clear();
  // The in-tree build's leftovers in /usr/app, with their parents (which an earlier COPY may have made).
  std::set<std::string> artifact_paths;
  for (const FileEntry& e : build_artifacts_) artifact_paths.insert(e.path);
  for (FileEntry& e : build_artifacts_) {
    for (std::string d = std::string(path_dir(e.path)); !d.empty(); d = std::string(path_dir(d))) {
      if (all_dirs.count(d) || artifact_paths.count(d)) continue;
      const PathInfo* info = merged_.find(d);
      entries.push_back(info ? FileEntry::directory(d, info->mode, info->uid, info->gid) : FileEntry::directory(d, 0755));
      all_dirs.insert(d);
    }
    if (!all_dirs.count(e.path)) entries.push_back(std::move(e));
  }
  // Moved, not listed in braces: an initializer list would copy every entry.
  std::vector<PipLayer> result;
  result.push_back({"", std::nullopt, std::move(entries), nullptr});
  for (SeparateLayer& separate : separate_layers_) {
    FileEntries entries_of_one;
    directories_for(separate.files, separate.dirs, entries_of_one);
    entries_of_one.reserve(entries_of_one.size() + separate.files.size());
    for (auto& [p, e] : separate.files) entries_of_one.push_back(std::move(e));
    separate.files.clear();
    result.push_back({separate.what, std::nullopt, std::move(entries_of_one), nullptr});
  }
  return result;
}

PythonInstaller::PythonInstaller(std::shared_ptr<const image::Image> base, const store::CacheDir& cache,
                                 PythonOptions options, std::int64_t mtime,
                                 std::function<void(const std::string&)> log, Timings& timings,
                                 python::DownloadReporter on_download)
    : state_(std::make_unique<State>(std::move(base), cache, std::move(options), mtime,
                                     std::move(log), timings, std::move(on_download))) {}

PythonInstaller::~PythonInstaller() = default;

const layers::ScannedImage& PythonInstaller::base_filesystem() { return state_->filesystem(); }

python::PythonFacts PythonInstaller::python_facts(const image::ImageConfig& config) {
  return state_->facts(config, false);
}

PipStepResult PythonInstaller::install(const gcloud::PipInstallStep& step, const image::ImageConfig& config,
                                       const std::vector<const FileEntries*>& own_layers) {
  // Constructing a step reads the base's Python facts and installed distributions (the base scan, or its cache).
  Timings::Scope facts = state_->timings.scope(Phase::kFacts);
  Step pip_step(*state_, step, config, own_layers);
  facts.stop();
  return pip_step.run();
}

}  // namespace trainpack::imagebuild
