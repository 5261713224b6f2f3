// PEP 508 environment markers (python/markers). A marker that parses prints (str()) text that parses to a marker
// that prints the same and evaluates the same, for two interpreters and with PEP 440 comparisons (what the
// resolver uses) as well as without; unless a literal cannot print back (marker_literals.h).
#include "python/marker_compare.h"
#include "python/markers.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/marker_literals.h"

namespace {

using trainpack::fuzz::require;
using namespace trainpack::python;

std::optional<bool> evaluate(const Marker& marker, const MarkerEnvironment& env, const VersionCompare& compare) {
  try {
    return marker.evaluate(env, compare);
  } catch (const trainpack::Error&) {
    return std::nullopt;  // packaging raises too: "~=" or "===" on strings, an undefined comparison
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<Marker> marker;
  try {
    marker.emplace(trainpack::fuzz::as_text(data, size));
  } catch (const trainpack::Error&) {
    return 0;
  }
  if (!trainpack::fuzz::prints_back(marker->list())) return 0;
  Marker again(marker->str());
  require(again.str() == marker->str());
  static const MarkerEnvironment envs[] = {MarkerEnvironment::cpython_linux("3.11.2", "x86_64"),
                                           MarkerEnvironment::cpython_linux("3.13.0rc1", "aarch64")};
  for (const MarkerEnvironment& env : envs) {
    require(evaluate(*marker, env, pep440_version_compare) == evaluate(again, env, pep440_version_compare));
    require(evaluate(*marker, env, string_only_version_compare) == evaluate(again, env, string_only_version_compare));
  }
  return 0;
}
