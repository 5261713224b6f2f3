#pragma once
// Slash-separated path text, as images and Dockerfiles spell it (never the host's std::filesystem rules).
#include <string>
#include <string_view>
#include <vector>

namespace trainpack {

// The components of `path`, skipping empty ones and "." ("./a//b/." → a, b); ".." is kept for the caller.
std::vector<std::string_view> path_components(std::string_view path);

// The components of `path` joined by "/" ("./a//b/." → "a/b", "." → ""); ".." is kept, for the caller to refuse.
std::string clean_path(std::string_view path);

// The path resolved lexically inside a root: "." and empty components dropped, ".." taking one back but never
// above the root; returned relative, without a leading "/" ("/a/./b/../c" → "a/c", "../x" → "x", "/" → "").
std::string normalize_path(std::string_view path);

// Whether any component is "..".
bool has_parent_reference(std::string_view path);

// "a" + "/" + "b", where an empty side yields the other.
std::string join_path(std::string_view a, std::string_view b);

// The last component ("a/b" → "b", "b" → "b") and everything before it ("a/b" → "a", "b" → "").
std::string_view path_base(std::string_view path);
std::string_view path_dir(std::string_view path);

}  // namespace trainpack
