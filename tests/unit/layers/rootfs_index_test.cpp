#include "layers/rootfs_index.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "layers/layer_writer.h"
#include "store/blob_store.h"
#include "support/error.h"
#include "support/fs.h"

using namespace trainpack::image;
using namespace trainpack::layers;
using namespace trainpack::store;
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

TEST(RootfsIndex, ListsARealLayerBlobAndItsListingSurvivesTheCacheFormat) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "rootfs-"));
  BlobStore store(dir.path() / "store");
  LayerBlob blob = write_layer(store, {FileEntry::directory("home", 0700), FileEntry::inline_file("home/f", "x")}, {});
  auto first = list_layer_blob(store.path_of(blob.digest), blob.diff_id, "test layer");
  ASSERT_EQ(first.entries.size(), 2u);
  EXPECT_EQ(first.entries[0].first, "home");
  EXPECT_EQ(first.entries[0].second.mode, 0700u);
  std::optional<LayerListing> second = parse_listing(serialize_listing(first));
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->entries.size(), 2u);
  EXPECT_EQ(second->entries[1].first, "home/f");
  EXPECT_EQ(second->entries[0].second.mode, 0700u);
}

TEST(RootfsIndex, ChildrenAreTheNamesDirectlyUnderADirectory) {
  RootfsIndex idx;
  idx.apply(listing({{"usr", 'd'}, {"usr/lib", 'd'}, {"usr/lib/a-b", 'f'}, {"usr/lib/a", 'd'}, {"usr/lib/a.x", 'f'},
                     {"usr/lib/a/deep/er", 'f'}, {"usr/lib/z", 'f'}, {"usr/lib/implicit/file", 'f'}, {"usr/libx", 'f'}}));
  EXPECT_EQ(idx.children("usr/lib"), (std::vector<std::string>{"a", "a-b", "a.x", "implicit", "z"}));
  EXPECT_EQ(idx.children(""), (std::vector<std::string>{"usr"}));
  EXPECT_TRUE(idx.children("nothing").empty());
}

// A layer that lists files without their directories (some image tools write such tars) has them as docker and
// containerd make them when they unpack it: directories, 0755, owned by root; a whiteout's directory too.
TEST(RootfsIndex, DirectoriesALayerLeavesOutAreThereAsTheEnginesMakeThem) {
  RootfsIndex idx;
  idx.apply(listing({{"usr/local/lib/python3.11/dist-packages/pkg/__init__.py", 'f'}, {"opt/.wh.gone", 'f'}}));
  for (std::string dir : {"usr", "usr/local", "usr/local/lib", "usr/local/lib/python3.11",
                          "usr/local/lib/python3.11/dist-packages", "usr/local/lib/python3.11/dist-packages/pkg",
                          "opt"}) {
    const PathInfo* info = idx.find(dir);
    ASSERT_TRUE(info) << dir;
    EXPECT_EQ(info->type, PathInfo::Type::kDirectory) << dir;
    EXPECT_EQ(info->mode, 0755u) << dir;
    EXPECT_EQ(info->uid, 0u) << dir;
  }
  EXPECT_FALSE(idx.find("opt/gone"));
  EXPECT_EQ(idx.children("usr/local/lib/python3.11/dist-packages"), (std::vector<std::string>{"pkg"}));
  // A directory a later layer lists keeps its own attributes.
  LayerListing later = listing({{"usr/local", 'd'}});
  later.entries[0].second.mode = 02775;
  idx.apply(later);
  EXPECT_EQ(idx.find("usr/local")->mode, 02775u);
  EXPECT_TRUE(idx.find("usr/local/lib/python3.11/dist-packages/pkg/__init__.py")) << "a directory over a directory";
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

namespace {
FileEntries file_entries(std::vector<std::string> paths) {
  FileEntries out;
  for (const std::string& p : paths) {
    FileEntry e;
    e.path = p;
    e.type = p.ends_with("/") ? FileEntry::Type::kDirectory : FileEntry::Type::kRegular;
    if (p.ends_with("/")) e.path.pop_back();
    out.push_back(e);
  }
  return out;
}
}  // namespace

// What a deferred layer's loader gives, split as a pip-step cache entry has it.
RootfsIndex::DeferredLayer deferred(const FileEntries& layer, int& reads) {
  RootfsIndex::DeferredLayer d;
  for (const FileEntry& e : layer)
    if (RootfsIndex::is_shallow(e.path)) d.shallow.push_back(e);
  d.keys = RootfsIndex::deferred_keys(layer);
  d.load = [&reads, layer] {
    ++reads;
    return layer;
  };
  return d;
}

TEST(RootfsIndex, DeferredKeysAreTheFirstComponentsOfTheDeeperEntries) {
  EXPECT_EQ(RootfsIndex::deferred_keys(file_entries({"usr/", "usr/local/", "usr/local/lib/", "usr/local/lib/p/",
                                                    "usr/local/lib/p/m.py", "usr/local/bin/t", "opt/a"})),
            (std::set<std::string>{"usr/local/lib", "usr/local/bin"}));
}

// A deferred layer's deeper entries are read only for a query below one of its keys, and before a later layer
// that reaches there, so the order of layers holds: here the later layer's whiteout hides what the deferred one made.
TEST(RootfsIndex, ADeferredLayerIsReadOnlyWhenAQueryOrALaterLayerReachesBelowItsKeys) {
  RootfsIndex idx;
  int reads = 0;
  FileEntries pip = file_entries({"usr/", "usr/local/", "usr/local/lib/", "usr/local/lib/p/", "usr/local/lib/p/m.py",
                                  "usr/local/bin/", "usr/local/bin/t"});
  idx.apply_deferred(deferred(pip, reads));
  idx.apply(file_entries({"usr/app/", "usr/app/trainer/", "usr/app/trainer/task.py"}));
  EXPECT_TRUE(idx.find("usr/app/trainer/task.py"));
  EXPECT_TRUE(idx.find("usr/local/lib")) << "a shallow entry is applied at once";
  EXPECT_EQ(idx.resolve("usr/app/trainer"), "usr/app/trainer");
  EXPECT_EQ(idx.children("usr"), (std::vector<std::string>{"app", "local"}));
  EXPECT_EQ(reads, 0) << "the deferred layer was read for paths it does not reach";

  idx.apply(file_entries({"usr/local/lib/p/.wh.m.py"}));
  EXPECT_EQ(reads, 1);
  EXPECT_FALSE(idx.find("usr/local/lib/p/m.py")) << "the later whiteout must hide what the deferred layer made";
  EXPECT_TRUE(idx.find("usr/local/bin/t"));
  EXPECT_EQ(reads, 1);
}

TEST(RootfsIndex, AWhiteoutAboveAKeyOrAQueryBelowOneReadsTheDeferredLayer) {
  RootfsIndex idx;
  int reads = 0;
  idx.apply_deferred(deferred(file_entries({"opt/", "opt/conda/", "opt/conda/lib/", "opt/conda/lib/x.py"}), reads));
  idx.apply_deferred(deferred(file_entries({"srv/", "srv/a/", "srv/a/b/", "srv/a/b/c"}), reads));
  EXPECT_EQ(idx.children("opt/conda/lib"), (std::vector<std::string>{"x.py"}));
  EXPECT_EQ(reads, 1);
  idx.apply(file_entries({".wh.srv"}));
  EXPECT_EQ(reads, 2);
  EXPECT_FALSE(idx.find("srv/a/b/c"));
  idx.apply_deferred(deferred(file_entries({"var/", "var/a/", "var/a/b/", "var/a/b/c"}), reads));
  EXPECT_EQ(idx.size(), 8u);
  EXPECT_EQ(reads, 3);
}

TEST(RootfsIndex, AnErrorReadingADeferredLayerReachesTheQuery) {
  RootfsIndex idx;
  RootfsIndex::DeferredLayer d;
  d.keys = {"usr/local/lib"};
  d.load = []() -> FileEntries { throw trainpack::Error("the cache lost it"); };
  idx.apply_deferred(std::move(d));
  EXPECT_FALSE(idx.find("root/x/y/z"));
  EXPECT_THROW(idx.find("usr/local/lib/p"), trainpack::Error);
}
