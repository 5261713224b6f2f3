#include "support/text.h"

#include "support/utf8.h"

namespace trainpack {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_escaped_byte(std::string& out, const char* prefix, unsigned char c) {
  out += prefix;
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

std::string escaped(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      append_escaped_byte(out, "\\x", c);  // not UTF-8
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      append_escaped_byte(out, "\\u00", static_cast<unsigned char>(text[i + 1]));  // a C1 control
    } else if (c == '\n' && keep_line_breaks) {
      out += '\n';
    } else if (c == '\t' || c == '\n' || c == '\r') {
      out += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      append_escaped_byte(out, "\\x", c);
    } else {
      out.append(text.substr(i, n));
    }
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace

std::string visible_text(std::string_view text) { return escaped(text, false); }

std::string visible_lines(std::string_view text) { return escaped(text, true); }

std::string one_line(std::string_view text, std::size_t max) {
  std::string flat(text.substr(0, max));
  for (char& c : flat)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return visible_text(flat) + (text.size() > max ? "..." : "");
}

}  // namespace trainpack
