#pragma once
// The layers a build has made so far, in order: the one record its steps append to. The image's history
// (image::AppendSpec::steps), the view of the filesystem the layers make (layers::RootfsIndex), the listings a pip
// step or the SBOM reads and the pip-step cache's keys all come from it.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "image/appended_image.h"
#include "layers/file_entry.h"
#include "layers/layer_writer.h"
#include "layers/rootfs_index.h"

namespace trainpack::imagebuild {

class DeferredListing;

class LayerStack {
 public:
  // What made a layer: the SBOM lists the files of the COPY layers, and the image's packages are those of the layers
  // up to the last pip step's (unless a later one holds package records).
  enum class Maker { kOther, kCopy, kPip };

  // One history entry: a layer with its blob and entries; neither (a config edit, a step that changed nothing); or,
  // in a dry run, the entries a layer would have, without a blob.
  struct Layer {
    std::string instruction;  // the history's created_by
    std::optional<layers::LayerBlob> blob;
    Maker maker = Maker::kOther;
    layers::FileEntries entries;                // empty while `deferred` holds them
    std::shared_ptr<DeferredListing> deferred;  // a reused pip layer's listing, still in the pip-step cache
  };

  void append(std::string instruction, std::optional<layers::LayerBlob> blob, layers::FileEntries entries,
              Maker maker);
  // A reused pip layer whose listing stays in the pip-step cache until something reads it: the index, for a path
  // below its keys, or entries().
  void append(std::string instruction, layers::LayerBlob blob, std::shared_ptr<DeferredListing> listing);

  const layers::RootfsIndex& index() const { return index_; }
  std::size_t size() const { return layers_.size(); }
  const Layer& operator[](std::size_t i) const { return layers_[i]; }

  // As image::AppendSpec::steps takes them.
  std::vector<image::AppendStep> history() const;
  // The blobs of the layers, in order.
  std::vector<layers::LayerBlob> blobs() const;
  // The entries of history entries [from, to), deferred listings read (may throw Error).
  std::vector<const layers::FileEntries*> entries(std::size_t from, std::size_t to);
  std::vector<const layers::FileEntries*> entries() { return entries(0, size()); }
  // The COPY layers: the trainer's files.
  std::vector<const Layer*> copied() const;
  // The history entries up to and including the last pip step's (0 without one).
  std::size_t through_last_pip_step() const;

 private:
  std::vector<Layer> layers_;
  layers::RootfsIndex index_;
};

}  // namespace trainpack::imagebuild
