#include "python/sysconfigdata.h"

#include <cctype>
#include <optional>

#include "python/text.h"
#include "support/error.h"
#include "support/utf8.h"

namespace trainpack::python {
namespace {

// Python's tokenizer for the literals a build_time_vars dict holds: strings (all prefixes and escapes), numbers,
// and brackets skipped as a whole.
class PyLiteralReader {
 public:
  explicit PyLiteralReader(std::string_view s) : s_(s) {}

  void skip_space() {
    while (i_ < s_.size()) {
      if (is_py_space(s_[i_]) || s_[i_] == '\\') {
        ++i_;
      } else if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool at_string() {
    skip_space();
    std::size_t j = i_;
    while (j < s_.size() && j < i_ + 2 && std::string_view("rRbBuU").find(s_[j]) != std::string_view::npos) ++j;
    return j < s_.size() && (s_[j] == '\'' || s_[j] == '"');
  }
  std::string string_literal() {
    skip_space();
    bool raw = false;
    for (; s_[i_] != '\'' && s_[i_] != '"'; ++i_)
      if (s_[i_] == 'r' || s_[i_] == 'R') raw = true;
    char q = s_[i_];
    bool triple = s_.substr(i_, 3) == std::string(3, q);
    i_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) throw Error("unterminated string literal in _sysconfigdata");
      char c = s_[i_];
      if (triple ? s_.substr(i_, 3) == std::string(3, q) : c == q) {
        i_ += triple ? 3 : 1;
        return out;
      }
      if (c == '\\' && !raw && i_ + 1 < s_.size()) {
        char e = s_[i_ + 1];
        i_ += 2;
        if (std::optional<char> simple = py_simple_escape(e)) {
          out += *simple;
          continue;
        }
        switch (e) {
          case '\n': break;
          case 'x': append_code(hex(2)); break;
          case 'u': append_code(hex(4)); break;
          case 'U': append_code(hex(8)); break;
          default:
            if (e >= '0' && e <= '7') {
              unsigned v = e - '0';
              for (int k = 0; k < 2 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++k) v = v * 8 + (s_[i_++] - '0');
              append_code(v);
            } else {
              out += '\\';
              out += e;
            }
        }
        if (pending_code_) {
          out += *pending_code_;
          pending_code_.reset();
        }
        continue;
      }
      out += c;
      ++i_;
    }
  }
  // A value: concatenated strings (optionally parenthesised, as pprint wraps them), an int, or anything else
  // (skipped, balanced). Returns nullopt for values that are not str/int.
  std::optional<std::string> value() {
    skip_space();
    if (i_ >= s_.size()) throw Error("truncated _sysconfigdata");
    if (s_[i_] == '(') {
      std::size_t save = i_;
      ++i_;
      if (at_string()) {
        std::string out;
        while (at_string()) out += string_literal();
        if (eat(')')) return out;
      }
      i_ = save;
      skip_balanced();
      return std::nullopt;
    }
    if (at_string()) {
      std::string out;
      while (at_string()) out += string_literal();
      return out;
    }
    if (s_[i_] == '-' || (s_[i_] >= '0' && s_[i_] <= '9')) {
      std::size_t j = i_ + 1;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '.' || s_[j] == '_')) ++j;
      std::string num(s_.substr(i_, j - i_));
      i_ = j;
      return num;
    }
    skip_balanced();
    return std::nullopt;
  }
  std::size_t pos() const { return i_; }
  void seek(std::size_t p) { i_ = p; }

 private:
  unsigned hex(int n) {
    unsigned v = 0;
    for (int k = 0; k < n && i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_])); ++k, ++i_)
      v = v * 16 + (std::isdigit(static_cast<unsigned char>(s_[i_])) ? s_[i_] - '0' : (s_[i_] | 0x20) - 'a' + 10);
    return v;
  }
  void append_code(unsigned cp) {
    std::string u;
    append_utf8(u, cp);
    pending_code_ = u;
  }
  // Skips one token or one bracketed group, strings inside it included.
  void skip_balanced() {
    int depth = 0;
    do {
      skip_space();
      if (i_ >= s_.size()) return;
      if (at_string()) {
        string_literal();
        continue;
      }
      char c = s_[i_];
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) return;  // the caller's closer
        --depth;
      } else if ((c == ',' || c == ':') && depth == 0) {
        return;
      } else if (depth == 0) {
        while (i_ < s_.size() && !is_py_space(s_[i_]) && std::string_view(",:)]}#").find(s_[i_]) == std::string_view::npos) ++i_;
        return;
      }
      ++i_;
    } while (depth > 0);
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::optional<std::string> pending_code_;
};

}  // namespace

std::map<std::string, std::string> parse_sysconfigdata(std::string_view text) {
  std::size_t at = text.find("build_time_vars");
  if (at == std::string_view::npos) throw Error("_sysconfigdata has no build_time_vars");
  PyLiteralReader r(text);
  r.seek(at + std::string_view("build_time_vars").size());
  if (!r.eat('=') || !r.eat('{')) throw Error("_sysconfigdata: build_time_vars is not a dict literal");
  std::map<std::string, std::string> out;
  while (!r.eat('}')) {
    if (!r.at_string()) throw Error("_sysconfigdata: expected a string key in build_time_vars");
    std::string key = r.string_literal();
    if (!r.eat(':')) throw Error("_sysconfigdata: expected ':' after '" + key + "'");
    if (auto v = r.value()) out[key] = *v;
    if (!r.eat(',')) {
      if (r.eat('}')) break;
      throw Error("_sysconfigdata: expected ',' or '}' after '" + key + "'");
    }
  }
  return out;
}

}  // namespace trainpack::python
