// net/url.h: RFC 3986 splitting, resolution (§5.4's examples), authorities and origins.
#include "net/url.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using namespace trainpack::net;

TEST(ResolveUrl, Rfc3986NormalExamples) {
  const std::string base = "http://a/b/c/d;p?q";
  std::vector<std::pair<std::string, std::string>> cases = {
      {"g:h", "g:h"},
      {"g", "http://a/b/c/g"},
      {"./g", "http://a/b/c/g"},
      {"g/", "http://a/b/c/g/"},
      {"/g", "http://a/g"},
      {"//g", "http://g"},
      {"?y", "http://a/b/c/d;p?y"},
      {"g?y", "http://a/b/c/g?y"},
      {"#s", "http://a/b/c/d;p?q#s"},
      {"g#s", "http://a/b/c/g#s"},
      {"g?y#s", "http://a/b/c/g?y#s"},
      {";x", "http://a/b/c/;x"},
      {"g;x", "http://a/b/c/g;x"},
      {"g;x?y#s", "http://a/b/c/g;x?y#s"},
      {"", "http://a/b/c/d;p?q"},
      {".", "http://a/b/c/"},
      {"./", "http://a/b/c/"},
      {"..", "http://a/b/"},
      {"../", "http://a/b/"},
      {"../g", "http://a/b/g"},
      {"../..", "http://a/"},
      {"../../", "http://a/"},
      {"../../g", "http://a/g"},
  };
  for (const auto& [ref, want] : cases) EXPECT_EQ(resolve_url(base, ref), want) << ref;
}

TEST(ResolveUrl, Rfc3986AbnormalExamples) {
  const std::string base = "http://a/b/c/d;p?q";
  std::vector<std::pair<std::string, std::string>> cases = {
      {"../../../g", "http://a/g"},
      {"../../../../g", "http://a/g"},
      {"/./g", "http://a/g"},
      {"/../g", "http://a/g"},
      {"g.", "http://a/b/c/g."},
      {".g", "http://a/b/c/.g"},
      {"g..", "http://a/b/c/g.."},
      {"..g", "http://a/b/c/..g"},
      {"./../g", "http://a/b/g"},
      {"./g/.", "http://a/b/c/g/"},
      {"g/./h", "http://a/b/c/g/h"},
      {"g/../h", "http://a/b/c/h"},
      {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
      {"g;x=1/../y", "http://a/b/c/y"},
      {"g?y/./x", "http://a/b/c/g?y/./x"},
      {"g?y/../x", "http://a/b/c/g?y/../x"},
      {"g#s/./x", "http://a/b/c/g#s/./x"},
      {"g#s/../x", "http://a/b/c/g#s/../x"},
      {"http:g", "http:g"},  // strict parser
  };
  for (const auto& [ref, want] : cases) EXPECT_EQ(resolve_url(base, ref), want) << ref;
}

TEST(ResolveUrl, RegistryLocations) {
  const std::string post = "https://r.example/v2/team/app/blobs/uploads/";
  EXPECT_EQ(resolve_url(post, "/v2/team/app/blobs/uploads/u1?_state=a%2Bb%3D%3D"),
            "https://r.example/v2/team/app/blobs/uploads/u1?_state=a%2Bb%3D%3D");
  EXPECT_EQ(resolve_url(post, "u1?_state=x"), "https://r.example/v2/team/app/blobs/uploads/u1?_state=x");
  EXPECT_EQ(resolve_url(post, "https://storage.example/up/u1?sig=1"), "https://storage.example/up/u1?sig=1");
  EXPECT_EQ(resolve_url(post, "//other.example:8443/x"), "https://other.example:8443/x");
  // Artifact Registry: uploads and downloads live outside /v2/
  EXPECT_EQ(resolve_url("https://us-docker.pkg.dev/v2/p/r/i/blobs/uploads/",
                        "/artifacts-uploads/namespaces/p/repositories/r/uploads/AB12"),
            "https://us-docker.pkg.dev/artifacts-uploads/namespaces/p/repositories/r/uploads/AB12");
  // the base's own query (mount attempt) does not leak into a path-relative Location
  EXPECT_EQ(resolve_url("http://127.0.0.1:5000/v2/x/blobs/uploads/?mount=sha256:1&from=y", "../uploads/u?_state=s"),
            "http://127.0.0.1:5000/v2/x/blobs/uploads/u?_state=s");
  // against the current URL after a redirect, not the first one
  EXPECT_EQ(resolve_url("http://[::1]:5000/v2/a/b", "c"), "http://[::1]:5000/v2/a/c");
  EXPECT_EQ(resolve_url("http://h:1", "x"), "http://h:1/x");
  EXPECT_EQ(resolve_url("http://h:1/a", "  /x  "), "http://h:1/x");
}

TEST(SplitUrl, FiveComponentsAndBackAgain) {
  UrlParts u = split_url("https://user:pw@Host:8443/a/b;p?q=1#frag");
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.authority, "user:pw@Host:8443");
  EXPECT_EQ(u.path, "/a/b;p");
  EXPECT_EQ(u.query, "q=1");
  EXPECT_EQ(u.fragment, "frag");
  EXPECT_EQ(u.str(), "https://user:pw@Host:8443/a/b;p?q=1#frag");
  EXPECT_FALSE(split_url("1a:b").has_scheme);  // not a scheme by §3.1
  EXPECT_FALSE(split_url("./a:b").has_scheme);
  UrlParts file = split_url("file:///tmp/x%20y");
  EXPECT_TRUE(file.has_authority);
  EXPECT_EQ(file.authority, "");
  EXPECT_EQ(file.path, "/tmp/x%20y");
}

TEST(SplitAuthority, HostPortUserinfo) {
  auto a = split_authority("u%40x:p@[FD00::1]:5000");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->userinfo, "u%40x:p");
  EXPECT_EQ(a->host, "fd00::1");
  EXPECT_EQ(a->port, "5000");
  EXPECT_EQ(a->host_port(), "[fd00::1]:5000");
  EXPECT_FALSE(split_authority("[::1"));
  EXPECT_FALSE(split_authority("[::1]x"));
  EXPECT_FALSE(split_authority(":80"));
}

TEST(OriginOf, DefaultPortsMakeOneOrigin) {
  auto a = origin_of("HTTPS://Registry.Example/v2/"), b = origin_of("https://registry.example:443/x");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->authority, "registry.example");
  EXPECT_EQ(b->authority, "registry.example:443");
  EXPECT_EQ(a->str(), "https://registry.example:443");
  EXPECT_NE(*origin_of("http://registry.example/"), *a);
  EXPECT_EQ(origin_of("http://[::1]:5000/v2/")->str(), "http://[::1]:5000");
  EXPECT_FALSE(origin_of("/v2/x"));
  EXPECT_FALSE(origin_of("mailto:a@b"));
}

TEST(UrlForDisplay, DropsSecrets) {
  EXPECT_EQ(url_for_display("https://u:p@h/simple/x/?token=1#sha256=ab"), "https://h/simple/x/");
  EXPECT_EQ(url_for_display("file:///tmp/a.whl"), "file:///tmp/a.whl");
}
