#pragma once
// A `.dockerignore` matcher with Docker's semantics: BuildKit's reading of the file (moby/patternmatcher
// ignorefile.ReadAll), moby's pattern matcher (patternmatcher.New / Pattern.compile / MatchesUsingParentResults)
// and the walk rule BuildKit's context sender applies (tonistiigi/fsutil filterFS.Walk). Docker Engine 23+
// builds with BuildKit by default, so where the legacy builder differs, BuildKit's behaviour is the one kept.
//
// Reading the file:
//  - lines split on "\n", a trailing "\r" dropped, a UTF-8 BOM dropped from the first line;
//  - a line whose first character is "#" is a comment (only at column 0: " # x" is the pattern "# x");
//  - surrounding whitespace trimmed (Go's unicode.IsSpace), blank lines skipped;
//  - a leading "!" makes an exception ("re-include"); whitespace after the "!" is trimmed too;
//  - each pattern is passed through Go's filepath.Clean ("a//b/./c/" -> "a/b/c", "a/../b" -> "b"), then one
//    leading "/" is stripped ("/abs" means "abs" at the context root).
// Matching a slash-separated, context-relative path:
//  - a pattern is matched against the whole path, never against a base name: "*.pyc" only matches at the root,
//    "**/*.pyc" matches at any depth;
//  - "*" is any run of non-"/" characters, "?" one non-"/" character, "[...]" a class ("[^...]" negates;
//    "[!...]" does NOT negate - "!" is an ordinary member, as in Go), "\" escapes the next character;
//  - "**" matches any number of path segments, including none ("a/**/b" matches "a/b");
//  - patterns are turned into a Go regular expression exactly as moby does, so its quirks are kept: a pattern
//    of plain characters compares as a string, "foo/**" is a string prefix ("foo/" - not "foo" itself), a
//    leading "**" makes a string suffix ("**foo" matches "barfoo"), "^" outside a class is an anchor, and in a
//    pattern with a wildcard "|", "{" and "}" act as regexp alternation and repetition (moby's escape table
//    misses them: "*.py|x" matches "foo.pyc" and "zzx"). RE2 compiles those expressions, each once, when the
//    patterns are read: its syntax is Go's, and where the two part ("\C", bytes of invalid UTF-8 in a path, a
//    search starting inside a character) it is made to answer as Go does;
//  - a path is excluded when the last pattern that matches it, or one of its parent directories, is an
//    exclusion rather than an exception ("last match wins"). Per-pattern results are carried down the tree as
//    BuildKit's walker does (MatchesUsingParentResults), which differs from MatchesOrParentMatches in rare
//    orderings: with ["a/b", "!a"], "a/b" stays excluded.
//  - An excluded directory is not walked into (so nothing below it can come back) unless an exception might
//    re-include something below it: any exception with a wildcard in it (after dropping a trailing "/*" or
//    "/**"), or a plain exception that lies below the directory ("!docs/README.md" for "docs").
// Malformed patterns (what Go's filepath.Match or regexp.Compile rejects, and a lone "!") make parse() throw
// Error, where Docker fails the build. Corners that differ: Docker only fails when the pattern is first
// evaluated (trainpack fails up front); "\p{...}" (Unicode classes) takes RE2's Unicode tables, not Go's; and an
// expression too large for RE2's budget of 64 MiB (a line of some 400 "?{1000}") is refused, where Go's limit of
// 3.3 million instructions lets up to 3,000 pass.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::context {

class DockerIgnore {
 public:
  // Per-pattern match results for one directory, handed down to its children (BuildKit's MatchInfo).
  struct MatchState {
    std::vector<char> matched;
  };

  DockerIgnore();
  ~DockerIgnore();
  DockerIgnore(const DockerIgnore&);
  DockerIgnore& operator=(const DockerIgnore&);
  DockerIgnore(DockerIgnore&&) noexcept;
  DockerIgnore& operator=(DockerIgnore&&) noexcept;

  // Reads `<context_dir>/.dockerignore`; no file means no patterns. Throws Error naming the file on a read
  // failure or a malformed pattern.
  static DockerIgnore load(const std::filesystem::path& context_dir);
  // Parses the text of a .dockerignore file. `origin` names it in error messages.
  static DockerIgnore parse(std::string_view text, std::string_view origin = ".dockerignore");
  // The patterns as ReadAll returns them (already cleaned, "!" kept), fed to patternmatcher.New.
  static DockerIgnore from_patterns(const std::vector<std::string>& patterns,
                                    std::string_view origin = ".dockerignore");

  bool empty() const;
  bool has_exceptions() const;
  // The effective patterns, in order, exceptions with their leading "!".
  std::vector<std::string> patterns() const;

  // Whether `rel_path` (slash-separated, relative to the context, no leading "/") is left out of the build
  // context: it, or a parent directory, is excluded (last match wins), or it lies below an excluded directory
  // that the walk does not enter (see may_include_below). "" and "." are never excluded. An excluded directory
  // may still reach the image as the parent of a re-included child; see context_copy.h.
  bool excluded(std::string_view rel_path) const;

  // For a directory that is excluded: whether Docker still walks into it because an exception pattern could
  // re-include something below it. False when there are no exceptions.
  bool may_include_below(std::string_view rel_dir) const;

  // One step of the walk: whether `rel_path` is excluded given its parent directory's state (`parent` null for
  // entries at the context root), storing its own state in `self` (for its children, when it is a directory).
  // This ignores whether the walk enters the parent; excluded() and the copy walker take care of that.
  bool match(std::string_view rel_path, const MatchState* parent, MatchState* self) const;

  // The last pattern (with its "!" if an exception) that decided `rel_path`'s fate, or "" when none matched.
  // For messages.
  std::string deciding_pattern(std::string_view rel_path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Go's filepath.Clean on a slash-separated path ("" -> ".", "a//b/../c/" -> "a/c", "/.." -> "/").
std::string go_clean_path(std::string_view path);

}  // namespace trainpack::context
