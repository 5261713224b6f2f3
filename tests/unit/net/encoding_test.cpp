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

// Every length around the 3-byte groups, and inputs longer than the chunks handed to OpenSSL, come back whole, in
// both alphabets; a stray character inside or a fourth '=' is refused.
TEST(AuthEncoding, Base64RoundTripsEveryLengthAndLongInputs) {
  std::string bytes;
  for (std::size_t n = 0; n < 300; ++n) {
    ASSERT_EQ(base64_decode(base64_encode(bytes)), bytes) << n;
    ASSERT_EQ(base64_decode(base64url_encode(bytes)), bytes) << n;
    EXPECT_EQ(base64_encode(bytes).size(), (n + 2) / 3 * 4);
    bytes += static_cast<char>((n * 131 + 7) & 0xff);
  }
  std::string big(7 * 1024 * 1024 + 5, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  const std::string text = base64_encode(big);
  EXPECT_EQ(text.size(), (big.size() + 2) / 3 * 4);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(base64_decode(text), big);
  EXPECT_FALSE(base64_decode("YW Jj"));
  EXPECT_FALSE(base64_decode("YQ==="));
  EXPECT_FALSE(base64_decode("Y"));
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
