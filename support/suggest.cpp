#include "support/suggest.h"

#include <algorithm>

#include "support/error.h"

namespace trainpack {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: distance of a[0, i) and b[0, j); three rows are enough for the swap of neighbours.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::optional<std::string> closest_match(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::clamp<std::size_t>(typed.size() / 3, 1, 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    std::size_t distance = edit_distance(typed, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (best) return best;
  std::vector<std::string> extending;
  for (const std::string& candidate : candidates)
    if (!typed.empty() && candidate.starts_with(typed)) extending.push_back(candidate);
  if (extending.size() == 1) return extending.front();
  return std::nullopt;
}

void check_choice(std::string_view flag, std::string_view value, const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return;
  std::string listed;
  for (std::size_t i = 0; i < choices.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  std::optional<std::string> near = closest_match(value, choices);
  throw UsageError(std::string(flag) + " must be " + listed + ", not \"" + std::string(value) + "\"",
                   near ? "did you mean " + std::string(flag) + "=" + *near + "?"
                        : "--help says what each means");
}

}  // namespace trainpack
