#pragma once
// What `trainpack --version` prints: the version, the commit it was built from and the libraries it runs with, so a
// bug report names exactly what was run.
#include <string>

namespace trainpack::cli {

// "trainpack 0.1.0 (commit 0123456789ab)\nlibcurl 7.88.1, ..." — shared libraries as loaded at run time, header-only
// ones as compiled in.
std::string version_text();

}  // namespace trainpack::cli
