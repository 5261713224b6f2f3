#pragma once
// Numbers as a person reads them in messages: sizes in one decimal unit, counts with their noun.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainpack {

// A size in the largest decimal unit (SI, as docker and registries show sizes) it reaches, with one decimal:
// "512 B", "1.5 kB", "50.4 MB", "1.9 GB". Never "1000.0 kB": a value that rounds to 1000 moves up a unit.
std::string human_bytes(std::uint64_t bytes);

// `n` and the noun that agrees with it: counted(1, "layer", "layers") is "1 layer", counted(2, ...) "2 layers",
// counted(0, ...) "0 layers".
std::string counted(std::uint64_t n, std::string_view one, std::string_view many);

// A duration in seconds, two decimals below ten seconds and one above: "0.04 s", "1.25 s", "73.4 s".
std::string human_seconds(std::chrono::steady_clock::duration duration);

// A size as a person writes one: a number (decimals allowed) and an optional unit, "B", "k"/"kB", "M"/"MB", "G"/"GB",
// "T"/"TB" (powers of 1000, as human_bytes prints) or "KiB", "MiB", "GiB", "TiB" (powers of 1024), case-insensitive,
// a blank allowed between: "20GB", "1.5 GiB", "500m". nullopt when it is none of these or exceeds 2^64 bytes.
std::optional<std::uint64_t> parse_bytes(std::string_view text);

// A duration as a sequence of numbers with units s, m, h, d (24 h) or w (7 d): "90m", "7d", "1d12h". nullopt for
// anything else, a number without a unit included.
std::optional<std::chrono::seconds> parse_duration(std::string_view text);

}  // namespace trainpack
