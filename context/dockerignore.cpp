#include "context/dockerignore.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "support/byte_regex.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/utf8.h"

namespace trainpack::context {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// UTF-8 and Go string helpers

constexpr char32_t kRuneError = 0xFFFD;

// Go's utf8.DecodeRuneInString: an invalid or truncated sequence decodes as U+FFFD of width 1 (Go's rule of what is
// well-formed is RFC 3629's, as decode_utf8's).
std::pair<char32_t, std::size_t> decode_rune(std::string_view s, std::size_t pos) {
  auto [rune, length] = decode_utf8(s, pos);
  if (length == 0) return {kRuneError, 1};
  return {rune, length};
}

std::u32string to_runes(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    auto [r, n] = decode_rune(s, i);
    out += r;
    i += n;
  }
  return out;
}

// Go's unicode.IsSpace.
bool is_go_space(char32_t r) {
  switch (r) {
    case '\t': case '\n': case '\v': case '\f': case '\r': case ' ': case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

// Go's strings.TrimSpace.
std::string_view trim_space(std::string_view s) {
  std::size_t b = s.size(), e = 0;
  for (std::size_t i = 0; i < s.size();) {
    auto [r, n] = decode_rune(s, i);
    if (!is_go_space(r)) {
      if (b == s.size()) b = i;
      e = i + n;
    }
    i += n;
  }
  if (b == s.size()) return s.substr(0, 0);
  return s.substr(b, e - b);
}

std::string quote_str(std::string_view s) { return "\"" + std::string(s) + "\""; }

// ---------------------------------------------------------------------------------------------------------------
// Go's filepath.Match, reduced to its syntax check (what patternmatcher.New calls it for). Byte-oriented like Go.

bool match_get_esc(std::string_view& chunk) {
  if (chunk.empty() || chunk[0] == '-' || chunk[0] == ']') return false;
  if (chunk[0] == '\\') {
    chunk.remove_prefix(1);
    if (chunk.empty()) return false;
  }
  auto [r, n] = decode_rune(chunk, 0);
  if (r == kRuneError && n == 1) return false;
  chunk.remove_prefix(n);
  return !chunk.empty();
}

bool match_chunk_syntax_ok(std::string_view chunk) {
  while (!chunk.empty()) {
    switch (chunk[0]) {
      case '[': {
        chunk.remove_prefix(1);
        if (!chunk.empty() && chunk[0] == '^') chunk.remove_prefix(1);
        int nrange = 0;
        for (;;) {
          if (!chunk.empty() && chunk[0] == ']' && nrange > 0) {
            chunk.remove_prefix(1);
            break;
          }
          if (!match_get_esc(chunk)) return false;
          if (chunk[0] == '-') {
            chunk.remove_prefix(1);
            if (!match_get_esc(chunk)) return false;
          }
          ++nrange;
        }
        break;
      }
      case '?':
        chunk.remove_prefix(1);
        break;
      case '\\':
        chunk.remove_prefix(1);
        if (chunk.empty()) return false;
        chunk.remove_prefix(1);
        break;
      default:
        chunk.remove_prefix(1);
    }
  }
  return true;
}

bool go_match_syntax_ok(std::string_view pattern) {
  while (!pattern.empty()) {
    bool star = false;
    while (!pattern.empty() && pattern[0] == '*') {
      pattern.remove_prefix(1);
      star = true;
    }
    bool inrange = false;
    std::size_t i = 0;
    for (; i < pattern.size(); ++i) {
      char c = pattern[i];
      if (c == '\\') {
        if (i + 1 < pattern.size()) ++i;
      } else if (c == '[') {
        inrange = true;
      } else if (c == ']') {
        inrange = false;
      } else if (c == '*' && !inrange) {
        break;
      }
    }
    std::string_view chunk = pattern.substr(0, i);
    pattern.remove_prefix(i);
    if (star && chunk.empty()) return true;
    if (!match_chunk_syntax_ok(chunk)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Go's regexp (regexp.Compile, Regexp.MatchString) on RE2, whose parser Go's regexp/syntax ports: the same syntax and
// Perl flags ("." excludes "\n", negated classes include it, "^" and "$" match only at the text's ends). Where the two
// part ("\C", invalid UTF-8 in the text, a search starting inside a character), GoRegexp makes RE2 answer as Go does.

// Thrown for an expression Go's regexp.Compile rejects; what() is Go's wording (regexp/syntax ErrorCode).
class RegexError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What Go's regexp/syntax says for RE2's error codes, so that messages read as Docker's Go would word them.
std::string go_error_text(const RE2& re) {
  switch (re.error_code()) {
    case RE2::ErrorBadEscape: return "invalid escape sequence";
    case RE2::ErrorBadCharClass: return "invalid character class";
    case RE2::ErrorBadCharRange: return "invalid character class range";
    case RE2::ErrorMissingBracket: return "missing closing ]";
    case RE2::ErrorMissingParen: return "missing closing )";
    case RE2::ErrorTrailingBackslash: return "trailing backslash at end of expression";
    case RE2::ErrorRepeatArgument: return "missing argument to repetition operator";
    case RE2::ErrorRepeatSize: return "invalid repeat count";
    case RE2::ErrorRepeatOp: return "invalid nested repetition operator";
    case RE2::ErrorPatternTooLarge: return "expression too large";
    default: return re.error();
  }
}

RE2::Options go_regexp_options() {
  RE2::Options options;  // UTF-8 and Perl-like syntax by default, as Go's regexp
  options.set_never_capture(true);  // only whether it matches is asked
  options.set_log_errors(false);    // a bad pattern is reported as an Error
  // Go refuses expressions past 3.3 million instructions (maxSize in regexp/syntax/parse.go); RE2's default budget
  // of 8 MiB refuses far smaller ones that Go takes, such as "x{1000}" a thousand times over.
  options.set_max_mem(int64_t{64} << 20);
  return options;
}

// Where `letter` follows an odd run of backslashes: the escapes "\<letter>" in `expr`, and text inside \Q...\E that
// reads the same.
std::vector<std::size_t> escapes_of(std::string_view expr, char letter) {
  std::vector<std::size_t> found;
  std::size_t backslashes = 0;  // the run just before expr[i]
  for (std::size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] == letter && backslashes % 2 == 1) found.push_back(i);
    backslashes = expr[i] == '\\' ? backslashes + 1 : 0;
  }
  return found;
}

// RE2 reads the escape "\C" as any byte; Go's regexp has no such escape and rejects it, except inside \Q...\E where
// both take it literally. RE2 judges a copy in which each "\C" is "\q", which both reject.
void refuse_any_byte_escapes(std::string expr, const RE2::Options& options) {
  std::vector<std::size_t> any_byte = escapes_of(expr, 'C');
  if (any_byte.empty()) return;
  for (std::size_t at : any_byte) expr[at] = 'q';
  RE2 syntax_check(regex_text(expr), options);
  if (!syntax_check.ok()) throw RegexError(go_error_text(syntax_check));
}

// Go's regexp decodes each byte of invalid UTF-8 as U+FFFD, which "?" and "*" match like any character; RE2 matches
// no such byte. So those bytes reach RE2 as U+FFFD.
std::string with_invalid_bytes_as_rune_error(std::string_view text) {
  std::string out;
  for (char32_t r : to_runes(text)) append_utf8(out, r);
  return out;
}

// A Go regular expression, compiled once; copies share the RE2 object, whose matching is thread-safe.
class GoRegexp {
 public:
  // Throws RegexError where Go's regexp.Compile fails.
  explicit GoRegexp(const std::string& expr) {
    const RE2::Options options = go_regexp_options();
    refuse_any_byte_escapes(expr, options);
    re_ = std::make_shared<const RE2>(regex_text(expr), options);
    if (!re_->ok()) throw RegexError(go_error_text(*re_));
    not_word_boundary_ = !escapes_of(expr, 'B').empty();
  }

  // Go's Regexp.MatchString: an unanchored search (the compiled patterns carry their own anchors).
  bool matches(std::string_view text) const {
    bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (ascii) return RE2::PartialMatch(regex_text(text), *re_);
    std::string decoded = with_invalid_bytes_as_rune_error(text);
    if (!not_word_boundary_) return RE2::PartialMatch(regex_text(decoded), *re_);
    return matches_from_a_character_start(decoded);
  }

 private:
  // RE2's search also starts between the bytes of one character, where "\B" holds (both neighbours are non-word
  // bytes); Go's starts only where characters start. Where "\B" can make a difference, each such start is tried.
  bool matches_from_a_character_start(std::string_view text) const {
    for (std::size_t at = 0;; at += decode_rune(text, at).second) {
      if (re_->Match(regex_text(text), at, text.size(), RE2::ANCHOR_START, nullptr, 0)) return true;
      if (at == text.size()) return false;
    }
  }

  std::shared_ptr<const RE2> re_;
  bool not_word_boundary_ = false;  // the expression has a "\B"
};

// ---------------------------------------------------------------------------------------------------------------
// moby's Pattern

enum class MatchType { kExact, kPrefix, kSuffix, kRegexp };

// moby's shouldEscape means to cover `.+()|{}$`, but its 8-byte bitmap indexes bit (c / 8) of a byte, which only
// exists for c < 64: "|", "{" and "}" are never escaped and reach Go's regexp as alternation and repetition.
bool should_escape(char32_t c) { return c == '.' || c == '+' || c == '(' || c == ')' || c == '$'; }

struct Pattern {
  std::string cleaned;  // without the "!"
  bool exception = false;
  MatchType type = MatchType::kExact;
  std::optional<GoRegexp> regex;  // compiled when the patterns are read

  bool match(std::string_view path) const {
    switch (type) {
      case MatchType::kExact:
        return path == cleaned;
      case MatchType::kPrefix:
        return path.starts_with(std::string_view(cleaned).substr(0, cleaned.size() - 2));
      case MatchType::kSuffix: {
        std::string_view suffix = std::string_view(cleaned).substr(2);
        if (path.ends_with(suffix)) return true;
        return suffix[0] == '/' && path == suffix.substr(1);
      }
      case MatchType::kRegexp:
        return regex->matches(path);
    }
    return false;
  }
};

// Pattern.compile: the pattern becomes a regexp string, or one of the string-comparison shortcuts.
void compile_pattern(Pattern& p) {
  std::string re = "^";
  MatchType type = MatchType::kExact;
  std::u32string runes = to_runes(p.cleaned);  // text/scanner also turns invalid UTF-8 into U+FFFD
  // text/scanner drops a byte order mark at the start (the string comparisons below still see it).
  std::size_t k = !runes.empty() && runes[0] == 0xFEFF ? 1 : 0;
  auto peek = [&]() -> std::optional<char32_t> {
    if (k < runes.size()) return runes[k];
    return std::nullopt;
  };
  for (int i = 0; k < runes.size(); ++i) {
    char32_t ch = runes[k++];
    if (ch == '*') {
      if (peek() == U'*') {
        ++k;
        if (peek() == U'/') ++k;  // treat "**/" as "**"
        if (!peek()) {
          if (type == MatchType::kExact) {
            type = MatchType::kPrefix;
          } else {
            re += ".*";
            type = MatchType::kRegexp;
          }
        } else {
          re += "(.*/)?";
          type = MatchType::kRegexp;
        }
        if (i == 0) type = MatchType::kSuffix;
      } else {
        re += "[^/]*";
        type = MatchType::kRegexp;
      }
    } else if (ch == '?') {
      re += "[^/]";
      type = MatchType::kRegexp;
    } else if (should_escape(ch)) {
      re += '\\';
      append_utf8(re, ch);
    } else if (ch == '\\') {
      if (peek()) {
        re += '\\';
        append_utf8(re, runes[k++]);
        type = MatchType::kRegexp;
      } else {
        re += '\\';
      }
    } else if (ch == '[' || ch == ']') {
      append_utf8(re, ch);
      type = MatchType::kRegexp;
    } else {
      append_utf8(re, ch);
    }
  }
  p.type = type;
  if (type == MatchType::kRegexp) {
    re += "$";
    p.regex.emplace(re);
  }
}

std::string without_trailing_glob(std::string_view p) {
  if (p.ends_with("/**")) p.remove_suffix(3);
  if (p.ends_with("/*")) p.remove_suffix(2);
  return std::string(p);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------

std::string go_clean_path(std::string_view path) {
  if (path.empty()) return ".";
  bool rooted = path[0] == '/';
  std::vector<std::string_view> out;
  std::size_t dotdot = 0;  // leading ".." elements that cannot be cancelled (unrooted paths)
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view el = path.substr(i, j - i);
    i = j + 1;
    if (el.empty() || el == ".") continue;
    if (el == "..") {
      if (out.size() > dotdot) {
        out.pop_back();
      } else if (!rooted) {
        out.push_back(el);
        ++dotdot;
      }
      continue;
    }
    out.push_back(el);
  }
  std::string r = rooted ? "/" : "";
  for (std::size_t n = 0; n < out.size(); ++n) {
    if (n > 0) r += '/';
    r += out[n];
  }
  return r.empty() ? "." : r;
}

struct DockerIgnore::Impl {
  std::vector<Pattern> patterns;
  bool exceptions = false;
  bool only_prefix_exceptions = true;

  // patternmatcher.MatchesUsingParentResults. `decider` receives the index of the last pattern that matched.
  bool match(std::string_view file, const MatchState* parent, MatchState* self, int* decider) const {
    const std::vector<char>* pm = parent && !parent->matched.empty() ? &parent->matched : nullptr;
    if (decider) *decider = -1;
    std::vector<char> info(patterns.size(), 0);
    bool matched = false;
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      const Pattern& p = patterns[i];
      bool m = pm ? (*pm)[i] != 0 : false;
      if (!m) {
        if (p.exception != matched) continue;
        m = p.match(file);
        if (!m && !pm) {
          // No parent results: check every parent directory, as MatchesOrParentMatches does.
          for (std::size_t slash = file.find('/'); slash != std::string_view::npos && !m;
               slash = file.find('/', slash + 1))
            m = p.match(file.substr(0, slash));
        }
      }
      info[i] = m;
      if (m) {
        matched = !p.exception;
        if (decider) *decider = static_cast<int>(i);
      }
    }
    if (self) self->matched = std::move(info);
    return matched;
  }

  bool may_include_below(std::string_view dir) const {
    if (!exceptions) return false;
    if (!only_prefix_exceptions) return true;
    std::string dir_slash = std::string(dir) + "/";
    for (const Pattern& p : patterns) {
      if (!p.exception) continue;
      if ((without_trailing_glob(p.cleaned) + "/").starts_with(dir_slash)) return true;
    }
    return false;
  }

  // Walks rel_path's parents from the root like BuildKit does; returns excluded-ness and the deciding pattern.
  bool walk_to(std::string_view rel, int* decider) const {
    std::string clean = go_clean_path(rel);
    std::string_view p = clean;
    while (p.starts_with("/")) p.remove_prefix(1);
    if (p.empty() || p == ".") return false;
    MatchState parent, self;
    const MatchState* parent_ptr = nullptr;
    for (std::size_t slash = p.find('/'); slash != std::string_view::npos; slash = p.find('/', slash + 1)) {
      std::string_view dir = p.substr(0, slash);
      if (match(dir, parent_ptr, &self, decider) && !may_include_below(dir)) return true;
      parent = std::move(self);
      parent_ptr = &parent;
    }
    return match(p, parent_ptr, nullptr, decider);
  }
};

DockerIgnore::DockerIgnore() : impl_(std::make_unique<Impl>()) {}
DockerIgnore::~DockerIgnore() = default;
DockerIgnore::DockerIgnore(const DockerIgnore& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
DockerIgnore& DockerIgnore::operator=(const DockerIgnore& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}
DockerIgnore::DockerIgnore(DockerIgnore&& o) noexcept : impl_(std::move(o.impl_)) {}
DockerIgnore& DockerIgnore::operator=(DockerIgnore&& o) noexcept {
  impl_ = std::move(o.impl_);
  return *this;
}

DockerIgnore DockerIgnore::from_patterns(const std::vector<std::string>& patterns, std::string_view origin) {
  DockerIgnore d;
  Impl& impl = *d.impl_;
  const std::string hint = "Docker rejects this pattern too; fix or remove it in " + std::string(origin);
  for (const std::string& raw : patterns) {
    std::string_view t = trim_space(raw);
    if (t.empty()) continue;
    std::string p = go_clean_path(t);
    Pattern pat;
    if (p[0] == '!') {
      if (p.size() == 1) throw Error("invalid pattern " + quote_str(raw) + " in " + std::string(origin) +
                                         ": illegal exclusion pattern \"!\"", hint);
      pat.exception = true;
      p.erase(0, 1);
      impl.exceptions = true;
    }
    if (!go_match_syntax_ok(p))
      throw Error("invalid pattern " + quote_str(raw) + " in " + std::string(origin) + ": syntax error in pattern",
                  hint);
    pat.cleaned = p;
    try {
      compile_pattern(pat);
    } catch (const RegexError& e) {
      throw Error("invalid pattern " + quote_str(raw) + " in " + std::string(origin) + ": " + e.what(),
                  "Docker fails the build on it (it becomes a Go regular expression); fix or remove it in " +
                      std::string(origin));
    }
    if (pat.exception && without_trailing_glob(pat.cleaned).find_first_of("*[]?^\\") != std::string::npos)
      impl.only_prefix_exceptions = false;
    impl.patterns.push_back(std::move(pat));
  }
  return d;
}

DockerIgnore DockerIgnore::parse(std::string_view text, std::string_view origin) {
  std::vector<std::string> patterns;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.size() >= 64 * 1024)
      throw Error("error reading " + std::string(origin) + ": line " + std::to_string(line_no + 1) +
                  " is too long", "Docker reads .dockerignore lines of less than 64 KiB");
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line_no == 0 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    ++line_no;
    if (line.starts_with('#')) continue;
    std::string_view t = trim_space(line);
    if (t.empty()) continue;
    bool invert = t[0] == '!';
    if (invert) t = trim_space(t.substr(1));
    std::string p(t);
    if (!p.empty()) {
      p = go_clean_path(p);
      if (p.size() > 1 && p[0] == '/') p.erase(0, 1);
    }
    if (invert) p = "!" + p;
    patterns.push_back(std::move(p));
  }
  return from_patterns(patterns, origin);
}

DockerIgnore DockerIgnore::load(const std::filesystem::path& context_dir) {
  std::filesystem::path file = context_dir / ".dockerignore";
  std::error_code ec;
  auto st = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(st)) {
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      throw Error("cannot read " + file.string() + ": " + ec.message());
    return DockerIgnore();
  }
  if (std::filesystem::is_directory(st))
    throw Error("cannot read " + file.string() + ": it is a directory", "Docker expects a file there");
  // read_file refuses a FIFO, socket or device (and never blocks opening one).
  return parse(read_file(file, 16u << 20), file.string());
}

bool DockerIgnore::empty() const { return impl_->patterns.empty(); }
bool DockerIgnore::has_exceptions() const { return impl_->exceptions; }

std::vector<std::string> DockerIgnore::patterns() const {
  std::vector<std::string> out;
  for (const Pattern& p : impl_->patterns) out.push_back((p.exception ? "!" : "") + p.cleaned);
  return out;
}

bool DockerIgnore::excluded(std::string_view rel_path) const {
  if (impl_->patterns.empty()) return false;
  return impl_->walk_to(rel_path, nullptr);
}

bool DockerIgnore::may_include_below(std::string_view rel_dir) const { return impl_->may_include_below(rel_dir); }

bool DockerIgnore::match(std::string_view rel_path, const MatchState* parent, MatchState* self) const {
  return impl_->match(rel_path, parent, self, nullptr);
}

std::string DockerIgnore::deciding_pattern(std::string_view rel_path) const {
  int decider = -1;
  impl_->walk_to(rel_path, &decider);
  if (decider < 0) return "";
  const Pattern& p = impl_->patterns[static_cast<std::size_t>(decider)];
  return (p.exception ? "!" : "") + p.cleaned;
}

}  // namespace trainpack::context
