// support/hash.h: the one message-digest wrapper.
#include "support/hash.h"

#include <gtest/gtest.h>

#include "support/error.h"

using trainpack::Hasher;

TEST(Hasher, KnownDigestsAndStartingOver) {
  EXPECT_EQ(trainpack::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Hasher h("md5");
  h.update("a");
  h.update(std::string_view("bc"));
  EXPECT_EQ(h.finish_hex(), "900150983cd24fb0d6963f7d28e17f72");
  h.update("abc");
  EXPECT_EQ(h.finish_hex(), "900150983cd24fb0d6963f7d28e17f72");  // finish started over
  h.update("junk");
  h.reset();
  EXPECT_EQ(h.finish_hex(), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_THROW(Hasher("no-such-hash"), trainpack::Error);
}
