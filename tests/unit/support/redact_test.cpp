// support/redact: passwords in URLs and references, secrets in other programs' text, and in our own argv.
#include "support/redact.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using trainpack::blank_secret_arguments;
using trainpack::mask_secrets;
using trainpack::mask_userinfo;

TEST(Redact, UserinfoPasswordsInUrlsAndReferences) {
  EXPECT_EQ(mask_userinfo("https://user:PASSWORD@pypi.example.com/simple"), "https://user:***@pypi.example.com/simple");
  EXPECT_EQ(mask_userinfo("--index-url=https://u:p%40ss@h:8443/simple?x=1"), "--index-url=https://u:***@h:8443/simple?x=1");
  EXPECT_EQ(mask_userinfo("https://TOKEN@github.com/org/repo"), "https://***@github.com/org/repo");
  EXPECT_EQ(mask_userinfo("docker://user:PASSWORD@host/repo:tag"), "docker://user:***@host/repo:tag");
  EXPECT_EQ(mask_userinfo("invalid image reference \"user:PASSWORD@host/repo:tag\": invalid registry host "
                          "\"user:PASSWORD@host\""),
            "invalid image reference \"user:***@host/repo:tag\": invalid registry host \"user:***@host\"");
  EXPECT_EQ(mask_userinfo("--output-image-uri=user:pa:ss,w;rd@host:5000/repo"), "--output-image-uri=user:***@host:5000/repo");
  EXPECT_EQ(mask_userinfo("a https://u:p@a/ and http://v:q@b c"), "a https://u:***@a/ and http://v:***@b c");
  EXPECT_EQ(mask_userinfo("'u:p@ss@host/r'"), "'u:***@host/r'");  // the last '@' ends the userinfo, as urllib's
}

TEST(Redact, WhatIsNoUserinfoStays) {
  for (std::string text : {"python:3.11@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                           "host:5000/repo:tag@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                           "trainer-sa@my-project.iam.gserviceaccount.com", "https://host/path@thing",
                           "https://pypi.org/simple", "pkg @ file:///tmp/x.whl", "", "no secrets here"})
    EXPECT_EQ(mask_userinfo(text), text);
}

TEST(Redact, SecretsInOtherProgramsText) {
  EXPECT_EQ(mask_secrets("error: password=hunter2 rejected"), "error: password=*** rejected");
  EXPECT_EQ(mask_secrets(R"({"Username":"me","Secret":"hunter2"})"), R"({"Username":"me","Secret":"***"})");
  EXPECT_EQ(mask_secrets("Authorization: Basic dXNlcjpodW50ZXIy"), "Authorization: Basic ***");
  EXPECT_EQ(mask_secrets("sending Bearer abc.def-ghi"), "sending Bearer ***");
  EXPECT_EQ(mask_secrets("--api-key hunter2 --client_secret: x1"), "--api-key hunter2 --client_secret: ***");
  EXPECT_EQ(mask_secrets("got ya29.a0AfH6SMBxQ3k9ZpLr7TqW2 from the keyring"), "got *** from the keyring");
  EXPECT_EQ(mask_secrets("for user:hunter2@registry.example.com"), "for user:***@registry.example.com");
  const std::string plain =
      "keyring locked; sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef at /usr/lib/x86_64";
  EXPECT_EQ(mask_secrets(plain), plain);
}

TEST(Redact, SecretArgumentsAreBlankedInPlace) {
  std::vector<std::string> args{"trainpack",
                                "--index-url=https://user:hunter2@pypi.example.com/simple",
                                "--extra-index-url",
                                "https://u:pw@other.example.com/simple",
                                "--output=docker://user:hunter2@host/repo:tag",
                                "--token",
                                "hunter2",
                                "--env=API_TOKEN=hunter2",
                                "--cache-dir=/tmp/Build-Cache-2024xyzAbc/cache"};
  std::vector<std::size_t> sizes;
  std::vector<char*> argv;
  for (auto& a : args) {
    sizes.push_back(a.size());
    argv.push_back(a.data());
  }
  blank_secret_arguments(static_cast<int>(argv.size()), argv.data());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string shown(argv[i]);  // what /proc/PID/cmdline shows up to the argument's first NUL
    EXPECT_EQ(shown.find("hunter2"), std::string::npos) << shown;
    EXPECT_EQ(shown.find(":pw@"), std::string::npos) << shown;
    EXPECT_EQ(args[i].size(), sizes[i]) << "the argument keeps its place in the process's memory";
    EXPECT_EQ(std::string(args[i].c_str() + shown.size(), args[i].size() - shown.size()).find_first_not_of('\0'),
              std::string::npos)
        << "the rest of the argument is NUL: " << i;
  }
  EXPECT_STREQ(argv[1], "--index-url=https://user:***@pypi.example.com/simple");
  EXPECT_STREQ(argv[6], "***");
  EXPECT_STREQ(argv[8], "--cache-dir=/tmp/Build-Cache-2024xyzAbc/cache");
}
