#include "python/markers.h"

#include <array>
#include <utility>

#include "python/text.h"
#include "support/byte_regex.h"
#include "support/error.h"
#include "support/text.h"
#include "support/utf8.h"

namespace trainpack::python {

namespace {

// Python's \w for our purposes: ASCII word characters, and any non-ASCII byte (letters in UTF-8 text).
bool is_word(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}
bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

bool boundary(std::string_view s, size_t i) {
  bool before = i > 0 && is_word(static_cast<unsigned char>(s[i - 1]));
  bool after = i < s.size() && is_word(static_cast<unsigned char>(s[i]));
  return before != after;
}

// \b(word)\b at position.
std::optional<size_t> keyword(std::string_view s, size_t pos, std::string_view word) {
  if (s.substr(pos, word.size()) != word) return std::nullopt;
  if (!boundary(s, pos) || !boundary(s, pos + word.size())) return std::nullopt;
  return word.size();
}

const std::array<std::string_view, 17> kVariables = {
    "python_version", "python_full_version", "os_name", "os.name", "sys_platform", "sys.platform",
    "platform_release", "platform_system", "platform_version", "platform.version", "platform_machine",
    "platform.machine", "platform_python_implementation", "platform.python_implementation",
    "python_implementation", "implementation_name", "implementation_version"};

// The version part of packaging's Specifier regex, by operator (the lookbehinds pick the branch).
const RE2& version_regex(std::string_view op) {
  // [ \t\n\r\f\v\x1c-\x1f] is the ASCII part of Python's \s for str patterns (packaging's); the non-ASCII
  // spaces it also matches (U+0085, U+00A0, U+2000...) are not handled.
  static const std::string pre = R"((?:[-_\.]?(alpha|beta|preview|pre|a|b|c|rc)[-_\.]?[0-9]*)?)";
  static const std::string post = R"((?:(?:-[0-9]+)|(?:[-_\.]?(post|rev|r)[-_\.]?[0-9]*))?)";
  static const std::string dev = R"((?:[-_\.]?dev[-_\.]?[0-9]*)?)";
  static const RE2::Options options = byte_regex_options(RegexCase::ignored);
  static const std::string ws = R"([ \t\n\r\f\v\x1c-\x1f]*)";
  static const RE2 arbitrary(ws + R"([^ \t\n\r\f\v\x1c-\x1f;)]*)", options);
  static const RE2 equality(ws + R"(v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*(?:\.\*|)" + pre + post + dev +
                                R"((?:\+[a-z0-9]+(?:[-_\.][a-z0-9]+)*)?)?)",
                            options);
  static const RE2 compatible(ws + R"(v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)+)" + pre + post + dev, options);
  static const RE2 other(ws + R"(v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*)" + pre + post + dev, options);
  if (op == "===") return arbitrary;
  if (op == "==" || op == "!=") return equality;
  if (op == "~=") return compatible;
  return other;
}

std::optional<size_t> match_specifier(std::string_view s, size_t pos) {
  static const std::array<std::string_view, 8> ops = {"~=", "==", "!=", "<=", ">=", "<", ">", "==="};
  for (auto op : ops) {
    if (s.substr(pos, op.size()) != op) continue;
    if (auto n = match_prefix(version_regex(op), s.substr(pos + op.size()))) return op.size() + *n;
  }
  return std::nullopt;
}

// ast.literal_eval of a quoted string token (no prefixes, no triple quotes: the tokenizer guarantees that).
std::string decode_python_string(std::string_view token, detail::Tokenizer& t, size_t at) {
  std::string_view body = token.substr(1, token.size() - 2);
  std::string out;
  auto bad = [&]() { t.fail("Invalid quoted string", at, at + token.size()); };
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\n') bad();  // a single-quoted Python string cannot span lines
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= body.size()) bad();
    char n = body[i];
    auto hex = [&](size_t digits) {
      uint32_t v = 0;
      for (size_t k = 1; k <= digits; ++k) {
        if (i + k >= body.size()) bad();
        char h = body[i + k];
        v <<= 4;
        if (h >= '0' && h <= '9') v |= h - '0';
        else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
        else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
        else bad();
      }
      i += digits;
      if (v > 0x10FFFF) bad();
      append_utf8(out, v);
    };
    if (std::optional<char> simple = py_simple_escape(n)) {
      out += *simple;
      continue;
    }
    switch (n) {
      case '\n': break;
      case 'x': hex(2); break;
      case 'u': hex(4); break;
      case 'U': hex(8); break;
      case 'N': bad(); break;  // \N{NAME}: not supported here
      default:
        if (n >= '0' && n <= '7') {
          uint32_t v = 0;
          size_t k = 0;
          while (k < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') v = v * 8 + (body[i++] - '0'), ++k;
          --i;
          append_utf8(out, v);
        } else {
          out += '\\';
          out += n;
        }
    }
  }
  return out;
}

// PEP 503 normalisation (packaging.utils.canonicalize_name), kept private: python/names.* owns the public one.
std::string normalize_extra_name(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    char c = name[i];
    if (c == '-' || c == '_' || c == '.') {
      while (i < name.size() && (name[i] == '-' || name[i] == '_' || name[i] == '.')) ++i;
      out += '-';
      continue;
    }
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    ++i;
  }
  return out;
}

Marker::Operand parse_marker_var(detail::Tokenizer& t) {
  if (t.check("VARIABLE")) {
    std::string name = t.read();
    for (auto& c : name)
      if (c == '.') c = '_';
    if (name == "python_implementation") name = "platform_python_implementation";
    return {true, name};
  }
  if (t.check("QUOTED_STRING")) {
    size_t at = t.position();
    std::string tok = t.read();
    return {false, decode_python_string(tok, t, at)};
  }
  t.fail("Expected a marker variable or quoted string");
}

std::string parse_marker_op(detail::Tokenizer& t) {
  if (t.check("IN")) {
    t.read();
    return "in";
  }
  if (t.check("NOT")) {
    t.read();
    t.expect("WS", "whitespace after 'not'");
    t.expect("IN", "'in' after 'not'");
    return "not in";
  }
  if (t.check("OP")) return t.read();
  t.fail("Expected marker operator, one of <=, <, !=, ==, >=, >, ~=, ===, in, not in");
}

Marker::Item parse_marker_item(detail::Tokenizer& t) {
  t.consume("WS");
  Marker::Item item;
  item.lhs = parse_marker_var(t);
  t.consume("WS");
  item.op = parse_marker_op(t);
  t.consume("WS");
  item.rhs = parse_marker_var(t);
  t.consume("WS");
  return item;
}

// Parentheses a marker may nest. The parser, evaluation and formatting recurse once per level, so the bound keeps a
// line of "((((..." from overflowing the stack; CPython's recursion limit (1000 frames) stops packaging's parser
// at a few hundred levels, and no real marker needs more than a handful.
constexpr int kMaxMarkerNesting = 100;

Marker::List parse_nested_marker_list(detail::Tokenizer& t, int depth);

Marker::Element parse_marker_atom(detail::Tokenizer& t, int depth) {
  t.consume("WS");
  Marker::Element result;
  if (t.peek("LEFT_PARENTHESIS")) {
    size_t open = t.position();
    if (depth >= kMaxMarkerNesting)
      t.fail("Marker expression nested more than " + std::to_string(kMaxMarkerNesting) + " parentheses deep", open,
             open + 1);
    t.check("LEFT_PARENTHESIS");
    t.read();
    t.consume("WS");
    result = std::make_shared<Marker::List>(parse_nested_marker_list(t, depth + 1));
    t.consume("WS");
    if (!t.check("RIGHT_PARENTHESIS")) t.fail("Expected matching RIGHT_PARENTHESIS for LEFT_PARENTHESIS, after marker expression", open);
    t.read();
  } else {
    result = parse_marker_item(t);
  }
  t.consume("WS");
  return result;
}

// packaging's marker_expr, inside `depth` parentheses.
Marker::List parse_nested_marker_list(detail::Tokenizer& t, int depth) {
  Marker::List list;
  list.elements.push_back(parse_marker_atom(t, depth));
  while (t.check("BOOLOP")) {
    list.elements.emplace_back(t.read());
    list.elements.push_back(parse_marker_atom(t, depth));
  }
  return list;
}

std::string format_list(const Marker::List& list, bool first);

std::string format_item(const Marker::Item& item) {
  auto ser = [](const Marker::Operand& o) { return o.is_variable ? o.value : "\"" + o.value + "\""; };
  return ser(item.lhs) + " " + item.op + " " + ser(item.rhs);
}

std::string format_list(const Marker::List& list, bool first) {
  if (list.elements.size() == 1) {
    const auto& only = list.elements.front();
    if (auto* item = std::get_if<Marker::Item>(&only)) return format_item(*item);
    if (auto* sub = std::get_if<std::shared_ptr<Marker::List>>(&only)) return format_list(**sub, true);
  }
  std::string out;
  for (size_t i = 0; i < list.elements.size(); ++i) {
    if (i) out += ' ';
    const auto& el = list.elements[i];
    if (auto* item = std::get_if<Marker::Item>(&el)) out += format_item(*item);
    else if (auto* sub = std::get_if<std::shared_ptr<Marker::List>>(&el)) out += format_list(**sub, false);
    else out += std::get<std::string>(el);
  }
  return first ? out : "(" + out + ")";
}

// packaging's _operators for values that are not compared as versions (pypa/packaging#939, packaging >= 26, as the
// dependency-specifiers spec says): in / not in / == / !=; <= and >= mean ==; < and > are always false.
bool string_op(std::string_view op, std::string_view lhs, std::string_view rhs) {
  if (op == "in") return rhs.find(lhs) != std::string_view::npos;
  if (op == "not in") return rhs.find(lhs) == std::string_view::npos;
  if (op == "==" || op == "<=" || op == ">=") return lhs == rhs;
  if (op == "!=") return lhs != rhs;
  if (op == "<" || op == ">") return false;
  throw Error("undefined comparison in marker: '" + std::string(op) + "' on '" + std::string(lhs) + "' and '" +
                  std::string(rhs) + "' (not a PEP 440 version comparison)",
              "'~=' and '===' only work on python_version, python_full_version, implementation_version and "
              "platform_release with valid versions");
}

// packaging's MARKERS_REQUIRING_VERSION: the only variables compared as PEP 440 versions.
bool requires_version(std::string_view key) {
  return key == "python_version" || key == "python_full_version" || key == "implementation_version" ||
         key == "platform_release";
}

bool evaluate_list(const Marker::List& list, const MarkerEnvironment& env, const VersionCompare& compare) {
  std::vector<std::vector<bool>> groups(1);
  for (const auto& el : list.elements) {
    if (auto* sub = std::get_if<std::shared_ptr<Marker::List>>(&el)) {
      groups.back().push_back(evaluate_list(**sub, env, compare));
    } else if (auto* item = std::get_if<Marker::Item>(&el)) {
      std::string key, lhs, rhs;
      auto value_of = [&](const std::string& name) {
        const std::string* v = env.lookup(name);
        if (!v) throw Error("marker names no environment value: '" + name + "' (extras/dependency_groups only exist in lock files; two literals cannot be compared)");
        return *v;
      };
      if (item->lhs.is_variable) {
        key = item->lhs.value;
        lhs = value_of(key);
        rhs = item->rhs.value;
      } else {
        lhs = item->lhs.value;
        key = item->rhs.value;
        rhs = value_of(key);
      }
      if (key == "extra") {
        lhs = normalize_extra_name(lhs);
        rhs = normalize_extra_name(rhs);
      }
      if (key == "python_full_version" && !lhs.empty() && lhs.back() == '+') lhs += "local";  // untagged builds
      if (key == "python_full_version" && !rhs.empty() && rhs.back() == '+' && !item->lhs.is_variable) rhs += "local";
      std::optional<bool> r;
      if (requires_version(key) && compare) r = compare(item->op, lhs, rhs);
      groups.back().push_back(r ? *r : string_op(item->op, lhs, rhs));
    } else if (std::get<std::string>(el) == "or") {
      groups.emplace_back();
    }
  }
  for (const auto& g : groups) {
    bool all = true;
    for (bool b : g) all = all && b;
    if (all) return true;
  }
  return false;
}

}  // namespace

std::optional<bool> string_only_version_compare(std::string_view op, std::string_view lhs, std::string_view rhs) {
  if (op != "===") return std::nullopt;
  std::string r = ascii_lower(rhs);
  size_t b = r.find_first_not_of(" \t\n\r\f\v");
  return ascii_lower(lhs) == (b == std::string::npos ? std::string() : r.substr(b));
}

MarkerEnvironment MarkerEnvironment::cpython_linux(std::string_view version, std::string_view machine) {
  MarkerEnvironment env;
  std::string full(version);
  // X.Y from the first two components.
  size_t d1 = full.find('.');
  size_t d2 = d1 == std::string::npos ? std::string::npos : full.find('.', d1 + 1);
  if (d1 == std::string::npos || d1 == 0) throw Error("not a CPython version: '" + full + "'");
  size_t end2 = d2 == std::string::npos ? full.size() : d2;
  env.python_version = full.substr(0, end2);
  // platform.python_version() is X.Y.Z[{a,b,rc}N]; sys.implementation.version formats rc as "c".
  env.python_full_version = full;
  std::string impl = full;
  size_t rc = impl.find("rc");
  if (rc != std::string::npos) impl.replace(rc, 2, "c");
  env.implementation_version = impl;
  env.implementation_name = "cpython";
  env.platform_python_implementation = "CPython";
  env.os_name = "posix";
  env.sys_platform = "linux";
  env.platform_system = "Linux";
  if (machine == "amd64") machine = "x86_64";
  if (machine == "arm64") machine = "aarch64";
  env.platform_machine = std::string(machine);
  return env;
}

const std::string* MarkerEnvironment::lookup(std::string_view name) const {
  // PEP 508's environment markers; `extra` is not one of them but names the extra being evaluated.
  using Env = MarkerEnvironment;
  static constexpr std::pair<std::string_view, std::string Env::*> kMarkers[] = {
      {"python_version", &Env::python_version},
      {"python_full_version", &Env::python_full_version},
      {"implementation_name", &Env::implementation_name},
      {"implementation_version", &Env::implementation_version},
      {"os_name", &Env::os_name},
      {"sys_platform", &Env::sys_platform},
      {"platform_system", &Env::platform_system},
      {"platform_release", &Env::platform_release},
      {"platform_version", &Env::platform_version},
      {"platform_machine", &Env::platform_machine},
      {"platform_python_implementation", &Env::platform_python_implementation},
  };
  for (const auto& [marker, member] : kMarkers)
    if (name == marker) return &(this->*member);
  return name == "extra" ? &extra : nullptr;
}

namespace detail {

std::optional<size_t> Tokenizer::match(std::string_view name) const {
  std::string_view s = src_;
  size_t p = pos_;
  auto single = [&](char c) -> std::optional<size_t> {
    if (p < s.size() && s[p] == c) return 1;
    return std::nullopt;
  };
  if (name == "LEFT_PARENTHESIS") return single('(');
  if (name == "RIGHT_PARENTHESIS") return single(')');
  if (name == "LEFT_BRACKET") return single('[');
  if (name == "RIGHT_BRACKET") return single(']');
  if (name == "SEMICOLON") return single(';');
  if (name == "COMMA") return single(',');
  if (name == "AT") return single('@');
  if (name == "QUOTED_STRING") {
    if (p >= s.size() || (s[p] != '\'' && s[p] != '"')) return std::nullopt;
    size_t close = s.find(s[p], p + 1);
    if (close == std::string_view::npos) return std::nullopt;
    return close - p + 1;
  }
  if (name == "OP") {
    for (std::string_view op : {"===", "==", "~=", "!=", "<=", ">=", "<", ">"})
      if (s.substr(p, op.size()) == op) return op.size();
    return std::nullopt;
  }
  if (name == "BOOLOP") {
    if (auto n = keyword(s, p, "or")) return n;
    return keyword(s, p, "and");
  }
  if (name == "IN") return keyword(s, p, "in");
  if (name == "NOT") return keyword(s, p, "not");
  if (name == "VARIABLE") {
    // extras / dependency_groups exist for lock files (PEP 751); evaluating them here is an error.
    for (std::string_view v : {"extras", "extra", "dependency_groups"})
      if (auto n = keyword(s, p, v)) return n;
    for (auto v : kVariables)
      if (auto n = keyword(s, p, v)) return n;
    return std::nullopt;
  }
  if (name == "SPECIFIER") return match_specifier(s, p);
  if (name == "URL") {
    size_t e = p;
    while (e < s.size() && s[e] != ' ' && s[e] != '\t') ++e;
    if (e == p) return std::nullopt;
    return e - p;
  }
  if (name == "IDENTIFIER") {
    if (p >= s.size() || !ascii_alnum(s[p]) || !boundary(s, p)) return std::nullopt;
    size_t e = p + 1;
    while (e < s.size() && is_ident_char(s[e])) ++e;
    while (e > p && !boundary(s, e)) --e;  // regex backtracking to the last word boundary
    if (e == p) return std::nullopt;
    return e - p;
  }
  if (name == "VERSION_PREFIX_TRAIL") {
    if (s.substr(p, 2) == ".*") return 2;
    return std::nullopt;
  }
  if (name == "VERSION_LOCAL_LABEL_TRAIL") {  // \+[a-z0-9]+(?:[-_\.][a-z0-9]+)*
    static const RE2 local(R"(\+[a-z0-9]+(?:[-_\.][a-z0-9]+)*)", byte_regex_options());
    return match_prefix(local, s.substr(p));
  }
  if (name == "WS") {
    size_t e = p;
    while (e < s.size() && (s[e] == ' ' || s[e] == '\t')) ++e;
    if (e == p) return std::nullopt;
    return e - p;
  }
  if (name == "END") {  // Python's `$`: the end, or just before a final newline
    if (p == s.size() || (p + 1 == s.size() && s[p] == '\n')) return 0;
    return std::nullopt;
  }
  throw std::logic_error("unknown token " + std::string(name));
}

bool Tokenizer::check(std::string_view name) {
  auto n = match(name);
  if (n) pending_ = n;
  return n.has_value();
}

std::string Tokenizer::read() {
  size_t n = pending_.value();
  std::string text(src_.substr(pos_, n));
  pos_ += n;
  pending_.reset();
  return text;
}

std::string Tokenizer::expect(std::string_view name, std::string_view expected) {
  if (!check(name)) fail("Expected " + std::string(expected));
  return read();
}

void Tokenizer::fail(std::string message, std::optional<size_t> start, std::optional<size_t> end) const {
  throw MarkerSyntaxError{std::move(message), start.value_or(pos_), end.value_or(pos_)};
}

Marker::List parse_marker_list(Tokenizer& t) { return parse_nested_marker_list(t, 0); }

std::string format_syntax_error(std::string_view what, std::string_view source, const MarkerSyntaxError& e) {
  std::string out = "invalid " + std::string(what) + " '" + std::string(source) + "': " + e.message;
  if (e.span_end > e.span_start)
    out += " (positions " + std::to_string(e.span_start) + "-" + std::to_string(e.span_end) + ")";
  else
    out += " at position " + std::to_string(e.span_start);
  return out;
}

}  // namespace detail

Marker::Marker(std::string_view text) {
  detail::Tokenizer t(text);
  try {
    list_ = detail::parse_marker_list(t);
    // packaging >= 23.1 (_parse_full_marker) refuses trailing text; 23.0 silently ignored it.
    t.expect("END", "end of marker expression");
  } catch (const detail::MarkerSyntaxError& e) {
    throw Error(detail::format_syntax_error("marker", text, e),
                "see PEP 508: e.g. python_version >= \"3.8\" and sys_platform == \"linux\"");
  }
  normalize_extra();
}

// packaging (>= 26, _normalize_extras) normalises every `extra` literal compared with the variable; evaluation
// normalises the environment's extra too.
namespace {
void normalize_extras(Marker::List& list) {
  for (auto& el : list.elements) {
    if (auto* sub = std::get_if<std::shared_ptr<Marker::List>>(&el)) {
      normalize_extras(**sub);
    } else if (auto* item = std::get_if<Marker::Item>(&el)) {
      if (item->lhs.is_variable && item->lhs.value == "extra" && !item->rhs.is_variable) {
        item->rhs.value = normalize_extra_name(item->rhs.value);
      } else if (item->rhs.is_variable && item->rhs.value == "extra" && !item->lhs.is_variable) {
        item->lhs.value = normalize_extra_name(item->lhs.value);
      }
    }
  }
}
}  // namespace

void Marker::normalize_extra() { normalize_extras(list_); }

bool Marker::evaluate(const MarkerEnvironment& env, const VersionCompare& compare) const {
  return evaluate_list(list_, env, compare);
}

std::string Marker::str() const { return format_list(list_, true); }

}  // namespace trainpack::python
