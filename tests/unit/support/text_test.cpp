// Text as messages quote it (support/text.h visible_text), UTF-8 as JSON takes it (support/utf8.h), and a flag's
// value among its choices (support/suggest.h check_choice).
#include <gtest/gtest.h>

#include <string>

#include "support/error.h"
#include "support/suggest.h"
#include "support/text.h"
#include "support/utf8.h"

namespace {

using trainpack::is_utf8;
using trainpack::visible_lines;
using trainpack::visible_text;

TEST(VisibleText, ControlCharactersAreEscapedAsPythonsReprDoes) {
  EXPECT_EQ(visible_text("key\n.json"), "key\\n.json");
  EXPECT_EQ(visible_text("a\tb\rc"), "a\\tb\\rc");
  EXPECT_EQ(visible_text(std::string("\x1b[2J\x00\x7f", 6)), "\\x1b[2J\\x00\\x7f");
  EXPECT_EQ(visible_text("\xc2\x9b" "31m"), "\\u009b31m") << "a C1 control (CSI) in UTF-8";
  EXPECT_EQ(visible_text("caf\xe9 \xff"), "caf\\xe9 \\xff") << "bytes that are not UTF-8";
  EXPECT_EQ(visible_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80");
  EXPECT_EQ(visible_text("C:\\new"), "C:\\new") << "backslashes stay";
  EXPECT_EQ(visible_text(visible_text("a\nb\x1b")), visible_text("a\nb\x1b")) << "escaping twice changes nothing";
}

// A server's words in a one-line message: breaks become spaces, cut with "...", and nothing can drive the terminal.
TEST(VisibleText, OneLineFlattensCutsAndEscapes) {
  EXPECT_EQ(trainpack::one_line("invalid_grant\r\n\tToken has been expired", 200),
            "invalid_grant   Token has been expired");
  EXPECT_EQ(trainpack::one_line("abcdef", 3), "abc...");
  EXPECT_EQ(trainpack::one_line("abc", 3), "abc");
  EXPECT_EQ(trainpack::one_line("<h1>\x1b[2Jdenied</h1>", 100), "<h1>\\x1b[2Jdenied</h1>");
}

TEST(VisibleText, LinesKeepTheirBreaks) {
  EXPECT_EQ(visible_lines("the end of its output:\n  \x1b[31merror\x1b[0m\ncheck"),
            "the end of its output:\n  \\x1b[31merror\\x1b[0m\ncheck");
}

// RFC 3629's UTF8-char: what Python's and JSON libraries' decoders take.
TEST(Utf8, OnlyWellFormedSequencesAreUtf8) {
  EXPECT_TRUE(is_utf8(""));
  EXPECT_TRUE(is_utf8("plain"));
  EXPECT_TRUE(is_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x9a\x80\xf4\x8f\xbf\xbf"));
  EXPECT_FALSE(is_utf8("\xe9"));                // Latin-1
  EXPECT_FALSE(is_utf8("\xc0\xaf"));            // overlong '/'
  EXPECT_FALSE(is_utf8("\xe0\x80\xaf"));        // overlong, three bytes
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));        // a surrogate, U+D800
  EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));    // above U+10FFFF
  EXPECT_FALSE(is_utf8("\xe2\x82"));            // cut short
  EXPECT_FALSE(is_utf8("\x80"));                // a lone continuation byte
  EXPECT_FALSE(is_utf8("a\xc3("));              // a lead byte without its continuation
}

TEST(Utf8, StrayBytesBecomeReplacementCharacters) {
  EXPECT_EQ(trainpack::valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(trainpack::valid_utf8("caf\xe9.txt"), "caf\xef\xbf\xbd.txt");
  EXPECT_EQ(trainpack::valid_utf8("\xc0\xaf/\xff"), "\xef\xbf\xbd\xef\xbf\xbd/\xef\xbf\xbd");
  EXPECT_TRUE(trainpack::is_utf8(trainpack::valid_utf8("\xe0\x80\xaf\xf4\x90\x80\x80 \xed\xa0\x80")));
}

// Each code point back with its length, whatever its width; no code point where no well-formed sequence starts.
TEST(Utf8, DecodingGivesTheCodePointAndItsLength) {
  using Decoded = std::pair<char32_t, std::size_t>;
  const std::string text = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x9a\x80";
  EXPECT_EQ(trainpack::decode_utf8(text, 0), (Decoded{U'a', 1}));
  EXPECT_EQ(trainpack::decode_utf8(text, 1), (Decoded{U'\u00e9', 2}));
  EXPECT_EQ(trainpack::decode_utf8(text, 3), (Decoded{U'\u20ac', 3}));
  EXPECT_EQ(trainpack::decode_utf8(text, 6), (Decoded{U'\U0001F680', 4}));
  EXPECT_EQ(trainpack::decode_utf8(text, 2), (Decoded{0, 0}));  // a continuation byte
  EXPECT_EQ(trainpack::decode_utf8("\xed\xa0\x80", 0), (Decoded{0, 0}));
  EXPECT_EQ(trainpack::decode_utf8(text, text.size()), (Decoded{0, 0}));
  std::string all;
  for (char32_t c : {U'\x7f', U'\x80', U'\u07ff', U'\u0800', U'\uffff', U'\U00010000', U'\U0010FFFF'}) {
    all.clear();
    trainpack::append_utf8(all, c);
    EXPECT_EQ(trainpack::decode_utf8(all, 0), (Decoded{c, all.size()})) << static_cast<unsigned>(c);
  }
}

TEST(CheckChoice, AnotherValueIsAUsageErrorWithTheClosestChoice) {
  EXPECT_NO_THROW(trainpack::check_choice("--engine", "runc", {"auto", "docker", "podman", "runc"}));
  try {
    trainpack::check_choice("--engine", "rnc", {"auto", "docker", "podman", "runc"});
    FAIL() << "no error";
  } catch (const trainpack::UsageError& e) {
    EXPECT_STREQ(e.what(), "--engine must be auto, docker, podman or runc, not \"rnc\"");
    EXPECT_EQ(e.hint(), "did you mean --engine=runc?");
  }
  try {
    trainpack::check_choice("--format", "yaml", {"text", "json"});
    FAIL() << "no error";
  } catch (const trainpack::UsageError& e) {
    EXPECT_STREQ(e.what(), "--format must be text or json, not \"yaml\"");
    EXPECT_EQ(e.hint(), "--help says what each means");
  }
}

}  // namespace
