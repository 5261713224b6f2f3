#include "layers/rootfs_index.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "layers/blob_store.h"
#include "layers/layer_writer.h"
#include "support/error.h"
#include "support/fs.h"

using namespace trainpack::image;
using namespace trainpack::layers;
namespace fs = std::filesystem;

namespace {
LayerListing listing(std::vector<std::pair<std::string, char>> rows) {
  LayerListing l;
  for (auto& [p, t] : rows) {
    PathInfo i;
    i.type = static_cast<PathInfo::Type>(t);
    i.mode = t == 'd' ? 0755 : 0644;
    l.entries.emplace_back(p, i);
  }
  return l;
}
}  // namespace

TEST(RootfsIndex, WhiteoutsAndOpaqueDirsHideLowerLayersOnly) {
  RootfsIndex idx;
  idx.apply(listing({{"var", 'd'}, {"var/sitecustomize", 'd'}, {"var/sitecustomize/s.py", 'f'},
                     {"etc", 'd'}, {"etc/a", 'f'}, {"etc/b", 'f'}}));
  EXPECT_TRUE(idx.find("var/sitecustomize/s.py"));
  idx.apply(listing({{"var/.wh.sitecustomize", 'f'}, {"etc/c", 'f'}, {"etc/.wh..wh..opq", 'f'}}));
  EXPECT_FALSE(idx.find("var/sitecustomize"));
  EXPECT_FALSE(idx.find("var/sitecustomize/s.py"));
  EXPECT_TRUE(idx.find("var"));
  EXPECT_FALSE(idx.find("etc/a"));
  EXPECT_TRUE(idx.find("etc/c")) << "an opaque marker must not hide its own layer's entries";
  EXPECT_TRUE(idx.find("etc"));
  EXPECT_FALSE(idx.find("var/.wh.sitecustomize"));
}

TEST(RootfsIndex, FileReplacingDirectoryDropsItsChildren) {
  RootfsIndex idx;
  idx.apply(listing({{"x", 'd'}, {"x/y", 'f'}}));
  idx.apply(listing({{"x", 'f'}}));
  EXPECT_EQ(idx.find("x")->type, PathInfo::Type::kRegular);
  EXPECT_FALSE(idx.find("x/y"));
}

TEST(RootfsIndex, ResolveFollowsSymlinksInsideTheImage) {
  RootfsIndex idx;
  LayerListing l = listing({{"usr", 'd'}, {"usr/bin", 'd'}, {"data", 'd'}});
  PathInfo abs_link{PathInfo::Type::kSymlink, 0777, 0, 0, "/usr/bin"};
  PathInfo rel_link{PathInfo::Type::kSymlink, 0777, 0, 0, "../data"};
  PathInfo loop{PathInfo::Type::kSymlink, 0777, 0, 0, "loop"};
  l.entries.emplace_back("bin", abs_link);
  l.entries.emplace_back("usr/home", rel_link);
  l.entries.emplace_back("loop", loop);
  idx.apply(l);
  EXPECT_EQ(idx.resolve("/bin/python3"), "usr/bin/python3");
  EXPECT_EQ(idx.resolve("usr/home/x"), "data/x");
  EXPECT_EQ(idx.resolve("/missing/dir"), "missing/dir");
  EXPECT_THROW(idx.resolve("loop/x"), trainpack::Error);
}

TEST(RootfsIndex, ListsARealLayerBlobAndCachesTheListing) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "rootfs-"));
  BlobStore store(dir.path() / "store");
  LayerBlob blob = write_layer(store, {FileEntry::directory("home", 0700), FileEntry::inline_file("home/f", "x")}, {});
  int fetched = 0;
  auto path = [&] {
    ++fetched;
    return store.path_of(blob.digest);
  };
  auto first = list_layer_cached(path, blob.digest, dir.path() / "listings", "test layer");
  ASSERT_EQ(first.entries.size(), 2u);
  EXPECT_EQ(first.entries[0].first, "home");
  EXPECT_EQ(first.entries[0].second.mode, 0700u);
  fs::remove(store.path_of(blob.digest));  // the cached listing must not need the blob again
  auto second = list_layer_cached(path, blob.digest, dir.path() / "listings", "test layer");
  EXPECT_EQ(fetched, 1) << "a cached listing must not ask for the layer";
  ASSERT_EQ(second.entries.size(), 2u);
  EXPECT_EQ(second.entries[1].first, "home/f");
}

TEST(RootfsIndex, ChildrenAreTheNamesDirectlyUnderADirectory) {
  RootfsIndex idx;
  idx.apply(listing({{"usr", 'd'}, {"usr/lib", 'd'}, {"usr/lib/a-b", 'f'}, {"usr/lib/a", 'd'}, {"usr/lib/a.x", 'f'},
                     {"usr/lib/a/deep/er", 'f'}, {"usr/lib/z", 'f'}, {"usr/lib/implicit/file", 'f'}, {"usr/libx", 'f'}}));
  EXPECT_EQ(idx.children("usr/lib"), (std::vector<std::string>{"a", "a-b", "a.x", "implicit", "z"}));
  EXPECT_EQ(idx.children(""), (std::vector<std::string>{"usr"}));
  EXPECT_TRUE(idx.children("nothing").empty());
}

// A cached listing is our own file, but a damaged one must only make the layer be listed again (nullopt), whatever
// the damage: a mode that is a string threw the JSON library's type_error, an internal error.
TEST(LayerListingCache, RowsWithMembersOfTheWrongTypeAreNotAListing) {
  LayerListing listing;
  PathInfo info;
  info.type = PathInfo::Type::kSymlink;
  info.mode = 0777;
  info.link_target = "python3.11";
  listing.entries.emplace_back("usr/bin/python3", info);
  std::optional<LayerListing> again = parse_listing(serialize_listing(listing));
  ASSERT_TRUE(again);
  ASSERT_EQ(again->entries.size(), 1u);
  EXPECT_EQ(again->entries[0].second.link_target, "python3.11");

  for (const char* text : {R"([["a","f","644",0,0,""]])", R"([["a","f",420,-1,0,""]])",
                           R"([["a","f",420,0,4294967296,""]])", R"([["a","f",420,0,0,7]])",
                           R"([["a","f",420.5,0,0,""]])"})
    EXPECT_FALSE(parse_listing(text)) << text;
}

// A blob libarchive cannot open, and about which it sets no error string (this gzip stream, found by the layer_tar
// fuzz target), is an Error; the message was built from a null pointer (a crash).
TEST(LayerListingBlob, UnreadableBlobWithoutLibarchiveMessageIsAnError) {
  fs::path blob = fs::path(TRAINPACK_SOURCE_DIR) / "tests/fuzz/corpus/layer_tar/open-fails-without-message.tar.gz";
  try {
    list_layer_blob(blob, std::nullopt, "layer x");
    ADD_FAILURE() << "listed";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer x: "), std::string::npos) << e.what();
  }
}
