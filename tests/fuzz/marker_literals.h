#pragma once
// Whether a marker prints back to itself. packaging decodes a marker's string literals as Python literals
// (ast.literal_eval: "\\x41" is "A") but prints the decoded text between double quotes as it is, so a literal
// holding a backslash, a quote or a control character prints text that parses differently or not at all. trainpack
// follows packaging there; the round-trip invariants of the fuzz targets hold for the other markers only.
#include <memory>
#include <variant>

#include "python/markers.h"

namespace trainpack::fuzz {

inline bool literal_prints_back(const python::Marker::Operand& operand) {
  if (operand.is_variable) return true;
  for (char c : operand.value)
    if (c == '\\' || c == '"' || c == '\'' || static_cast<unsigned char>(c) < 0x20) return false;
  return true;
}

inline bool prints_back(const python::Marker::List& list) {
  for (const auto& element : list.elements) {
    if (const auto* item = std::get_if<python::Marker::Item>(&element)) {
      if (!literal_prints_back(item->lhs) || !literal_prints_back(item->rhs)) return false;
    } else if (const auto* sub = std::get_if<std::shared_ptr<python::Marker::List>>(&element)) {
      if (!prints_back(**sub)) return false;
    }
  }
  return true;
}

}  // namespace trainpack::fuzz
