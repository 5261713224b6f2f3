// Content-Range values (RFC 9110 §14.4) as the range reader checks them; the reader itself runs against real
// servers in tests/integration/python_index_client_test.cpp.
#include "net/http_range_reader.h"

#include <gtest/gtest.h>

using trainpack::net::parse_content_range;

TEST(ContentRange, ParsesABytesRangeWithItsTotal) {
  auto r = parse_content_range("bytes 10-19/100");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 10u);
  EXPECT_EQ(r->last, 19u);
  EXPECT_EQ(r->total, 100u);
}

TEST(ContentRange, RefusesUnknownTotalsReversedOrOutsideRangesAndOtherUnits) {
  EXPECT_FALSE(parse_content_range("bytes 10-19/*"));
  EXPECT_FALSE(parse_content_range("bytes 20-10/100"));
  EXPECT_FALSE(parse_content_range("bytes 10-100/100"));
  EXPECT_FALSE(parse_content_range("bytes */100"));
  EXPECT_FALSE(parse_content_range("items 1-2/3"));
  EXPECT_FALSE(parse_content_range("bytes 1-2/99999999999999999999"));
}
