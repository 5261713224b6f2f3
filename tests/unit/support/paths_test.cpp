// support/paths: slash-separated path text as images spell it.
#include <gtest/gtest.h>

#include "support/paths.h"

using namespace trainpack;

TEST(SupportPaths, ComponentsJoinBaseAndDir) {
  auto parts = path_components("./a//b/./c/");
  EXPECT_EQ(std::vector<std::string_view>(parts.begin(), parts.end()), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(join_path("", "b"), "b");
  EXPECT_EQ(join_path("a", ""), "a");
  EXPECT_EQ(join_path("a", "b"), "a/b");
  EXPECT_EQ(path_base("a/b"), "b");
  EXPECT_EQ(path_dir("a/b"), "a");
  EXPECT_EQ(path_dir("b"), "");
}

TEST(SupportPaths, NormalizeStaysInsideTheRoot) {
  EXPECT_EQ(normalize_path("/a/./b/../c"), "a/c");
  EXPECT_EQ(normalize_path("usr/app/../../../../etc/passwd"), "etc/passwd");
  EXPECT_EQ(normalize_path("../x"), "x");
  EXPECT_EQ(normalize_path("/"), "");
  EXPECT_EQ(normalize_path("/usr/local/lib/python3.11/dist-packages/../../../bin/tool"), "usr/local/bin/tool");
}
