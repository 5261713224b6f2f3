// WWW-Authenticate parsing, scopes and the small encodings used by registry auth.
#include <gtest/gtest.h>

#include "registry/auth_challenge.h"

using namespace trainpack::registry;

TEST(AuthChallenge, BearerWithQuotedParams) {
  auto c = parse_www_authenticate(
      R"(Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull")");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].scheme, "bearer");
  EXPECT_EQ(c[0].param("realm"), "https://auth.docker.io/token");
  EXPECT_EQ(c[0].param("service"), "registry.docker.io");
  EXPECT_EQ(c[0].param("scope"), "repository:library/ubuntu:pull");
}

TEST(AuthChallenge, SchemeAndNamesAreCaseInsensitive) {
  auto c = parse_www_authenticate(R"(BEARER Realm="https://r/token", SERVICE=svc)");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].scheme, "bearer");
  EXPECT_EQ(c[0].param("realm"), "https://r/token");
  EXPECT_EQ(c[0].param("Service"), "svc");
  EXPECT_TRUE(c[0].has_param("REALM"));
  EXPECT_FALSE(c[0].has_param("scope"));
}

TEST(AuthChallenge, QuotedStringsKeepCommasAndUnescape) {
  auto c = parse_www_authenticate(
      R"(Bearer realm="https://r/token",scope="repository:a:pull,push repository:b:pull",error="insufficient_scope",x="say \"hi\", \\ok")");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].param("scope"), "repository:a:pull,push repository:b:pull");
  EXPECT_EQ(c[0].param("error"), "insufficient_scope");
  EXPECT_EQ(c[0].param("x"), "say \"hi\", \\ok");
}

TEST(AuthChallenge, SpacesAroundEqualsAndCommas) {
  auto c = parse_www_authenticate(R"(Bearer   realm = "https://r/t" ,  service = "s")");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].param("realm"), "https://r/t");
  EXPECT_EQ(c[0].param("service"), "s");
}

TEST(AuthChallenge, SeveralChallengesInOneLine) {
  auto c = parse_www_authenticate(R"(Basic realm="reg", Bearer realm="https://r/token",service="s", Newauth)");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].scheme, "basic");
  EXPECT_EQ(c[0].param("realm"), "reg");
  EXPECT_EQ(c[1].scheme, "bearer");
  EXPECT_EQ(c[1].param("service"), "s");
  EXPECT_EQ(c[2].scheme, "newauth");
  EXPECT_TRUE(c[2].params.empty());
}

TEST(AuthChallenge, SeveralHeaderLinesAndToken68) {
  auto c = parse_www_authenticate(std::vector<std::string>{"Negotiate YIIabc==", R"(Basic realm="x")"});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].scheme, "negotiate");
  EXPECT_EQ(c[0].token68, "YIIabc==");
  EXPECT_EQ(c[1].scheme, "basic");
}

TEST(AuthChallenge, PickPrefersBearerThenBasic) {
  auto c = parse_www_authenticate(std::vector<std::string>{"Negotiate abc", R"(Basic realm="x")", R"(Bearer realm="y")"});
  const AuthChallenge* p = pick_challenge(c);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->scheme, "bearer");
  auto only_basic = parse_www_authenticate(R"(Digest realm="d", Basic realm="b")");
  ASSERT_NE(pick_challenge(only_basic), nullptr);
  EXPECT_EQ(pick_challenge(only_basic)->param("realm"), "b");
  EXPECT_EQ(pick_challenge(parse_www_authenticate("Negotiate abc")), nullptr);
  EXPECT_EQ(pick_challenge({}), nullptr);
}

TEST(AuthChallenge, MalformedInputDoesNotCrash) {
  for (const char* s : {"", ",", "Bearer realm=\"unterminated", "Bearer =x", "Bearer realm=", "\"quoted\" scheme",
                        "Bearer realm=\"a\" garbage, Basic realm=\"b\""}) {
    auto c = parse_www_authenticate(s);
    (void)c;
  }
  auto c = parse_www_authenticate("Bearer realm=\"a\" garbage, Basic realm=\"b\"");
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.back().scheme, "basic");
  EXPECT_EQ(c.back().param("realm"), "b");
}

TEST(AuthScope, ParseAndSplit) {
  auto a = parse_scope_item("repository:127.0.0.1:5000/base/python:pull,push");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->type, "repository");
  EXPECT_EQ(a->name, "127.0.0.1:5000/base/python");
  EXPECT_EQ(a->actions, (std::vector<std::string>{"pull", "push"}));
  EXPECT_EQ(a->str(), "repository:127.0.0.1:5000/base/python:pull,push");
  auto b = parse_scope_item("repository(plugin):x/y:pull");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->type, "repository(plugin)");
  EXPECT_FALSE(parse_scope_item("repository"));
  EXPECT_FALSE(parse_scope_item("repository:x"));
  EXPECT_EQ(split_scopes("  repository:a:pull   repository:b:push "),
            (std::vector<std::string>{"repository:a:pull", "repository:b:push"}));
}

TEST(AuthScope, UnionPutsNewFirst) {
  EXPECT_EQ(union_scopes({"c", "a"}, {"a", "b", "c", "d"}), (std::vector<std::string>{"c", "a", "b", "d"}));
  EXPECT_EQ(union_scopes({}, {"x", "x"}), (std::vector<std::string>{"x"}));
}

