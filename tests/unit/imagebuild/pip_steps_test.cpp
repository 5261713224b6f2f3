// The pip-steps step (imagebuild/pip_steps.h): a step's key follows the layers beneath it, and a step remembered
// after its layers are written is reused by the next build with what it installed, its listing read only when
// something needs it. Installing is tested in python_installer_test.cpp, whole builds in tests/integration.
#include "imagebuild/pip_steps.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "store/cache_dir.h"
#include "support/fs.h"
#include "tests/unit/image_test_support.h"

namespace {

using trainpack::imagebuild::BuildRequest;
using trainpack::imagebuild::InstalledArtifact;
using trainpack::imagebuild::LayerStack;
using trainpack::imagebuild::PipStepResult;
using trainpack::imagebuild::PipSteps;
using trainpack::imagebuild::Progress;
using trainpack::imagebuild::Timings;
using trainpack::layers::FileEntry;
using trainpack::layers::LayerBlob;

const std::string kInstruction = "RUN pip install --no-cache-dir --force-reinstall -r ./requirements.txt";

struct PipStepsTest : ::testing::Test {
  trainpack::ScopedDir dir{trainpack::make_temp_dir({}, "pip-steps-")};
  trainpack::store::CacheDir cache{dir.path() / "cache"};
  trainpack::registry::BlobLocations locations{cache.area(trainpack::store::CacheKind::kBlobLocations)};
  std::ostringstream said;
  Progress progress{Progress::Mode::kPlain, true, said};
  Timings timings;
  BuildRequest request;
  trainpack::test_support::BuiltImage base = trainpack::test_support::make_image_of_layers(
      cache.blobs().root(), "amd64", {{{"etc/os-release", "ID=debian\n"}}});
  std::shared_ptr<const trainpack::image::Image> base_image{std::move(base.image)};

  PipSteps steps() {
    return PipSteps(request, cache, locations, progress, timings, base_image, base_image->manifest_digest().str());
  }
  // A layer blob in the cache's store, as a written layer's is.
  LayerBlob stored(const std::string& bytes) {
    trainpack::store::StoredBlob blob = cache.blobs().put(bytes);
    return {trainpack::image::sha256_of(bytes + " tar"), blob.digest, bytes.size()};
  }
};

TEST_F(PipStepsTest, AStepsKeyFollowsTheLayersBeneathItAndItsInstruction) {
  PipSteps pip = steps();
  LayerStack one, other;
  one.append("COPY [\"requirements.txt\", \"./requirements.txt\"]", stored("numpy"), {}, LayerStack::Maker::kCopy);
  other.append("COPY [\"requirements.txt\", \"./requirements.txt\"]", stored("torch"), {}, LayerStack::Maker::kCopy);
  const trainpack::layers::LayerOptions format;
  EXPECT_EQ(pip.key(kInstruction, one, format), pip.key(kInstruction, one, format));
  EXPECT_NE(pip.key(kInstruction, one, format), pip.key(kInstruction, other, format));
  EXPECT_NE(pip.key(kInstruction, one, format), pip.key(kInstruction + " ", one, format));
  EXPECT_FALSE(pip.shares());
  EXPECT_EQ(pip.base_filesystem_if_read(), nullptr);
}

TEST_F(PipStepsTest, ARememberedStepIsReusedWithWhatItInstalledAndItsListingDeferred) {
  LayerStack stack;
  stack.append("COPY [\"requirements.txt\", \"./requirements.txt\"]", stored("req"), {}, LayerStack::Maker::kCopy);
  const InstalledArtifact numpy{"numpy", "1.26.4", "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl",
                                "https://index.example/numpy.whl", std::string(64, 'a'), false, false};
  const std::string key = steps().key(kInstruction, stack, {});
  {
    PipSteps first = steps();
    EXPECT_FALSE(first.reuse(kInstruction, key, stack.blobs()));
    PipStepResult made{{{"", stored("the pip layer"),
                         {FileEntry::directory("usr/local/lib/python3.11/dist-packages/numpy", 0755),
                          FileEntry::inline_file("usr/local/lib/python3.11/dist-packages/numpy/__init__.py", "")},
                         nullptr}},
                       {numpy}};
    first.remember(key, made, stack.blobs());
  }
  PipSteps next = steps();
  std::optional<PipStepResult> reused = next.reuse(kInstruction, key, stack.blobs());
  ASSERT_TRUE(reused);
  ASSERT_EQ(reused->layers.size(), 1u);
  EXPECT_EQ(reused->layers[0].blob->digest, stored("the pip layer").digest);
  ASSERT_NE(reused->layers[0].deferred, nullptr);
  EXPECT_EQ(reused->layers[0].entry_count(), 2u);
  EXPECT_EQ(next.installed(), std::vector<InstalledArtifact>{numpy});
  EXPECT_NE(said.str().find("pip step unchanged since it last ran"), std::string::npos) << said.str();
  EXPECT_EQ(said.str().find("read the listing of a reused pip layer"), std::string::npos) << said.str();
  EXPECT_EQ(reused->layers[0].listing().size(), 2u);
  EXPECT_NE(said.str().find("read the listing of a reused pip layer (2 entries) from the pip-step cache: " +
                            kInstruction),
            std::string::npos)
      << said.str();
}

}  // namespace
