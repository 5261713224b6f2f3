// The one record of a build's layers (imagebuild/layer_stack.h): the history, the index and the listings all come
// from what was appended, and a reused pip layer's listing is read only when something needs it.
#include "imagebuild/layer_stack.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "image/digest.h"
#include "imagebuild/pip_step_cache.h"
#include "store/cache_dir.h"
#include "support/fs.h"

namespace {

using trainpack::imagebuild::LayerStack;
using trainpack::imagebuild::PipStepResult;
using trainpack::imagebuild::PipStepCache;
using trainpack::layers::FileEntries;
using trainpack::layers::FileEntry;
using trainpack::layers::LayerBlob;
using Maker = LayerStack::Maker;

LayerBlob blob_of(const std::string& name) {
  return {trainpack::image::sha256_of(name + " tar"), trainpack::image::sha256_of(name + " gzip"), 10};
}

std::vector<std::string> paths(const FileEntries& entries) {
  std::vector<std::string> out;
  for (const FileEntry& e : entries) out.push_back(e.path);
  return out;
}

TEST(LayerStack, HistoryBlobsIndexAndCopiedLayersComeFromWhatWasAppended) {
  LayerStack stack;
  stack.append("RUN mkdir -m 777 -p /usr/app", blob_of("mkdir"), {FileEntry::directory("usr/app", 0777)},
               Maker::kOther);
  stack.append("WORKDIR /usr/app", std::nullopt, {}, Maker::kOther);
  stack.append("COPY [\"trainer\", \"trainer\"]", blob_of("copy"),
               {FileEntry::directory("usr/app/trainer", 0755), FileEntry::inline_file("usr/app/trainer/task.py", "x")},
               Maker::kCopy);

  std::vector<trainpack::image::AppendStep> history = stack.history();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[1].created_by, "WORKDIR /usr/app");
  EXPECT_FALSE(history[1].layer);
  EXPECT_EQ(history[2].layer->digest, blob_of("copy").digest);
  ASSERT_EQ(stack.blobs().size(), 2u);
  EXPECT_EQ(stack.blobs()[0].digest, blob_of("mkdir").digest);
  ASSERT_NE(stack.index().find("usr/app/trainer/task.py"), nullptr);
  EXPECT_EQ(stack.index().find("usr/app")->mode, 0777u);
  ASSERT_EQ(stack.copied().size(), 1u);
  EXPECT_EQ(paths(stack.copied()[0]->entries),
            (std::vector<std::string>{"usr/app/trainer", "usr/app/trainer/task.py"}));
  EXPECT_EQ(stack.through_last_pip_step(), 0u);
}

TEST(LayerStack, AReusedPipLayersListingIsReadOnceAndOnlyWhenNeeded) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir({}, "layer-stack-"));
  trainpack::store::CacheDir cache_dir(dir.path() / "cache");
  PipStepCache cache(cache_dir);
  const char* deep = "usr/local/lib/python3.11/dist-packages/tp_beta/__init__.py";
  FileEntries made{FileEntry::directory("usr", 0755), FileEntry::inline_file(deep, "print('beta')\n")};
  trainpack::store::StoredBlob stored = cache_dir.blobs().put("the layer's bytes");
  LayerBlob blob{trainpack::image::sha256_of("the layer's tar"), stored.digest, stored.size};
  cache.remember("key", PipStepResult{{{"", blob, made, nullptr}}, {}});
  std::optional<PipStepResult> step = cache.lookup("key");
  ASSERT_TRUE(step);
  ASSERT_TRUE(step->layers.at(0).deferred);
  int reads = 0;
  step->layers[0].deferred->on_read([&reads](std::size_t entries) {
    ++reads;
    EXPECT_EQ(entries, 2u);
  });

  LayerStack stack;
  stack.append("RUN pip install -r requirements.txt", *step->layers[0].blob, std::move(step->layers[0].deferred));
  stack.append("COPY [\"trainer\", \"trainer\"]", blob_of("copy"),
               {FileEntry::inline_file("usr/app/trainer/task.py", "x")}, Maker::kCopy);
  EXPECT_EQ(stack.through_last_pip_step(), 1u);
  EXPECT_EQ(stack.history().size(), 2u);
  EXPECT_EQ(stack.copied().size(), 1u);
  EXPECT_EQ(stack.entries(1, 2).size(), 1u);
  EXPECT_NE(stack.index().find("usr"), nullptr);  // a shallow path: the header's listing answers
  EXPECT_EQ(reads, 0) << "the listing was read for what did not need it";

  std::vector<const FileEntries*> all = stack.entries();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(paths(*all[0]), (std::vector<std::string>{"usr", deep}));
  EXPECT_EQ(stack[0].maker, Maker::kPip);
  stack.entries();
  EXPECT_NE(stack.index().find(deep), nullptr);
  EXPECT_EQ(reads, 1);
}

}  // namespace
