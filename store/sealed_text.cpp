#include "store/sealed_text.h"

#include "support/hash.h"

namespace trainpack::store {

namespace {
constexpr std::string_view kSumPrefix = "sha256:";
constexpr std::size_t kSumLine = kSumPrefix.size() + 64 + 1;  // "sha256:" HEX "\n"
}  // namespace

std::string seal(std::string_view text) {
  std::string out(text);
  out += "\n";
  out += kSumPrefix;
  out += sha256_hex(text);
  out += "\n";
  return out;
}

std::optional<std::string_view> unseal(std::string_view file) {
  if (file.size() < kSumLine + 1 || file[file.size() - kSumLine - 1] != '\n') return std::nullopt;
  std::string_view sum = file.substr(file.size() - kSumLine);
  std::string_view text = file.substr(0, file.size() - kSumLine - 1);
  if (!sum.starts_with(kSumPrefix) || sum.back() != '\n') return std::nullopt;
  if (sum.substr(kSumPrefix.size(), 64) != sha256_hex(text)) return std::nullopt;
  return text;
}

}  // namespace trainpack::store
