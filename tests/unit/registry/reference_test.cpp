#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "registry/reference.h"
#include "support/error.h"

using trainpack::registry::is_registry_reference;
using trainpack::registry::Reference;
using trainpack::registry::starts_with_registry;

namespace {

const std::string kHex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const std::string kSha = "sha256:" + kHex;
const std::string kSha512 = "sha512:" + std::string(128, 'a');

struct Good {
  std::string input, registry, repository, tag, digest;
};

std::vector<Good> good_cases() {
  return {
      // Docker Hub normalisation
      {"ubuntu", "docker.io", "library/ubuntu", "latest", ""},
      {"ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", ""},
      {"library/ubuntu", "docker.io", "library/ubuntu", "latest", ""},
      {"docker.io/ubuntu", "docker.io", "library/ubuntu", "latest", ""},
      {"docker.io/library/ubuntu:latest", "docker.io", "library/ubuntu", "latest", ""},
      {"index.docker.io/ubuntu", "docker.io", "library/ubuntu", "latest", ""},
      {"index.docker.io/foo/bar:1", "docker.io", "foo/bar", "1", ""},
      {"foo/bar", "docker.io", "foo/bar", "latest", ""},
      {"foo/bar/baz:v2", "docker.io", "foo/bar/baz", "v2", ""},
      {"python:3.11-slim", "docker.io", "library/python", "3.11-slim", ""},
      // registry detection
      {"localhost/foo", "localhost", "foo", "latest", ""},
      {"localhost:5000/foo/bar:v1", "localhost:5000", "foo/bar", "v1", ""},
      {"localhost", "docker.io", "library/localhost", "latest", ""},
      {"localhost:5000", "docker.io", "library/localhost", "5000", ""},  // a tag, as Docker reads it
      {"127.0.0.1:5000/base/python:3.11", "127.0.0.1:5000", "base/python", "3.11", ""},
      {"example.com/foo", "example.com", "foo", "latest", ""},
      {"example.com:443/foo:bar", "example.com:443", "foo", "bar", ""},
      {"registry:5000/app", "registry:5000", "app", "latest", ""},
      {"[::1]:5000/foo", "[::1]:5000", "foo", "latest", ""},
      {"[2001:db8::1]/foo/bar", "[2001:db8::1]", "foo/bar", "latest", ""},
      {"Foo/bar", "Foo", "bar", "latest", ""},  // an uppercase first component is a host (Docker Hub has none)
      {"EXAMPLE.com/foo", "EXAMPLE.com", "foo", "latest", ""},
      {"xn--bcher-kva.example/foo", "xn--bcher-kva.example", "foo", "latest", ""},
      {"a-b.c-d.example:1/x", "a-b.c-d.example:1", "x", "latest", ""},
      {"gcr.io/project/image", "gcr.io", "project/image", "latest", ""},
      {"us-docker.pkg.dev/p/r/img@" + kSha, "us-docker.pkg.dev", "p/r/img", "", kSha},
      // digest wins over tag
      {"img:tag@" + kSha, "docker.io", "library/img", "", kSha},
      {"localhost:5000/img:tag@" + kSha, "localhost:5000", "img", "", kSha},
      {"img@" + kSha512, "docker.io", "library/img", "", kSha512},
      // path separators
      {"foo/a.b", "docker.io", "foo/a.b", "latest", ""},
      {"foo/a_b", "docker.io", "foo/a_b", "latest", ""},
      {"foo/a__b", "docker.io", "foo/a__b", "latest", ""},
      {"foo/a-b", "docker.io", "foo/a-b", "latest", ""},
      {"foo/a-----b", "docker.io", "foo/a-----b", "latest", ""},
      {"foo/a.b_c__d-e", "docker.io", "foo/a.b_c__d-e", "latest", ""},
      {"0/1/2", "docker.io", "0/1/2", "latest", ""},
      // tags
      {"foo:TAG", "docker.io", "library/foo", "TAG", ""},
      {"foo:_x", "docker.io", "library/foo", "_x", ""},
      {"foo:a.b-c_d", "docker.io", "library/foo", "a.b-c_d", ""},
      {"foo:" + std::string(128, 't'), "docker.io", "library/foo", std::string(128, 't'), ""},
      // 64 hex characters are fine inside a path or as a tag
      {"foo/" + kHex, "docker.io", "foo/" + kHex, "latest", ""},
      {"foo:" + kHex, "docker.io", "library/foo", kHex, ""},
  };
}

std::vector<std::string> bad_cases() {
  return {
      "",
      "Ubuntu",                        // uppercase repository
      "docker.io/Library/ubuntu",
      "localhost:5000/Foo",
      "example.com/foo/Bar:tag",
      "ubuntu:",                       // empty tag
      "ubuntu@",                       // empty digest
      ":tag",
      "@" + kSha,
      "/foo",
      "foo/",
      "foo//bar",
      "foo/_bar",
      "foo/bar_",
      "foo/-bar",
      "foo/bar-",
      "foo/.bar",
      "foo/a___b",
      "foo/a._b",
      "foo/a..b",
      "foo:-tag",
      "foo:.tag",
      "foo:" + std::string(129, 't'),
      "foo:tag:other",
      "foo:ta/g",
      "foo bar",
      "foo\tbar",
      "foo@sha256:abc",                         // too short
      "foo@sha256:" + std::string(64, 'A'),     // uppercase hex
      "foo@sha256:" + std::string(63, 'a'),
      "foo@sha256:" + std::string(65, 'a'),
      "foo@md5:" + std::string(32, 'a'),        // unknown algorithm
      "foo@sha384:" + std::string(96, 'a'),     // not supported here
      "foo@" + kHex,                            // no algorithm
      "foo@sha256:" + kHex + "@" + kSha,
      kHex,                                     // an image ID
      "a_b.c/foo",                              // '_' in a host
      "example.com:port/foo",
      "example.com:/foo",
      "-foo.com/bar",
      "foo-.com/bar",
      "[::1/foo",
      "[::1]x/foo",
      "[]:5000/foo",
      "example.com/" + std::string(244, 'a'),   // 256 characters
      "ubuntu:latest:latest",
  };
}

}  // namespace

TEST(ReferenceParse, GoodTable) {
  for (const auto& c : good_cases()) {
    SCOPED_TRACE(c.input);
    Reference r;
    ASSERT_NO_THROW(r = Reference::parse(c.input));
    EXPECT_EQ(r.registry, c.registry);
    EXPECT_EQ(r.repository, c.repository);
    EXPECT_EQ(r.tag, c.tag);
    EXPECT_EQ(r.digest, c.digest);
  }
}

TEST(ReferenceParse, BadTable) {
  for (const auto& input : bad_cases()) {
    SCOPED_TRACE(input);
    try {
      Reference r = Reference::parse(input);
      ADD_FAILURE() << "parsed as " << r.str();
    } catch (const trainpack::Error& e) {
      std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find("invalid image reference"), std::string::npos) << what;
      EXPECT_FALSE(e.hint().empty()) << what;
    }
  }
}

TEST(ReferenceParse, NameLengthCapCountsTheWholeName) {
  // example.com/ (12) + 243 = 255: allowed; one more is not.
  EXPECT_NO_THROW(Reference::parse("example.com/" + std::string(243, 'a')));
  EXPECT_THROW(Reference::parse("example.com/" + std::string(244, 'a')), trainpack::Error);
  // docker.io/library/ counts too
  EXPECT_NO_THROW(Reference::parse(std::string(255 - 18, 'a')));
  EXPECT_THROW(Reference::parse(std::string(256 - 18, 'a')), trainpack::Error);
}

TEST(ReferenceParse, UppercaseMessageNamesTheRepository) {
  try {
    Reference::parse("localhost:5000/MyImage:v1");
    FAIL();
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("(MyImage) must be lowercase"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("myimage"), std::string::npos) << e.hint();
  }
}

TEST(ReferenceParse, Accessors) {
  auto hub = Reference::parse("ubuntu");
  EXPECT_EQ(hub.api_host(), "registry-1.docker.io");
  EXPECT_EQ(hub.name(), "docker.io/library/ubuntu");
  EXPECT_EQ(hub.str(), "docker.io/library/ubuntu:latest");
  EXPECT_EQ(hub.identifier(), "latest");
  EXPECT_TRUE(hub.is_docker_hub());
  EXPECT_EQ(hub.with_digest(kSha), "docker.io/library/ubuntu@" + kSha);

  auto local = Reference::parse("127.0.0.1:5000/base/python@" + kSha);
  EXPECT_EQ(local.api_host(), "127.0.0.1:5000");
  EXPECT_EQ(local.identifier(), kSha);
  EXPECT_EQ(local.str(), "127.0.0.1:5000/base/python@" + kSha);
  EXPECT_FALSE(local.is_docker_hub());

  // str() round-trips
  for (const auto& c : good_cases()) {
    auto r = Reference::parse(c.input);
    auto again = Reference::parse(r.str());
    EXPECT_EQ(again.str(), r.str()) << c.input;
  }
}

TEST(ReferenceGoogle, Hosts) {
  struct Case {
    std::string ref;
    bool google;
  };
  std::vector<Case> cases = {
      {"gcr.io/p/i", true},
      {"us.gcr.io/p/i", true},
      {"eu.gcr.io/p/i", true},
      {"asia.gcr.io/p/i", true},
      {"marketplace.gcr.io/p/i", true},
      {"GCR.IO/p/i", true},
      {"gcr.io:443/p/i", true},
      {"us-docker.pkg.dev/p/r/i", true},
      {"us-central1-docker.pkg.dev/p/r/i", true},
      {"europe-west4-docker.pkg.dev/p/r/i", true},
      {"docker.us-central1.rep.pkg.dev/p/r/i", true},
      {"docker.me-central2.rep.pkg.dev/p/r/i", true},
      {"docker.io/library/i", false},
      {"ubuntu", false},
      {"pkg.dev/p/i", false},
      {"us-python.pkg.dev/p/r/i", false},
      {"foo.us-docker.pkg.dev/p/i", false},
      {"gcr.io.example.com/p/i", false},
      {"evilgcr.io/p/i", false},
      {"docker.rep.pkg.dev/p/i", false},
      {"localhost:5000/i", false},
      {"ghcr.io/o/i", false},
  };
  for (const auto& c : cases) EXPECT_EQ(Reference::parse(c.ref).is_google(), c.google) << c.ref;
}

TEST(ReferenceParse, RegistryReferenceVersusLocalLocations) {
  EXPECT_FALSE(is_registry_reference("oci:/tmp/layout:3.11"));
  EXPECT_FALSE(is_registry_reference("oci:relative/dir"));
  EXPECT_FALSE(is_registry_reference("docker-archive:/tmp/base.tar"));
  EXPECT_FALSE(is_registry_reference("docker-archive:/tmp/base.tar:trainpack-test/python:3.11"));
  EXPECT_TRUE(is_registry_reference("ubuntu"));
  EXPECT_TRUE(is_registry_reference("python:3.11"));
  EXPECT_TRUE(is_registry_reference("localhost:5000/x"));
  EXPECT_TRUE(is_registry_reference("us-docker.pkg.dev/p/r/i:tag"));
  EXPECT_TRUE(is_registry_reference("ocifoo/bar"));
}

// Docker's splitDockerDomain rule: the first component is the registry when it has "." or ":", is "localhost", or
// has an uppercase letter.
TEST(ReferenceParse, StartsWithRegistryOnlyWhenTheFirstComponentIsAHost) {
  for (const char* named :
       {"localhost/x", "localhost:5000/x", "127.0.0.1:5000/a/b:v1", "us-docker.pkg.dev/p/r/i", "gcr.io/p/i", "Reg/x"})
    EXPECT_TRUE(starts_with_registry(named)) << named;
  for (const char* hub : {"python", "python:3.11", "team/app", "team/app:v1", "library/ubuntu", "localhostx/y"})
    EXPECT_FALSE(starts_with_registry(hub)) << hub;
}
