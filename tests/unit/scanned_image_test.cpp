#include "layers/scanned_image.h"

#include <gtest/gtest.h>

#include <atomic>

#include "support/error.h"
#include "tests/unit/image_test_support.h"

using namespace trainpack::image;
using namespace trainpack::layers;
using trainpack::test_support::make_image_of_layers;
using trainpack::test_support::TarMember;
namespace fs = std::filesystem;

namespace {

// Counts the layer blobs asked for, to show what a cached scan does not read.
class CountingImage : public Image {
 public:
  explicit CountingImage(const Image& inner) : inner_(inner) {}
  const std::string& raw_manifest() const override { return inner_.raw_manifest(); }
  const std::string& raw_config() const override { return inner_.raw_config(); }
  fs::path blob_path(const Digest& d) const override {
    ++blob_reads;
    return inner_.blob_path(d);
  }
  std::string describe() const override { return "counting"; }
  mutable std::atomic<int> blob_reads{0};

 private:
  const Image& inner_;
};

ScanSelection python_files() {
  return {"test-v1", [](std::string_view path, std::uint64_t size) {
            return size < 4096 && (path.ends_with("/METADATA") || path.starts_with("usr/bin/pip"));
          }};
}

}  // namespace

TEST(ScannedImage, ListsAllLayersKeepsSelectedFilesAndReadsOthersOnDemand) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-scan-"));
  std::vector<TarMember> base{{"usr/", "", "", true},
                              {"usr/bin/", "", "", true},
                              {"usr/bin/pip3", "#!/usr/bin/python3\nimport pip\n", "", false},
                              {"usr/bin/python3", "", "python3.11", false},
                              {"usr/bin/python3.11", "ELF...", "", false},
                              {"usr/lib/python3/dist-packages/six-1.16.0.dist-info/METADATA", "Name: six\nVersion: 1.16.0\n", "", false},
                              {"usr/lib/python3/dist-packages/old-1.0.dist-info/METADATA", "Name: old\n", "", false},
                              {"etc/os-release", "ID=debian\n", "", false}};
  std::vector<TarMember> top{{"bin", "", "usr/bin", false},
                             {"usr/lib/python3/dist-packages/.wh.old-1.0.dist-info", "", "", false},
                             {"usr/lib/python3/dist-packages/six-1.16.0.dist-info/METADATA", "Name: six\nVersion: 1.16.1\n", "", false}};
  auto built = make_image_of_layers(dir.path() / "store", "amd64", {base, top});
  auto counting = std::make_shared<CountingImage>(*built.image);

  {
    ScannedImage scan(counting, dir.path() / "cache", python_files());
    EXPECT_EQ(counting->blob_reads.load(), 2);
    EXPECT_EQ(scan.read("bin/pip3", 1 << 20), "#!/usr/bin/python3\nimport pip\n") << "through the /bin symlink";
    EXPECT_EQ(scan.resolve("bin/python3"), "usr/bin/python3.11");
    EXPECT_EQ(scan.read("usr/lib/python3/dist-packages/six-1.16.0.dist-info/METADATA", 1 << 20),
              "Name: six\nVersion: 1.16.1\n") << "the top layer's copy";
    EXPECT_FALSE(scan.read("usr/lib/python3/dist-packages/old-1.0.dist-info/METADATA", 1 << 20).has_value())
        << "whited out";
    EXPECT_EQ(scan.children("usr/lib/python3/dist-packages"), (std::vector<std::string>{"six-1.16.0.dist-info"}));
    EXPECT_EQ(scan.children("/usr/lib/python3/dist-packages"), scan.children("usr/lib/python3/dist-packages"))
        << "a leading / is tolerated";
    EXPECT_EQ(scan.children("bin"), scan.children("usr/bin")) << "resolved first, as ImageFilesystem says";
    EXPECT_EQ(counting->blob_reads.load(), 2) << "selected files come from the scan";
    EXPECT_EQ(scan.read("etc/os-release", 1 << 20), "ID=debian\n") << "not selected: its layer is read again";
    EXPECT_EQ(counting->blob_reads.load(), 3);
    EXPECT_FALSE(scan.read("usr/bin", 1 << 20).has_value()) << "a directory has no bytes";
    EXPECT_THROW(scan.read("usr/bin/pip3", 4), trainpack::Error) << "over the size limit";
  }
  // A second scan of the same image: nothing is read from the layers, the on-demand copy included.
  auto again = std::make_shared<CountingImage>(*built.image);
  ScannedImage cached(again, dir.path() / "cache", python_files());
  EXPECT_EQ(cached.read("etc/os-release", 1 << 20), "ID=debian\n");
  EXPECT_EQ(cached.read("usr/bin/pip3", 1 << 20), "#!/usr/bin/python3\nimport pip\n");
  EXPECT_EQ(again->blob_reads.load(), 0);
  // Another selection is another cache entry.
  ScannedImage other(again, dir.path() / "cache", {"test-v2", [](std::string_view, std::uint64_t) { return false; }});
  EXPECT_EQ(again->blob_reads.load(), 2);
}
