#pragma once
// Which trainpack made a build: its version (TRAINPACK_VERSION, a compile definition) and the commit it was built
// from, for cache keys, provenance and `--version`.
#include <string>
#include <string_view>

namespace trainpack::imagebuild {

// The commit this binary was built from: `git describe` of its source tree ("0123456789ab", "v0.1.0-3-gabc"), or
// -DTRAINPACK_COMMIT=ID.
std::string_view trainpack_commit();

// Version and commit ("0.1.0 0123456789ab"): part of the keys of caches whose entries record what this code decided
// (pip steps), so a different build of trainpack never replays another's results.
std::string build_identity();

}  // namespace trainpack::imagebuild
