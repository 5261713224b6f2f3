#include "python/names.h"

#include "support/text.h"

namespace trainpack::python {

namespace {
bool is_sep(char c) { return c == '-' || c == '_' || c == '.'; }
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
  if (!ascii_alnum(name.front()) || !ascii_alnum(name.back())) return false;
  for (char c : name)
    if (!ascii_alnum(c) && !is_sep(c)) return false;
  return true;
}

}  // namespace trainpack::python
