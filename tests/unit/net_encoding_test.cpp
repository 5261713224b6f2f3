// net/encoding.h: base64, base64url, percent-encoding and -decoding, RFC 3339 timestamps.
#include "net/encoding.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

using namespace trainpack::net;

TEST(AuthEncoding, Base64RoundTripAndLeniency) {
  EXPECT_EQ(base64_encode("testuser:testpass"), "dGVzdHVzZXI6dGVzdHBhc3M=");
  EXPECT_EQ(base64_decode("dGVzdHVzZXI6dGVzdHBhc3M="), "testuser:testpass");
  EXPECT_EQ(base64_decode("dGVzdHVzZXI6dGVzdHBhc3M"), "testuser:testpass");  // missing padding
  EXPECT_EQ(base64_decode(" YQ==\n"), "a");
  EXPECT_FALSE(base64_decode("not base64!"));
  EXPECT_EQ(base64url_encode(std::string("\xfb\xff", 2)), "-_8");
  EXPECT_EQ(percent_encode("repository:a/b:pull,push"), "repository%3Aa%2Fb%3Apull%2Cpush");
  EXPECT_EQ(form_encode({{"a", "1"}, {"b", "x y"}}), "a=1&b=x%20y");
}

TEST(AuthEncoding, Rfc3339) {
  auto t = parse_rfc3339("1970-01-02T00:00:00Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*t), 86400);
  auto off = parse_rfc3339("1970-01-02T02:00:00.5+02:00");
  ASSERT_TRUE(off);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(off->time_since_epoch()).count(), 86400500);
  EXPECT_FALSE(parse_rfc3339("yesterday"));
  EXPECT_FALSE(parse_rfc3339("2024-01-01T00:00:00"));
}

TEST(AuthEncoding, PercentDecodeKeepsWhatIsNotAnEscape) {
  EXPECT_EQ(percent_decode("a%2Bb%2fc%zz%4"), "a+b/c%zz%4");
  EXPECT_EQ(percent_decode("%41%"), "A%");
  EXPECT_EQ(percent_decode(percent_encode("a b/c~", "/")), "a b/c~");
}
