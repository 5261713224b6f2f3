// PEP 440 specifier sets (python/specifier). The input is a specifier set, then a version on the next line. A set
// that parses prints (str()) text that parses to the same set; a version it contains is matched by every one of its
// specifiers, and filter() keeps exactly the versions contains() accepts.
#include "python/specifier.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;
using namespace trainpack::python;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  std::size_t nl = text.find('\n');
  SpecifierSet set;
  try {
    set = SpecifierSet(text.substr(0, nl));
  } catch (const trainpack::Error&) {
    return 0;
  }
  SpecifierSet again(set.str());
  require(again.str() == set.str());
  if (nl == std::string_view::npos) return 0;
  std::optional<Version> version = Version::try_parse(text.substr(nl + 1));
  if (!version) return 0;
  for (std::optional<bool> pre : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
    bool contained = set.contains(*version, pre);
    if (contained) require(set.matches(*version) && again.contains(*version, pre));
    require(set.filter({*version}, pre).size() == (contained ? 1u : 0u));
  }
  for (const Specifier& spec : set.specifiers()) spec.matches(text.substr(nl + 1));
  return 0;
}
