#include "context/dockerignore.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

#include "support/error.h"
#include "support/fs.h"
#include "support/utf8.h"

namespace trainpack::context {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// UTF-8 and Go string helpers

constexpr char32_t kRuneError = 0xFFFD;

// Go's utf8.DecodeRuneInString: an invalid or truncated sequence decodes as U+FFFD of width 1.
std::pair<char32_t, std::size_t> decode_rune(std::string_view s, std::size_t pos) {
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[pos + i]); };
  std::size_t left = s.size() - pos;
  unsigned char c0 = b(0);
  if (c0 < 0x80) return {c0, 1};
  auto cont = [&](std::size_t i) { return i < left && (b(i) & 0xC0) == 0x80; };
  if (c0 >= 0xC2 && c0 <= 0xDF && cont(1)) return {static_cast<char32_t>(((c0 & 0x1F) << 6) | (b(1) & 0x3F)), 2};
  if (c0 >= 0xE0 && c0 <= 0xEF && cont(1) && cont(2)) {
    char32_t r = ((c0 & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    if (r >= 0x800 && !(r >= 0xD800 && r <= 0xDFFF)) return {r, 3};
    return {kRuneError, 1};
  }
  if (c0 >= 0xF0 && c0 <= 0xF4 && cont(1) && cont(2) && cont(3)) {
    char32_t r = ((c0 & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    if (r >= 0x10000 && r <= 0x10FFFF) return {r, 4};
  }
  return {kRuneError, 1};
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
// The subset of Go's regexp (RE2 syntax, Perl flags: "." excludes "\n", negated classes include it, "^"/"$" only at
// the text's ends) that moby's pattern compiler can emit, compiled to a Thompson NFA and run without backtracking.

struct CharClass {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  bool negated = false;
  bool contains(char32_t r) const {
    bool in = false;
    for (auto& [lo, hi] : ranges)
      if (lo <= r && r <= hi) {
        in = true;
        break;
      }
    return in != negated;
  }
};

enum class Assert : char { kBeginText, kEndText, kWordBoundary, kNoWordBoundary };

struct Node {
  enum class Kind { kLiteral, kClass, kAnyNotNL, kAssert, kConcat, kAlternate, kStar, kPlus, kQuest };
  explicit Node(Kind k) : kind(k) {}
  Kind kind;
  char32_t rune = 0;
  int cls = -1;
  Assert assert = Assert::kBeginText;
  std::vector<Node> kids;
};

struct Inst {
  enum class Op { kRune, kClass, kAnyNotNL, kSplit, kJmp, kAssert, kMatch };
  explicit Inst(Op o) : op(o) {}
  Op op;
  int x = -1, y = -1;
  char32_t rune = 0;
  int cls = -1;
  Assert assert = Assert::kBeginText;
};

class RegexError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool is_ascii_alnum(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_word(char32_t c) { return is_ascii_alnum(c) || c == '_'; }
int unhex(char32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

Ranges negate_ranges(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  char32_t next = 0;
  for (auto [lo, hi] : r) {
    if (hi < next) continue;
    if (lo > next) out.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= 0x10FFFF) out.push_back({next, 0x10FFFF});
  return out;
}

// Perl classes (\d \s \w and negations) and POSIX classes ([:alpha:] ...), ASCII-only as in Go.
std::optional<Ranges> perl_group(char32_t c) {
  Ranges r;
  switch (c) {
    case 'd': case 'D': r = {{'0', '9'}}; break;
    case 's': case 'S': r = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}}; break;
    case 'w': case 'W': r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; break;
    default: return std::nullopt;
  }
  if (c == 'D' || c == 'S' || c == 'W') r = negate_ranges(r);
  return r;
}

std::optional<Ranges> posix_group(std::u32string_view name) {
  bool neg = name.size() > 1 && name[0] == '^';
  if (neg) name.remove_prefix(1);
  std::string n;
  for (char32_t c : name) {
    if (c > 0x7F) return std::nullopt;
    n += static_cast<char>(c);
  }
  Ranges r;
  if (n == "alnum") r = {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}};
  else if (n == "alpha") r = {{'A', 'Z'}, {'a', 'z'}};
  else if (n == "ascii") r = {{0, 0x7F}};
  else if (n == "blank") r = {{'\t', '\t'}, {' ', ' '}};
  else if (n == "cntrl") r = {{0, 0x1F}, {0x7F, 0x7F}};
  else if (n == "digit") r = {{'0', '9'}};
  else if (n == "graph") r = {{'!', '~'}};
  else if (n == "lower") r = {{'a', 'z'}};
  else if (n == "print") r = {{' ', '~'}};
  else if (n == "punct") r = {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}};
  else if (n == "space") r = {{'\t', '\r'}, {' ', ' '}};
  else if (n == "upper") r = {{'A', 'Z'}};
  else if (n == "word") r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
  else if (n == "xdigit") r = {{'0', '9'}, {'A', 'F'}, {'a', 'f'}};
  else return std::nullopt;
  if (neg) r = negate_ranges(r);
  return r;
}

class RegexParser {
 public:
  RegexParser(std::u32string_view src, std::vector<CharClass>& classes) : s_(src), classes_(classes) {}

  Node parse() {
    Node n = parse_alternate();
    if (pos_ < s_.size()) {
      if (s_[pos_] == ')') throw RegexError("unexpected )");
      throw RegexError("unsupported regexp syntax");
    }
    return n;
  }

 private:
  bool at_end() const { return pos_ >= s_.size(); }
  char32_t peek(std::size_t k = 0) const { return pos_ + k < s_.size() ? s_[pos_ + k] : 0; }

  Node parse_alternate() {
    Node alt(Node::Kind::kAlternate);
    alt.kids.push_back(parse_concat());
    while (!at_end() && s_[pos_] == '|') {
      ++pos_;
      alt.kids.push_back(parse_concat());
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  // Go's parseRepeat: "{n}", "{n,}" or "{n,m}" at pos_; nullopt when it is not one (then "{" is a literal).
  std::optional<std::tuple<int, int, std::size_t>> parse_repeat() const {
    std::size_t i = pos_ + 1;
    auto number = [&](int& out) {
      std::size_t b = i;
      while (i < s_.size() && s_[i] >= '0' && s_[i] <= '9') ++i;
      if (i == b) return false;
      if (i - b >= 2 && s_[b] == '0') return false;  // no leading zeros
      out = 0;
      for (std::size_t k = b; k < i; ++k) {
        if (out >= 100000000) {
          out = -1;  // too big
          break;
        }
        out = out * 10 + static_cast<int>(s_[k] - '0');
      }
      return true;
    };
    int min = 0, max = 0;
    if (!number(min)) return std::nullopt;
    if (i >= s_.size()) return std::nullopt;
    if (s_[i] == ',') {
      ++i;
      if (i >= s_.size()) return std::nullopt;
      if (s_[i] == '}') {
        max = -1;
      } else if (!number(max)) {
        return std::nullopt;
      } else if (max < 0) {
        max = 1001;  // too big: rejected by the caller
      }
    } else {
      max = min;
    }
    if (i >= s_.size() || s_[i] != '}') return std::nullopt;
    if (min < 0) min = 1001;
    return std::make_tuple(min, max, i + 1);
  }

  Node parse_concat() {
    Node cat(Node::Kind::kConcat);
    bool last_was_repeat = false;
    while (!at_end()) {
      char32_t c = s_[pos_];
      if (c == ')' || c == '|') break;
      if (c == '*' || c == '+' || c == '?') {
        if (cat.kids.empty()) throw RegexError("missing argument to repetition operator");
        if (last_was_repeat) throw RegexError("invalid nested repetition operator");
        ++pos_;
        if (peek() == '?' && !at_end()) ++pos_;  // non-greedy: same language
        Node inner = std::move(cat.kids.back());
        Node rep(c == '*' ? Node::Kind::kStar : c == '+' ? Node::Kind::kPlus : Node::Kind::kQuest);
        rep.kids.push_back(std::move(inner));
        cat.kids.back() = std::move(rep);
        last_was_repeat = true;
        continue;
      }
      if (c == '{') {
        // moby means to escape "{", "}" and "|" but its bitmap misses them, so Go reads them as regexp syntax.
        if (auto rep = parse_repeat()) {
          auto [min, max, after] = *rep;
          if (min > 1000 || max > 1000 || (max >= 0 && min > max)) throw RegexError("invalid repeat count");
          if (cat.kids.empty()) throw RegexError("missing argument to repetition operator");
          if (last_was_repeat) throw RegexError("invalid nested repetition operator");
          pos_ = after;
          if (peek() == '?' && !at_end()) ++pos_;
          cat.kids.back() = expand_repeat(std::move(cat.kids.back()), min, max);
          last_was_repeat = true;
          continue;
        }
      }
      last_was_repeat = false;
      if (c == '\\' && peek(1) == 'Q') {
        pos_ += 2;
        while (!at_end()) {
          if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && s_[pos_ + 1] == 'E') {
            pos_ += 2;
            break;
          }
          Node lit(Node::Kind::kLiteral);
          lit.rune = s_[pos_++];
          cat.kids.push_back(std::move(lit));
        }
        // Go treats \Q...\E as a run of literals; a repetition after it applies to the last one.
        continue;
      }
      cat.kids.push_back(parse_atom());
    }
    return cat;
  }

  Node parse_atom() {
    char32_t c = s_[pos_];
    switch (c) {
      case '(': {
        ++pos_;
        if (peek() == '?') throw RegexError("unsupported group flags");
        Node inner = parse_alternate();
        if (peek() != ')' || at_end()) throw RegexError("missing closing )");
        ++pos_;
        return inner;
      }
      case '[':
        return parse_class();
      case '.': {
        ++pos_;
        return Node(Node::Kind::kAnyNotNL);
      }
      case '^': {
        ++pos_;
        Node n(Node::Kind::kAssert);
        n.assert = Assert::kBeginText;
        return n;
      }
      case '$': {
        ++pos_;
        Node n(Node::Kind::kAssert);
        n.assert = Assert::kEndText;
        return n;
      }
      case '\\': {
        char32_t e = peek(1);
        if (pos_ + 1 >= s_.size()) throw RegexError("trailing backslash at end of expression");
        Node n(Node::Kind::kAssert);
        switch (e) {
          case 'A': pos_ += 2; n.assert = Assert::kBeginText; return n;
          case 'z': pos_ += 2; n.assert = Assert::kEndText; return n;
          case 'b': pos_ += 2; n.assert = Assert::kWordBoundary; return n;
          case 'B': pos_ += 2; n.assert = Assert::kNoWordBoundary; return n;
          case 'p': case 'P': throw RegexError("unsupported Unicode class escape");
          default: break;
        }
        if (auto g = perl_group(e)) {
          pos_ += 2;
          return class_node(CharClass{*g, false});
        }
        ++pos_;
        Node lit(Node::Kind::kLiteral);
        lit.rune = parse_escape();
        return lit;
      }
      default: {
        ++pos_;
        Node lit(Node::Kind::kLiteral);
        lit.rune = c;
        return lit;
      }
    }
  }

  static Node expand_repeat(Node sub, int min, int max) {
    Node out(Node::Kind::kConcat);
    for (int i = 0; i < min; ++i) out.kids.push_back(sub);
    if (max < 0) {
      Node star(Node::Kind::kStar);
      star.kids.push_back(std::move(sub));
      out.kids.push_back(std::move(star));
    } else {
      // x{1,3} = x(x(x)?)?
      std::optional<Node> tail;
      for (int i = min; i < max; ++i) {
        Node cat(Node::Kind::kConcat);
        cat.kids.push_back(sub);
        if (tail) cat.kids.push_back(std::move(*tail));
        Node q(Node::Kind::kQuest);
        q.kids.push_back(std::move(cat));
        tail = std::move(q);
      }
      if (tail) out.kids.push_back(std::move(*tail));
    }
    return out;
  }

  Node class_node(CharClass cc) {
    classes_.push_back(std::move(cc));
    Node n(Node::Kind::kClass);
    n.cls = static_cast<int>(classes_.size() - 1);
    return n;
  }

  // After a backslash (pos_ at the escaped character): Go's parseEscape.
  char32_t parse_escape() {
    if (at_end()) throw RegexError("trailing backslash at end of expression");
    char32_t c = s_[pos_++];
    if (c < 0x80 && !is_ascii_alnum(c)) return c;
    switch (c) {
      case '1': case '2': case '3': case '4': case '5': case '6': case '7':
        if (at_end() || peek() < '0' || peek() > '7') throw RegexError("invalid escape sequence");
        [[fallthrough]];
      case '0': {
        char32_t r = c - '0';
        for (int i = 1; i < 3; ++i) {
          if (at_end() || peek() < '0' || peek() > '7') break;
          r = r * 8 + (s_[pos_++] - '0');
        }
        return r;
      }
      case 'x': {
        if (at_end()) break;
        char32_t d = s_[pos_++];
        if (d == '{') {
          int nhex = 0;
          char32_t r = 0;
          for (;;) {
            if (at_end()) throw RegexError("invalid escape sequence");
            char32_t h = s_[pos_++];
            if (h == '}') break;
            int v = unhex(h);
            if (v < 0) throw RegexError("invalid escape sequence");
            r = r * 16 + static_cast<char32_t>(v);
            if (r > 0x10FFFF) throw RegexError("invalid escape sequence");
            ++nhex;
          }
          if (nhex == 0) throw RegexError("invalid escape sequence");
          return r;
        }
        if (at_end()) throw RegexError("invalid escape sequence");
        int x = unhex(d), y = unhex(s_[pos_++]);
        if (x < 0 || y < 0) throw RegexError("invalid escape sequence");
        return static_cast<char32_t>(x * 16 + y);
      }
      case 'a': return 7;
      case 'f': return '\f';
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'v': return '\v';
      default: break;
    }
    throw RegexError("invalid escape sequence");
  }

  // Go's parseClass (pos_ at "[").
  Node parse_class() {
    ++pos_;
    CharClass cc;
    if (peek() == '^' && !at_end()) {
      cc.negated = true;
      ++pos_;
    }
    bool first = true;
    while (at_end() || s_[pos_] != ']' || first) {
      if (at_end()) throw RegexError("missing closing ]");
      first = false;
      // POSIX class [:name:]; the search for ":]" runs on to the end of the expression, as in Go.
      if (s_.size() - pos_ > 2 && s_[pos_] == '[' && s_[pos_ + 1] == ':') {
        auto end = s_.find(U":]", pos_ + 2);
        if (end != std::u32string_view::npos) {
          auto g = posix_group(s_.substr(pos_ + 2, end - (pos_ + 2)));
          if (!g) throw RegexError("invalid character class range");
          cc.ranges.insert(cc.ranges.end(), g->begin(), g->end());
          pos_ = end + 2;
          continue;
        }
      }
      if (s_.size() - pos_ > 2 && s_[pos_] == '\\' && (s_[pos_ + 1] == 'p' || s_[pos_ + 1] == 'P'))
        throw RegexError("unsupported Unicode class escape");
      if (s_.size() - pos_ >= 2 && s_[pos_] == '\\') {
        if (auto g = perl_group(s_[pos_ + 1])) {
          cc.ranges.insert(cc.ranges.end(), g->begin(), g->end());
          pos_ += 2;
          continue;
        }
      }
      char32_t lo = class_char();
      char32_t hi = lo;
      if (s_.size() - pos_ >= 2 && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
        ++pos_;
        hi = class_char();
        if (hi < lo) throw RegexError("invalid character class range");
      }
      cc.ranges.push_back({lo, hi});
    }
    ++pos_;  // "]"
    return class_node(std::move(cc));
  }

  char32_t class_char() {
    if (at_end()) throw RegexError("missing closing ]");
    if (s_[pos_] == '\\') {
      ++pos_;
      return parse_escape();
    }
    return s_[pos_++];
  }

  std::u32string_view s_;
  std::size_t pos_ = 0;
  std::vector<CharClass>& classes_;
};

class Regex {
 public:
  explicit Regex(std::string_view utf8) {
    std::u32string src = to_runes(utf8);
    Node root = RegexParser(src, classes_).parse();
    prog_.push_back(Inst(Inst::Op::kMatch));
    start_ = compile(root, 0);
  }

  // Unanchored search, like Go's Regexp.MatchString (the compiled patterns carry their own anchors).
  bool matches(std::string_view text) const {
    std::u32string in = to_runes(text);
    std::vector<int> cur, next;
    std::vector<std::size_t> mark(prog_.size(), static_cast<std::size_t>(-1));
    for (std::size_t i = 0; i <= in.size(); ++i) {
      if (add(cur, mark, start_, i, in)) return true;
      if (i == in.size()) break;
      next.clear();
      for (int pc : cur) {
        const Inst& ins = prog_[static_cast<std::size_t>(pc)];
        bool ok = false;
        switch (ins.op) {
          case Inst::Op::kRune: ok = in[i] == ins.rune; break;
          case Inst::Op::kClass: ok = classes_[static_cast<std::size_t>(ins.cls)].contains(in[i]); break;
          case Inst::Op::kAnyNotNL: ok = in[i] != '\n'; break;
          default: break;
        }
        if (ok) next.push_back(ins.x);
      }
      cur.clear();
      // Threads moving to position i+1: add their epsilon closures there.
      for (int pc : next)
        if (add(cur, mark, pc, i + 1, in)) return true;
    }
    return false;
  }

 private:
  // Adds pc's epsilon closure at input position `pos` to `list`; true when it reaches Match. An explicit stack, not
  // recursion: a pattern of many "**/" is a chain of splits as long as the line, deeper than any thread's stack.
  bool add(std::vector<int>& list, std::vector<std::size_t>& mark, int pc, std::size_t pos,
           const std::u32string& in) const {
    std::vector<int> pending{pc};
    while (!pending.empty()) {
      int at = pending.back();
      pending.pop_back();
      if (mark[static_cast<std::size_t>(at)] == pos) continue;
      mark[static_cast<std::size_t>(at)] = pos;
      const Inst& ins = prog_[static_cast<std::size_t>(at)];
      switch (ins.op) {
        case Inst::Op::kMatch: return true;
        case Inst::Op::kJmp: pending.push_back(ins.x); break;
        case Inst::Op::kSplit:
          pending.push_back(ins.y);
          pending.push_back(ins.x);
          break;
        case Inst::Op::kAssert:
          if (assertion_holds(ins.assert, pos, in)) pending.push_back(ins.x);
          break;
        default: list.push_back(at);
      }
    }
    return false;
  }

  static bool assertion_holds(Assert kind, std::size_t pos, const std::u32string& in) {
    bool before = pos > 0 && is_word(in[pos - 1]);
    bool after = pos < in.size() && is_word(in[pos]);
    switch (kind) {
      case Assert::kBeginText: return pos == 0;
      case Assert::kEndText: return pos == in.size();
      case Assert::kWordBoundary: return before != after;
      case Assert::kNoWordBoundary: return before == after;
    }
    return false;
  }

  int emit(Inst ins) {
    prog_.push_back(ins);
    return static_cast<int>(prog_.size() - 1);
  }

  // An instruction continuing at `x` (and, for a split, also at `y`).
  int emit(Inst::Op op, int x, int y = -1) {
    Inst ins(op);
    ins.x = x;
    ins.y = y;
    return emit(ins);
  }

  // One step matching the single rune, class, any-rune or assertion node `n`, then continuing at `next`.
  int emit_step(Inst::Op op, const Node& n, int next) {
    Inst ins(op);
    ins.rune = n.rune;
    ins.cls = n.cls;
    ins.assert = n.assert;
    ins.x = next;
    return emit(ins);
  }

  // Compiles `n` so that it continues at `next`; returns its entry point.
  int compile(const Node& n, int next) {
    switch (n.kind) {
      case Node::Kind::kLiteral: return emit_step(Inst::Op::kRune, n, next);
      case Node::Kind::kClass: return emit_step(Inst::Op::kClass, n, next);
      case Node::Kind::kAnyNotNL: return emit_step(Inst::Op::kAnyNotNL, n, next);
      case Node::Kind::kAssert: return emit_step(Inst::Op::kAssert, n, next);
      case Node::Kind::kConcat: {
        int at = next;
        for (auto it = n.kids.rbegin(); it != n.kids.rend(); ++it) at = compile(*it, at);
        // Empty: a jump keeps entry points distinct from the continuation.
        return at == next ? emit(Inst::Op::kJmp, next) : at;
      }
      case Node::Kind::kAlternate: {
        int entry = compile(n.kids.back(), next);
        for (std::size_t k = n.kids.size() - 1; k-- > 0;)
          entry = emit(Inst::Op::kSplit, compile(n.kids[k], next), entry);
        return entry;
      }
      case Node::Kind::kStar:
      case Node::Kind::kPlus: {
        // A loop through a split; x* may skip the body, x+ enters it first.
        int split = emit(Inst(Inst::Op::kSplit));
        int body = compile(n.kids[0], split);
        prog_[static_cast<std::size_t>(split)].x = body;
        prog_[static_cast<std::size_t>(split)].y = next;
        return n.kind == Node::Kind::kStar ? split : body;
      }
      case Node::Kind::kQuest: {
        int body = compile(n.kids[0], next);
        return emit(Inst::Op::kSplit, body, next);
      }
    }
    return next;
  }

  std::vector<CharClass> classes_;
  std::vector<Inst> prog_;
  int start_ = 0;
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
  std::shared_ptr<const Regex> regex;

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
    p.regex = std::make_shared<const Regex>(re);
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
