#include "support/python_strings.h"

#include "support/utf8.h"

namespace trainpack {

namespace {

// "\\uXXXX" with lowercase hex digits, as json.dumps writes it.
void append_hex4(std::string& out, unsigned value) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kDigits[(value >> shift) & 0xF];
}

}  // namespace

std::u32string python_code_points(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) {
    const auto [code_point, length] = decode_utf8(utf8, i);
    if (length != 0) {
      out += code_point;
      i += length;
    } else {
      // surrogateescape: this byte alone becomes U+DC80..U+DCFF; decoding resumes at the next byte, which gives the
      // same result as Python's maximal-subpart error ranges because no byte inside such a range can start a
      // valid sequence.
      out += static_cast<char32_t>(0xDC00 + static_cast<unsigned char>(utf8[i]));
      ++i;
    }
  }
  return out;
}

std::string python_json_string(std::string_view utf8) {
  std::string out = "\"";
  for (const char32_t cp : python_code_points(utf8)) {
    switch (cp) {
      case U'"': out += "\\\""; break;
      case U'\\': out += "\\\\"; break;
      case U'\n': out += "\\n"; break;
      case U'\r': out += "\\r"; break;
      case U'\t': out += "\\t"; break;
      case U'\b': out += "\\b"; break;
      case U'\f': out += "\\f"; break;
      default:
        if (cp >= 0x20 && cp <= 0x7E) {
          out += static_cast<char>(cp);
        } else if (cp < 0x10000) {
          append_hex4(out, static_cast<unsigned>(cp));
        } else {
          const char32_t v = cp - 0x10000;
          append_hex4(out, static_cast<unsigned>(0xD800 | (v >> 10)));
          append_hex4(out, static_cast<unsigned>(0xDC00 | (v & 0x3FF)));
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace trainpack
