// Image references (registry/reference): a reference that parses is normalised, so its str() parses back to the
// same registry, repository, tag and digest.
#include "registry/reference.h"
#include "support/error.h"
#include "tests/fuzz/fuzz_support.h"

using trainpack::fuzz::require;
using trainpack::registry::Reference;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = trainpack::fuzz::as_text(data, size);
  trainpack::registry::is_registry_reference(text);
  Reference ref;
  try {
    ref = Reference::parse(text);
  } catch (const trainpack::Error&) {
    return 0;
  }
  Reference again = Reference::parse(ref.str());
  require(again.registry == ref.registry && again.repository == ref.repository && again.tag == ref.tag &&
          again.digest == ref.digest);
  require(!ref.identifier().empty());
  ref.api_host();
  ref.is_google();
  return 0;
}
