#pragma once
// A small cache file that vouches for itself: its text, then a last line "sha256:HEX" of that text. The cache is
// input, not truth: a flipped byte anywhere (in the text or in the sum) makes unseal() answer nullopt, so a damaged
// entry is a miss, made again, rather than a wrong answer that still parses.
#include <optional>
#include <string>
#include <string_view>

#include "store/cache_dir.h"

namespace trainpack::store {

std::string seal(std::string_view text);
// The text `file` seals; nullopt when it is not seal()'s output.
std::optional<std::string_view> unseal(std::string_view file);

// The text kept sealed in `area` under `name` (its use recorded); nullopt when it is not there, or when it is
// damaged: then it is discarded with a warning saying it is not `what` this trainpack kept ("an SBOM").
std::optional<std::string> read_sealed(const CacheArea& area, const std::string& name, std::string_view what);
// Keeps `text` sealed in `area` under `name`, atomically.
void keep_sealed(const CacheArea& area, const std::string& name, std::string_view text);

}  // namespace trainpack::store
