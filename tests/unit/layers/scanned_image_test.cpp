#include "layers/scanned_image.h"

#include <gtest/gtest.h>

#include <atomic>

#include "store/cache_dir.h"
#include "support/error.h"
#include "tests/unit/image_test_support.h"

using namespace trainpack::image;
using namespace trainpack::layers;
using trainpack::store::CacheDir;
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
    ScannedImage scan(counting, CacheDir(dir.path() / "cache"), python_files());
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
  ScannedImage cached(again, CacheDir(dir.path() / "cache"), python_files());
  EXPECT_EQ(cached.read("etc/os-release", 1 << 20), "ID=debian\n");
  EXPECT_EQ(cached.read("usr/bin/pip3", 1 << 20), "#!/usr/bin/python3\nimport pip\n");
  EXPECT_EQ(again->blob_reads.load(), 0);
  // Another selection is another cache entry.
  ScannedImage other(again, CacheDir(dir.path() / "cache"),
                     {"test-v2", [](std::string_view, std::uint64_t) { return false; }});
  EXPECT_EQ(again->blob_reads.load(), 2);
}

// A layer whose uncompressed tar is not the config's diff_id is refused by the scan that reads it, and nothing is
// kept that would vouch for it: neither a scan nor a safety mark. A scan made for the right diff_id does not vouch
// for another config naming the same layer blob with a wrong one.
TEST(ScannedImage, ALayerThatIsNotItsDiffIdIsRefusedAndNotCached) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-scan-"));
  auto built = make_image_of_layers(dir.path() / "store", "amd64",
                                    {{{"etc/os-release", "ID=debian\n"}}, {{"usr/bin/pip3", "pip"}}});
  const std::string wrong = sha256_of("not the layer").str();
  std::shared_ptr<const Image> bad = trainpack::test_support::with_diff_id(*built.image, 1, wrong);
  auto scan_error = [&](std::shared_ptr<const Image> image) -> std::string {
    try {
      ScannedImage scan(image, CacheDir(dir.path() / "cache"), python_files());
    } catch (const trainpack::Error& e) {
      return e.what();
    }
    return "";
  };
  std::string error = scan_error(bad);
  EXPECT_EQ(error, "bad-diff-id layer " + built.layers[1].digest.str() + ": its uncompressed tar hashes to " +
                       built.layers[1].diff_id.str() + " but the config's diff_id is " + wrong);
  EXPECT_FALSE(fs::exists(CacheDir(dir.path() / "cache")
                              .area(trainpack::store::CacheKind::kScans)
                              .path_of(ScannedImage::scan_key("test-v1", built.layers[1].digest,
                                                              Digest::parse_or_throw(wrong, "test")))));
  EXPECT_FALSE(fs::exists(trainpack::store::kind_dir(dir.path() / "cache", trainpack::store::CacheKind::kCheckedLayers) /
                          built.layers[1].digest.hex()));

  // The right config scans; the wrong one is still refused, its layer read again.
  ScannedImage good(std::shared_ptr<const Image>(built.image.get(), [](const Image*) {}),
                    CacheDir(dir.path() / "cache"),
                    python_files());
  EXPECT_EQ(good.read("usr/bin/pip3", 1 << 20), "pip");
  auto counting = std::make_shared<CountingImage>(*bad);
  EXPECT_NE(scan_error(counting).find("but the config's diff_id is " + wrong), std::string::npos);
  EXPECT_EQ(counting->blob_reads.load(), 1) << "only the layer whose diff_id no scan checked";
}
