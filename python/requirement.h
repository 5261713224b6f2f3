#pragma once
// PEP 508 requirement strings ("name[extras] (specs) ; marker", "name @ url ; marker"), as pip's bundled
// packaging (requirements.py, _parser.py) parses and prints them. The version specifier is kept as text: PEP 440
// semantics live in python/specifier.*.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "python/markers.h"

namespace trainpack::python {

struct Requirement {
  std::string name;              // as written (not normalised), like packaging
  std::set<std::string> extras;  // as written; a set, like packaging
  // str(SpecifierSet): the unique specifiers, each "op" + "version" with whitespace stripped, sorted, ','-joined.
  std::string specifier;
  std::vector<std::pair<std::string, std::string>> specifier_items;  // (operator, version text), same order
  std::string url;                                                   // "" when none
  std::optional<Marker> marker;

  // Throws trainpack::Error("invalid requirement '...': <packaging's message> at position N") on bad input.
  static Requirement parse(std::string_view text);
  std::string str() const;  // packaging's str(Requirement)
};

}  // namespace trainpack::python
