#pragma once
// Absolute image paths ("/usr/lib/python3.11") over ImageFilesystem's root-relative ones ("usr/lib/python3.11"):
// the readers of a base's Python installation speak in the paths the image's own programs see.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layers/image_filesystem.h"
#include "support/paths.h"

namespace trainpack::python {

// "/a//b/./c" or "a/b/c" → "/a/b/c"; "" → "/".
inline std::string abs_path(std::string_view path) {
  std::string out = "/";
  for (std::string_view c : path_components(path)) {
    if (out.size() > 1) out += '/';
    out += c;
  }
  return out;
}
inline std::string parent_of(std::string_view path) { return abs_path(path_dir(abs_path(path).substr(1))); }
inline std::string base_of(std::string_view path) { return std::string(path_base(path)); }
inline std::string abs_join(std::string_view a, std::string_view b) {
  return abs_path(std::string(a) + "/" + std::string(b));
}

struct ImageRoot {
  const layers::ImageFilesystem& fs;
  std::string resolve(std::string_view p) const { return abs_path(fs.resolve(abs_path(p).substr(1))); }
  const layers::PathInfo* info(std::string_view p) const { return fs.find(resolve(p).substr(1)); }
  // Exact path, symlinks in it not resolved.
  const layers::PathInfo* lstat(std::string_view p) const { return fs.find(abs_path(p).substr(1)); }
  bool exists(std::string_view p) const { return info(p) != nullptr; }
  bool is_file(std::string_view p) const { return fs.is_file(abs_path(p).substr(1)); }
  bool is_dir(std::string_view p) const { return fs.is_dir(abs_path(p).substr(1)); }
  std::vector<std::string> children(std::string_view p) const { return fs.children(abs_path(p).substr(1)); }
  std::optional<std::string> read(std::string_view p, std::size_t cap) const {
    return fs.read(abs_path(p).substr(1), cap);
  }
  std::optional<std::string> head(std::string_view p, std::size_t n) const {
    return fs.read_prefix(abs_path(p).substr(1), n);
  }
};

}  // namespace trainpack::python
