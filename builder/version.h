#pragma once
// What `trainpack --version` prints: the version, the commit it was built from and the libraries it runs with, so a
// bug report names exactly what was run.
#include <string>

namespace trainpack::builder {

// "trainpack 0.1.0 (commit 0123456789ab)\nlibcurl 7.88.1, ..." — shared libraries as loaded at run time, header-only
// ones as compiled in.
std::string version_text();

// Version and commit ("0.1.0 0123456789ab"): part of the keys of caches whose entries record what this code decided
// (pip steps), so a different build of trainpack never replays another's results.
std::string build_identity();

}  // namespace trainpack::builder
