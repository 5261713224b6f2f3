#include "python/requirement.h"

#include <algorithm>

#include "python/specifier.h"
#include "python/text.h"
#include "python/urllib.h"
#include "support/error.h"

namespace trainpack::python {

namespace {

using detail::Tokenizer;

std::vector<std::string> parse_extras(Tokenizer& t) {
  std::vector<std::string> extras;
  if (!t.peek("LEFT_BRACKET")) return extras;
  size_t open = t.position();
  t.check("LEFT_BRACKET");
  t.read();
  t.consume("WS");
  if (t.check("IDENTIFIER")) {
    extras.push_back(t.read());
    while (true) {
      t.consume("WS");
      if (t.peek("IDENTIFIER")) t.fail("Expected comma between extra names");
      if (!t.check("COMMA")) break;
      t.read();
      t.consume("WS");
      extras.push_back(t.expect("IDENTIFIER", "extra name after comma"));
    }
  }
  t.consume("WS");
  if (!t.check("RIGHT_BRACKET")) t.fail("Expected matching RIGHT_BRACKET for LEFT_BRACKET, after extras", open);
  t.read();
  return extras;
}

std::string parse_version_many(Tokenizer& t) {
  std::string out;
  while (t.check("SPECIFIER")) {
    size_t span_start = t.position();
    std::string spec = t.read();
    out += spec;
    if (t.peek("VERSION_PREFIX_TRAIL")) {
      size_t b = spec.find_first_not_of(" \t\n\r\f\v");
      std::string_view op = std::string_view(spec).substr(b == std::string::npos ? spec.size() : b, 2);
      if (op == "==" || op == "!=")
        t.fail(".* suffix cannot be used after pre-release, post-release, developmental release, or local version "
               "labels",
               span_start, t.position() + 1);
      t.fail(".* suffix can only be used with `==` or `!=` operators", span_start, t.position() + 1);
    }
    if (t.peek("VERSION_LOCAL_LABEL_TRAIL"))
      t.fail("Local version label can only be used with `==` or `!=` operators", span_start, t.position());
    t.consume("WS");
    if (!t.check("COMMA")) break;
    out += t.read();
    t.consume("WS");
  }
  return out;
}

std::string parse_specifier(Tokenizer& t) {
  std::optional<size_t> open;
  if (t.check("LEFT_PARENTHESIS")) {
    open = t.position();
    t.read();
  }
  t.consume("WS");
  std::string spec = parse_version_many(t);
  t.consume("WS");
  if (open) {
    if (!t.check("RIGHT_PARENTHESIS")) t.fail("Expected matching RIGHT_PARENTHESIS for LEFT_PARENTHESIS, after version specifier", *open);
    t.read();
  }
  return spec;
}

Marker::List parse_requirement_marker(Tokenizer& t, size_t span_start, const std::string& expected) {
  if (!t.check("SEMICOLON")) t.fail("Expected " + expected + " or end", span_start);
  t.read();
  Marker::List m = detail::parse_marker_list(t);
  t.consume("WS");
  return m;
}

// urlunparse(urlparse(url)) for a file: URL (uses_netloc scheme).
std::string unsplit_file_url(const net::UrlParts& u) {
  std::string url = u.path;
  if (!u.authority.empty() || url.substr(0, 2) != "//") {
    if (!url.empty() && url[0] != '/') url = "/" + url;
    url = "//" + u.authority + url;
  }
  url = u.scheme + ":" + url;
  if (!u.query.empty()) url += "?" + u.query;
  if (!u.fragment.empty()) url += "#" + u.fragment;
  return url;
}

// What the PEP 508 grammar yields; the URL and the specifier set are checked afterwards, as packaging does.
struct ParsedRequirement {
  Requirement r;
  std::string raw_specifier;
  std::optional<Marker::List> marker;
};

// The grammar: name, extras, then either "@ url" or a version specifier, then an optional marker.
ParsedRequirement parse_grammar(std::string_view text) {
  Tokenizer t(text);
  ParsedRequirement p;
  Requirement& r = p.r;
  try {
    t.consume("WS");
    r.name = t.expect("IDENTIFIER", "package name at the start of dependency specifier");
    t.consume("WS");
    for (auto& e : parse_extras(t)) r.extras.insert(e);
    t.consume("WS");
    if (t.check("AT")) {
      t.read();
      t.consume("WS");
      size_t url_start = t.position();
      r.url = t.expect("URL", "URL after @");
      if (!t.peek("END")) {
        t.expect("WS", "whitespace after URL");
        if (!t.peek("END")) p.marker = parse_requirement_marker(t, url_start, "semicolon (after URL and whitespace)");
      }
    } else {
      size_t spec_start = t.position();
      p.raw_specifier = parse_specifier(t);
      t.consume("WS");
      if (!t.peek("END"))
        p.marker = parse_requirement_marker(
            t, spec_start,
            p.raw_specifier.empty() ? "semicolon (after name with no version specifier)"
                                    : "comma (within version specifier), semicolon (after version specifier)");
    }
    t.expect("END", "end of dependency specifier");
  } catch (const detail::MarkerSyntaxError& e) {
    throw Error(detail::format_syntax_error("requirement", text, e),
                "see PEP 508: e.g. name[extra]>=1.0; python_version >= \"3.8\", or name @ https://host/file.whl");
  }
  return p;
}

void check_url(std::string_view text, const std::string& url) {
  if (url.empty()) return;
  net::UrlParts u = urlsplit(url);
  if (u.scheme == "file") {
    if (unsplit_file_url(u) != url)
      throw Error("invalid requirement '" + std::string(text) + "': Invalid URL given",
                  "file: URLs must be written as file:///absolute/path");
  } else if (u.scheme.empty() || u.authority.empty()) {
    throw Error("invalid requirement '" + std::string(text) + "': Invalid URL: " + url,
                "a URL needs a scheme and a host, e.g. https://host/file.whl");
  }
}

// SpecifierSet: split on ',', strip (str.strip: Python's whitespace, \x1c-\x1f too), drop empties; each Specifier keeps
// (operator, version) stripped.
void set_specifier(Requirement& r, std::string_view text, const std::string& raw_specifier) {
  std::set<std::pair<std::string, std::string>> unique;
  size_t b = 0;
  while (b <= raw_specifier.size()) {
    size_t e = raw_specifier.find(',', b);
    if (e == std::string::npos) e = raw_specifier.size();
    std::string part(py_strip(std::string_view(raw_specifier).substr(b, e - b)));
    b = e + 1;
    if (part.empty()) continue;
    size_t op_len = 0;
    for (std::string_view op : {"===", "~=", "==", "!=", "<=", ">=", "<", ">"}) {
      if (part.compare(0, op.size(), op) == 0) {
        op_len = op.size();
        break;
      }
    }
    // packaging's Requirement builds a SpecifierSet, which refuses a part that is no specifier: "===" takes any
    // text up to whitespace, ';' or ')', commas included ("x===a,b" has the part "b").
    try {
      Specifier checked(part);
    } catch (const Error& e) {
      throw Error("invalid requirement '" + std::string(text) + "': " + e.what(),
                  "see PEP 440: each comma-separated item is an operator and a version, e.g. >=1.0,<2");
    }
    unique.insert({part.substr(0, op_len), std::string(py_strip(std::string_view(part).substr(op_len)))});
  }
  std::vector<std::pair<std::string, std::string>> items(unique.begin(), unique.end());
  std::sort(items.begin(), items.end(),
            [](const auto& x, const auto& y) { return x.first + x.second < y.first + y.second; });
  r.specifier_items = items;
  for (size_t i = 0; i < items.size(); ++i) r.specifier += (i ? "," : "") + items[i].first + items[i].second;
}

}  // namespace

Requirement Requirement::parse(std::string_view text) {
  ParsedRequirement p = parse_grammar(text);
  check_url(text, p.r.url);
  set_specifier(p.r, text, p.raw_specifier);
  if (p.marker) p.r.marker.emplace(std::move(*p.marker));
  return std::move(p.r);
}

std::string Requirement::str() const {
  std::string out = name;
  if (!extras.empty()) {
    out += "[";
    bool first = true;
    for (const auto& e : extras) {
      out += (first ? "" : ",") + e;
      first = false;
    }
    out += "]";
  }
  out += specifier;
  if (!url.empty()) {
    out += "@ " + url;
    if (marker) out += " ";
  }
  if (marker) out += "; " + marker->str();
  return out;
}

}  // namespace trainpack::python
