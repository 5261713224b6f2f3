#include "support/paths.h"

namespace trainpack {

std::vector<std::string_view> path_components(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view comp = path.substr(start, slash - start);
    start = slash + 1;
    if (!comp.empty() && comp != ".") out.push_back(comp);
  }
  return out;
}

bool has_parent_reference(std::string_view path) {
  for (std::string_view c : path_components(path))
    if (c == "..") return true;
  return false;
}

std::string clean_path(std::string_view path) {
  std::string out;
  for (std::string_view c : path_components(path)) out = join_path(out, c);
  return out;
}

std::string normalize_path(std::string_view path) {
  std::vector<std::string_view> parts;
  for (std::string_view c : path_components(path)) {
    if (c != "..") parts.push_back(c);
    else if (!parts.empty()) parts.pop_back();
  }
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

std::string join_path(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  out += '/';
  out += b;
  return out;
}

std::string_view path_base(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view path_dir(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}

}  // namespace trainpack
