// layers/entry_safety: the layer entries Docker's extractor refuses (and absolute names) are refused wherever a base
// layer passes through trainpack, with the layer and the entry named.
#include "layers/entry_safety.h"

#include <gtest/gtest.h>

#include "image_test_support.h"
#include "layers/rootfs_index.h"
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

namespace {

// A base of one safe layer and one holding `bad`.
trainpack::test_support::BuiltImage image_with(const fs::path& store, const TarMember& bad) {
  return trainpack::test_support::make_image_of_layers(
      store, "amd64", {{{"etc", {}, {}, true}, {"etc/os-release", "ID=debian\n"}}, {{"app", {}, {}, true}, bad}});
}

std::string refusal(const Image& image, const fs::path& cache) {
  try {
    std::vector<Digest> layers;
    for (const Descriptor& d : image.manifest().layers) layers.push_back(d.digest);
    check_layers_are_safe(image, layers, cache);
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
  EXPECT_TRUE(fs::exists(root.path() / "cache" / "checked-layers" / built.layers[0].digest.hex()));
  EXPECT_FALSE(fs::exists(root.path() / "cache" / "checked-layers" / built.layers[1].digest.hex()));
  // Listing a layer for its files refuses it too.
  EXPECT_THROW(list_layer_blob(built.image->blob_path(built.layers[1].digest), "layer"), trainpack::Error);
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
  for (const auto& l : built.layers) mark_layer_safe(root.path() / "cache", l.digest);
  for (const auto& l : built.layers) fs::remove(built.image->blob_path(l.digest));
  EXPECT_EQ(refusal(*built.image, root.path() / "cache"), "") << "marked layers are not read (their blobs are gone)";
}
