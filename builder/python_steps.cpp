#include "builder/python_steps.h"

#include <zip.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "layers/digest.h"
#include "layers/layer_writer.h"
#include "layers/rootfs_index.h"
#include "layers/scanned_image.h"
#include "python/base_facts.h"
#include "python/bytecode.h"
#include "python/filenames.h"
#include "python/index_client.h"
#include "python/index_page.h"
#include "python/marker_compare.h"
#include "python/metadata.h"
#include "python/names.h"
#include "python/requirements_file.h"
#include "python/resolver.h"
#include "python/tags.h"
#include "python/uninstall.h"
#include "python/wheel_builder.h"
#include "python/wheel_installer.h"
#include "registry/google_credentials.h"
#include "registry/http_client.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"

namespace trainpack::builder {
namespace fs = std::filesystem;
using layers::FileEntries;
using layers::FileEntry;
using layers::PathInfo;
using nlohmann::json;

namespace {

constexpr std::size_t kMetadataCap = 16u << 20;

// What the base scan keeps while listing each layer: everything python/base_facts.cpp reads, so facts come from
// the cache without a second pass. Bump the name whenever this changes.
layers::ScanSelection python_selection() {
  return {"python-facts-1", [](std::string_view path, std::uint64_t size) {
            std::string_view base = path_base(path);
            bool interpreter_or_pip = path.find("bin/") != std::string_view::npos &&
                                      (base.starts_with("python") || base.starts_with("pip"));
            if (interpreter_or_pip) return true;  // the interpreter's ELF header names libc and the machine
            if (size > (4u << 20)) return false;
            return path.starts_with("etc/") || path.find(".dist-info/") != std::string_view::npos ||
                   path.find(".egg-info") != std::string_view::npos || base == "pyvenv.cfg" ||
                   base == "EXTERNALLY-MANAGED" || base == "patchlevel.h" || base == "build-details.json" ||
                   base == "sysconfig.py" || base.starts_with("_sysconfigdata") || base.starts_with("libc.so") ||
                   base.starts_with("libc-") || base.starts_with("ld-musl") || base.starts_with("ld-linux") ||
                   path.starts_with("var/lib/dpkg/status") || path == "lib/apk/db/installed" ||
                   path.find("conda-meta/") != std::string_view::npos;
          }};
}

std::string env_value(const std::vector<std::pair<std::string, std::string>>& env, std::string_view key) {
  std::string value;
  for (const auto& [k, v] : env)
    if (k == key) value = v;
  return value;
}

std::vector<std::string> config_env(const json& config) {
  std::vector<std::string> env;
  if (config.contains("Env") && config["Env"].is_array())
    for (const auto& e : config["Env"])
      if (e.is_string()) env.push_back(e.get<std::string>());
  return env;
}

// "/usr/app/./x" or "x" (relative to /usr/app) → "usr/app/x".
std::string image_relative(std::string_view path, std::string_view cwd) {
  return normalize_path(path.starts_with('/') ? std::string(path) : std::string(cwd) + "/" + std::string(path));
}

int parse_int(std::string_view s) {
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') break;
    v = v * 10 + (c - '0');
  }
  return v;
}

// pip's own target: packaging.tags.sys_tags() of the image's interpreter (pip 23 vendors packaging 21.3, which
// puts linux_<arch> last).
python::TagPriority tags_for(const python::PythonFacts& f) {
  python::CPythonTarget t;
  auto dot = f.python_version.find('.');
  t.major = parse_int(f.python_version.substr(0, dot));
  t.minor = dot == std::string::npos ? 0 : parse_int(f.python_version.substr(dot + 1));
  t.debug = f.py_debug;
  t.free_threaded = f.free_threaded;
  t.libc = f.libc == "musl" ? python::Libc::musl : f.libc == "glibc" ? python::Libc::glibc : python::Libc::none;
  auto ldot = f.libc_version.find('.');
  t.libc_major = parse_int(f.libc_version.substr(0, ldot));
  t.libc_minor = ldot == std::string::npos ? 0 : parse_int(f.libc_version.substr(ldot + 1));
  t.arch = f.machine;
  python::TagBehaviour behaviour;
  behaviour.linux_platform_first = false;
  return python::TagPriority(python::sys_tags(t, behaviour));
}

// METADATA of a wheel on disk: <name>-<version>.dist-info/METADATA (the only top-level .dist-info).
std::string read_wheel_metadata(const fs::path& wheel, const std::string& display) {
  int err = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> za(zip_open(wheel.c_str(), ZIP_RDONLY, &err), &zip_discard);
  if (!za) throw Error("cannot open the wheel " + display, "the download is not a zip archive");
  zip_int64_t n = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(za.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_STRICT);
    if (!name) continue;
    std::string_view s(name);
    auto slash = s.find('/');
    if (slash == std::string_view::npos || !s.substr(0, slash).ends_with(".dist-info") ||
        s.substr(slash + 1) != "METADATA")
      continue;
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || st.size > kMetadataCap)
      throw Error(display + ": METADATA is unreadable or too large");
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(za.get(), static_cast<zip_uint64_t>(i), 0),
                                                         &zip_fclose);
    std::string out(st.size, '\0');
    zip_int64_t got = f ? zip_fread(f.get(), out.data(), st.size) : -1;
    if (got != static_cast<zip_int64_t>(st.size)) throw Error(display + ": cannot read METADATA");
    return out;
  }
  throw Error(display + " has no .dist-info/METADATA", "the wheel is malformed");
}

python::CandidateMetadata candidate_metadata(const std::string& text) {
  python::CoreMetadata md = python::CoreMetadata::parse(text);
  python::CandidateMetadata out;
  for (const auto& r : md.requires_dist) out.requires_dist.push_back(r.str());
  out.requires_python = md.requires_python.value_or("");
  out.provides_extra = md.provides_extra;
  return out;
}

// A wheel given by the user (--extra-packages, a path line, or built from the project in setup.py or a local
// sdist): the only candidate of its project.
struct LocalWheel {
  fs::path host_path;  // the wheel on the host
  python::WheelFilename filename;
  json direct_url;     // PEP 610 record pip writes for it ({"archive_info": {}, "url": "file:///usr/app/x.whl"})
  bool built = false;  // from an sdist or a project directory: pip reinstalls it even at the installed version
};

// Builds an sdist (downloaded or local) into a pure-Python wheel on the host; `display` names it in errors.
using SdistBuilder =
    std::function<fs::path(const fs::path& sdist, const std::string& filename, const std::string& display)>;

// The index (and find-links) as the resolver's candidate source, filtered to what the image can install.
class IndexCandidates : public python::CandidateSource {
 public:
  IndexCandidates(python::IndexClient& client, const python::TagPriority& tags, python::FormatControl formats,
                  std::map<std::string, LocalWheel> local, SdistBuilder build_sdist)
      : client_(client), tags_(tags), formats_(std::move(formats)), local_(std::move(local)),
        build_sdist_(std::move(build_sdist)) {}

  std::vector<python::CandidateInfo> candidates(const std::string& name) override {
    if (auto it = local_.find(name); it != local_.end()) {
      python::IndexFile f;
      f.filename = it->second.host_path.filename().string();
      f.url = python::file_url_for(it->second.host_path);
      files_.push_back({f, &it->second, std::nullopt, {}});
      return {python::CandidateInfo{it->second.filename.version, false, "", "", true, files_.size() - 1}};
    }
    struct Ranked {
      python::CandidateInfo info;
      bool wheel;
      std::size_t priority;
      std::optional<python::BuildTag> build;
    };
    std::vector<Ranked> ranked;
    for (python::IndexFile& f : client_.project_files(name)) {
      Ranked r{};
      if (f.filename.ends_with(".whl")) {
        auto wf = python::WheelFilename::try_parse(f.filename);
        if (!wf || wf->name != name || !formats_.binary_allowed(name)) continue;
        auto pri = tags_.wheel_priority(wf->tags);
        if (!pri) continue;
        r = Ranked{{wf->version, f.is_yanked(), f.yanked.value_or(""), f.requires_python.value_or(""), true, 0},
                   true, *pri, wf->build};
      } else {
        auto sf = python::SdistFilename::try_parse(f.filename);
        if (!sf || sf->name != name || !formats_.source_allowed(name)) continue;
        r = Ranked{{sf->version, f.is_yanked(), f.yanked.value_or(""), f.requires_python.value_or(""), false, 0},
                   false, 0, std::nullopt};
      }
      files_.push_back({std::move(f), nullptr, std::nullopt, {}});
      r.info.handle = files_.size() - 1;
      ranked.push_back(std::move(r));
    }
    // Within a version: wheels before the sdist, the best tag first, then the highest build tag (pip's _sort_key).
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
      if (a.info.version != b.info.version) return b.info.version < a.info.version;
      if (a.wheel != b.wheel) return a.wheel;
      if (a.priority != b.priority) return a.priority < b.priority;
      return b.build < a.build;
    });
    std::vector<python::CandidateInfo> out;
    for (auto& r : ranked) out.push_back(r.info);
    return out;
  }

  python::CandidateMetadata metadata(const std::string& name, const python::CandidateInfo& c) override {
    const File& file = files_.at(c.handle);
    if (file.local) return candidate_metadata(read_wheel_metadata(file.local->host_path, file.index.filename));
    if (!c.is_wheel) return candidate_metadata(read_wheel_metadata(wheel_path(c.handle), file.index.filename));
    if (auto text = client_.fetch_metadata(file.index)) return candidate_metadata(*text);
    return candidate_metadata(read_wheel_metadata(wheel_path(c.handle), file.index.filename));
  }

  // The file of a picked candidate: downloaded (verified) into the blob store, or the local wheel.
  fs::path wheel_path(std::size_t handle) {
    File& file = files_.at(handle);
    if (file.local) return file.local->host_path;
    if (!file.built.empty()) return file.built;
    if (!file.blob) file.blob = client_.download(file.index);
    if (file.index.filename.ends_with(".whl")) return blob_path_(*file.blob);
    // An sdist: pip would build it in the image; trainpack builds it on the host when it is pure Python.
    auto sdist = python::SdistFilename::try_parse(file.index.filename);
    std::string display = sdist ? sdist->name + " " + sdist->version.str() : file.index.filename;
    file.built = build_sdist_(blob_path_(*file.blob), file.index.filename, display);
    return file.built;
  }
  const python::IndexFile& index_file(std::size_t handle) const { return files_.at(handle).index; }
  const LocalWheel* local(std::size_t handle) const { return files_.at(handle).local; }
  void prefetch(const std::vector<std::size_t>& handles, int jobs) {
    std::vector<python::IndexFile> todo;
    std::vector<std::size_t> which;
    for (std::size_t h : handles) {
      File& f = files_.at(h);
      if (f.local || f.blob) continue;
      todo.push_back(f.index);
      which.push_back(h);
    }
    if (todo.empty()) return;
    std::vector<layers::StoredBlob> blobs = client_.download_all(todo, jobs);
    for (std::size_t i = 0; i < which.size(); ++i) files_.at(which[i]).blob = blobs[i];
  }
  std::function<fs::path(const layers::StoredBlob&)> blob_path_;

 private:
  struct File {
    python::IndexFile index;
    const LocalWheel* local = nullptr;
    std::optional<layers::StoredBlob> blob;
    fs::path built;  // the wheel built from an sdist
  };
  python::IndexClient& client_;
  const python::TagPriority& tags_;
  python::FormatControl formats_;
  std::map<std::string, LocalWheel> local_;
  SdistBuilder build_sdist_;
  std::vector<File> files_;
};

// A distribution installed by an earlier pip step of this build.
struct BuildInstalled {
  python::SiteDistribution site;
  std::vector<std::string> requires_dist;
  std::vector<std::string> provides_extra;
};

// Every non-directory path below `dir` in a merged index.
std::vector<std::string> files_under(const layers::RootfsIndex& index, const std::string& dir) {
  std::vector<std::string> out;
  std::vector<std::string> todo{dir};
  while (!todo.empty()) {
    std::string d = todo.back();
    todo.pop_back();
    for (const std::string& child : index.children(d)) {
      std::string p = join_path(d, child);
      const PathInfo* info = index.find(p);
      if (info && info->type == PathInfo::Type::kDirectory) todo.push_back(p);
      else out.push_back(p);
    }
  }
  return out;
}

}  // namespace

struct PythonInstaller::State {
  std::shared_ptr<const layers::Image> base;
  const layers::BlobStore& store;
  fs::path cache_dir;
  PythonOptions options;
  std::int64_t mtime;
  std::function<void(const std::string&)> log;

  std::unique_ptr<layers::ScannedImage> scanned;
  std::unique_ptr<registry::HttpClient> http;
  std::unique_ptr<registry::GoogleCredentials> google;
  std::mutex google_mutex;
  std::optional<python::HostPython> host_python;
  bool host_python_checked = false;
  std::map<std::string, BuildInstalled> installed_here;  // canonical name → dist this build installed
  ScopedDir work;

  State(std::shared_ptr<const layers::Image> b, const layers::BlobStore& s, fs::path c, PythonOptions o, std::int64_t m,
        std::function<void(const std::string&)> l)
      : base(std::move(b)), store(s), cache_dir(std::move(c)), options(std::move(o)), mtime(m), log(std::move(l)),
        work(make_temp_dir(cache_dir / "tmp", "pip-")) {}

  const layers::ScannedImage& filesystem() {
    if (!scanned) {
      log("reading the base's Python installation (each base layer is listed once, then cached)");
      scanned = std::make_unique<layers::ScannedImage>(base, cache_dir, python_selection());
    }
    return *scanned;
  }

  python::PythonFacts facts(const json& config, bool python3_names) {
    const layers::ScannedImage& fs = filesystem();
    json image = base->config();
    python::ImageConfigFacts cfg;
    cfg.env = config_env(config);
    if (config.contains("User") && config["User"].is_string()) cfg.user = config["User"];
    cfg.architecture = image.value("architecture", "");
    cfg.variant = image.value("variant", "");
    return python::read_python_facts(fs, cfg, python3_names);
  }
};

PythonInstaller::PythonInstaller(std::shared_ptr<const layers::Image> base, const layers::BlobStore& store,
                                 fs::path cache_dir, PythonOptions options, std::int64_t mtime,
                                 std::function<void(const std::string&)> log)
    : state_(std::make_unique<State>(std::move(base), store, std::move(cache_dir), std::move(options), mtime,
                                     std::move(log))) {}

PythonInstaller::~PythonInstaller() = default;

std::vector<PipLayer> PythonInstaller::install(const BuildStep& step, const json& config,
                                     const std::vector<FileEntries>& own_layers, const fs::path& package_dir) {
  State& st = *state_;
  const std::string& kind = step.args.at(1);
  const std::string& value = step.args.at(2);
  const bool python3_names = step.args.at(3) == "pip3";
  python::PythonFacts facts = st.facts(config, python3_names);
  const python::PipConfig& pip = facts.pip_config;
  const std::string where = "RUN " + facts.pip_command + " install";

  if (!pip.target.empty() || !pip.prefix.empty() || !pip.root.empty() || pip.user)
    throw Error("the image's pip configuration installs elsewhere (--target, --prefix, --root or --user), which "
                "trainpack does not reproduce",
                "remove that setting from the base image's pip config or environment");
  if (!facts.externally_managed.empty() && !pip.break_system_packages && !st.options.break_system_packages)
    throw Error("the base image's Python is externally managed (" + facts.externally_managed +
                    "): pip in the image would refuse to install " + step.args.at(0),
                "use a base with a virtual environment, allow it in the image (PIP_BREAK_SYSTEM_PACKAGES=1 or "
                "break-system-packages = true in /etc/pip.conf), or pass --break-system-packages");

  // The filesystem pip sees: the base with this build's layers on top.
  layers::RootfsIndex merged = st.filesystem().index();
  std::map<std::string, const FileEntry*> own_files;
  for (const FileEntries& layer : own_layers) {
    merged.apply(layer);
    for (const FileEntry& e : layer) own_files[e.path] = &e;
  }
  auto read_image_file = [&](const std::string& rel) -> std::optional<std::string> {
    if (auto it = own_files.find(rel); it != own_files.end()) {
      const FileEntry& e = *it->second;
      if (e.type != FileEntry::Type::kRegular) return std::nullopt;
      if (!e.source.empty() && e.zip_member.empty()) return read_file(e.source, kMetadataCap);
      if (e.zip_member.empty()) return e.data;
    }
    return st.filesystem().read(rel, kMetadataCap);
  };
  const std::string cwd = kWorkdir;
  auto host_path_of = [&](const std::string& rel) -> std::optional<fs::path> {
    auto it = own_files.find(rel);
    if (it == own_files.end() || it->second->source.empty() || !it->second->zip_member.empty()) return std::nullopt;
    return it->second->source;
  };

  // --- What to install -----------------------------------------------------------------------------------------
  std::vector<python::RootRequirement> roots;
  std::vector<python::Requirement> constraints;
  std::map<std::string, LocalWheel> local_wheels;
  python::RequirementsOptions file_options;
  bool hash_mode = false;
  std::map<std::string, std::set<std::string>> allowed_sha256;  // hash-checking mode: canonical name → hex digests
  std::map<std::string, std::string> hash_origin;               // canonical name → the line that gave them
  // Files and directories given by path: handled once the index settings are known (builds may need them).
  struct LocalItem {
    std::string image_rel;  // "usr/app/dist/x.whl", "usr/app" for the project
    std::string display;
  };
  std::vector<LocalItem> local_items;
  auto refuse_url = [&](const std::string& what) {
    throw Error(what + ": direct URL requirements are not supported", "download the file and pass it with "
                "--extra-packages, or publish it to the index");
  };

  // pip's "Ignoring x: markers '...' don't match your environment" for a requirement given by the user.
  auto markers_match = [&](const python::Requirement& r) {
    if (!r.marker) return true;
    if (r.marker->evaluate(python::MarkerEnvironment::cpython_linux(facts.python_full_version, facts.machine),
                           python::pep440_version_compare))
      return true;
    st.log("Ignoring " + r.name + ": markers '" + r.marker->str() + "' don't match your environment");
    return false;
  };

  if (kind == "requirements-file") {
    python::RequirementsEnv renv;
    for (const std::string& e : config_env(config)) {
      auto eq = e.find('=');
      if (eq != std::string::npos) renv.vars[e.substr(0, eq)] = e.substr(eq + 1);
    }
    renv.cwd = cwd;
    renv.read_file = [&](const std::string& path) { return read_image_file(image_relative(path, cwd)); };
    renv.path_exists = [&](const std::string& path) { return merged.find(image_relative(path, cwd)) != nullptr; };
    python::RequirementsFile file = python::parse_requirements_file(value, renv);
    file_options = file.options;
    hash_mode = file.hash_checking_mode();
    for (const python::RequirementLine& line : file.lines) {
      std::string display = line.file + ":" + std::to_string(line.line_number) + ": " + line.requirement_text;
      if (line.editable) throw Error(display + ": editable installs are not supported", "drop the -e");
      if (line.kind == python::RequirementLine::Kind::vcs)
        throw Error(display + ": VCS requirements are not supported", "build a wheel and pass it with --extra-packages");
      if (line.constraint) {
        if (line.requirement && line.kind == python::RequirementLine::Kind::named) constraints.push_back(*line.requirement);
        continue;
      }
      if (line.kind == python::RequirementLine::Kind::named) {
        if (!markers_match(*line.requirement)) continue;
        if (!line.requirement->url.empty()) refuse_url(display);
        roots.push_back({*line.requirement, true, false});
        std::string n = python::canonicalize_name(line.requirement->name);
        for (const auto& [algorithm, hex] : line.hashes) {
          if (algorithm != "sha256")
            throw Error(display + ": only sha256 hashes are checked by trainpack, not " + algorithm,
                        "add --hash=sha256:... for the same file (pip hash FILE prints it)");
          allowed_sha256[n].insert(hex);
          hash_origin[n] = line.file + ":" + std::to_string(line.line_number);
        }
      } else if (line.kind == python::RequirementLine::Kind::path) {
        local_items.push_back({image_relative(line.location, cwd), display});
      } else {
        refuse_url(display);
      }
    }
  } else if (kind == "archive") {
    local_items.push_back({image_relative(value, cwd), "--extra-packages " + value});
  } else if (kind == "requirement") {
    python::Requirement r = python::Requirement::parse(value);
    if (!r.url.empty()) refuse_url("--requirements " + value);
    if (markers_match(r)) roots.push_back({r, true, true});
  } else if (kind == "project") {
    local_items.push_back({image_relative(value, cwd), "the project in setup.py"});
  } else {
    throw Error("internal: unknown pip step kind " + kind);
  }

  // --- Where from: flags, then the requirements file's own options, then the image's pip config ----------------
  std::vector<std::string> cli_indexes{st.options.index_url.value_or(pip.index_url)};
  for (const auto& u : st.options.extra_index_urls.empty() ? pip.extra_index_urls : st.options.extra_index_urls)
    cli_indexes.push_back(u);
  python::IndexClientOptions io;
  io.index_urls = file_options.effective_index_urls(cli_indexes, pip.no_index);
  io.find_links = st.options.find_links.empty() ? pip.find_links : st.options.find_links;
  for (const auto& f : file_options.find_links) io.find_links.push_back(f);
  if (!st.http) {
    registry::HttpOptions ho;
    ho.user_agent = std::string("trainpack/") + TRAINPACK_VERSION;
    ho.max_attempts = 3;
    st.http = std::make_unique<registry::HttpClient>(ho);
  }

  // --- Local wheels, sdists and project directories -------------------------------------------------------------
  if (!st.host_python_checked) {
    st.host_python_checked = true;
    st.host_python = python::find_host_python(facts.python_version, facts.python_full_version);
  }
  auto need_host_python = [&](const std::string& what) -> const python::HostPython& {
    if (!st.host_python)
      throw Error("building " + what + " needs python" + facts.python_version + " (the image's Python) on this host",
                  "install python" + facts.python_version + " with pip and setuptools here, or publish a wheel");
    return *st.host_python;
  };
  auto build_request = [&](const fs::path& source, const std::string& display, const fs::path& out) {
    python::WheelBuildRequest b;
    b.python = need_host_python(display);
    b.source = source;
    b.display = display;
    b.index_urls = pip.no_index || file_options.no_index ? std::vector<std::string>{} : io.index_urls;
    b.find_links = io.find_links;
    b.out_dir = out;
    return b;
  };
  // An sdist: refused before building when it carries native sources; built wheels are cached by the sdist's
  // sha256 and the host Python's version.
  SdistBuilder build_sdist = [&](const fs::path& file, const std::string& filename, const std::string& display) {
    std::vector<std::string> native = python::native_sources_in_sdist(file);
    if (!native.empty())
      throw Error(display + " has native code (" + native.front() +
                      (native.size() > 1 ? " and " + std::to_string(native.size() - 1) + " more" : "") +
                      ") and no wheel for this image",
                  "publish a wheel built for the image's platform (manylinux) to the index, or pass one with "
                  "--extra-packages");
    const python::HostPython& py = need_host_python(display);
    std::string key = layers::sha256_of(layers::sha256_of_file(file).hex() + " " + py.path + " " + py.version).hex();
    fs::path cached = st.cache_dir / "built-wheels" / key;
    std::error_code ec;
    if (fs::is_directory(cached, ec))
      for (const auto& e : fs::directory_iterator(cached))
        if (e.path().extension() == ".whl") return e.path();
    fs::path stage = make_temp_dir(st.work.path(), "sdist-");
    fs::path named = stage / filename;
    fs::copy_file(file, named);
    st.log("building " + display + " into a wheel with " + py.path);
    fs::path wheel = python::build_wheel(build_request(named, display, stage / "out"));
    fs::create_directories(cached.parent_path());
    fs::rename(stage / "out", cached, ec);  // another build may have won the race: then use its result
    for (const auto& e : fs::directory_iterator(cached))
      if (e.path().extension() == ".whl") return e.path();
    return wheel;
  };
  std::vector<FileEntry> build_artifacts;  // what an in-tree build leaves in /usr/app
  for (const LocalItem& item : local_items) {
    fs::path wheel;
    json direct_url;
    bool built = true;  // false for a wheel given as a file
    const std::string url = "file:///" + item.image_rel;
    if (kind == "project") {
      // pip builds the project in place, in /usr/app, where gcloud has copied only setup.py (and what COPY put
      // there before): reproduce that tree on the host, build, and keep what the build leaves next to it.
      fs::path tree = make_temp_dir(st.work.path(), "project-");
      std::set<std::string> original;
      const std::string prefix = item.image_rel + "/";
      for (const auto& [path, entry] : own_files) {
        if (!path.starts_with(prefix)) continue;
        std::string rel = path.substr(prefix.size());
        original.insert(rel);
        if (entry->type == FileEntry::Type::kDirectory) fs::create_directories(tree / rel);
        else if (entry->type == FileEntry::Type::kRegular) {
          fs::create_directories((tree / rel).parent_path());
          layers::EntryContentReader().copy_to(*entry, tree / rel);
        }
      }
      st.log("building " + item.display + " into a wheel with " + need_host_python(item.display).path);
      wheel = python::build_wheel(build_request(tree, item.display, make_temp_dir(st.work.path(), "wheel-")));
      for (auto it = fs::recursive_directory_iterator(tree); it != fs::recursive_directory_iterator(); ++it) {
        std::string rel = fs::relative(it->path(), tree).string();
        if (original.count(rel)) continue;
        std::string image = item.image_rel + "/" + rel;
        if (it->is_directory() && !it->is_symlink()) {
          build_artifacts.push_back(FileEntry::directory(image, 0755));
        } else if (it->is_regular_file() && !it->is_symlink()) {
          bool exec = (fs::status(it->path()).permissions() & fs::perms::owner_exec) != fs::perms::none;
          build_artifacts.push_back(FileEntry::inline_file(image, read_file(it->path(), 1u << 30), exec ? 0755 : 0644));
        }
      }
      direct_url = json{{"dir_info", json::object()}, {"url", url}};
    } else {
      std::optional<fs::path> host = host_path_of(item.image_rel);
      if (!host) throw Error(item.display + " is not a file in the image at this step", "check the path");
      std::string filename = host->filename().string();
      if (filename.ends_with(".whl")) {
        wheel = *host;
        built = false;
      } else if (python::is_archive_filename(filename)) {
        wheel = build_sdist(*host, filename, item.display);
      } else {
        throw Error(item.display + " is neither a wheel nor an sdist archive", "pass a .whl, .tar.gz or .zip");
      }
      direct_url = json{{"archive_info", json::object()}, {"url", url}};
    }
    auto wf = python::WheelFilename::try_parse(wheel.filename().string());
    if (!wf) throw Error(item.display + ": " + wheel.filename().string() + " is not a valid wheel file name",
                         "wheel names are NAME-VERSION-TAGS.whl");
    roots.push_back({python::Requirement::parse(wf->name + "==" + wf->version.str()), true, false});
    local_wheels.emplace(wf->name, LocalWheel{wheel, *wf, direct_url, built});
  }

  // Artifact Registry Python repositories: the same Google credentials as the registry, found only when asked.
  io.access_token = [&st](const std::string& host) -> std::string {
    std::lock_guard<std::mutex> lock(st.google_mutex);
    if (!st.google) {
      registry::GoogleAdcOptions go;
      go.http = [&st](const registry::HttpRequest& r) { return st.http->send(r); };
      st.google = registry::GoogleCredentials::find_default(std::move(go));
      if (!st.google)
        throw Error("no Google credentials for the Python repository " + host,
                    "set GOOGLE_APPLICATION_CREDENTIALS, run on Cloud Build/GCE, or put the token in ~/.netrc");
    }
    return st.google->token().token;
  };
  python::IndexClient client(*st.http, st.store, io);
  python::FormatControl formats = file_options.format_control;
  for (const auto& n : pip.only_binary) formats.add_only_binary(n);
  for (const auto& n : pip.no_binary) formats.add_no_binary(n);
  python::TagPriority tags = tags_for(facts);
  IndexCandidates source(client, tags, formats, local_wheels, build_sdist);
  source.blob_path_ = [&](const layers::StoredBlob& b) { return st.store.path_of(b.digest); };

  // --- Resolve ---------------------------------------------------------------------------------------------------
  python::ResolveOptions ro;
  ro.environment = python::MarkerEnvironment::cpython_linux(facts.python_full_version, facts.machine);
  ro.python_version = facts.python_full_version;
  ro.constraints = constraints;
  ro.pre = pip.pre || file_options.pre;
  ro.require_hashes = hash_mode || pip.require_hashes;
  ro.log = [&](std::string_view line) { st.log(std::string(line)); };
  std::map<std::string, python::SiteDistribution> installed_sites;
  for (const python::SiteDistribution& d : facts.installed) {
    std::string n = python::canonicalize_name(d.name);
    if (st.installed_here.count(n)) continue;
    std::string meta_path = d.egg_info ? (merged.find(d.metadata_dir.substr(1)) &&
                                                  merged.find(d.metadata_dir.substr(1))->type == PathInfo::Type::kDirectory
                                              ? d.metadata_dir + "/PKG-INFO"
                                              : d.metadata_dir)
                                       : d.metadata_dir + "/METADATA";
    python::InstalledDist dist;
    try {
      dist.name = n;
      dist.version = python::Version::parse(d.version);
      if (auto text = read_image_file(meta_path.substr(1))) {
        python::CandidateMetadata md = candidate_metadata(*text);
        dist.requires_dist = md.requires_dist;
        dist.provides_extra = md.provides_extra;
      }
    } catch (const Error& e) {
      st.log("ignoring the installed " + d.name + " " + d.version + ": " + e.what());
      continue;
    }
    ro.installed.push_back(std::move(dist));
    installed_sites[n] = d;
  }
  for (const auto& [n, b] : st.installed_here) {
    ro.installed.push_back({n, python::Version::parse(b.site.version), b.requires_dist, b.provides_extra});
    installed_sites[n] = b.site;
  }
  python::Resolution resolution = python::resolve(roots, ro, source);
  // pip's resolver: a local sdist or project directory at the installed version is reinstalled (a local wheel is
  // left alone, as the resolver already did).
  for (python::ResolvedDist& d : resolution.dists) {
    auto local = local_wheels.find(d.name);
    if (!d.already_installed || local == local_wheels.end() || !local->second.built) continue;
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
  st.log(step.args.at(0) + ": " + (summary.empty() ? "nothing to install" : summary));
  source.prefetch(to_fetch, st.options.jobs);

  // Hash-checking mode (pip's --require-hashes, or any --hash): every file installed must match a hash given for it.
  if (hash_mode) {
    for (const python::ResolvedDist& d : resolution.dists) {
      if (!d.file) continue;
      auto it = allowed_sha256.find(d.name);
      const LocalWheel* local = source.local(d.file->handle);
      std::string filename = local ? local->host_path.filename().string() : source.index_file(d.file->handle).filename;
      if (it == allowed_sha256.end())
        throw Error("hashes are required for every package in hash-checking mode, but " + d.name + "==" +
                        d.version.str() + " (" + filename + ") has none",
                    "add --hash=sha256:... lines for it (and pin it with ==) in the requirements file");
      std::string got = layers::sha256_of_file(source.wheel_path(d.file->handle)).hex();
      if (!it->second.count(got))
        throw Error(filename + " does not match the hashes in " + hash_origin[d.name] + ": got sha256:" + got,
                    "update the --hash on that line (pip hash FILE prints it), or check where the file came from");
    }
  }

  // --- Install into entries ----------------------------------------------------------------------------------------
  struct OwnLayer {
    std::string what;  // "torch 2.1.0"
    std::map<std::string, FileEntry> files;
    std::set<std::string> dirs;
  };
  std::vector<OwnLayer> own_layers_out;
  std::map<std::string, FileEntry> out;       // path → entry (files, whiteouts)
  std::set<std::string> dirs;                 // directories the step writes into
  std::set<std::string> recreated_dirs;       // removed by an uninstall, then written again
  std::set<std::string> removed_dirs;
  std::set<std::string> removed_files;

  const bool compile = pip.compile && !st.options.no_compile;
  if (compile && !st.host_python)
    st.log("no python" + facts.python_version + " on this host: installing without .pyc (pip in the image would "
           "compile them; Python compiles on first import instead)");
  int optimization = std::min(2, std::max(0, parse_int(env_value(facts.env, "PYTHONOPTIMIZE"))));
  if (!env_value(facts.env, "PYTHONOPTIMIZE").empty() && optimization == 0) optimization = 1;
  layers::EntryContentReader reader;

  // Debian's pip (its is_local patch) leaves distributions under /usr alone unless they are in its own install
  // scheme (/usr/local): it installs the new version beside the distro's, which stays. Elsewhere pip may modify
  // everything (in a venv, everything is under sys.prefix).
  auto pip_may_modify = [&](const std::string& site_dir) {
    if (facts.venv || !facts.scheme_name.starts_with("deb_") || !site_dir.starts_with("/usr/")) return true;
    for (const std::string& local : {facts.purelib, facts.platlib, facts.scripts, facts.data, facts.include})
      if (!local.empty() && (site_dir == local || site_dir.starts_with(local + "/"))) return true;
    return false;
  };
  for (const python::ResolvedDist& d : resolution.dists) {
    if (!d.file) continue;
    fs::path wheel = source.wheel_path(d.file->handle);
    const LocalWheel* local = source.local(d.file->handle);
    std::string filename = local ? local->host_path.filename().string() : source.index_file(d.file->handle).filename;
    std::string project = filename.substr(0, filename.find('-'));

    // A replaced distribution goes first, as pip uninstalls before it installs.
    auto replaced = installed_sites.find(d.name);
    if (replaced != installed_sites.end() && d.replaces_installed && !pip_may_modify(replaced->second.site_dir)) {
      st.log("Not uninstalling " + d.name + " at " + replaced->second.site_dir + ", outside environment /usr");
    } else if (replaced != installed_sites.end() && d.replaces_installed) {
      const python::SiteDistribution& old = replaced->second;
      if (old.egg_info || old.record.empty())
        throw Error("cannot replace the installed " + old.name + " " + old.version + " (" + old.metadata_dir +
                        "): it has no RECORD, so pip could not uninstall it either",
                    "pin " + old.name + "==" + old.version + " or use a base without it");
      std::optional<std::string> record = read_image_file(old.record.substr(1));
      if (!record) throw Error("cannot read " + old.record + " in the image");
      python::UninstallPaths removed = python::uninstall_paths(
          *record, old.site_dir, [&](const std::string& dir) { return files_under(merged, dir); },
          [&](const std::string& p) { return merged.find(p) != nullptr; });
      for (const auto& p : removed.directories) removed_dirs.insert(p);
      for (const auto& p : removed.files) removed_files.insert(p);
      st.installed_here.erase(d.name);
    }

    python::WheelInstallRequest req;
    req.wheel = wheel;
    req.name = project;
    req.version = d.version.str();
    req.scheme = facts.scheme_for(project);
    req.sys_executable = facts.executable;
    if (!facts.pip_version.empty()) req.pip_version = python::Version::parse(facts.pip_version);
    req.python_version = facts.python_version;
    req.requested = d.user_requested;
    if (local) req.direct_url = local->direct_url;
    python::InstalledWheel installed = python::install_wheel(req);
    for (const auto& w : installed.warnings) st.log(filename + ": " + w);

    if (compile && st.host_python) {
      std::vector<python::BytecodeSource> sources;
      for (const FileEntry& e : installed.files) {
        if (!e.path.ends_with(".py")) continue;
        sources.push_back({e.path, [&reader, entry = &e](const fs::path& to) { reader.copy_to(*entry, to); }});
      }
      fs::path work = st.work.path() / python::canonicalize_name(project);
      fs::create_directories(work);
      std::vector<python::Bytecode> compiled =
          python::compile_bytecode(*st.host_python, sources, st.mtime, optimization, work);
      std::vector<std::string> record_paths;
      for (const python::Bytecode& b : compiled) {
        installed.files.push_back(FileEntry::inline_file(b.image_path, read_file(b.file, 1u << 30), 0644));
        installed.directories.insert(std::string(path_dir(b.image_path)));
        record_paths.push_back(python::record_relative_path("/" + b.image_path, installed.lib_dir));
      }
      installed.add_unhashed_record_paths(record_paths);
    }
    // A very large distribution (torch-sized) gets a layer of its own after the step's layer, so changing another
    // requirement does not rewrite it: its layer's inputs stay the same and the layer cache keeps it.
    std::uint64_t bytes = 0;
    for (const FileEntry& e : installed.files) bytes += e.size;
    if (bytes >= st.options.own_layer_bytes) {
      OwnLayer own{d.name + " " + d.version.str(), {}, installed.directories};
      for (FileEntry& e : installed.files) own.files[e.path] = std::move(e);
      own_layers_out.push_back(std::move(own));
    } else {
      for (FileEntry& e : installed.files) out[e.path] = std::move(e);
      for (const auto& dir : installed.directories) dirs.insert(dir);
    }

    // What a later pip step of this build sees as installed.
    BuildInstalled here;
    here.site.name = project;
    here.site.version = d.version.str();
    here.site.site_dir = installed.lib_dir;
    here.site.metadata_dir = installed.lib_dir + "/" + installed.dist_info_dir;
    here.site.record = here.site.metadata_dir + "/RECORD";
    std::string meta = read_wheel_metadata(wheel, filename);
    python::CandidateMetadata md = candidate_metadata(meta);
    here.requires_dist = md.requires_dist;
    here.provides_extra = md.provides_extra;
    st.installed_here[d.name] = std::move(here);
  }

  // --- Whiteouts, then directories with the attributes the image gives them -----------------------------------
  FileEntries entries;
  for (const auto& dir : removed_dirs) {
    if (dirs.count(dir)) {
      recreated_dirs.insert(dir);
      out[dir + "/.wh..wh..opq"] = FileEntry::inline_file(dir + "/.wh..wh..opq", "", 0644);
    } else {
      out[dir] = FileEntry::whiteout(dir);  // keyed by the removed path; written as .wh.<name>
    }
  }
  for (const auto& f : removed_files)
    if (!out.count(f)) out[f] = FileEntry::whiteout(f);
  // Every ancestor directory of a layer's entries: with the image's attributes where it has that directory (unless
  // this step removed and recreates it), else as pip's os.makedirs makes them under RUN's umask 022.
  auto directories_for = [&](const std::map<std::string, FileEntry>& files, const std::set<std::string>& leaf_dirs,
                             FileEntries& into) {
    std::set<std::string> all;
    for (const auto& dir : leaf_dirs)
      for (std::string p = dir; !p.empty(); p = std::string(path_dir(p))) all.insert(p);
    for (const auto& [p, e] : files)
      for (std::string d = std::string(path_dir(e.path)); !d.empty(); d = std::string(path_dir(d))) all.insert(d);
    for (const auto& dir : all) {
      const PathInfo* info = recreated_dirs.count(dir) ? nullptr : merged.find(dir);
      if (info && info->type == PathInfo::Type::kDirectory)
        into.push_back(FileEntry::directory(dir, info->mode, info->uid, info->gid));
      else if (info)
        throw Error(where + " would write under /" + dir + ", which is not a directory in the image");
      else
        into.push_back(FileEntry::directory(dir, 0755));
    }
    return all;
  };
  std::set<std::string> all_dirs = directories_for(out, dirs, entries);
  for (auto& [p, e] : out) entries.push_back(std::move(e));
  // The in-tree build's leftovers in /usr/app, with their parents (which an earlier COPY may have made).
  std::set<std::string> artifact_paths;
  for (const FileEntry& e : build_artifacts) artifact_paths.insert(e.path);
  for (FileEntry& e : build_artifacts) {
    for (std::string d = std::string(path_dir(e.path)); !d.empty(); d = std::string(path_dir(d))) {
      if (all_dirs.count(d) || artifact_paths.count(d)) continue;
      const PathInfo* info = merged.find(d);
      entries.push_back(info ? FileEntry::directory(d, info->mode, info->uid, info->gid) : FileEntry::directory(d, 0755));
      all_dirs.insert(d);
    }
    if (!all_dirs.count(e.path)) entries.push_back(std::move(e));
  }
  std::vector<PipLayer> layers{{"", std::move(entries)}};
  for (OwnLayer& own : own_layers_out) {
    FileEntries own_entries;
    directories_for(own.files, own.dirs, own_entries);
    for (auto& [p, e] : own.files) own_entries.push_back(std::move(e));
    layers.push_back({own.what, std::move(own_entries)});
  }
  return layers;
}

}  // namespace trainpack::builder
