#include "layers/gzip_encoder.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "support/error.h"
#include "tests/unit/inflate_for_tests.h"
#include "tests/unit/sample_bytes.h"

namespace trainpack::layers {
namespace {

using test_support::mixed_bytes;

constexpr std::size_t kBlock = 64 * 1024;

std::string encode(const std::string& input, GzipOptions options, std::size_t write_size = 4096) {
  std::string out;
  GzipEncoder encoder(options, [&](const char* data, std::size_t size) { out.append(data, size); });
  for (std::size_t at = 0; at < input.size(); at += write_size)
    encoder.write(input.data() + at, std::min(write_size, input.size() - at));
  encoder.finish();
  return out;
}

TEST(GzipEncoder, EveryEngineAndLevelRoundTripsAcrossBlockBoundaries) {
  for (auto [engine, level] : {std::pair{DeflateEngine::kIsal, 0}, {DeflateEngine::kIsal, 1},
                               {DeflateEngine::kIsal, 3}, {DeflateEngine::kZlib, 1}, {DeflateEngine::kZlib, 6}}) {
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, kBlock - 1, kBlock, kBlock + 1, 5 * kBlock + 17}) {
      std::string input = mixed_bytes(size);
      GzipOptions options{engine, level, 2, kBlock};
      EXPECT_EQ(testing::inflate_all(encode(input, options), 31), input)
          << engine_name(engine) << "-" << level << ", " << size;
    }
  }
}

TEST(GzipEncoder, TheBytesDoNotDependOnThreadsOrWriteSizes) {
  std::string input = mixed_bytes(9 * kBlock + 123);
  std::string one_thread = encode(input, {DeflateEngine::kIsal, 1, 1, kBlock});
  EXPECT_EQ(encode(input, {DeflateEngine::kIsal, 1, 2, kBlock}, 1000), one_thread);
  EXPECT_EQ(encode(input, {DeflateEngine::kIsal, 1, 7, kBlock}, 3 * kBlock), one_thread);
  std::string zlib_one = encode(input, {DeflateEngine::kZlib, 6, 1, kBlock});
  EXPECT_EQ(encode(input, {DeflateEngine::kZlib, 6, 4, kBlock}, 777), zlib_one);
  EXPECT_NE(zlib_one, one_thread);
}

TEST(GzipEncoder, TheHeaderHasNoTimeNoNameAndSaysUnix) {
  std::string gz = encode("x", {DeflateEngine::kIsal, 1, 1, kBlock});
  EXPECT_EQ(gz.substr(0, 10), std::string("\x1f\x8b\x08\0\0\0\0\0\0\x03", 10));
}

TEST(GzipEncoder, ALevelTheEngineLacksIsRefused) {
  auto sink = [](const char*, std::size_t) {};
  EXPECT_THROW(GzipEncoder({DeflateEngine::kIsal, 4, 1, kBlock}, sink), Error);
  EXPECT_THROW(GzipEncoder({DeflateEngine::kZlib, 0, 1, kBlock}, sink), Error);
  EXPECT_THROW(GzipEncoder({DeflateEngine::kZlib, 6, 1, 1024}, sink), Error);
}

}  // namespace
}  // namespace trainpack::layers
