#include "python/uninstall.h"

#include <algorithm>
#include <set>

#include "python/text.h"
#include "python/wheel_installer.h"
#include "support/paths.h"

namespace trainpack::python {
namespace {

// The first field of each RECORD row.
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

}  // namespace

UninstallPaths uninstall_paths(std::string_view record, std::string_view site_dir,
                               const std::function<std::vector<std::string>(const std::string& dir)>& files_under,
                               const std::function<bool(const std::string& path)>& exists) {
  // uninstallation_paths(): each declared entry, and for x.py also x.pyc and x.pyo.
  std::set<std::string> paths;
  for (const std::string& entry : record_paths(record)) {
    std::string joined = entry.starts_with('/') ? entry : std::string(site_dir) + "/" + entry;
    std::string path = normalize_path(joined);
    if (path.empty()) continue;
    paths.insert(path);
    if (path.ends_with(".py")) {
      std::string stem = path.substr(0, path.size() - 3);
      paths.insert(stem + ".pyc");
      paths.insert(stem + ".pyo");
    }
  }
  // compress_for_rename(): parents shortest first; a directory all of whose files are in the set goes as a whole.
  std::set<std::string> remaining = paths;
  std::vector<std::string> roots;
  for (const auto& p : paths) roots.emplace_back(path_dir(p));
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  std::stable_sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  std::vector<std::string> wildcards;
  for (const std::string& root : roots) {
    if (root.empty()) continue;
    bool covered = std::any_of(wildcards.begin(), wildcards.end(),
                               [&](const std::string& w) { return root == w || root.starts_with(w + "/"); });
    if (covered) continue;
    std::vector<std::string> all = files_under(root);
    if (all.empty() && !exists(root)) continue;
    bool every = std::all_of(all.begin(), all.end(), [&](const std::string& f) { return remaining.count(f) > 0; });
    if (!every) continue;
    for (const auto& f : all) remaining.erase(f);
    wildcards.push_back(root);
  }
  UninstallPaths out;
  out.directories = wildcards;
  std::sort(out.directories.begin(), out.directories.end());
  for (const auto& f : remaining) {
    bool under = std::any_of(wildcards.begin(), wildcards.end(), [&](const std::string& w) { return f.starts_with(w + "/"); });
    if (!under && exists(f)) out.files.push_back(f);
  }
  return out;
}

}  // namespace trainpack::python
