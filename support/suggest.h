#pragma once
// "Did you mean ...?" for a mistyped command or flag. Written here because CLI11 (2.1.2) has no suggestion API.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack {

// The Damerau-Levenshtein distance (optimal string alignment) of `a` and `b`: insertions, deletions, substitutions
// and swaps of two neighbours each count 1 ("bild" to "build" is 1, "verison" to "version" is 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `typed`, when it is close enough to be a typo: at most a third of the typed length away
// (at least 1, at most 3), or `typed` is a prefix of exactly one candidate. The first of equally close ones.
std::optional<std::string> closest_match(std::string_view typed, const std::vector<std::string>& candidates);

// Throws UsageError unless `value` is one of `choices`: "--engine must be auto, docker, podman or runc, not \"rnc\"",
// with the hint "did you mean --engine=runc?" when one is close.
void check_choice(std::string_view flag, std::string_view value, const std::vector<std::string>& choices);

}  // namespace trainpack
