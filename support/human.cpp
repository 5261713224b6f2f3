#include "support/human.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/text.h"

namespace trainpack {

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  // 999,950 B is 999.95 kB, which one decimal prints as "1000.0 kB": step up while the rounded value reaches 1000.
  while (value >= 999.95 && unit + 1 < std::size(kUnits)) {
    value /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string counted(std::uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string human_seconds(std::chrono::steady_clock::duration duration) {
  const double seconds = std::chrono::duration<double>(duration).count();
  char text[32];
  std::snprintf(text, sizeof text, seconds < 9.995 ? "%.2f s" : "%.1f s", seconds);
  return text;
}

namespace {

// The number at the start of `text` (digits, at most one '.'), removed from it.
std::optional<double> take_number(std::string_view& text) {
  std::size_t end = 0, dots = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    dots += text[end++] == '.';
  if (end == 0 || dots > 1 || text.substr(0, end) == ".") return std::nullopt;
  double value = std::strtod(std::string(text.substr(0, end)).c_str(), nullptr);
  text.remove_prefix(end);
  return value;
}

std::optional<double> unit_bytes(std::string_view unit) {
  struct Unit {
    std::string_view name;
    double bytes;
  };
  static constexpr Unit kUnits[] = {{"", 1},          {"b", 1},          {"k", 1e3},           {"kb", 1e3},
                                    {"m", 1e6},       {"mb", 1e6},       {"g", 1e9},           {"gb", 1e9},
                                    {"t", 1e12},      {"tb", 1e12},      {"kib", 1024.0},      {"mib", 1048576.0},
                                    {"gib", 1073741824.0}, {"tib", 1099511627776.0}};
  for (const Unit& u : kUnits)
    if (ascii_lower(unit) == u.name) return u.bytes;
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  text = ascii_trim(text);
  std::optional<double> number = take_number(text);
  std::optional<double> unit = unit_bytes(ascii_trim(text));
  if (!number || !unit) return std::nullopt;
  double bytes = std::floor(*number * *unit);
  if (bytes >= 18446744073709551616.0) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
  text = ascii_trim(text);
  if (text.empty()) return std::nullopt;
  double seconds = 0;
  while (!text.empty()) {
    std::optional<double> number = take_number(text);
    if (!number || text.empty()) return std::nullopt;
    switch (std::tolower(static_cast<unsigned char>(text.front()))) {
      case 's': seconds += *number; break;
      case 'm': seconds += *number * 60; break;
      case 'h': seconds += *number * 3600; break;
      case 'd': seconds += *number * 86400; break;
      case 'w': seconds += *number * 604800; break;
      default: return std::nullopt;
    }
    text.remove_prefix(1);
  }
  if (seconds >= 9.2e18) return std::nullopt;
  return std::chrono::seconds(static_cast<std::int64_t>(seconds));
}

}  // namespace trainpack
