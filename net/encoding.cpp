#include "net/encoding.h"

#include <openssl/evp.h>

#include <cctype>
#include <ctime>

#include "support/text.h"

namespace trainpack::net {

namespace {

int digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}
}  // namespace

// Base64 is OpenSSL's (EVP_EncodeBlock, EVP_DecodeBlock, RFC 4648 §4); around it only the URL-safe alphabet and the
// leniency the callers' inputs need. EVP takes int lengths, so long inputs go in chunks of whole 3-byte groups.
std::string base64_encode(std::string_view bytes) {
  constexpr std::size_t kChunk = 3 << 20;
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t at = 0; at < bytes.size(); at += kChunk) {
    const std::string_view part = bytes.substr(at, kChunk);
    const std::size_t begin = out.size();
    out.resize(begin + (part.size() + 2) / 3 * 4 + 1);
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + begin),
                                  reinterpret_cast<const unsigned char*>(part.data()), static_cast<int>(part.size()));
    out.resize(begin + static_cast<std::size_t>(n));
  }
  return out;
}

std::string base64url_encode(std::string_view bytes) {
  std::string out = base64_encode(bytes);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  text = ascii_trim(text);
  std::size_t pads = 0;
  while (!text.empty() && text.back() == '=') {
    text.remove_suffix(1);
    if (++pads > 2) return std::nullopt;
  }
  if (text.size() % 4 == 1) return std::nullopt;
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
    else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/') return std::nullopt;
  }
  const std::size_t missing = (4 - standard.size() % 4) % 4;
  standard.append(missing, '=');
  std::string out(standard.size() / 4 * 3, '\0');
  for (std::size_t at = 0; at < standard.size(); at += 4u << 20) {
    const std::string_view part = std::string_view(standard).substr(at, 4u << 20);
    if (EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data() + at / 4 * 3),
                        reinterpret_cast<const unsigned char*>(part.data()), static_cast<int>(part.size())) < 0)
      return std::nullopt;
  }
  out.resize(out.size() - missing);  // EVP_DecodeBlock counts the '=' it was given as zero bytes
  return out;
}

std::string percent_encode(std::string_view text, std::string_view also_safe) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || also_safe.find(ch) != std::string_view::npos) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string percent_decode(std::string_view text) {
  auto hex_value = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    int hi = text[i] == '%' && i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
    int lo = hi >= 0 ? hex_value(text[i + 2]) : -1;
    if (lo >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    out += percent_encode(k);
    out += '=';
    out += percent_encode(v);
  }
  return out;
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
  int year = digits(s, 0, 4), mon = digits(s, 5, 2), day = digits(s, 8, 2);
  int hour = digits(s, 11, 2), min = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (year < 0 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || min < 0 || min > 59 ||
      sec < 0 || sec > 60 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':')
    return std::nullopt;
  size_t pos = 19;
  std::chrono::nanoseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    long long scale = 100000000;
    size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      frac += std::chrono::nanoseconds((s[pos] - '0') * scale);
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  if (pos >= s.size()) return std::nullopt;
  long offset_seconds = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int oh = digits(s, pos + 1, 2), om = digits(s, pos + 4, 2);
    if (oh < 0 || om < 0 || s[pos + 3] != ':') return std::nullopt;
    offset_seconds = (oh * 3600L + om * 60L) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  std::time_t t = ::timegm(&tm);
  auto tp = std::chrono::system_clock::from_time_t(t - offset_seconds);
  return tp + std::chrono::duration_cast<std::chrono::system_clock::duration>(frac);
}

}  // namespace trainpack::net
