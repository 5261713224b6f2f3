#include "layers/unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/unit/image_test_support.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/process.h"

using namespace trainpack;
using namespace trainpack::image;
using namespace trainpack::layers;
namespace fs = std::filesystem;

namespace {

struct Member {
  std::string name;
  char type = 'f';  // f file, d dir, l symlink, h hardlink
  std::string data;  // content, or link target
  unsigned mode = 0;
  int uid = 0, gid = 0;
};

std::string tar_of(const std::vector<Member>& members) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  auto cb = [](archive*, void* c, const void* b, size_t n) -> la_ssize_t {
    static_cast<std::string*>(c)->append(static_cast<const char*>(b), n);
    return static_cast<la_ssize_t>(n);
  };
  archive_write_open(a, &out, nullptr, cb, nullptr);
  for (const auto& m : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.name.c_str());
    archive_entry_set_mtime(e, 1000, 0);
    archive_entry_set_uid(e, m.uid);
    archive_entry_set_gid(e, m.gid);
    switch (m.type) {
      case 'd':
        archive_entry_set_filetype(e, AE_IFDIR);
        archive_entry_set_perm(e, m.mode ? m.mode : 0755);
        break;
      case 'l':
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_perm(e, 0777);
        archive_entry_set_symlink(e, m.data.c_str());
        break;
      case 'c':
        archive_entry_set_filetype(e, AE_IFCHR);
        archive_entry_set_perm(e, 0666);
        archive_entry_set_rdevmajor(e, 1);
        archive_entry_set_rdevminor(e, 3);
        break;
      case 'h':
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_hardlink(e, m.data.c_str());
        break;
      default:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, m.mode ? m.mode : 0644);
        archive_entry_set_size(e, static_cast<la_int64_t>(m.data.size()));
    }
    archive_write_header(a, e);
    if (m.type == 'f' && !m.data.empty()) archive_write_data(a, m.data.data(), m.data.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

class Unpack : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = make_temp_dir({}, "unpack-test");
    rootfs_ = tmp_ / "rootfs";
    fs::create_directories(rootfs_);
  }
  void TearDown() override { fs::remove_all(tmp_); }
  void apply(const std::vector<Member>& members, bool gz = false) {
    fs::path blob = tmp_ / ("layer" + std::to_string(n_++));
    std::string t = tar_of(members);
    std::ofstream(blob, std::ios::binary) << (gz ? test_support::gzip(t) : t);
    apply_layer(blob, trainpack::image::sha256_of(t), rootfs_, "test layer");
  }
  fs::path tmp_, rootfs_;
  int n_ = 0;
};

}  // namespace

TEST_F(Unpack, WhiteoutRemovesLowerPath) {
  apply({{"etc/", 'd', ""}, {"etc/a", 'f', "A"}, {"etc/b", 'f', "B"}, {"var/", 'd', ""}, {"var/x/", 'd', ""}, {"var/x/y", 'f', "Y"}});
  apply({{"etc/.wh.a", 'f', ""}, {"var/.wh.x", 'f', ""}, {"etc/c", 'f', "C"}}, /*gz=*/true);
  EXPECT_FALSE(fs::exists(rootfs_ / "etc/a"));
  EXPECT_TRUE(fs::exists(rootfs_ / "etc/b"));
  EXPECT_EQ(slurp(rootfs_ / "etc/c"), "C");
  EXPECT_FALSE(fs::exists(rootfs_ / "var/x"));
  EXPECT_TRUE(fs::is_directory(rootfs_ / "var"));
  EXPECT_FALSE(fs::exists(rootfs_ / "etc/.wh.a"));
}

TEST_F(Unpack, OpaqueDirKeepsOnlyThisLayersEntriesWhateverTheirOrder) {
  apply({{"d/", 'd', ""}, {"d/old", 'f', "o"}, {"d/sub/", 'd', ""}, {"d/sub/old2", 'f', "o"}, {"keep", 'f', "k"}});
  apply({{"d/", 'd', ""}, {"d/new1", 'f', "1"}, {"d/sub/new3", 'f', "3"}, {"d/.wh..wh..opq", 'f', ""}, {"d/new2", 'f', "2"}});
  EXPECT_FALSE(fs::exists(rootfs_ / "d/old"));
  EXPECT_FALSE(fs::exists(rootfs_ / "d/sub/old2"));
  EXPECT_EQ(slurp(rootfs_ / "d/new1"), "1");
  EXPECT_EQ(slurp(rootfs_ / "d/new2"), "2");
  EXPECT_EQ(slurp(rootfs_ / "d/sub/new3"), "3");
  EXPECT_FALSE(fs::exists(rootfs_ / "d/.wh..wh..opq"));
  EXPECT_TRUE(fs::exists(rootfs_ / "keep"));
}

TEST_F(Unpack, HardlinksModesSymlinksAndReplacement) {
  apply({{"bin/", 'd', "", 0750}, {"bin/tool", 'f', "T", 0755}, {"bin/alias", 'h', "bin/tool"},
         {"lnk", 'l', "/bin/tool"}, {"dir/", 'd', ""}, {"dir/f", 'f', "x"}});
  struct stat a {}, b {};
  ASSERT_EQ(::stat((rootfs_ / "bin/tool").c_str(), &a), 0);
  ASSERT_EQ(::stat((rootfs_ / "bin/alias").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_mode & 07777, 0755u);
  EXPECT_EQ(fs::status(rootfs_ / "bin").permissions(), static_cast<fs::perms>(0750));
  EXPECT_EQ(fs::read_symlink(rootfs_ / "lnk"), "/bin/tool");
  EXPECT_EQ(a.st_mtime, 1000);
  // A file over a non-empty directory replaces it, as Docker does.
  apply({{"dir", 'f', "now a file"}});
  EXPECT_EQ(slurp(rootfs_ / "dir"), "now a file");
}

TEST_F(Unpack, EntriesEscapingTheRootAreRefused) {
  fs::path outside = tmp_ / "outside";
  fs::create_directories(outside);
  EXPECT_THROW(apply({{"../evil", 'f', "x"}}), Error);
  EXPECT_THROW(apply({{"a/../../evil", 'f', "x"}}), Error);
  EXPECT_THROW(apply({{"/abs", 'f', "x"}}), Error);
  EXPECT_THROW(apply({{"h", 'h', "../outside-file"}}), Error);
  // A symlinked parent (from a lower layer or the same one) is never followed.
  apply({{"esc", 'l', outside.string()}});
  EXPECT_THROW(apply({{"esc/pwned", 'f', "x"}}), Error);
  EXPECT_THROW(apply({{"esc/.wh.victim", 'f', ""}}), Error);
  EXPECT_THROW(apply({{"l2", 'l', "../outside"}, {"l2/pwned", 'f', "x"}}), Error);
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_FALSE(fs::exists(tmp_ / "evil"));
}

TEST_F(Unpack, UnpackImageAppliesEveryLayerIntoAnEmptyDir) {
  auto built = test_support::make_image(tmp_ / "store", "amd64", {{"one", "1"}, {"two", "2"}});
  fs::path r = tmp_ / "r2";
  unpack_image(*built.image, r);
  EXPECT_EQ(slurp(r / "app/one"), "1");
  EXPECT_EQ(slurp(r / "app/two"), "2");
  EXPECT_THROW(unpack_image(*built.image, r), Error);  // not empty any more
}

// Each layer is checked against the config's diff_id as it is applied.
TEST_F(Unpack, ALayerThatIsNotItsDiffIdIsRefused) {
  auto built = test_support::make_image(tmp_ / "store", "amd64", {{"one", "1"}, {"two", "2"}});
  const std::string wrong = sha256_of("not the layer").str();
  auto bad = test_support::with_diff_id(*built.image, 1, wrong);
  try {
    unpack_image(*bad, tmp_ / "r3");
    ADD_FAILURE() << "a wrong diff_id was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "bad-diff-id layer 2/2 (" + built.layers[1].digest.str() +
                                         "): its uncompressed tar hashes to " + built.layers[1].diff_id.str() +
                                         " but the config's diff_id is " + wrong);
  }
}

TEST_F(Unpack, OwnersAndSpecialBitsAreKeptAsRootDevicesNeverFail) {
  apply({{"opt/", 'd', "", 0755, 1234, 2345}, {"opt/suid", 'f', "s", 04755, 1234, 2345}, {"dev/", 'd', ""},
         {"dev/null", 'c', ""}});
  struct stat st {};
  ASSERT_EQ(::stat((rootfs_ / "opt/suid").c_str(), &st), 0);
  if (::geteuid() == 0) {
    EXPECT_EQ(st.st_uid, 1234u);
    EXPECT_EQ(st.st_gid, 2345u);
    EXPECT_EQ(st.st_mode & 07777, 04755u);
    ASSERT_EQ(::stat((rootfs_ / "opt").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 1234u);
  }
  // dev/null is a device node when mknod is permitted, and silently absent otherwise.
  struct stat dn {};
  if (::lstat((rootfs_ / "dev/null").c_str(), &dn) == 0) {
    EXPECT_TRUE(S_ISCHR(dn.st_mode));
  }
}

namespace {

// The files under `root` as `find` sees them (name, type, mode, owner, size, link target), sorted.
std::string listing_of(const fs::path& root) {
  const std::string script = "cd \"$1\" && find . -printf '%p %y %m %U:%G %s %l\\n' | LC_ALL=C sort";
  auto r = run_process({"sh", "-c", script, "sh", root.string()}, "", std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

// Unpacks `layers` both ways, applied in order to one root and each into a tree of its own stacked with overlayfs,
// and compares what the two show (skipped where overlayfs cannot be mounted).
class OverlayTrees : public Unpack {
 protected:
  void compare(const std::vector<std::vector<Member>>& layers) {
    std::vector<fs::path> trees;  // the nearest first
    std::string lowerdir;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      fs::path blob = tmp_ / ("tree-layer" + std::to_string(i));
      std::string t = tar_of(layers[i]);
      std::ofstream(blob, std::ios::binary) << t;
      apply_layer(blob, sha256_of(t), rootfs_, "test layer");
      fs::path tree = tmp_ / ("tree" + std::to_string(i));
      fs::create_directories(tree);
      unpack_layer_tree(blob, sha256_of(t), tree, trees, "test layer");
      trees.insert(trees.begin(), tree);
      lowerdir = tree.filename().string() + (lowerdir.empty() ? "" : ":" + lowerdir);
    }
    for (const char* dir : {"upper", "work", "merged"}) fs::create_directories(tmp_ / dir);
    const fs::path out = tmp_ / "merged.txt";
    PrivateMount mount{"overlay", "overlay",
                       "lowerdir=" + lowerdir + ",upperdir=" + (tmp_ / "upper").string() + ",workdir=" +
                           (tmp_ / "work").string(),
                       tmp_ / "merged", tmp_};
    const std::string script = "cd \"$1\" && find . -printf '%p %y %m %U:%G %s %l\\n' | LC_ALL=C sort > \"$2\"";
    AttachedRun run = run_attached_with_mount({"sh", "-c", script, "sh", (tmp_ / "merged").string(), out.string()},
                                              ChildOutput::kToStderr, mount, [](const fs::path&) {});
    if (run.mount_errno != 0) GTEST_SKIP() << "overlayfs cannot be mounted here: " << std::strerror(run.mount_errno);
    ASSERT_EQ(run.status, 0);
    EXPECT_EQ(slurp(out), listing_of(rootfs_));
  }
};

}  // namespace

// local-run's root filesystem: the layers' trees stacked by overlayfs show what unpacking the layers in order makes.
TEST_F(OverlayTrees, StackedTreesShowWhatUnpackingInOrderMakes) {
  if (::geteuid() != 0) GTEST_SKIP() << "trees keep whiteouts as devices and xattrs: root only";
  compare({
      {{"etc/", 'd', ""}, {"etc/a", 'f', "A"}, {"etc/b", 'f', "B"}, {"var/", 'd', ""}, {"var/x/", 'd', ""},
       {"var/x/y", 'f', "Y"}, {"d/", 'd', ""}, {"d/old", 'f', "o"}, {"d/sub/", 'd', ""}, {"d/sub/old2", 'f', "o"},
       {"tmp/", 'd', "", 01777}, {"home/", 'd', ""}, {"home/u/", 'd', "", 0700, 1000, 1000}, {"f", 'f', "file"},
       {"dir/", 'd', ""}, {"dir/in", 'f', "x"}},
      // Whiteouts, an opaque directory whose entries come before and after its mark, a file over a directory and a
      // directory over a file.
      {{"etc/.wh.a", 'f', ""}, {"var/.wh.x", 'f', ""}, {"etc/c", 'f', "C"}, {"d/", 'd', ""}, {"d/new1", 'f', "1"},
       {"d/sub/new3", 'f', "3"}, {"d/.wh..wh..opq", 'f', ""}, {"d/new2", 'f', "2"}, {"dir", 'f', "now a file"},
       {"f/", 'd', ""}, {"f/g", 'f', "in a dir"}},
      // Files whose parents the tar leaves out: the lower directories' owner and mode show through.
      {{"tmp/made-later", 'f', "t"}, {"home/u/.wh.gone", 'f', ""}, {"home/u/new/x", 'f', "x"}},
  });
}
