#pragma once
// What `pip install` removes when it replaces an installed distribution (pip/_internal/req/req_uninstall.py):
// UninstallPathSet.from_dist chooses the paths by the distribution's form (RECORD of a .dist-info, the
// installed-files.txt or top_level.txt of an .egg-info, a whole .egg, a develop install's .egg-link and .pth
// entry, plus the scripts of its entry points), then compress_for_rename removes a whole directory when every
// file under it is being removed. trainpack turns the result into whiteouts and rewritten .pth files.
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "layers/image_filesystem.h"
#include "python/installed_dists.h"

namespace trainpack::python {

struct UninstallContext {
  std::string bin_dir;    // pip's get_bin_prefix(): where console/gui scripts of entry points are looked for
  std::string cache_tag;  // sys.implementation.cache_tag of the image's Python: "cpython-311"
  // pip's is_local(path): in a venv, only paths under sys.prefix may be removed; others are left (refused).
  std::function<bool(const std::string& path)> permitted = [](const std::string&) { return true; };
};

struct UninstallSet {
  std::vector<std::string> paths;  // absolute, existing: files, and directories that go whole; sorted
  std::map<std::string, std::vector<std::string>> pth_entries;  // .pth file → entries removed from it
};

// UninstallPathSet.from_dist for `dist` in the image `fs`. Throws Error, with pip's message, for a distribution pip
// refuses to uninstall (a distutils-installed project: a single-file .egg-info).
UninstallSet uninstall_set(const layers::ImageFilesystem& fs, const SiteDistribution& dist,
                           const UninstallContext& context);

struct UninstallPaths {
  std::vector<std::string> directories;  // removed with everything under them; relative to "/", sorted
  std::vector<std::string> files;        // removed one by one; relative to "/", sorted
};

// compress_for_rename over the absolute `paths` of an UninstallSet: the parent directories of the paths, shortest
// first, each taken whole when every file below it is in the set; the rest one by one.
UninstallPaths compress_for_rename(const layers::ImageFilesystem& fs, const std::vector<std::string>& paths);

// UninstallPthEntries.remove: the .pth text without the lines equal to an entry (the file's own line ending,
// \r\n if any line has it; a missing final line ending added first).
std::string remove_pth_entries(std::string_view pth_text, const std::vector<std::string>& entries);

}  // namespace trainpack::python
