// gcloud's list flags and flag values (gcloud/gcloud_flags.h). Every expected value below is what Cloud SDK
// 578.0.0 gives: calliope/arg_parsers.py ArgList (+ UpdateAction) on the argparse gcloud bundles.
#include "gcloud/gcloud_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "support/error.h"

namespace {

using trainpack::Error;
using trainpack::gcloud::add_list_flag;
using trainpack::gcloud::add_value_flag;
using trainpack::gcloud::parse_like_argparse;
using trainpack::gcloud::RepeatedList;
using trainpack::gcloud::split_gcloud_list;
using Items = std::vector<std::string>;

TEST(GcloudList, SplitsOnCommasKeepingEmptyItemsAndSpaces) {
  EXPECT_EQ(split_gcloud_list(""), Items{});
  EXPECT_EQ(split_gcloud_list("a"), Items{"a"});
  EXPECT_EQ(split_gcloud_list("a,b"), (Items{"a", "b"}));
  EXPECT_EQ(split_gcloud_list("a,b,"), (Items{"a", "b"}));  // one trailing delimiter dropped
  EXPECT_EQ(split_gcloud_list("a,,b"), (Items{"a", "", "b"}));
  EXPECT_EQ(split_gcloud_list("a,b,,"), (Items{"a", "b", ""}));
  EXPECT_EQ(split_gcloud_list(","), Items{""});
  EXPECT_EQ(split_gcloud_list(",,"), (Items{"", ""}));
  EXPECT_EQ(split_gcloud_list(" "), Items{" "});
  EXPECT_EQ(split_gcloud_list("a b, c ,d"), (Items{"a b", " c ", "d"}));  // nothing is stripped
}

TEST(GcloudList, AlternateDelimiter) {
  // `gcloud topic escaping`'s examples.
  EXPECT_EQ(split_gcloud_list("^:^a,b:c,d"), (Items{"a,b", "c,d"}));
  EXPECT_EQ(split_gcloud_list("^--^a-,b--c"), (Items{"a-,b", "c"}));
  EXPECT_EQ(split_gcloud_list("^a,b,c"), (Items{"^a", "b", "c"}));  // one '^' is literal
  EXPECT_EQ(split_gcloud_list("^,^^a,b,c"), (Items{"^a", "b", "c"}));
  EXPECT_EQ(split_gcloud_list("a^:^,b,c"), (Items{"a^:^", "b", "c"}));  // only at the start
  // ArgList's docstring says ['^a^', ',b', 'c'] for this one; its code gives:
  EXPECT_EQ(split_gcloud_list("^,^^a^,b,c"), (Items{"^a^", "b", "c"}));
  EXPECT_EQ(split_gcloud_list("^;^numpy>=1,<2;pandas"), (Items{"numpy>=1,<2", "pandas"}));
  EXPECT_EQ(split_gcloud_list("^::^a:b::c"), (Items{"a:b", "c"}));
  EXPECT_EQ(split_gcloud_list("^::^a:::"), Items{"a"});  // Python's str.split: leftmost, non-overlapping
  EXPECT_EQ(split_gcloud_list("^:^"), Items{});
  EXPECT_EQ(split_gcloud_list("^:^a::"), (Items{"a", ""}));
}

TEST(GcloudList, EmptyAlternateDelimiterIsGcloudsError) {
  try {
    split_gcloud_list("^^a");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "Invalid delimeter. Please see `gcloud topic flags-file` or `gcloud topic escaping` for information "
                 "on providing list or dictionary flag values with special characters.");
    EXPECT_NE(e.hint().find("^;^a,b;c"), std::string::npos);
  }
}

// A command with one flag of each kind, parsed like trainpack's subcommands.
struct Command {
  Items store, update, rest;
  std::string value;
  bool gpu = false;
  CLI::App app{"test"};

  Command() {
    add_list_flag(app, "--requirements", store, RepeatedList::kLastWins, "REQUIREMENTS", "store");
    add_list_flag(app, "--args", update, RepeatedList::kConcatenate, "ARG", "update");
    add_value_flag(app, "--script", value, "SCRIPT", "value");
    app.add_flag("--gpu", gpu, "flag");
    app.add_option("rest", rest, "positionals");
  }
  void parse(std::vector<std::string> args) {
    std::vector<const char*> argv{"cmd"};
    for (const auto& a : args) argv.push_back(a.c_str());
    parse_like_argparse(app, static_cast<int>(argv.size()), argv.data());
  }
};

Items store_after(std::vector<std::string> args) {
  Command c;
  c.parse(std::move(args));
  return c.store;
}

Items update_after(std::vector<std::string> args) {
  Command c;
  c.parse(std::move(args));
  return c.update;
}

TEST(GcloudListFlag, StoreKeepsTheLastOccurrence) {
  EXPECT_EQ(store_after({"--requirements=a", "--requirements=b"}), Items{"b"});
  EXPECT_EQ(store_after({"--requirements=a,b", "--requirements", "c"}), Items{"c"});
  EXPECT_EQ(store_after({"--requirements=a", "--requirements="}), Items{});
  EXPECT_EQ(store_after({"--requirements=^:^a,b:c"}), (Items{"a,b", "c"}));
  EXPECT_EQ(store_after({"--requirements", "a b, c ,d"}), (Items{"a b", " c ", "d"}));
  EXPECT_EQ(store_after({"--requirements=a,,b,"}), (Items{"a", "", "b"}));
  EXPECT_EQ(store_after({"--requirements= "}), Items{" "});
  EXPECT_EQ(store_after({"--requirements=a,a"}), (Items{"a", "a"}));  // no duplicate check for 'store'
}

TEST(GcloudListFlag, UpdateActionConcatenates) {
  EXPECT_EQ(update_after({"--args=a,b", "--args=c"}), (Items{"a", "b", "c"}));
  EXPECT_EQ(update_after({"--args=", "--args=x"}), Items{"x"});
  EXPECT_EQ(update_after({"--args=a,,"}), (Items{"a", ""}));
  EXPECT_EQ(update_after({"--args=a,"}), Items{"a"});
  EXPECT_EQ(update_after({"--args=a, a"}), (Items{"a", " a"}));
  EXPECT_EQ(update_after({"--args=^;^--tags=x,y;--n=1", "--args=--lr=0.1"}), (Items{"--tags=x,y", "--n=1", "--lr=0.1"}));
}

TEST(GcloudListFlag, UpdateActionRefusesAnItemTwice) {
  for (const auto& args : std::vector<Items>{{"--args=a", "--args=a"}, {"--args=--lr,1,--epochs,1"}}) {
    try {
      update_after(args);
      ADD_FAILURE() << "no error for " << args.back();
    } catch (const Error& e) {
      const std::string item = args.size() == 2 ? "a" : "1";
      EXPECT_EQ(std::string(e.what()), "argument --args: \"" + item + "\" cannot be specified multiple times");
      EXPECT_NE(e.hint().find("--lr=0.1"), std::string::npos);
    }
  }
}

TEST(GcloudListFlag, BadDelimiterNamesTheFlag) {
  try {
    store_after({"--requirements=^^x"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("argument --requirements: Invalid delimeter. Please see"));
  }
}

TEST(GcloudFlagValues, EmptyValueIsEmptyAndTakesNothingElse) {
  Command c;
  c.parse({"--script=", "--requirements=", "foo"});
  EXPECT_EQ(c.store, Items{});
  EXPECT_EQ(c.value, "");
  EXPECT_EQ(c.rest, Items{"foo"});
}

TEST(GcloudFlagValues, DoubleDashValueIsNoValue) {
  // argparse removes "--" from a flag's arguments: nothing reaches ArgList or UpdateAction.
  Command c;
  c.parse({"--requirements=a", "--requirements=--", "--args=x", "--args=--", "--script=--"});
  EXPECT_EQ(c.store, Items{});
  EXPECT_EQ(c.update, Items{"x"});
  EXPECT_EQ(c.value, "");
}

TEST(GcloudFlagValues, SeparateValueMayLookLikeANumberOrHoldASpace) {
  Command c;
  c.parse({"--requirements", "-1", "--args", "-x 1", "--script", "", "pos"});
  EXPECT_EQ(c.store, Items{"-1"});
  EXPECT_EQ(c.update, Items{"-x 1"});
  EXPECT_EQ(c.value, "");
  EXPECT_EQ(c.rest, Items{"pos"});
  // argparse's negative numbers: "-.5", "-1.5", digits of any script ("-\u0663"), a final newline.
  for (const std::string number : {"-.5", "-1.5", "-\xd9\xa3", "-7\n"}) {
    Command n;
    n.parse({"--script", number});
    EXPECT_EQ(n.value, number);
  }
}

TEST(GcloudFlagValues, FlagWithoutValueIsArgparsesError) {
  for (const auto& args : std::vector<Items>{{"--requirements"}, {"--requirements", "--gpu"},
                                             {"--script", "--unknown"}, {"--args", "-x"}, {"--args", "--"},
                                             {"--args", "--lr=0.1"}}) {
    try {
      Command().parse(args);
      ADD_FAILURE() << "no error for " << args.front() << " " << args.size();
    } catch (const CLI::ParseError& e) {
      EXPECT_EQ(std::string(e.what()), "argument " + args.front() + ": expected one argument");
    }
  }
}

TEST(GcloudFlagValues, ArgumentsAfterDoubleDashAreLeftAlone) {
  Command c;
  c.parse({"--script=s", "--", "--requirements=", "--args", "x"});
  EXPECT_EQ(c.value, "s");
  EXPECT_EQ(c.store, Items{});
  EXPECT_EQ(c.rest, (Items{"--requirements=", "--args", "x"}));
}

TEST(GcloudFlagValues, RepeatedValueFlagLastWins) {
  Command c;
  c.parse({"--script=a", "--script", "b", "--script=", "--gpu"});
  EXPECT_EQ(c.value, "");
  EXPECT_TRUE(c.gpu);
}

}  // namespace
