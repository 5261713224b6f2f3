#pragma once
// What `pip install` removes when it replaces an installed distribution (pip/_internal/req/req_uninstall.py):
// every path RECORD declares (plus the legacy x.pyc/x.pyo beside each x.py), then compress_for_rename, which
// removes a whole directory when every file under it is being removed. trainpack turns the result into whiteouts.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::python {

struct UninstallPaths {
  std::vector<std::string> directories;  // removed with everything under them; relative to "/", sorted
  std::vector<std::string> files;        // removed one by one (only those that exist); relative to "/", sorted
};

// `record` is the RECORD text of a .dist-info whose parent is `site_dir` (absolute). `files_under(dir)` lists every
// non-directory path below a directory (relative to "/", recursive; empty when it does not exist) and `exists(path)`
// whether a path is there. Paths escaping the root are ignored.
UninstallPaths uninstall_paths(std::string_view record, std::string_view site_dir,
                               const std::function<std::vector<std::string>(const std::string& dir)>& files_under,
                               const std::function<bool(const std::string& path)>& exists);

}  // namespace trainpack::python
