#include "transports/image_location.h"

#include <gtest/gtest.h>

#include "support/error.h"

using namespace trainpack::transports;

TEST(ImageLocation, ParsesLikeSkopeo) {
  auto oci = parse_image_location("oci:/tmp/layout:v1");
  ASSERT_TRUE(oci);
  EXPECT_EQ(oci->transport, "oci");
  EXPECT_EQ(oci->path, "/tmp/layout");
  EXPECT_EQ(oci->ref, "v1");
  EXPECT_EQ(oci->str(), "oci:/tmp/layout:v1");

  auto untagged = parse_image_location("oci:relative/dir");
  ASSERT_TRUE(untagged);
  EXPECT_EQ(untagged->path, "relative/dir");
  EXPECT_EQ(untagged->ref, "");

  auto archive = parse_image_location_or_throw("docker-archive:/tmp/x.tar:127.0.0.1:5000/a/b:tag", "--output");
  EXPECT_EQ(archive.transport, "docker-archive");
  EXPECT_EQ(archive.path, "/tmp/x.tar");
  EXPECT_EQ(archive.ref, "127.0.0.1:5000/a/b:tag");

  EXPECT_EQ(parse_image_location_or_throw("docker-archive:x.tar:trainer", "--output").ref, "trainer:latest");
  EXPECT_EQ(parse_image_location_or_throw("docker-archive:x.tar:host:5000/trainer", "--output").ref,
            "host:5000/trainer:latest");
}

TEST(ImageLocation, RegistryReferences) {
  auto explicit_ref = parse_image_location("docker://127.0.0.1:5000/a/b:t");
  ASSERT_TRUE(explicit_ref);
  EXPECT_EQ(explicit_ref->transport, "docker");
  EXPECT_EQ(explicit_ref->ref, "127.0.0.1:5000/a/b:t");
  EXPECT_EQ(explicit_ref->str(), "docker://127.0.0.1:5000/a/b:t");
  // A bare name is a registry reference where the flag means an image name (--executor-image-uri).
  auto bare = parse_image_location_or_throw("python:3.11", "--executor-image-uri", /*bare_is_registry=*/true);
  EXPECT_EQ(bare.transport, "docker");
  EXPECT_THROW(parse_image_location_or_throw("python:3.11", "--output"), trainpack::Error);
  EXPECT_THROW(parse_image_location_or_throw("docker://UPPER/Case:t", "--output"), trainpack::Error);
}

TEST(ImageLocation, RejectsUnknownKindsAndEmptyPaths) {
  EXPECT_FALSE(parse_image_location("python:3.11"));
  EXPECT_THROW(parse_image_location_or_throw("tarball:/x", "--output"), trainpack::Error);
  EXPECT_THROW(parse_image_location_or_throw("oci:", "--output"), trainpack::Error);
  try {
    parse_image_location_or_throw("dir:/x", "--output");
    FAIL();
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dir:/x"), std::string::npos);
    EXPECT_NE(e.hint().find("oci:DIR"), std::string::npos);
  }
}

// An OCI layout's tag is its org.opencontainers.image.ref.name, whose grammar the image spec gives (annotations.md).
TEST(ImageLocation, OciTagsFollowTheRefNameGrammar) {
  for (std::string tag : {"v1", "3.11-slim", "library/python:3.11", "a--b", "x@y", "1+2", "latest"})
    EXPECT_EQ(parse_image_location_or_throw("oci:/tmp/layout:" + tag, "--output").ref, tag);
  for (std::string tag : {"bad tag!", "../../x", "-lead", "trail.", "a//b", "/abs", "a---b", "x\ny"}) {
    try {
      parse_image_location_or_throw("oci:/tmp/layout:" + tag, "--output");
      ADD_FAILURE() << tag << " was accepted";
    } catch (const trainpack::Error& e) {
      EXPECT_EQ(std::string(e.what()), "--output: \"" + tag + "\" is not a valid OCI layout tag");
      EXPECT_NE(e.hint().find("oci:DIR:v1.0"), std::string::npos) << e.hint();
    }
  }
}
