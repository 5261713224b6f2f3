#include "store/sealed_text.h"

#include <system_error>

#include "support/error.h"
#include "support/fs.h"
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

std::optional<std::string> read_sealed(const CacheArea& area, const std::string& name, std::string_view what) {
  std::error_code ec;
  if (!area.use(name) || !std::filesystem::is_regular_file(area.path_of(name), ec)) return std::nullopt;
  try {
    const std::string file = read_file(area.path_of(name));
    if (std::optional<std::string_view> text = unseal(file)) return std::string(*text);
  } catch (const Error&) {  // unreadable: the same miss
  }
  area.discard(name, "it is not " + std::string(what) + " this trainpack kept");
  return std::nullopt;
}

void keep_sealed(const CacheArea& area, const std::string& name, std::string_view text) {
  std::error_code ec;
  std::filesystem::create_directories(area.dir(), ec);
  write_file_atomic(area.path_of(name), seal(text));
}

}  // namespace trainpack::store
