#pragma once
// `trainpack cache du` and `trainpack cache prune` (store/cache_prune.h), and the cap automatic pruning keeps a
// build's cache under (--cache-max-size, TRAINPACK_CACHE_MAX_SIZE).
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace trainpack::cli {

// The cap `flag` (else TRAINPACK_CACHE_MAX_SIZE) sets: nullopt when neither is set (store::cache_cap's default),
// UINT64_MAX for "none". Throws Error naming the flag for anything that is not a size.
std::optional<std::uint64_t> cache_cap_setting(const std::string& flag);

void add_cache_command(CLI::App& app);

}  // namespace trainpack::cli
