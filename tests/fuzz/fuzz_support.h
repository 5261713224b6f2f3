#pragma once
// Helpers shared by the libFuzzer targets. A target feeds its input to one parser: trainpack::Error is the
// parser's documented answer to bad input and is caught; anything else escaping (std::out_of_range, a JSON library
// exception) breaks that contract and reaches libFuzzer as a crash. Invariants that must hold for accepted input
// are checked with require(), which traps so the fuzzer records the input.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void require(bool invariant) {
  if (!invariant) __builtin_trap();
}

// The input cut at each line "%%" (kSeparator): targets whose parser takes several texts (a manifest and its
// config, patterns and paths) read them in this order. Missing parts are empty.
inline constexpr std::string_view kSeparator = "\n%%\n";
inline std::vector<std::string_view> split_parts(std::string_view text, std::size_t count) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < count) {
    std::size_t at = text.find(kSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + kSeparator.size());
  }
  parts.push_back(text);
  parts.resize(count);
  return parts;
}

// Lines of `text`, without their "\n".
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// A file in memory for parsers that take a path (libarchive, libzip): one memfd per process, rewritten for each
// input and named by its /proc/self/fd path, so no target leaves files behind.
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("trainpack-fuzz", 0)) { require(fd_ >= 0); }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::filesystem::path write(std::string_view bytes) {
    require(::ftruncate(fd_, 0) == 0);
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      require(n > 0);
      done += static_cast<std::size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

}  // namespace trainpack::fuzz
