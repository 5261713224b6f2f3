// layers/image_extract: parts of a two-layer image copied to a host directory: the merged view (whiteouts, the top
// layer's bytes), symlinks kept but kept inside, hardlinks copied, no setuid bits, opportunistic copies only from
// layers that are read anyway, and no layer read when nothing is pending.
#include "layers/image_extract.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include "support/error.h"
#include "support/fs.h"
#include "tests/unit/image_test_support.h"

using namespace trainpack;
using namespace trainpack::test_support;
namespace fs = std::filesystem;

namespace {

std::vector<std::vector<TarMember>> two_layers() {
  std::vector<TarMember> lower{
      {"usr/", "", "", true},
      {"usr/bin/", "", "", true},
      {"usr/bin/python3.9", "py", "", false, "", 04755},
      {"usr/lib/", "", "", true},
      {"usr/lib/x86_64-linux-gnu/", "", "", true},
      {"usr/lib/x86_64-linux-gnu/ld-2.31.so", "ld", "", false, "", 0755},
      {"usr/lib64/", "", "", true},
      {"usr/lib64/ld-linux-x86-64.so.2", "", "/lib/x86_64-linux-gnu/ld-2.31.so"},
      {"lib", "", "usr/lib"},
      {"lib64", "", "usr/lib64"},
      {"usr/lib/python3.9/", "", "", true},
      {"usr/lib/python3.9/os.py", "old os"},
      {"usr/lib/python3.9/gone.py", "removed above"},
      {"usr/lib/python3.9/test/", "", "", true},
      {"usr/lib/python3.9/test/test_os.py", "tests"},
      {"usr/lib/python3.9/sitecustomize.py", "", "/etc/python3.9/sitecustomize.py"},
      {"usr/lib/python3.9/empty/", "", "", true},
      {"usr/lib/python3.9/loop-a", "", "loop-b"},
      {"usr/lib/python3.9/loop-b", "", "loop-a"},
      {"usr/lib/python3.9/into-loop", "", "../python3.9/loop-a/x"},
      {"etc/", "", "", true},
      {"etc/python3.9/", "", "", true},
      {"etc/python3.9/sitecustomize.py", "# site"},
      {"usr/lib/x86_64-linux-gnu/libfoo.so.1", "foo"},
      {"usr/lib/x86_64-linux-gnu/libbar.so.1", "bar"},
  };
  std::vector<TarMember> upper{
      {"usr/lib/python3.9/os.py", "new os"},
      {"usr/lib/python3.9/.wh.gone.py", ""},
      {"usr/lib/python3.9/hard.py", "", "", false, "usr/lib/python3.9/os.py"},
      {"usr/share/doc/x.txt", "doc text"},
      {"usr/lib/python3.9/doc.txt", "", "", false, "usr/share/doc/x.txt"},
  };
  return {lower, upper};
}

struct Fixture {
  ScopedDir work{make_temp_dir("", "tp-extract-")};
  BuiltImage built = make_image_of_layers(work.path() / "store", "amd64", two_layers());
  std::shared_ptr<const image::Image> image{std::move(built.image)};
  layers::ScannedImage scanned{
      image, store::CacheDir(work.path() / "cache"), {"none", [](std::string_view, std::uint64_t) { return false; }}};
  fs::path dest = work.path() / "stage" / "root";
};

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode;
}

}  // namespace

TEST(ImageExtract, TheMergedViewWithSymlinksKeptInsideAndNoSetuid) {
  Fixture f;
  layers::ImageExtraction ex(f.scanned, f.dest);
  EXPECT_TRUE(ex.add("/lib64/ld-linux-x86-64.so.2"));
  EXPECT_TRUE(ex.add("usr/bin/python3.9"));
  EXPECT_TRUE(ex.add("usr/lib/python3.9", [](std::string_view p) { return p.ends_with("/test"); }));
  EXPECT_FALSE(ex.add("usr/lib/python3.9/nothing.py"));
  ex.copy();

  // The loader through two symlinks: /lib64 -> usr/lib64, then an absolute one, which goes through /lib.
  EXPECT_EQ(fs::read_symlink(f.dest / "lib64"), "usr/lib64");
  EXPECT_EQ(fs::read_symlink(f.dest / "usr/lib64/ld-linux-x86-64.so.2"), "../../usr/lib/x86_64-linux-gnu/ld-2.31.so");
  EXPECT_EQ(fs::read_symlink(f.dest / "lib"), "usr/lib");
  EXPECT_EQ(read_file(f.dest / "lib64/ld-linux-x86-64.so.2"), "ld");
  EXPECT_EQ(mode_of(f.dest / "usr/bin/python3.9") & 07777, 0755u) << "the setuid bit is dropped";
  // Whiteouts and the topmost layer's bytes; a hardlink becomes a copy of what it links to.
  EXPECT_EQ(read_file(f.dest / "usr/lib/python3.9/os.py"), "new os");
  EXPECT_FALSE(fs::exists(f.dest / "usr/lib/python3.9/gone.py"));
  EXPECT_EQ(read_file(f.dest / "usr/lib/python3.9/hard.py"), "new os");
  EXPECT_EQ(fs::hard_link_count(f.dest / "usr/lib/python3.9/hard.py"), 1u);
  EXPECT_EQ(read_file(f.dest / "usr/lib/python3.9/doc.txt"), "doc text");
  EXPECT_FALSE(fs::exists(f.dest / "usr/share/doc/x.txt")) << "the hardlink's source was not asked for";
  EXPECT_FALSE(fs::exists(f.dest / "usr/lib/python3.9/test")) << "skipped subtree";
  EXPECT_TRUE(fs::is_directory(f.dest / "usr/lib/python3.9/empty"));
  // An absolute symlink is rewritten to stay inside (one that climbs out of the root is refused with its layer:
  // entry_safety_test); one to a file brings the file along.
  EXPECT_EQ(fs::read_symlink(f.dest / "usr/lib/python3.9/sitecustomize.py"), "../../../etc/python3.9/sitecustomize.py");
  EXPECT_EQ(read_file(f.dest / "usr/lib/python3.9/sitecustomize.py"), "# site");
  // Symlink loops are copied as they are, and a climbing target into one keeps its lexical place inside.
  EXPECT_EQ(fs::read_symlink(f.dest / "usr/lib/python3.9/loop-a"), "loop-b");
  EXPECT_EQ(fs::read_symlink(f.dest / "usr/lib/python3.9/into-loop"), "../../../usr/lib/python3.9/loop-a/x");
  EXPECT_FALSE(fs::exists(f.dest / "usr/lib/x86_64-linux-gnu/libfoo.so.1")) << "nothing opportunistic was asked";
  // Nothing beside the destination (the hardlink scratch directories are gone).
  EXPECT_EQ(dir_names(f.dest.parent_path()), (std::vector<std::string>{"root"}));
  EXPECT_TRUE(ex.has("usr/lib/python3.9/os.py"));
  EXPECT_TRUE(ex.has("lib64"));
}

TEST(ImageExtract, OpportunisticCopiesComeOnlyFromLayersReadAnywayAndCanBeDropped) {
  Fixture f;
  layers::ImageExtraction ex(f.scanned, f.dest);
  ex.add("usr/bin/python3.9");  // in the lower layer
  auto libraries = [](std::string_view path, std::uint64_t) { return path.find(".so.") != std::string_view::npos; };
  ex.copy(libraries);
  EXPECT_EQ(ex.opportunistic(), (std::set<std::string>{"usr/lib/x86_64-linux-gnu/libbar.so.1",
                                                       "usr/lib/x86_64-linux-gnu/libfoo.so.1"}));
  EXPECT_EQ(read_file(f.dest / "usr/lib/x86_64-linux-gnu/libfoo.so.1"), "foo");
  ex.drop_opportunistic("usr/lib/x86_64-linux-gnu/libbar.so.1");
  EXPECT_FALSE(fs::exists(f.dest / "usr/lib/x86_64-linux-gnu/libbar.so.1"));
  EXPECT_FALSE(ex.has("usr/lib/x86_64-linux-gnu/libbar.so.1"));

  // What is copied already needs no layer: with every blob gone, adding it again and copying still works...
  for (const auto& layer : f.built.layers) fs::remove(f.image->blob_path(layer.digest));
  ex.add("usr/lib/x86_64-linux-gnu/libfoo.so.1");
  ex.add("/lib/x86_64-linux-gnu/libfoo.so.1");  // a symlink on the way: written from the listing alone
  EXPECT_NO_THROW(ex.copy());
  // ...and something new does, which now fails with a cause.
  ex.add("usr/lib/python3.9/os.py");
  EXPECT_THROW(ex.copy(), Error);
}
