#include "image/digest.h"

#include <gtest/gtest.h>

#include "support/error.h"

using trainpack::image::Digest;
using trainpack::image::Sha256;
using trainpack::image::sha256_of;

TEST(Digest, KnownVectors) {
  EXPECT_EQ(sha256_of("").str(), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_of("{}").str(), "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
}

TEST(Digest, IncrementalEqualsOneShot) {
  Sha256 h;
  h.update("hello ");
  h.update("world");
  EXPECT_EQ(h.finish(), sha256_of("hello world"));
}

TEST(Digest, ParseAcceptsOnlyCanonicalForms) {
  auto d = Digest::parse("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->algorithm(), "sha256");
  EXPECT_FALSE(Digest::parse("sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
  EXPECT_FALSE(Digest::parse("sha256:abc"));
  EXPECT_FALSE(Digest::parse("md5:d41d8cd98f00b204e9800998ecf8427e"));
  EXPECT_FALSE(Digest::parse("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  EXPECT_THROW(Digest::parse_or_throw("sha256:zz", "manifest"), trainpack::Error);
}
