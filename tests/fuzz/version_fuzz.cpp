// PEP 440 versions (python/version). The input is two versions, one per line. A version that parses prints
// (str()) in its normal form, which parses back to an equal version with the same str(); the ordering is
// reflexive and antisymmetric, and agrees between the two inputs in both directions.
#include <compare>

#include "python/version.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using trainpack::fuzz::require;
using trainpack::python::Version;

std::optional<Version> parse_checked(std::string_view text) {
  std::optional<Version> v = Version::try_parse(text);
  if (!v) return v;
  std::optional<Version> again = Version::try_parse(v->str());
  require(again && *again == *v && again->str() == v->str());
  require((*v <=> *v) == 0);
  require(Version::try_parse(v->public_version()).has_value());
  require(Version::try_parse(v->base_version()) == v->base());
  return v;
}

std::strong_ordering reverse(std::strong_ordering o) {
  return o < 0 ? std::strong_ordering::greater : o > 0 ? std::strong_ordering::less : std::strong_ordering::equal;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  std::size_t nl = text.find('\n');
  std::optional<Version> a = parse_checked(text.substr(0, nl));
  if (nl == std::string_view::npos) return 0;
  std::optional<Version> b = parse_checked(text.substr(nl + 1));
  if (a && b) require((*a <=> *b) == reverse(*b <=> *a));
  return 0;
}
