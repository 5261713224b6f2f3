// layers/entry_safety: the layer entries Docker's extractor refuses (and absolute names) are refused wherever a base
// layer passes through trainpack, with the layer and the entry named.
#include "layers/entry_safety.h"

#include <gtest/gtest.h>

#include "tests/unit/image_test_support.h"
#include "layers/rootfs_index.h"
#include "store/cache_dir.h"
#include "store/sealed_text.h"
#include "support/error.h"
#include "support/fs.h"

using namespace trainpack::image;
using namespace trainpack::layers;
using trainpack::test_support::TarMember;
namespace fs = std::filesystem;

TEST(EntrySafety, NamesThatLeaveTheRootOrAreAbsolute) {
  EXPECT_EQ(unsafe_entry_reason("../etc/passwd", EntryKind::kOther, ""), "its name leaves the root");
  EXPECT_EQ(unsafe_entry_reason("a/../../b", EntryKind::kOther, ""), "its name leaves the root");
  EXPECT_EQ(unsafe_entry_reason("/etc/passwd", EntryKind::kOther, ""), "its name is absolute");
  EXPECT_FALSE(unsafe_entry_reason("a/../b", EntryKind::kOther, "")) << "stays inside: Docker cleans it to b";
  EXPECT_FALSE(unsafe_entry_reason("./usr/lib/", EntryKind::kOther, ""));
  EXPECT_FALSE(unsafe_entry_reason("a/..b/c..", EntryKind::kOther, "")) << "dots inside names are names";
}

TEST(EntrySafety, LinkTargets) {
  EXPECT_EQ(unsafe_entry_reason("x", EntryKind::kHardlink, "../../etc/shadow"),
            "it is a hardlink to a path outside the root");
  EXPECT_EQ(unsafe_entry_reason("x", EntryKind::kHardlink, "/etc/shadow"), "it is a hardlink to an absolute name");
  EXPECT_FALSE(unsafe_entry_reason("usr/bin/python3", EntryKind::kHardlink, "usr/bin/python3.11"));
  // Relative symlinks are joined to their directory, as createTarFile does.
  EXPECT_EQ(unsafe_entry_reason("etc/x", EntryKind::kSymlink, "../../host"),
            "it is a symlink to a path outside the root");
  EXPECT_FALSE(unsafe_entry_reason("usr/lib/os-release", EntryKind::kSymlink, "../../etc/os-release"));
  EXPECT_FALSE(unsafe_entry_reason("lib", EntryKind::kSymlink, "usr/lib")) << "usrmerge";
  EXPECT_FALSE(unsafe_entry_reason("etc/mtab", EntryKind::kSymlink, "/proc/self/mounts"))
      << "an absolute target resolves inside the root";
}

// A whiteout hides a file of its own directory (OCI image-spec layer.md): one that names no file, the directory
// itself or its parent, or that has entries under it, is refused.
TEST(EntrySafety, WhiteoutsThatHideNoFileOrHoldEntries) {
  EXPECT_EQ(unsafe_entry_reason("app/.wh.", EntryKind::kOther, ""), "it is a whiteout that names no file");
  EXPECT_EQ(unsafe_entry_reason("app/.wh..", EntryKind::kOther, ""), "it is a whiteout of '.', not of a file");
  EXPECT_EQ(unsafe_entry_reason("app/.wh...", EntryKind::kOther, ""), "it is a whiteout of '..', not of a file");
  EXPECT_EQ(unsafe_entry_reason(".wh...", EntryKind::kOther, ""), "it is a whiteout of '..', not of a file");
  EXPECT_EQ(unsafe_entry_reason("app/.wh.x/y", EntryKind::kOther, ""), "it lies under the whiteout '.wh.x'");
  EXPECT_EQ(unsafe_entry_reason("app/.wh..wh..opq/y", EntryKind::kOther, ""),
            "it lies under the whiteout '.wh..wh..opq'");
  EXPECT_EQ(unsafe_entry_reason(".wh..wh..opq/y", EntryKind::kOther, ""), "it lies under the whiteout '.wh..wh..opq'");
  EXPECT_EQ(unsafe_entry_reason("/.wh.x", EntryKind::kOther, ""), "its name is absolute");
  EXPECT_EQ(unsafe_entry_reason("../.wh.x", EntryKind::kOther, ""), "its name leaves the root");
  EXPECT_FALSE(unsafe_entry_reason("app/.wh.x", EntryKind::kOther, ""));
  EXPECT_FALSE(unsafe_entry_reason("app/.wh..x", EntryKind::kOther, "")) << "hides the file '.x'";
  EXPECT_FALSE(unsafe_entry_reason("app/.wh..wh..opq", EntryKind::kOther, ""));
  EXPECT_FALSE(unsafe_entry_reason(".wh..wh..opq", EntryKind::kOther, ""));
  EXPECT_FALSE(unsafe_entry_reason(".wh..wh.plnk/123.456", EntryKind::kOther, "")) << "aufs metadata, Docker skips it";
  EXPECT_FALSE(unsafe_entry_reason("app/x.wh.y/z", EntryKind::kOther, ""));
}

namespace {

// A base of one safe layer and one holding `bad`.
trainpack::test_support::BuiltImage image_with(const fs::path& store, const TarMember& bad) {
  return trainpack::test_support::make_image_of_layers(
      store, "amd64", {{{"etc", {}, {}, true}, {"etc/os-release", "ID=debian\n"}}, {{"app", {}, {}, true}, bad}});
}

fs::path checked(const fs::path& cache) { return trainpack::store::kind_dir(cache, trainpack::store::CacheKind::kCheckedLayers); }

std::string refusal(const Image& image, const fs::path& cache) {
  try {
    std::vector<Digest> layers;
    for (const Descriptor& d : image.manifest().layers) layers.push_back(d.digest);
    trainpack::store::CacheDir dir(cache);
    check_layers_are_safe(image, layers, dir.area(trainpack::store::CacheKind::kCheckedLayers));
  } catch (const trainpack::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(EntrySafety, AnUnsafeBaseLayerIsRefusedNamingTheLayerAndTheEntry) {
  trainpack::ScopedDir root(trainpack::make_temp_dir("", "tp-entry-safety-"));
  const std::vector<std::pair<TarMember, std::string>> cases{
      {{"../escape", "x"}, "unsafe entry '../escape' (its name leaves the root)"},
      {{"/etc/cron.d/evil", "x"}, "unsafe entry '/etc/cron.d/evil' (its name is absolute)"},
      {{"app/link", {}, {}, false, "../../etc/shadow"}, "(it is a hardlink to a path outside the root)"},
      {{"app/up", {}, "../../../host"}, "unsafe entry 'app/up -> ../../../host'"},
      {{"app/.wh...", ""}, "unsafe entry 'app/.wh...' (it is a whiteout of '..', not of a file)"},
      {{"app/.wh.", ""}, "unsafe entry 'app/.wh.' (it is a whiteout that names no file)"},
      {{"app/.wh..wh..opq/x", "x"}, "unsafe entry 'app/.wh..wh..opq/x' (it lies under the whiteout '.wh..wh..opq')"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto built = image_with(root.path() / ("store" + std::to_string(i)), cases[i].first);
    std::string error = refusal(*built.image, root.path() / "cache");
    EXPECT_NE(error.find(cases[i].second), std::string::npos) << error;
    EXPECT_NE(error.find("layer " + built.layers[1].digest.str()), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "one line";
  }
  // The safe first layer is remembered, the unsafe one never is.
  auto built = image_with(root.path() / "store0", cases[0].first);
  EXPECT_TRUE(fs::exists(checked(root.path() / "cache") / built.layers[0].digest.hex()));
  EXPECT_FALSE(fs::exists(checked(root.path() / "cache") / built.layers[1].digest.hex()));
  // Listing a layer for its files refuses it too.
  EXPECT_THROW(list_layer_blob(built.image->blob_path(built.layers[1].digest), built.layers[1].diff_id, "layer"),
               trainpack::Error);
}

TEST(EntrySafety, ASafeLayerIsReadOnce) {
  trainpack::ScopedDir root(trainpack::make_temp_dir("", "tp-entry-safety-"));
  auto built = image_with(root.path() / "store", {"app/usr-link", {}, "/usr/lib"});
  EXPECT_EQ(refusal(*built.image, root.path() / "cache"), "");
  // Its verdict is kept: with the blobs gone, checking again reads nothing.
  for (const auto& l : built.layers) fs::remove(built.image->blob_path(l.digest));
  EXPECT_EQ(refusal(*built.image, root.path() / "cache"), "");
}

TEST(EntrySafety, ALayerAScanListedIsNotReadAgain) {
  trainpack::ScopedDir root(trainpack::make_temp_dir("", "tp-entry-safety-"));
  auto built = image_with(root.path() / "store", {"app/file", "x"});
  trainpack::store::CacheDir cache(root.path() / "cache");
  for (const auto& l : built.layers)
    mark_layer_safe(cache.area(trainpack::store::CacheKind::kCheckedLayers), l.digest, l.diff_id);
  for (const auto& l : built.layers) fs::remove(built.image->blob_path(l.digest));
  EXPECT_EQ(refusal(*built.image, root.path() / "cache"), "") << "marked layers are not read (their blobs are gone)";
}

// A base layer passed on whose uncompressed tar is not the config's diff_id is refused, naming the layer and both
// digests; no mark says it is fine. A mark records the diff_id it checked, so a config that names another diff_id for
// the same blob is refused without reading it, and a mark that records none is no proof.
TEST(EntrySafety, ALayerThatIsNotItsDiffIdIsRefused) {
  trainpack::ScopedDir root(trainpack::make_temp_dir("", "tp-entry-safety-"));
  const fs::path cache = root.path() / "cache";
  auto built = image_with(root.path() / "store", {"app/file", "x"});
  const std::string wrong = sha256_of("not the layer").str();
  auto bad = trainpack::test_support::with_diff_id(*built.image, 1, wrong);
  const std::string expected = "bad-diff-id layer " + built.layers[1].digest.str() +
                               ": its uncompressed tar hashes to " + built.layers[1].diff_id.str() +
                               " but the config's diff_id is " + wrong;
  EXPECT_EQ(refusal(*bad, cache), expected);
  EXPECT_FALSE(fs::exists(checked(cache) / built.layers[1].digest.hex()));

  EXPECT_EQ(refusal(*built.image, cache), "");
  EXPECT_EQ(trainpack::read_file(checked(cache) / built.layers[1].digest.hex(), 1024),
            trainpack::store::seal(built.layers[1].diff_id.str()));
  fs::path blob = built.image->blob_path(built.layers[1].digest);
  std::string bytes = trainpack::read_file(blob, 1 << 20);
  fs::remove(blob);
  EXPECT_EQ(refusal(*bad, cache), expected) << "refused from the mark, without the blob";

  trainpack::write_file_atomic(blob, bytes);
  trainpack::write_file_atomic(checked(cache) / built.layers[1].digest.hex(), "safe\n");
  EXPECT_EQ(refusal(*bad, cache), expected) << "a mark without a diff_id vouches for none";
}

TEST(EntrySafety, ListingALayerChecksItsDiffId) {
  trainpack::ScopedDir root(trainpack::make_temp_dir("", "tp-entry-safety-"));
  for (bool gzip : {true, false}) {
    auto built = trainpack::test_support::make_image_of_layers(root.path() / ("store" + std::to_string(gzip)), "amd64",
                                                               {{{"etc/os-release", "ID=debian\n"}}}, gzip);
    fs::path blob = built.image->blob_path(built.layers[0].digest);
    EXPECT_EQ(list_layer_blob(blob, built.layers[0].diff_id, "layer").entries.size(), 1u);
    Digest wrong = sha256_of("not the layer");
    try {
      list_layer_blob(blob, wrong, "layer x");
      ADD_FAILURE() << "a wrong diff_id was accepted";
    } catch (const trainpack::Error& e) {
      EXPECT_EQ(std::string(e.what()), "layer x: its uncompressed tar hashes to " + built.layers[0].diff_id.str() +
                                           " but the config's diff_id is " + wrong.str());
      EXPECT_NE(e.hint().find("rebuild"), std::string::npos);
    }
  }
}
