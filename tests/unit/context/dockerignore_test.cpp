#include "context/dockerignore.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/error.h"

using trainpack::Error;
using trainpack::context::DockerIgnore;
using trainpack::context::go_clean_path;

namespace {

struct Case {
  const char* ignore;  // .dockerignore text
  const char* path;    // context-relative path
  bool excluded;       // what Docker (BuildKit) does
};

// Expected values are Docker's: they were cross-checked against moby/patternmatcher and BuildKit's walk rule
// (fsutil filterFS) running under Go.
const Case kCases[] = {
    // Plain names match the whole path from the context root, and everything below a matched directory.
    {"foo", "foo", true},
    {"foo", "foo/bar", true},
    {"foo", "foo/bar/baz", true},
    {"foo", "foobar", false},
    {"foo", "sub/foo", false},
    // "*.pyc" is anchored at the root; "**/*.pyc" matches at any depth.
    {"*.pyc", "a.pyc", true},
    {"*.pyc", "dir/a.pyc", false},
    {"**/*.pyc", "a.pyc", true},
    {"**/*.pyc", "dir/a.pyc", true},
    {"**/*.pyc", "d/e/f/a.pyc", true},
    {"**/*.pyc", "a.pyc.txt", false},
    {"*/*.pyc", "dir/a.pyc", true},
    {"*/*.pyc", "a.pyc", false},
    {"*/*.pyc", "d/e/a.pyc", false},
    // "*" and "?" do not cross "/"; a matched parent excludes its children.
    {"*", "anything", true},
    {"*", "dir/file", true},
    {"a*", "ab/c", true},
    {"a*/b", "a/c/b", false},
    {"a?c", "abc", true},
    {"a?c", "ac", false},
    {"a?c", "a/c", false},
    {"?.txt", "\xc3\xa9.txt", true},  // "?" is one character, not one byte
    // A leading "/" means the context root; trailing slashes and redundant elements are cleaned away.
    {"/abs", "abs", true},
    {"/abs", "abs/x", true},
    {"/abs", "x/abs", false},
    {"dir/", "dir", true},
    {"dir/", "dir/x", true},
    {"dir/", "dirx", false},
    {"a//b/./c/", "a/b/c", true},
    {"a/../b", "b", true},
    {"a/../b", "a", false},
    {"./a", "a", true},
    {"../a", "a", false},
    // "dir/*" and "dir/**" leave the directory entry itself alone but take everything in it.
    {"dir/*", "dir", false},
    {"dir/*", "dir/x", true},
    {"dir/*", "dir/x/y", true},
    {"dir/**", "dir", false},
    {"dir/**", "dir/x", true},
    {"dir/**", "dir/x/y", true},
    // "**" is any number of segments, including none.
    {"**", "x", true},
    {"**", "x/y/z", true},
    {"**/dir", "dir", true},
    {"**/dir", "a/dir", true},
    {"**/dir", "a/b/dir/file", true},
    {"**/dir", "a/dirx", false},
    {"a/**/b", "a/b", true},
    {"a/**/b", "a/x/y/b", true},
    {"a/**/b", "a/x/y/bc", false},
    {"a**/*.txt", "a/dir/dir/file.txt", true},
    // moby's string shortcuts: a leading "**" compares a plain suffix, a trailing "**" a plain prefix.
    {"**foo", "barfoo", true},
    {"**foo", "x/barfoo", true},
    {"foo**", "foobar/x", true},
    {"foo/**", "foo", false},
    // .git, comments, blank lines, whitespace.
    {".git", ".git", true},
    {".git", ".git/HEAD", true},
    {".git", "sub/.git", false},
    {"**/.git", "sub/.git/HEAD", true},
    {".*", ".env", true},
    {".*", "env", false},
    {"# comment\n\n   \n*.log", "a.log", true},
    {"# comment\n*.log", "# comment", false},
    {" # not a comment", "# not a comment", true},  // "#" only starts a comment in the first column
    {"\\#file", "#file", true},
    {"  spaced.txt  \t", "spaced.txt", true},
    {"*.log\r\n*.tmp\r\n", "a.tmp", true},  // CRLF line ends
    {"\xef\xbb\xbf*.log", "a.log", true},  // UTF-8 BOM at the start of the file
    // Exceptions: evaluated in order, the last match wins.
    {"*.txt\n!keep.txt", "a.txt", true},
    {"*.txt\n!keep.txt", "keep.txt", false},
    {"!keep.txt\n*.txt", "keep.txt", true},
    {"*.txt\n! keep.txt", "keep.txt", false},  // whitespace after "!" is trimmed
    {"*.txt\n!/keep.txt", "keep.txt", false},
    {"*.md\n!README*.md\nREADME-secret.md", "README-secret.md", true},
    {"*.md\n!README*.md\nREADME-secret.md", "README.md", false},
    // Re-including below an excluded directory: a plain exception below it works...
    {"docs\n!docs/README.md", "docs", true},
    {"docs\n!docs/README.md", "docs/README.md", false},
    {"docs\n!docs/README.md", "docs/other.md", true},
    {"*\n!keep/file", "keep/file", false},
    {"*\n!keep/file", "keep/other", true},
    {"*\n!keep/file", "other/file", true},
    // ...one with a wildcard makes Docker walk every excluded directory...
    {"docs\n!**/README.md", "docs/README.md", false},
    {"docs\n!**/README.md", "docs/sub/README.md", false},
    {"docs\n!**/README.md", "docs/x.md", true},
    // ...and a plain exception elsewhere cannot reach inside.
    {"sub\n!keep.txt", "sub/keep.txt", true},
    {"sub\n!keep.txt", "keep.txt", false},
    // Per-pattern results are carried down the walk (BuildKit), unlike MatchesOrParentMatches.
    {"a/b\n!a", "a/b", true},
    {"a/b\n!a", "a", false},
    // Character classes, Go style: "^" negates, "!" does not; "\" escapes.
    {"a[bc]d", "abd", true},
    {"a[bc]d", "aed", false},
    {"a[b-d]e", "ace", true},
    {"a[b-d]e", "ae", false},
    {"a[^b]d", "acd", true},
    {"a[^b]d", "abd", false},
    {"a[^b]d", "a/d", true},  // a negated class matches "/" (Go regexp)
    {"a[!b]d", "a!d", true},
    {"a[!b]d", "acd", false},
    {"[\\]a]", "]", true},
    {"[x\\-]", "-", true},
    {"a\\*b", "a*b", true},
    {"a\\*b", "axb", false},
    {"a\\\\", "a\\", true},
    {"a.b", "axb", false},
    {"a(b)c+d$e", "a(b)c+d$e", true},
    {"[[:digit:]]*.log", "1.log", true},
    {"[[:digit:]]*.log", "x.log", false},
    // moby fails to escape "|", "{" and "}", so in a wildcard pattern Go reads them as regexp syntax.
    {"a|b", "a|b", true},  // no wildcard: compared as a string
    {"a|b", "a", false},
    {"*.py|x", "foo.pyc", true},  // "^[^/]*\.py|x$": the left branch has no end anchor
    {"*.py|x", "zzx", true},
    {"*.py|x", "foo.txt", false},
    {"ab{2}*", "abb.txt", true},  // "^ab{2}[^/]*$"
    {"ab{2}*", "ab.txt", false},
    // "" and "." are never excluded.
    {"*", "", false},
    {"*", ".", false},
    {"**", ".", false},
};

void expect_case(const Case& c) {
  DockerIgnore ignore = DockerIgnore::parse(c.ignore);
  EXPECT_EQ(ignore.excluded(c.path), c.excluded) << "pattern(s) \"" << c.ignore << "\" path \"" << c.path << "\"";
}

TEST(DockerIgnore, PatternTable) {
  for (const Case& c : kCases) expect_case(c);
}

// Where RE2, which runs the patterns' regular expressions, parts from Go's regexp, Go's answer is the one kept
// (cross-checked against moby/patternmatcher under Go like kCases).
TEST(DockerIgnore, RegexpsAnswerAsGoDoes) {
  const Case cases[] = {
      {"?.txt", "\xff.txt", true},           // Go reads a byte of invalid UTF-8 as one character, U+FFFD
      {"?.txt", "\xed\xa0\x80.txt", false},  // an encoded surrogate is three such bytes
      {"\\pL*", "\xc3\xa9", true},           // Unicode classes
      {"\\pL*", "1x", false},
      {"\\p{Greek}?", "\xce\xb1x", true},
      {"{0}**\\B|x", "ab", true},            // "^{0}(.*/)?\B|x$": "\B" holds between "a" and "b"...
      {"{0}**\\B|x", "a\xc3\xa9" "b", false},  // ...and inside "é", where Go's search never starts
  };
  for (const Case& c : cases) expect_case(c);
  // Go has no "\C" (any byte) escape.
  for (const char* text : {"a\\C*", "[\\C]"}) EXPECT_THROW(DockerIgnore::parse(text), Error) << text;
}

TEST(DockerIgnore, MalformedPatternsAreErrors) {
  // Everything Docker rejects (Go's filepath.Match syntax check, regexp compilation, a lone "!").
  for (const char* text : {"!", "! ", "!/", "[", "a[", "[^", "[]a]", "[-x]", "[x-]", "[a-b-c]", "a\\",
                           "[Local-Only]", "*.py|{1}", "x*{2}", "a\\q"}) {
    try {
      DockerIgnore::parse(std::string("ok\n") + text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(".dockerignore"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one-line cause";
      EXPECT_FALSE(e.hint().empty());
    }
  }
}

TEST(DockerIgnore, PatternsAreNormalizedLikeReadAll) {
  DockerIgnore ignore = DockerIgnore::parse("# comment\n/abs/\n! /x//y/\n\n  spaced  \n/\n");
  EXPECT_EQ(ignore.patterns(), (std::vector<std::string>{"abs", "!x/y", "spaced", "/"}));
  EXPECT_TRUE(ignore.has_exceptions());
  EXPECT_FALSE(ignore.empty());
  EXPECT_TRUE(DockerIgnore::parse("# only a comment\n\n").empty());
}

TEST(DockerIgnore, MayIncludeBelow) {
  DockerIgnore plain = DockerIgnore::parse("build\n*.log");
  EXPECT_FALSE(plain.may_include_below("build"));

  DockerIgnore prefix = DockerIgnore::parse("docs\n!docs/api/index.md\n!assets/*");
  EXPECT_TRUE(prefix.may_include_below("docs"));
  EXPECT_TRUE(prefix.may_include_below("docs/api"));
  EXPECT_FALSE(prefix.may_include_below("docs/other"));
  EXPECT_TRUE(prefix.may_include_below("assets"));  // a trailing "/*" is ignored for this test
  EXPECT_FALSE(prefix.may_include_below("src"));

  DockerIgnore glob = DockerIgnore::parse("*\n!**/keep");
  EXPECT_TRUE(glob.may_include_below("anything"));
}

TEST(DockerIgnore, MatchStateWalkAgreesWithExcluded) {
  DockerIgnore ignore = DockerIgnore::parse("data\n!data/keep\n**/*.tmp");
  DockerIgnore::MatchState data, keep;
  EXPECT_TRUE(ignore.match("data", nullptr, &data));
  EXPECT_FALSE(ignore.match("data/keep", &data, &keep));
  EXPECT_TRUE(ignore.match("data/keep/x.tmp", &keep, nullptr));
  EXPECT_FALSE(ignore.match("data/keep/x.py", &keep, nullptr));
  EXPECT_TRUE(ignore.excluded("data/keep/x.tmp"));
  EXPECT_FALSE(ignore.excluded("data/keep/x.py"));
}

TEST(DockerIgnore, DecidingPattern) {
  DockerIgnore ignore = DockerIgnore::parse("*.txt\n!keep.txt\nsecret/");
  EXPECT_EQ(ignore.deciding_pattern("a.txt"), "*.txt");
  EXPECT_EQ(ignore.deciding_pattern("keep.txt"), "!keep.txt");
  EXPECT_EQ(ignore.deciding_pattern("secret/key"), "secret");
  EXPECT_EQ(ignore.deciding_pattern("main.py"), "");
}

TEST(DockerIgnore, LoadReadsTheContextFile) {
  // No file: no patterns.
  EXPECT_TRUE(DockerIgnore::load("/nonexistent-trainpack-context").empty());
}

TEST(DockerIgnore, GoCleanPath) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "."},          {".", "."},         {"a/", "a"},        {"a//b", "a/b"},   {"./a/./b/", "a/b"},
      {"a/../b", "b"},    {"a/..", "."},      {"../a", "../a"},   {"a/../../b", "../b"}, {"/..", "/"},
      {"/../a", "/a"},    {"//a", "/a"},      {"/", "/"},         {"!a/../b", "b"},  {"!..", "!.."},
  };
  for (auto& [in, want] : cases) EXPECT_EQ(go_clean_path(in), want) << in;
}

TEST(DockerIgnore, ALineOfManyDoubleStarsMatches) {
  // The longest line Docker reads (64 KiB less one byte) of "**/" compiles to a chain of ~21,000 optional groups,
  // each an epsilon step of the matcher.
  std::string line = "a/";
  while (line.size() + 3 + 1 < 64 * 1024) line += "**/";
  line += "y";
  DockerIgnore ignore = DockerIgnore::parse(line);
  EXPECT_TRUE(ignore.excluded("a/y"));
  EXPECT_TRUE(ignore.excluded("a/b/c/y"));
  EXPECT_FALSE(ignore.excluded("a/b/z"));
}

}  // namespace
