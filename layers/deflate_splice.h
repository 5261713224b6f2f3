#pragma once
// Re-using a raw deflate stream (RFC 1951; a wheel's ZIP_DEFLATED member) inside a larger deflate stream without
// recompressing it, as zlib's examples/gzjoin.c does: the stream is inflated once (its bytes are needed for the
// layer's diff_id anyway), the BFINAL bit of its last block is cleared, and an empty stored block re-aligns its end
// to a byte boundary, so whatever follows starts a new block. Memory stays bounded: compressed bytes are passed on as
// soon as no block header whose finality is still unknown lies in them.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace trainpack::layers {

class DeflateSplicer {
 public:
  using Sink = std::function<void(const char* data, std::size_t size)>;

  // `plain` receives the inflated bytes, `spliceable` the compressed bytes, re-aligned and no longer final.
  DeflateSplicer(Sink plain, Sink spliceable);
  ~DeflateSplicer();
  DeflateSplicer(const DeflateSplicer&) = delete;
  DeflateSplicer& operator=(const DeflateSplicer&) = delete;

  // The bytes inflated so far (all of them once finish() returns): how many, and their CRC-32.
  std::uint64_t plain_size() const;
  std::uint32_t plain_crc32() const;

  // Feeds compressed bytes. Throws Error when they are not valid deflate data or go on after its end.
  void write(const char* data, std::size_t size);
  // After the last write: throws Error if the stream is incomplete, else passes on the re-aligned tail.
  void finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainpack::layers
