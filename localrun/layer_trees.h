#pragma once
// An image's root filesystem for runc without unpacking it every run: each layer's tree (layers::unpack_layer_tree)
// is kept in the cache, named by the layer's ChainID (OCI image-spec config.md: the layer and every layer below it),
// and the trees are stacked as overlayfs lower directories with a scratch upper directory per run. A run after a
// change to the trainer's code unpacks only the layers above the base that changed.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "image/image.h"
#include "layers/unpack.h"
#include "store/cache_dir.h"

namespace trainpack::localrun {

// Where the trees live: the cache's kind for them, and a staging directory on the same filesystem (the cache's
// tmp/) in which a tree is unpacked before it is renamed into place whole.
struct LayerTreeCache {
  store::CacheArea area;
  std::filesystem::path staging;
};

// The trees of an image, lowest first: names of entries in `dir`.
struct LayerTrees {
  std::filesystem::path dir;
  std::vector<std::string> names;
};

// The ChainIDs of `diff_ids` (image-spec config.md): the first is its DiffID, each next one
// sha256(previous ChainID + " " + DiffID).
std::vector<image::Digest> chain_ids(const std::vector<image::Digest>& diff_ids);

// The image's layer trees, unpacking (and downloading) only the layers whose tree is not in the cache. Needs root.
// `progress` is told of each layer that has to be unpacked (not of those kept from an earlier run).
LayerTrees layer_trees(const image::Image& image, const LayerTreeCache& cache, const layers::UnpackProgress& progress);

// overlayfs's lowerdir= value for `trees`, relative to trees.dir (the uppermost first, as overlayfs takes them).
std::string overlay_lowerdir(const LayerTrees& trees);

}  // namespace trainpack::localrun
