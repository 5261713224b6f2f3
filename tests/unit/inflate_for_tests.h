#pragma once
// zlib's own reader as the judge of compressed output in tests: inflates all of `compressed` (window_bits -15 for
// raw deflate, 31 for gzip, which also checks CRC-32 and ISIZE) and fails the test unless it ends cleanly.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace trainpack::testing {

inline std::string inflate_all(const std::string& compressed, int window_bits) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, window_bits), Z_OK);
  std::string out(1 << 16, '\0'), result;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  int rc;
  do {
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    result.append(out.data(), out.size() - z.avail_out);
  } while (rc == Z_OK);
  EXPECT_EQ(rc, Z_STREAM_END) << "the compressed stream does not end cleanly";
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the end of the compressed stream";
  inflateEnd(&z);
  return result;
}

}  // namespace trainpack::testing
