// support/privileges: a build started as root runs setup.py as an unprivileged user who can reach what the build
// gives it and nothing of root's.
#include "support/privileges.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/fs.h"
#include "support/process.h"

using namespace trainpack;
namespace fs = std::filesystem;

namespace {

class PrivilegesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "a process that is not root has nothing to give up";
    std::optional<UserIds> found = unprivileged_build_user();
    ASSERT_TRUE(found) << "root here can become nobody";
    user_ = *found;
  }
  UserIds user_;
  ScopedDir root_{make_temp_dir("", "tp-privileges-")};  // 0700, root's: like root's home
};

}  // namespace

TEST_F(PrivilegesTest, TheBuildUserIsNobodyAndAChildRunsAsIt) {
  EXPECT_EQ(user_.uid, 65534u);
  ProcessOptions options;
  options.run_as = user_;
  ProcessResult r = run_process({"/bin/sh", "-c", "id -u; id -G; grep NoNewPrivs /proc/self/status"}, "",
                                std::chrono::seconds(10), options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "65534\n65534\nNoNewPrivs:\t1\n") << "no supplementary group of root's is kept";
}

TEST_F(PrivilegesTest, ItCannotReadRootsFilesNorThisProcess) {
  fs::path secret = root_.path() / "config.json";
  write_file_atomic(secret, "{\"auths\":{\"r\":{\"auth\":\"c2VjcmV0\"}}}");
  fs::permissions(secret, fs::perms(0600));
  EXPECT_FALSE(reachable_by(secret, user_));
  ProcessOptions options;
  options.run_as = user_;
  ProcessResult r = run_process({"/bin/sh", "-c", "cat \"$0\"; cat /proc/$PPID/environ; echo done", secret.string()},
                                "", std::chrono::seconds(10), options);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
}

TEST_F(PrivilegesTest, GivenTreesAreItsAndMirrorsAreReadableButNotWritable) {
  fs::path given = root_.path() / "tree";
  fs::create_directories(given / "a");
  write_file_atomic(given / "a" / "f", "x");
  fs::create_symlink("/etc/passwd", given / "link");
  give_tree(given, user_);
  struct stat st {};
  ASSERT_EQ(::lstat((given / "a" / "f").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user_.uid);
  ASSERT_EQ(::stat("/etc/passwd", &st), 0);
  EXPECT_EQ(st.st_uid, 0u) << "a symlink is handed over, never what it points at";

  fs::path cache_entry = root_.path() / "cache" / "key";
  fs::create_directories(cache_entry / "lib");
  write_file_atomic(cache_entry / "lib" / "m.py", "X = 1\n");
  fs::path open_dir = make_temp_dir("", "tp-privileges-open-");
  ScopedDir cleanup(open_dir);
  fs::permissions(open_dir, fs::perms(0711));
  EXPECT_FALSE(reachable_by(cache_entry / "lib", user_));
  mirror_tree(cache_entry, open_dir / "mirror");
  EXPECT_TRUE(reachable_by(open_dir / "mirror" / "lib", user_));
  ProcessOptions options;
  options.run_as = user_;
  ProcessResult r = run_process({"/bin/sh", "-c", "cat \"$0\"/lib/m.py; echo y > \"$0\"/lib/m.py || echo refused",
                                 (open_dir / "mirror").string()},
                                "", std::chrono::seconds(10), options);
  EXPECT_EQ(r.out, "X = 1\nrefused\n") << r.err;
  EXPECT_EQ(read_file(cache_entry / "lib" / "m.py"), "X = 1\n");
}
