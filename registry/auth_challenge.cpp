#include "registry/auth_challenge.h"
#include "support/text.h"

#include <algorithm>
#include <cctype>

namespace trainpack::registry {

namespace {

// RFC 7230 tchar.
bool is_tchar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool is_token68_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
         c == '/';
}

struct Cursor {
  std::string_view s;
  size_t pos = 0;

  bool done() const { return pos >= s.size(); }
  char peek() const { return done() ? '\0' : s[pos]; }
  void skip_space() {
    while (!done() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  }
  std::string_view token() {
    size_t start = pos;
    while (!done() && is_tchar(s[pos])) ++pos;
    return s.substr(start, pos - start);
  }
  // quoted-string with backslash escapes; nullopt when unterminated.
  std::optional<std::string> quoted() {
    if (peek() != '"') return std::nullopt;
    size_t save = pos++;
    std::string out;
    while (!done()) {
      char c = s[pos++];
      if (c == '"') return out;
      if (c == '\\') {
        if (done()) break;
        out += s[pos++];
      } else {
        out += c;
      }
    }
    pos = save;
    return std::nullopt;
  }
};

// After the scheme (and its spaces): tries "name=value" at the cursor. On success appends and returns true.
bool parse_param(Cursor& c, AuthChallenge& ch) {
  size_t save = c.pos;
  std::string_view name = c.token();
  if (name.empty()) {
    c.pos = save;
    return false;
  }
  c.skip_space();
  if (c.peek() != '=') {
    c.pos = save;
    return false;
  }
  ++c.pos;
  c.skip_space();
  std::string value;
  if (c.peek() == '"') {
    auto q = c.quoted();
    if (!q) {
      c.pos = save;
      return false;
    }
    value = std::move(*q);
  } else {
    std::string_view v = c.token();
    if (v.empty()) {
      c.pos = save;
      return false;
    }
    value = std::string(v);
  }
  ch.params.emplace_back(ascii_lower(name), std::move(value));
  return true;
}

// Skips to just past the next top-level comma (respecting quoted strings); false at the end.
bool skip_to_next_comma(Cursor& c) {
  while (!c.done()) {
    if (c.peek() == '"') {
      if (!c.quoted()) {
        c.pos = c.s.size();
        return false;
      }
      continue;
    }
    if (c.peek() == ',') {
      ++c.pos;
      return true;
    }
    ++c.pos;
  }
  return false;
}

void parse_line(std::string_view line, std::vector<AuthChallenge>& out) {
  Cursor c{line};
  while (true) {
    // Skip empty list elements: ", , Bearer ..."
    c.skip_space();
    while (c.peek() == ',') {
      ++c.pos;
      c.skip_space();
    }
    if (c.done()) return;
    std::string_view scheme = c.token();
    if (scheme.empty()) {
      if (!skip_to_next_comma(c)) return;
      continue;
    }
    AuthChallenge ch;
    ch.scheme = ascii_lower(scheme);
    // A scheme must be followed by space(s), a comma or the end.
    if (!c.done() && c.peek() != ' ' && c.peek() != '\t' && c.peek() != ',') {
      if (!skip_to_next_comma(c)) return;
      continue;
    }
    c.skip_space();
    if (!c.done() && c.peek() != ',' && !parse_param(c, ch)) {
      size_t start = c.pos;
      while (!c.done() && is_token68_char(c.peek())) ++c.pos;
      while (!c.done() && c.peek() == '=') ++c.pos;
      ch.token68 = std::string(line.substr(start, c.pos - start));
    }
    if (ch.token68.empty()) {
      // More params, separated by commas. A comma followed by "token SP" (not "token =") starts a new challenge.
      while (true) {
        c.skip_space();
        if (c.peek() != ',') break;
        size_t save = c.pos;
        ++c.pos;
        c.skip_space();
        while (c.peek() == ',') {
          ++c.pos;
          c.skip_space();
        }
        if (c.done()) break;
        if (!parse_param(c, ch)) {
          c.pos = save;  // the next challenge starts after this comma
          break;
        }
      }
    }
    c.skip_space();
    bool more = !c.done();
    if (more && c.peek() != ',') {
      // Garbage: drop the rest of this challenge.
      out.push_back(std::move(ch));
      if (!skip_to_next_comma(c)) return;
      continue;
    }
    out.push_back(std::move(ch));
    if (!more) return;
    ++c.pos;  // the comma before the next challenge
  }
}

}  // namespace

std::string AuthChallenge::param(std::string_view name) const {
  for (const auto& [k, v] : params)
    if (ascii_iequals(k, name)) return v;
  return {};
}

bool AuthChallenge::has_param(std::string_view name) const {
  for (const auto& [k, v] : params)
    if (ascii_iequals(k, name)) return true;
  return false;
}

std::vector<AuthChallenge> parse_www_authenticate(const std::vector<std::string>& header_values) {
  std::vector<AuthChallenge> out;
  for (const auto& v : header_values) parse_line(v, out);
  return out;
}

std::vector<AuthChallenge> parse_www_authenticate(std::string_view header_value) {
  std::vector<AuthChallenge> out;
  parse_line(header_value, out);
  return out;
}

const AuthChallenge* pick_challenge(const std::vector<AuthChallenge>& challenges) {
  for (const char* want : {"bearer", "basic"})
    for (const auto& c : challenges)
      if (c.scheme == want) return &c;
  return nullptr;
}

std::string ScopeItem::str() const {
  std::string out = type + ":" + name + ":";
  for (size_t i = 0; i < actions.size(); ++i) {
    if (i) out += ',';
    out += actions[i];
  }
  return out;
}

std::optional<ScopeItem> parse_scope_item(std::string_view scope) {
  size_t first = scope.find(':');
  size_t last = scope.rfind(':');
  if (first == std::string_view::npos || first == last) return std::nullopt;
  ScopeItem item;
  item.type = std::string(scope.substr(0, first));
  item.name = std::string(scope.substr(first + 1, last - first - 1));
  std::string_view actions = scope.substr(last + 1);
  if (item.type.empty() || item.name.empty()) return std::nullopt;
  while (!actions.empty()) {
    size_t comma = actions.find(',');
    std::string_view a = actions.substr(0, comma);
    if (!a.empty()) item.actions.emplace_back(a);
    if (comma == std::string_view::npos) break;
    actions.remove_prefix(comma + 1);
  }
  return item;
}

std::vector<std::string> split_scopes(std::string_view list) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < list.size()) {
    while (i < list.size() && std::isspace(static_cast<unsigned char>(list[i]))) ++i;
    size_t start = i;
    while (i < list.size() && !std::isspace(static_cast<unsigned char>(list[i]))) ++i;
    if (i > start) out.emplace_back(list.substr(start, i - start));
  }
  return out;
}

std::vector<std::string> union_scopes(const std::vector<std::string>& first, const std::vector<std::string>& rest) {
  std::vector<std::string> out;
  for (const auto* list : {&first, &rest})
    for (const auto& s : *list)
      if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  return out;
}

}  // namespace trainpack::registry
