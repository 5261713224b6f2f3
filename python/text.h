#pragma once
// Python's str.strip() for the ASCII range, which packaging applies to versions and specifiers.
#include <string_view>

namespace trainpack::python {

// Python's \s in the ASCII range: space, \t\n\v\f\r, and \x1c-\x1f.
inline bool is_py_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

inline std::string_view py_strip(std::string_view s) {
  while (!s.empty() && is_py_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_py_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace trainpack::python
