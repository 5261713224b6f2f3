// ZstdEncoder: one zstd frame that libzstd reads back whole, and the same bytes for any number of threads (the
// layer's digest must not depend on the machine that wrote it).
#include "layers/zstd_encoder.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <string>

#include "support/error.h"
#include "tests/unit/sample_bytes.h"

using trainpack::layers::ZstdEncoder;
using trainpack::layers::ZstdOptions;
using trainpack::test_support::mixed_bytes;

namespace {

std::string compress(const std::string& input, ZstdOptions options, std::size_t piece = 100000) {
  std::string out;
  ZstdEncoder encoder(options, [&out](const char* data, std::size_t size) { out.append(data, size); });
  for (std::size_t at = 0; at < input.size(); at += piece) encoder.write(input.data() + at, std::min(piece, input.size() - at));
  encoder.finish();
  return out;
}

std::string decompress(const std::string& frame) {
  std::string out;
  ZSTD_DCtx* d = ZSTD_createDCtx();
  std::string buffer(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  std::size_t rc = 1;
  while (in.pos < in.size) {
    ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
    rc = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(rc)) break;
    out.append(buffer.data(), o.pos);
  }
  ZSTD_freeDCtx(d);
  EXPECT_EQ(rc, 0u) << "the frame did not end where the bytes did";
  return out;
}

}  // namespace

TEST(ZstdEncoder, AFrameThatReadsBackWhole) {
  std::string input = mixed_bytes(3 << 20, 7, 10000, 10);
  std::string frame = compress(input, {});
  EXPECT_LT(frame.size(), input.size() / 2);
  EXPECT_EQ(decompress(frame), input);
  EXPECT_EQ(decompress(compress("", {})), "");
}

TEST(ZstdEncoder, TheSameBytesForAnyNumberOfThreadsAndWrites) {
  std::string input = mixed_bytes(40 << 20, 7, 10000, 10);  // several of libzstd's jobs at level 3
  std::string one = compress(input, {.level = 3, .threads = 1});
  for (unsigned threads : {2u, 5u}) EXPECT_EQ(compress(input, {.level = 3, .threads = threads}), one) << threads;
  EXPECT_EQ(compress(input, {.level = 3, .threads = 2}, 7777), one) << "depends on how the input was cut";
  EXPECT_NE(compress(input, {.level = 9, .threads = 1}), one) << "the level changed nothing";
}
