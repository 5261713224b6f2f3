#include "python/uninstall.h"

#include <algorithm>
#include <optional>
#include <set>

#include "python/image_root.h"
#include "python/metadata.h"
#include "python/text.h"
#include "python/records.h"
#include "support/error.h"

namespace trainpack::python {
namespace {

constexpr std::size_t kMetadataCap = 16u << 20;

// The first field of each RECORD row (csv), as pathlib normalises it.
std::vector<std::string> record_paths(std::string_view record) {
  std::vector<std::string> out;
  for (std::string_view line : py_splitlines(record)) {
    if (line.empty()) continue;
    std::size_t fields = 0;
    RecordRow row = parse_record_line(line, fields);
    if (!row[0].empty()) out.push_back(std::move(row[0]));
  }
  return out;
}

// metadata/base.py _convert_installed_files_path: installed-files.txt lists paths relative to the .egg-info
// directory; RECORD's form is relative to the distribution's location.
std::string installed_files_entry(std::string_view entry, std::vector<std::string> info_parts) {
  std::vector<std::string_view> parts = path_components(entry);
  std::size_t i = 0;
  for (; i < parts.size() && parts[i] == ".."; ++i) {
    if (info_parts.empty() || info_parts.back() == "..") info_parts.push_back("..");
    else info_parts.pop_back();
  }
  std::string out;
  for (const std::string& p : info_parts) out += (out.empty() ? "" : "/") + p;
  for (; i < parts.size(); ++i) out += (out.empty() ? "" : "/") + std::string(parts[i]);
  return out;
}

// UninstallPathSet: add() keeps existing paths the environment may change (the parent directory resolved, the
// name itself not, so a symlink goes rather than its target) and, for x.py, its __pycache__ twin.
class PathSet {
 public:
  PathSet(const ImageRoot& root, const UninstallContext& context) : root_(root), context_(context) {}

  void add(const std::string& path) {
    std::string full = abs_join(root_.resolve(parent_of(path)), base_of(path));
    if (!root_.lstat(full)) return;
    if (context_.permitted(full)) paths_.insert(full);
    if (full.ends_with(".py")) {
      std::string stem = base_of(full).substr(0, base_of(full).size() - 3);
      add(abs_join(abs_join(parent_of(full), "__pycache__"), stem + "." + context_.cache_tag + ".pyc"));
    }
  }
  void add_pth(const std::string& pth, const std::string& entry) {
    if (context_.permitted(pth)) pth_entries_[pth].push_back(entry);
  }
  UninstallSet result() const {
    UninstallSet out;
    out.paths.assign(paths_.begin(), paths_.end());
    out.pth_entries = pth_entries_;
    return out;
  }

 private:
  const ImageRoot& root_;
  const UninstallContext& context_;
  std::set<std::string> paths_;
  std::map<std::string, std::vector<std::string>> pth_entries_;
};

std::optional<std::string> read_text(const ImageRoot& root, const std::string& dir, const std::string& name) {
  return root.read(abs_join(dir, name), kMetadataCap);
}

// A setuptools .egg-info directory: installed-files.txt when pip's `setup.py install --record` wrote one, else the
// packages top_level.txt names (namespace packages excepted).
void add_egg_info_files(const ImageRoot& root, const SiteDistribution& dist, PathSet& set) {
  set.add(dist.metadata_dir);
  if (auto listing = read_text(root, dist.metadata_dir, "installed-files.txt")) {
    std::vector<std::string> info_parts;
    // A view, not a substr() copy: the components point into it after the loop's range expression ends.
    for (std::string_view p : path_components(std::string_view(dist.metadata_dir).substr(dist.site_dir.size())))
      info_parts.emplace_back(p);
    for (std::string_view line : py_splitlines(*listing))
      if (!line.empty()) set.add(abs_join(dist.site_dir, installed_files_entry(line, info_parts)));
    return;
  }
  std::optional<std::string> top_level = read_text(root, dist.metadata_dir, "top_level.txt");
  if (!top_level) return;
  std::set<std::string> namespaces;
  if (auto ns = read_text(root, dist.metadata_dir, "namespace_packages.txt"))
    for (std::string_view line : py_splitlines(*ns)) namespaces.emplace(line);
  for (std::string_view line : py_splitlines(*top_level)) {
    if (line.empty() || namespaces.count(std::string(line))) continue;
    std::string path = abs_join(dist.site_dir, line);
    for (const char* suffix : {"", ".py", ".pyc", ".pyo"}) set.add(path + suffix);
  }
}

// uninstallation_paths(): every RECORD entry and, for x.py, the legacy x.pyc and x.pyo beside it.
void add_record_files(const ImageRoot& root, const SiteDistribution& dist, PathSet& set) {
  std::optional<std::string> record = dist.record.empty() ? std::nullopt : root.read(dist.record, kMetadataCap);
  if (!record)
    throw Error("cannot uninstall " + dist.name + " " + dist.version + " (" + dist.metadata_dir +
                    "): it has no RECORD file" +
                    (dist.installer.empty() ? "" : ", it was installed by " + dist.installer),
                "pip in the image would stop here too; pin " + dist.name + "==" + dist.version +
                    " or use a base without it");
  for (const std::string& entry : record_paths(*record)) {
    std::string path = abs_join(dist.site_dir, entry);
    set.add(path);
    if (path.ends_with(".py")) {
      std::string stem = path.substr(0, path.size() - 3);
      set.add(stem + ".pyc");
      set.add(stem + ".pyo");
    }
  }
}

// Scripts that are not in RECORD/installed-files.txt: distutils `scripts=` recorded under the metadata's scripts/,
// and one file per console/gui entry point.
void add_scripts(const ImageRoot& root, const SiteDistribution& dist, const std::string& bin_dir, PathSet& set) {
  if (dist.form == DistributionForm::kDistutilsEggInfo) return;
  for (const std::string& script : root.children(abs_join(dist.metadata_dir, "scripts")))
    set.add(abs_join(bin_dir, script));
  std::optional<std::string> text = read_text(root, dist.metadata_dir, "entry_points.txt");
  if (!text) return;
  for (const EntryPoint& ep : parse_entry_points(*text))
    if (ep.group == "console_scripts" || ep.group == "gui_scripts") set.add(abs_join(bin_dir, ep.name));
}

}  // namespace

UninstallSet uninstall_set(const layers::ImageFilesystem& fs, const SiteDistribution& dist,
                           const UninstallContext& context) {
  ImageRoot root{fs};
  PathSet set(root, context);
  switch (dist.form) {
    case DistributionForm::kEggInfo:
      add_egg_info_files(root, dist, set);
      break;
    case DistributionForm::kDistutilsEggInfo:
      throw Error("Cannot uninstall '" + dist.name + "'. It is a distutils installed project and thus we cannot "
                      "accurately determine which files belong to it which would lead to only a partial uninstall.",
                  "pip in the image fails the same way (" + dist.metadata_dir + "); pin " + dist.name + "==" +
                      dist.version + " or use a base without it");
    case DistributionForm::kEgg:
      set.add(dist.site_dir);
      set.add_pth(abs_join(parent_of(dist.site_dir), "easy-install.pth"), "./" + base_of(dist.site_dir));
      break;
    case DistributionForm::kDistInfo:
      add_record_files(root, dist, set);
      break;
    case DistributionForm::kDevelop:
      set.add(dist.egg_link);
      set.add_pth(abs_join(parent_of(dist.egg_link), "easy-install.pth"), dist.site_dir);
      break;
  }
  add_scripts(root, dist, context.bin_dir, set);
  return set.result();
}

UninstallPaths compress_for_rename(const layers::ImageFilesystem& fs, const std::vector<std::string>& paths) {
  ImageRoot root{fs};
  // os.walk(dir): every file below it; a symlink to a directory is listed as a directory and not followed.
  std::function<void(const std::string&, std::vector<std::string>&)> files_under = [&](const std::string& dir,
                                                                                      std::vector<std::string>& out) {
    for (const std::string& child : root.children(dir)) {
      std::string p = abs_join(dir, child);
      const layers::PathInfo* info = root.lstat(p);
      if (info && info->type == layers::PathInfo::Type::kDirectory) files_under(p, out);
      else if (!(info && info->type == layers::PathInfo::Type::kSymlink && root.is_dir(p))) out.push_back(p);
    }
  };
  const std::set<std::string> remaining(paths.begin(), paths.end());
  std::vector<std::string> roots;
  for (const std::string& p : paths) roots.push_back(parent_of(p));
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  std::stable_sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  std::vector<std::string> wildcards;
  auto under_wildcard = [&](const std::string& p) {
    return std::any_of(wildcards.begin(), wildcards.end(),
                       [&](const std::string& w) { return p == w || p.starts_with(w + "/"); });
  };
  for (const std::string& dir : roots) {
    if (dir == "/" || under_wildcard(dir)) continue;
    std::vector<std::string> all;
    files_under(dir, all);
    if (std::all_of(all.begin(), all.end(), [&](const std::string& f) { return remaining.count(f) > 0; }))
      wildcards.push_back(dir);
  }
  UninstallPaths out;
  for (const std::string& w : wildcards) out.directories.push_back(w.substr(1));
  std::set<std::string> files;
  for (const std::string& p : paths) {
    if (under_wildcard(p)) continue;
    const layers::PathInfo* info = root.lstat(p);
    if (info && info->type == layers::PathInfo::Type::kDirectory) out.directories.push_back(p.substr(1));
    else files.insert(p.substr(1));
  }
  std::sort(out.directories.begin(), out.directories.end());
  out.files.assign(files.begin(), files.end());
  return out;
}

std::string remove_pth_entries(std::string_view pth_text, const std::vector<std::string>& entries) {
  std::vector<std::string> lines;  // readlines(): each with its \n
  for (std::size_t start = 0; start < pth_text.size();) {
    std::size_t nl = pth_text.find('\n', start);
    std::size_t end = nl == std::string_view::npos ? pth_text.size() : nl + 1;
    lines.emplace_back(pth_text.substr(start, end - start));
    start = end;
  }
  bool crlf = std::any_of(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.find("\r\n") != std::string::npos; });
  const std::string endline = crlf ? "\r\n" : "\n";
  if (!lines.empty() && !lines.back().ends_with(endline)) lines.back() += endline;
  for (const std::string& entry : entries) {
    auto it = std::find(lines.begin(), lines.end(), entry + endline);  // list.remove: the first equal line
    if (it != lines.end()) lines.erase(it);
  }
  std::string out;
  for (const std::string& l : lines) out += l;
  return out;
}

}  // namespace trainpack::python
