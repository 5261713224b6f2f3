#include "python/names.h"

namespace trainpack::python {

namespace {
bool is_sep(char c) { return c == '-' || c == '_' || c == '.'; }
bool is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
}  // namespace

std::string canonicalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    if (is_sep(name[i])) {
      out.push_back('-');
      while (i < name.size() && is_sep(name[i])) ++i;
      continue;
    }
    char c = name[i++];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.push_back(c);
  }
  return out;
}

bool is_valid_name(std::string_view name) {
  if (name.empty()) return false;
  if (!is_alnum(name.front()) || !is_alnum(name.back())) return false;
  for (char c : name)
    if (!is_alnum(c) && !is_sep(c)) return false;
  return true;
}

}  // namespace trainpack::python
