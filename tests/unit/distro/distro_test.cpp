// distro/: what an image's OS says about itself — accounts, os-release, the package databases, the libc.
#include <gtest/gtest.h>

#include "distro/libc.h"
#include "distro/os_release.h"
#include "distro/package_db.h"
#include "distro/users.h"
#include "layers/memory_filesystem.h"

namespace trainpack::distro {
namespace {

TEST(DistroUsers, NumericUsersAreUidsAndNamesAreNames) {
  auto passwd = parse_passwd(
      "# comment\nroot:x:0:0:root:/root:/bin/bash\n1000:x:1001:1001::/home/odd:/bin/sh\n"
      "trainer:x:1000:100:Trainer:/home/trainer:/bin/sh\nshort:x:7:7\nbad:x:nope:1:::\n");
  ASSERT_EQ(passwd.size(), 4u);
  EXPECT_EQ(find_user(passwd, "1000")->name, "trainer");  // docker: a number is a uid, never a name
  EXPECT_EQ(find_user(passwd, "trainer")->home, "/home/trainer");
  EXPECT_EQ(find_user(passwd, "short")->home, "");
  EXPECT_EQ(find_user(passwd, "bad"), nullptr);
  EXPECT_EQ(find_user(passwd, "99"), nullptr);
}

TEST(DistroUsers, GroupsAndIds) {
  auto groups = parse_group("staff:x:50:trainer,other\nusers:x:100:\n");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(find_group(groups, "staff")->members, (std::vector<std::string>{"trainer", "other"}));
  EXPECT_EQ(find_group(groups, "100")->name, "users");
  EXPECT_EQ(parse_id("4294967294"), 4294967294u);
  EXPECT_FALSE(parse_id("4294967295"));
  EXPECT_FALSE(parse_id("-1"));
}

TEST(DistroOsRelease, EtcFirstWithShellQuoting) {
  layers::MemoryFilesystem fs;
  fs.add_file("usr/lib/os-release", "ID=wrong\n");
  fs.add_file("etc/os-release", "# x\nID=rhel\nVERSION_ID=\"9.4\"\nID_LIKE='fedora'\n");
  OsRelease os = read_os_release(fs);
  EXPECT_EQ(os.id, "rhel");
  EXPECT_EQ(os.version_id, "9.4");
  EXPECT_EQ(os.id_like, "fedora");
}

TEST(DistroPackageDb, DpkgApkAndUpstreamVersions) {
  std::string status =
      "Package: libc6\nStatus: deinstall ok config-files\nVersion: 2.31-1\n\n"
      "Package: libc6\nStatus: install ok installed\nVersion: 2.36-9+deb12u4\n";
  EXPECT_EQ(dpkg_version(status, "libc6"), "2.36-9+deb12u4");
  EXPECT_EQ(upstream_version("1:2.36-9+deb12u4"), "2.36");
  EXPECT_EQ(apk_version("P:musl\nV:1.2.4-r2\n\nP:python3\nV:3.11.8-r0\n", "python3"), "3.11.8-r0");
  EXPECT_EQ(upstream_version("3.12.0~rc1-1"), "3.12.0rc1");
}

TEST(DistroLibc, GlibcFromTheBannerNextToTheLoader) {
  layers::MemoryFilesystem fs;
  fs.add_file("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "");
  fs.add_file("lib/x86_64-linux-gnu/libc.so.6", std::string("\0GNU C Library release version 2.36.\0", 38));
  Libc libc = read_libc(fs, "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "x86_64-linux-gnu", std::nullopt,
                        std::nullopt);
  EXPECT_EQ(libc.name, "glibc");
  EXPECT_EQ(libc.version, "2.36");
  EXPECT_EQ(read_libc(fs, "/lib/ld-musl-x86_64.so.1", "", std::nullopt, std::string("P:musl\nV:1.2.4-r2\n")).version,
            "1.2.4");
}

}  // namespace
}  // namespace trainpack::distro
