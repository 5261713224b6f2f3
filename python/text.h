#pragma once
// Python's str.strip(), str.split() and str.splitlines() for the ASCII range, as packaging, email and csv readers apply them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::python {

// Python's \s in the ASCII range: space, \t\n\v\f\r, and \x1c-\x1f.
inline bool is_py_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

inline std::string_view py_strip(std::string_view s) {
  while (!s.empty() && is_py_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_py_space(s.back())) s.remove_suffix(1);
  return s;
}

// str.splitlines() for the ASCII line boundaries (\n, \r, \r\n, \v, \f, \x1c-\x1e); no trailing empty line.
inline std::vector<std::string_view> py_splitlines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\x1c' || c == '\x1d' || c == '\x1e') {
      lines.push_back(text.substr(start, i - start));
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// The character Python's one-letter string escape `\<letter>` stands for (\n, \t, \\, \' ...), or nullopt.
inline std::optional<char> py_simple_escape(char letter) {
  static constexpr std::string_view kLetters = "abfnrtv\\'\"", kChars = "\a\b\f\n\r\t\v\\'\"";
  std::size_t k = kLetters.find(letter);
  return k == std::string_view::npos ? std::nullopt : std::optional<char>(kChars[k]);
}

// str.split() without arguments: the words between runs of whitespace.
inline std::vector<std::string> py_split(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_py_space(s[i])) ++i;
    std::size_t j = i;
    while (j < s.size() && !is_py_space(s[j])) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace trainpack::python
