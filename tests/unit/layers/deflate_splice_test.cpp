#include "layers/deflate_splice.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "layers/gzip_encoder.h"
#include "support/error.h"
#include "tests/unit/inflate_for_tests.h"
#include "tests/unit/sample_bytes.h"

namespace trainpack::layers {
namespace {

using test_support::mixed_bytes;

// Raw deflate as a zip writer would make it; full_flush_at puts a byte-aligned flush point mid-stream.
std::string raw_deflate(const std::string& plain, int level, int strategy, std::size_t full_flush_at = 0) {
  z_stream z{};
  deflateInit2(&z, level, Z_DEFLATED, -15, 8, strategy);
  std::string out(deflateBound(&z, plain.size()) + 64, '\0');
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
  if (full_flush_at > 0 && full_flush_at < plain.size()) {
    z.avail_in = static_cast<uInt>(full_flush_at);
    deflate(&z, Z_FULL_FLUSH);
  }
  z.avail_in = static_cast<uInt>(plain.size() - z.total_in);
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Spliced {
  std::string plain, deflated;
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
};

Spliced splice(const std::string& deflated, std::size_t piece) {
  Spliced out;
  DeflateSplicer splicer([&](const char* d, std::size_t n) { out.plain.append(d, n); },
                         [&](const char* d, std::size_t n) { out.deflated.append(d, n); });
  for (std::size_t at = 0; at < deflated.size(); at += piece)
    splicer.write(deflated.data() + at, std::min(piece, deflated.size() - at));
  splicer.finish();
  out.size = splicer.plain_size();
  out.crc = splicer.plain_crc32();
  return out;
}

TEST(DeflateSplicer, EveryKindOfStreamBecomesANonFinalByteAlignedPrefix) {
  struct Case { std::size_t size; int level; int strategy; std::size_t flush_at; };
  for (Case c : {Case{0, 6, Z_DEFAULT_STRATEGY, 0}, Case{1, 6, Z_DEFAULT_STRATEGY, 0},
                 Case{300000, 6, Z_DEFAULT_STRATEGY, 0}, Case{300000, 1, Z_DEFAULT_STRATEGY, 100000},
                 Case{200000, 0, Z_DEFAULT_STRATEGY, 0}, Case{100000, 9, Z_FIXED, 0},
                 Case{100000, 6, Z_HUFFMAN_ONLY, 5}}) {
    std::string plain = mixed_bytes(c.size, static_cast<unsigned>(c.size + c.level), 300);
    std::string deflated = raw_deflate(plain, c.level, c.strategy, c.flush_at);
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{65536}}) {
      if (piece == 1 && c.size > 100000) continue;  // byte by byte is slow; small streams cover it
      Spliced s;
      try {
        s = splice(deflated, piece);
      } catch (const Error& e) {
        ADD_FAILURE() << c.size << "/" << c.level << "/" << piece << ": " << e.what();
        continue;
      }
      EXPECT_TRUE(s.plain == plain) << c.size << "/" << c.level << "/" << piece;
      EXPECT_EQ(s.size, plain.size());
      EXPECT_EQ(s.crc, crc32(0, reinterpret_cast<const Bytef*>(plain.data()), static_cast<uInt>(plain.size())));
      EXPECT_EQ(s.deflated.substr(s.deflated.size() - 4), std::string("\0\0\xff\xff", 4));
      // Not final any more: a final empty fixed block after it is needed, and then it inflates to the same bytes.
      std::string with_final_block = s.deflated + std::string("\x03\x00", 2);
      EXPECT_TRUE(testing::inflate_all(with_final_block, -15) == plain) << c.size << "/" << c.level;
    }
  }
}

TEST(DeflateSplicer, BadStreamsAreErrors) {
  std::string deflated = raw_deflate(mixed_bytes(50000, 3, 300), 6, Z_DEFAULT_STRATEGY);
  auto ignore = [](const char*, std::size_t) {};
  DeflateSplicer truncated(ignore, ignore);
  truncated.write(deflated.data(), deflated.size() / 2);
  EXPECT_THROW(truncated.finish(), Error);
  DeflateSplicer trailing(ignore, ignore);
  EXPECT_THROW(trailing.write((deflated + "xyz").data(), deflated.size() + 3), Error);
  DeflateSplicer garbage(ignore, ignore);
  EXPECT_THROW(garbage.write("\xff\xff\xff\xff", 4), Error);
}

TEST(DeflateSplicer, ASplicedMemberInsideAGzipLayerReadsBackAndIsTheSameOnAnyThreadCount) {
  std::string before = mixed_bytes(200000, 1, 300), member = mixed_bytes(150000, 2, 300),
              after = mixed_bytes(70000, 3, 300);
  Spliced s = splice(raw_deflate(member, 6, Z_DEFAULT_STRATEGY), 4096);
  std::string outputs[2];
  for (unsigned threads : {1u, 2u}) {
    std::string& gz = outputs[threads - 1];
    GzipEncoder encoder({DeflateEngine::kIsal, 1, threads, 64 * 1024},
                        [&](const char* d, std::size_t n) { gz.append(d, n); });
    encoder.write(before.data(), before.size());
    encoder.begin_deflated();
    encoder.write_deflated(s.deflated.data(), s.deflated.size());
    encoder.end_deflated(s.size, s.crc, std::string_view(s.plain).substr(s.plain.size() - 32768));
    encoder.write(after.data(), after.size());
    encoder.finish();
    EXPECT_TRUE(testing::inflate_all(gz, 31) == before + member + after);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

}  // namespace
}  // namespace trainpack::layers
