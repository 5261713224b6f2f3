#include "localrun/layer_trees.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "layers/layer_tar_reader.h"
#include "layers/unpack.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/hash.h"

namespace trainpack::localrun {
namespace fs = std::filesystem;

std::vector<image::Digest> chain_ids(const std::vector<image::Digest>& diff_ids) {
  std::vector<image::Digest> chain;
  for (const image::Digest& diff_id : diff_ids) {
    if (chain.empty()) chain.push_back(diff_id);
    else chain.push_back(image::Digest::sha256_from_hex(sha256_hex(chain.back().str() + " " + diff_id.str())));
  }
  return chain;
}

namespace {

// Unpacks layer `index` of `image` into a staging directory and renames it to `tree`. Another run that finished
// the same tree first wins: its tree is the same, ours is dropped.
void unpack_tree(const image::Image& image, std::size_t index, const image::Digest& diff_id,
                 const std::vector<fs::path>& lowers, const fs::path& tree, const fs::path& staging) {
  const image::Manifest manifest = image.manifest();
  const image::Descriptor& layer = manifest.layers[index];
  const std::string what = image.describe() + " layer " + std::to_string(index + 1) + "/" +
                           std::to_string(manifest.layers.size()) + " (" + layer.digest.str() + ")";
  fs::create_directories(staging);
  ScopedDir made(make_temp_dir(staging, "tree-"));
  layers::unpack_layer_tree(image.blob_path(layer.digest), diff_id, made.path(), lowers, what);
  if (::rename(made.path().c_str(), tree.c_str()) == 0) {
    made.release();
    return;
  }
  if (errno != EEXIST && errno != ENOTEMPTY)
    throw Error("cannot keep the unpacked " + what + " in " + tree.string() + ": " + std::strerror(errno));
}

}  // namespace

LayerTrees layer_trees(const image::Image& image, const LayerTreeCache& cache,
                       const layers::UnpackProgress& progress) {
  const image::Manifest manifest = image.manifest();
  const std::vector<image::Digest> diff_ids = layers::layer_diff_ids(image);
  const std::vector<image::Digest> chain = chain_ids(diff_ids);
  LayerTrees trees{cache.area.dir(), {}};
  fs::create_directories(trees.dir);
  std::vector<fs::path> lowers;  // the trees below the next one, the nearest first
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const std::string name = chain[i].hex();
    if (!cache.area.use(name)) {
      if (progress) progress(i, chain.size(), manifest.layers[i].size);
      unpack_tree(image, i, diff_ids[i], lowers, cache.area.path_of(name), cache.staging);
      cache.area.use(name);
    }
    trees.names.push_back(name);
    lowers.insert(lowers.begin(), cache.area.path_of(name));
  }
  return trees;
}

std::string overlay_lowerdir(const LayerTrees& trees) {
  std::string value;
  for (auto it = trees.names.rbegin(); it != trees.names.rend(); ++it) {
    if (!value.empty()) value += ':';
    value += *it;
  }
  return value;
}

}  // namespace trainpack::localrun
