#pragma once
// A gzip stream (RFC 1952) compressed on several threads, whose bytes depend only on the input and the options, never
// on the number of threads: the input is cut into fixed-size blocks, each compressed on its own as raw deflate
// (RFC 1951) with the previous block's last 32 KiB as its dictionary and ended by a sync flush (an empty stored
// block, so the next block starts on a byte boundary), as pigz does; the CRC-32s of the blocks are combined in order.
// Memory: at most 2 × threads blocks in flight, each with its compressed output.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace trainpack::layers {

constexpr std::size_t kDeflateWindow = 32 * 1024;  // deflate's history (RFC 1951 §2): the most a dictionary holds

enum class DeflateEngine {
  kZlib,  // zlib, levels 1-9 (6 is gzip's default)
  kIsal,  // Intel ISA-L's igzip, levels 0-3: several times faster than zlib at a similar ratio on mixed data
};

struct GzipOptions {
  DeflateEngine engine = DeflateEngine::kIsal;
  // ISA-L's level 2: on Python libraries and shared objects within 13-15 % of zlib -6's size at a tenth of its
  // time; level 1 is barely faster and a few per cent larger, level 3 two to four times slower.
  int level = 2;
  unsigned threads = 0;  // 0: one per core
  std::size_t block_size = std::size_t{1} << 20;  // part of the output's identity, like engine and level
};

// Where compressed bytes go, in order, always from the thread that calls write()/finish().
using ByteSink = std::function<void(const char* data, std::size_t size)>;

class GzipEncoder {
 public:
  GzipEncoder(GzipOptions options, ByteSink sink);
  ~GzipEncoder();
  GzipEncoder(const GzipEncoder&) = delete;
  GzipEncoder& operator=(const GzipEncoder&) = delete;

  void write(const void* data, std::size_t size);

  // Already-deflated bytes in place of plain ones, not compressed again (DeflateSplicer's output: raw deflate with
  // no final block, ending on a byte boundary). begin_deflated() ends the block being filled; end_deflated() names
  // what the bytes stand for: their plain size, CRC-32 and last bytes (the next block's dictionary: the last
  // kDeflateWindow of them are used).
  void begin_deflated();
  void write_deflated(const char* data, std::size_t size);
  void end_deflated(std::uint64_t plain_size, std::uint32_t plain_crc, std::string_view plain_tail);

  // Compresses what is left, writes the gzip trailer and waits for the workers. Call once.
  void finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A short text naming engine and level ("isal-1", "zlib-6"): part of layer cache keys.
const char* engine_name(DeflateEngine engine);

}  // namespace trainpack::layers
