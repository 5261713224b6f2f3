#pragma once
// Test helper: a whole gzip stream inflated in memory (layer blobs are small in unit tests).
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace trainpack::testing {

inline std::string gunzip(const std::string& gz) {
  z_stream z{};
  inflateInit2(&z, 31);
  std::string out;
  char buf[65536];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  int rc;
  do {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&z);
  EXPECT_EQ(rc, Z_STREAM_END);
  return out;
}

}  // namespace trainpack::testing
