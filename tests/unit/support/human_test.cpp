// Sizes and counts in messages (support/human.h), and the "did you mean" of a mistyped name (support/suggest.h).
#include <gtest/gtest.h>

#include "support/human.h"
#include "support/suggest.h"

namespace {

using trainpack::closest_match;
using trainpack::counted;
using trainpack::edit_distance;
using trainpack::human_bytes;

TEST(HumanBytes, OneDecimalUnitWhateverTheSize) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(999), "999 B");
  EXPECT_EQ(human_bytes(1000), "1.0 kB");
  EXPECT_EQ(human_bytes(50'400'000), "50.4 MB");
  EXPECT_EQ(human_bytes(1'887'601'258), "1.9 GB");
  EXPECT_EQ(human_bytes(3'000'000'000'000), "3.0 TB");
}

TEST(HumanBytes, AValueThatRoundsToAThousandMovesUpAUnit) {
  EXPECT_EQ(human_bytes(999'949), "999.9 kB");
  EXPECT_EQ(human_bytes(999'950), "1.0 MB");
  EXPECT_EQ(human_bytes(999'999'999), "1.0 GB");
}

TEST(Counted, TheNounAgreesWithTheNumber) {
  EXPECT_EQ(counted(0, "layer", "layers"), "0 layers");
  EXPECT_EQ(counted(1, "layer", "layers"), "1 layer");
  EXPECT_EQ(counted(2, "entry", "entries"), "2 entries");
}

TEST(HumanSeconds, TwoDecimalsBelowTenSecondsAndOneAbove) {
  using namespace std::chrono_literals;
  EXPECT_EQ(trainpack::human_seconds(0ms), "0.00 s");
  EXPECT_EQ(trainpack::human_seconds(42ms), "0.04 s");
  EXPECT_EQ(trainpack::human_seconds(1250ms), "1.25 s");
  EXPECT_EQ(trainpack::human_seconds(9996ms), "10.0 s");
  EXPECT_EQ(trainpack::human_seconds(73'400ms), "73.4 s");
}

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("bild", "build"), 1u);
  EXPECT_EQ(edit_distance("verison", "version"), 1u);  // a swap of neighbours is one edit
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
}

TEST(ClosestMatch, ATypoFindsItsNameAndNonsenseFindsNone) {
  const std::vector<std::string> commands{"dockerfile", "build", "local-run", "job-spec", "completion"};
  EXPECT_EQ(closest_match("bild", commands), "build");
  EXPECT_EQ(closest_match("localrun", commands), "local-run");
  EXPECT_EQ(closest_match("jobspec", commands), "job-spec");
  EXPECT_EQ(closest_match("loc", commands), "local-run");  // the prefix of exactly one
  EXPECT_EQ(closest_match("deploy", commands), std::nullopt);
  EXPECT_EQ(closest_match("", commands), std::nullopt);
}

}  // namespace

TEST(ParseBytes, DecimalAndBinaryUnitsAsPeopleWriteThem) {
  EXPECT_EQ(trainpack::parse_bytes("20GB"), 20'000'000'000u);
  EXPECT_EQ(trainpack::parse_bytes("20g"), 20'000'000'000u);
  EXPECT_EQ(trainpack::parse_bytes("1.5 GiB"), 1'610'612'736u);
  EXPECT_EQ(trainpack::parse_bytes("500MB"), 500'000'000u);
  EXPECT_EQ(trainpack::parse_bytes("64kib"), 65'536u);
  EXPECT_EQ(trainpack::parse_bytes("4096"), 4096u);
  EXPECT_EQ(trainpack::parse_bytes("0"), 0u);
  for (const char* bad : {"", "GB", "1.2.3G", "-5G", "5 parsecs", "99999999999TB", "."})
    EXPECT_FALSE(trainpack::parse_bytes(bad).has_value()) << bad;
}

TEST(ParseDuration, UnitsFromSecondsToWeeksInSequence) {
  EXPECT_EQ(trainpack::parse_duration("7d"), std::chrono::hours(24 * 7));
  EXPECT_EQ(trainpack::parse_duration("1d12h"), std::chrono::hours(36));
  EXPECT_EQ(trainpack::parse_duration("90m"), std::chrono::minutes(90));
  EXPECT_EQ(trainpack::parse_duration("2w"), std::chrono::hours(24 * 14));
  EXPECT_EQ(trainpack::parse_duration("1.5h"), std::chrono::minutes(90));
  for (const char* bad : {"", "7", "d", "7x", "7d3", "-1d"})
    EXPECT_FALSE(trainpack::parse_duration(bad).has_value()) << bad;
}
