#include "support/error.h"

#include <utility>

namespace trainpack {
namespace {

std::string nul_escaped(std::string text) {
  for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at + 4))
    text.replace(at, 1, "\\x00");
  return text;
}

}  // namespace

Error::Error(std::string cause, std::string hint)
    : std::runtime_error(nul_escaped(std::move(cause))), hint_(nul_escaped(std::move(hint))) {}

}  // namespace trainpack
