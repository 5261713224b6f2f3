#pragma once
// Numbers as a person reads them in messages: sizes in one decimal unit, counts with their noun.
#include <cstdint>
#include <string>
#include <string_view>

namespace trainpack {

// A size in the largest decimal unit (SI, as docker and registries show sizes) it reaches, with one decimal:
// "512 B", "1.5 kB", "50.4 MB", "1.9 GB". Never "1000.0 kB": a value that rounds to 1000 moves up a unit.
std::string human_bytes(std::uint64_t bytes);

// `n` and the noun that agrees with it: counted(1, "layer", "layers") is "1 layer", counted(2, ...) "2 layers",
// counted(0, ...) "0 layers".
std::string counted(std::uint64_t n, std::string_view one, std::string_view many);

}  // namespace trainpack
