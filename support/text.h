#pragma once
// ASCII text helpers (protocol tokens, header names, registry hosts: never locale-dependent).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack {

// `text` as a message may quote it (a file name, a flag's value, another program's output): on one line, and
// unable to drive the terminal. Escaped as Python's repr() escapes a str: \t, \n and \r, the other C0 controls and
// DEL as \xNN, the C1 controls (U+0080-U+009F, which some terminals obey) as \u0080-\u009f; bytes that are not
// UTF-8 as \xNN (as repr() of bytes). Backslashes stay as they are: a name holding a backslash and an "n" reads
// like one holding a newline, which a message can afford. A NUL stays "\x00" too (a C string would end there).
std::string visible_text(std::string_view text);

// visible_text for a text of several lines (a hint with the end of a build's output): line breaks stay.
std::string visible_lines(std::string_view text);

// The start of `text` (a server's words) for a one-line message: its first `max` bytes, line breaks and tabs as
// spaces, the rest as visible_text shows it, and "..." when it was cut.
std::string one_line(std::string_view text, std::size_t max);

// The ASCII classes, whatever the C locale says (std::isalpha and friends follow it).
inline bool ascii_digit(char c) { return c >= '0' && c <= '9'; }
inline bool ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool ascii_alnum(char c) { return ascii_alpha(c) || ascii_digit(c); }

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

inline bool ascii_iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

// The non-empty pieces of `s` between any of the `separators` ("a::b:" split at ":" gives a, b).
inline std::vector<std::string> split_nonempty(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find_first_of(separators, start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Every piece of `s` between single `separator`s, empty ones included, as Python's str.split(sep) ("a..b" split
// at '.' gives a, "", b; "" gives one empty piece).
inline std::vector<std::string_view> split_at(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    std::size_t end = s.find(separator, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// The decimal digits at the start of `s` as a number, 0 when there are none ("3.11" → 3, "11rc1" → 11).
inline int leading_int(std::string_view s) {
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') break;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Whether `s` is one or more ASCII digits.
inline bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `parts` with `separator` between each two.
inline std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r).
inline std::string_view ascii_trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  std::size_t start = s.find_first_not_of(kSpace);
  if (start == std::string_view::npos) return {};
  return s.substr(start, s.find_last_not_of(kSpace) - start + 1);
}

// The lines of a text file: split at "\n", a trailing "\r" dropped, no line after a final "\n".
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace trainpack
