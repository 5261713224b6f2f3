#pragma once
// UTF-8 (RFC 3629): encoding one code point, decoding one, and checking that bytes are well-formed UTF-8.
#include <string>
#include <string_view>
#include <utility>

namespace trainpack {

// Encodes one code point (no validation: surrogates and lone bytes are the callers' business).
inline void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// The length of the well-formed UTF-8 sequence at s[at] (1 to 4), or 0 when the bytes there are none: RFC 3629's
// UTF8-char, which excludes overlong forms, surrogates and code points above U+10FFFF, as Python's and JSON parsers'
// decoders do.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t at) {
  auto byte = [&s](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  unsigned c = byte(at);
  std::size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (at >= s.size() || n == 0 || at + n > s.size()) return 0;
  if (n == 1) return 1;
  // The second byte's range narrows after E0 (no overlong), ED (no surrogate), F0 (no overlong) and F4 (<= U+10FFFF).
  unsigned low = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  unsigned high = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((byte(at + k) & 0xC0) != 0x80) return 0;
  return n;
}

// The code point of the well-formed UTF-8 sequence at s[at] and the sequence's length; {0, 0} when the bytes there
// are none (utf8_sequence_length's rule).
inline std::pair<char32_t, std::size_t> decode_utf8(std::string_view s, std::size_t at) {
  const std::size_t n = utf8_sequence_length(s, at);
  if (n == 0) return {0, 0};
  const auto lead = static_cast<unsigned char>(s[at]);
  char32_t code_point = n == 1 ? lead : n == 2 ? (lead & 0x1F) : n == 3 ? (lead & 0x0F) : (lead & 0x07);
  for (std::size_t k = 1; k < n; ++k) code_point = (code_point << 6) | (static_cast<unsigned char>(s[at + k]) & 0x3F);
  return {code_point, n};
}

// Whether `s` is well-formed UTF-8 (utf8_sequence_length all the way).
inline bool is_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// `s` with each byte that starts no well-formed sequence replaced by U+FFFD, as Python's errors="replace" and Go's
// encoding/json do: text for a format that must be UTF-8 (JSON: RFC 8259 §8.1) from bytes that may not be (a file
// name on Linux is any bytes).
inline std::string valid_utf8(std::string_view s) {
  if (is_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      append_utf8(out, U'\uFFFD');
      ++i;
      continue;
    }
    out.append(s, i, n);
    i += n;
  }
  return out;
}

}  // namespace trainpack
