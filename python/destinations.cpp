#include "python/destinations.h"

#include <algorithm>

#include "python/records.h"
#include "support/error.h"
#include "support/paths.h"

namespace trainpack::python {

std::string absolute_path(std::string_view path) { return "/" + normalize_path(path); }

std::string entry_path(std::string_view abs) { return std::string(abs.substr(abs.find_first_not_of('/'))); }

LayerDestination::LayerDestination(const InstallScheme& scheme, std::string lib_dir, std::uint32_t uid,
                                   std::uint32_t gid)
    : scheme_dirs_{{"purelib", scheme.purelib},
                   {"platlib", scheme.platlib},
                   {"headers", scheme.headers},
                   {"scripts", scheme.scripts},
                   {"data", scheme.data}},
      lib_dir_(std::move(lib_dir)),
      uid_(uid),
      gid_(gid) {}

std::string LayerDestination::path_for(const WheelMember& m, const std::string& where) const {
  auto slash = m.name.find('/');
  std::string top = m.name.substr(0, slash);
  if (slash == std::string::npos || !top.ends_with(".data")) return absolute_path(lib_dir_ + "/" + m.name);
  std::string rest = m.name.substr(slash + 1);
  auto slash2 = rest.find('/');
  if (slash2 == std::string::npos)
    throw Error(where + "unexpected file " + m.name +
                ": .data directory contents should be named like '<scheme key>/<path>'");
  std::string key = rest.substr(0, slash2);
  auto dir = scheme_dirs_.find(key);
  if (dir == scheme_dirs_.end())
    throw Error(where + "unknown scheme key used in the wheel: " + key + " (for file " + m.name +
                "); .data directory contents should be in subdirectories named purelib, platlib, headers, "
                "scripts or data");
  std::string base = absolute_path(dir->second);
  std::string dest = absolute_path(base + "/" + rest.substr(slash2 + 1));
  if (!dest.starts_with(base == "/" ? "/" : base + "/"))  // cannot happen after the member name checks; a second guard
    throw Error(where + m.name + " would be installed outside " + base);
  return dest;
}

std::string LayerDestination::write_member(const WheelFile& wheel, const WheelMember& m, const std::string& path) {
  put(layers::FileEntry::zip_file(entry_path(path), wheel.path(), m.name, m.index, m.size,
                                  m.executable() ? 0755 : 0644));
  return record_relative_path(path, lib_dir_);
}

std::string LayerDestination::write_file(const std::string& path, std::string bytes, std::uint32_t mode) {
  put(layers::FileEntry::inline_file(entry_path(path), std::move(bytes), mode));
  return record_relative_path(path, lib_dir_);
}

std::string LayerDestination::write_script(const std::string& name, std::string text) {
  return write_file(absolute_path(scheme_dirs_.at("scripts") + "/" + name), std::move(text), 0755);
}

std::string LayerDestination::write_dist_info(const std::string& dist_info_dir, const std::string& file,
                                              std::string text) {
  return write_file(absolute_path(lib_dir_ + "/" + dist_info_dir) + "/" + file, std::move(text), 0644);
}

void LayerDestination::put(layers::FileEntry e) {
  e.uid = uid_;
  e.gid = gid_;
  auto [it, fresh] = entry_index_.try_emplace(e.path, entries_.size());
  if (fresh) entries_.push_back(std::move(e));
  else entries_[it->second] = std::move(e);
}

layers::FileEntries LayerDestination::take_entries() {
  std::sort(entries_.begin(), entries_.end(),
            [](const layers::FileEntry& a, const layers::FileEntry& b) { return a.path < b.path; });
  entry_index_.clear();
  return std::move(entries_);
}

}  // namespace trainpack::python
