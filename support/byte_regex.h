#pragma once
// Regular expressions over outside input (requirement lines, versions, file names, image references) use RE2: its
// matching runs in time linear in the input and without recursion, so no line is too long for it, where
// std::regex's backtracking recurses once per character matched and overflows the stack on long lines.
#include <re2/re2.h>

#include <optional>
#include <string_view>

namespace trainpack {

enum class RegexCase { sensitive, ignored };

// RE2 options to match bytes as std::regex matches a std::string: Latin-1 makes every byte one character, so text
// that is not UTF-8 is matched rather than refused; ignoring case then folds only ASCII letters in the ASCII patterns
// used here (the other letters whose folds are ASCII, U+017F and U+212A, lie outside Latin-1).
inline RE2::Options byte_regex_options(RegexCase letter_case = RegexCase::sensitive) {
  RE2::Options options;
  options.set_encoding(RE2::Options::EncodingLatin1);
  options.set_case_sensitive(letter_case == RegexCase::sensitive);
  return options;
}

// `text` as the string type RE2's functions take (re2::StringPiece): in Debian 13's RE2 that is absl::string_view,
// a type of abseil's own there, to which std::string_view does not convert.
inline re2::StringPiece regex_text(std::string_view text) { return {text.data(), text.size()}; }

// The length of the match of `re` that starts at the beginning of `text` (leftmost-first, as Perl and Python
// choose among alternatives), or nullopt when none does.
inline std::optional<size_t> match_prefix(const RE2& re, std::string_view text) {
  re2::StringPiece whole;
  if (!re.Match(regex_text(text), 0, text.size(), RE2::ANCHOR_START, &whole, 1)) return std::nullopt;
  return whole.size();
}

}  // namespace trainpack
