#include "layers/entry_safety.h"

#include <algorithm>
#include <map>
#include <vector>

#include "layers/layer_tar_reader.h"
#include "layers/rootfs_index.h"
#include "layers/whiteouts.h"
#include "store/sealed_text.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/parallel.h"
#include "support/paths.h"
#include "support/text.h"

namespace trainpack::layers {
namespace {

// Whether `path` (relative to the root), cleaned lexically as Go's filepath.Join does, goes above the root.
bool leaves_root(std::string_view path) {
  std::size_t depth = 0;
  for (std::string_view c : path_components(path)) {
    if (c != "..") ++depth;
    else if (depth == 0) return true;
    else --depth;
  }
  return false;
}

// What is wrong with the whiteouts in `name` (OCI image-spec layer.md, "Whiteouts"): ".wh.<name>" is an empty file
// that hides <name> of lower layers in its directory, ".wh..wh..opq" one that hides all of them. What a whiteout
// hides must be a file name (not empty, "." or ".."), and a whiteout holds nothing, so no entry lies under one;
// aufs' metadata directories at the top (".wh..wh.plnk"), which Docker skips, are the exception.
std::optional<std::string> whiteout_reason(std::string_view name) {
  std::vector<std::string_view> parts = path_components(name);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    if (!part.starts_with(kWhiteoutPrefix)) continue;
    if (i + 1 < parts.size()) {
      if (i == 0 && part.starts_with(kWhiteoutMeta) && part != kOpaque) continue;
      return "it lies under the whiteout '" + std::string(part) + "'";
    }
    if (part.starts_with(kWhiteoutMeta)) return std::nullopt;
    std::string_view hidden = part.substr(kWhiteoutPrefix.size());
    if (hidden.empty()) return "it is a whiteout that names no file";
    if (hidden == "." || hidden == "..") return "it is a whiteout of '" + std::string(hidden) + "', not of a file";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> unsafe_entry_reason(std::string_view name, EntryKind kind, std::string_view link_target) {
  if (name.starts_with('/')) return "its name is absolute";
  if (leaves_root(name)) return "its name leaves the root";
  if (std::optional<std::string> reason = whiteout_reason(name)) return reason;
  switch (kind) {
    case EntryKind::kHardlink:
      // A hardlink names another entry: the same rules as names (createTarFile: "invalid hardlink").
      if (link_target.starts_with('/')) return "it is a hardlink to an absolute name";
      if (leaves_root(link_target)) return "it is a hardlink to a path outside the root";
      break;
    case EntryKind::kSymlink: {
      // Relative targets are joined to the link's directory (createTarFile: "invalid symlink"); an absolute
      // target is resolved inside the root when the link is followed, so it is safe.
      if (link_target.starts_with('/')) break;
      std::string joined(path_dir(name));
      joined += joined.empty() ? "" : "/";
      joined += link_target;
      if (leaves_root(joined)) return "it is a symlink to a path outside the root";
      break;
    }
    case EntryKind::kOther: break;
  }
  return std::nullopt;
}

}  // namespace trainpack::layers

namespace trainpack::layers {
namespace fs = std::filesystem;

void mark_layer_safe(const store::CacheArea& marks, const image::Digest& layer, const image::Digest& diff_id) {
  fs::create_directories(marks.dir());
  write_file_atomic(marks.path_of(layer.hex()), store::seal(diff_id.str()));
}

namespace {

// The diff_id each of `layers` must have: the config's entry at the layer's place in the manifest.
std::map<image::Digest, image::Digest> expected_diff_ids(const image::Image& image,
                                                         const std::vector<image::Digest>& layers) {
  const std::vector<image::Descriptor> listed = image.manifest().layers;
  const std::vector<image::Digest> diff_ids = layer_diff_ids(image);
  std::map<image::Digest, image::Digest> out;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (std::find(layers.begin(), layers.end(), listed[i].digest) == layers.end()) continue;
    auto [it, added] = out.emplace(listed[i].digest, diff_ids[i]);
    if (!added && it->second != diff_ids[i])
      throw Error(image.describe() + " layer " + listed[i].digest.str() + ": the config gives it two diff_ids, " +
                      it->second.str() + " and " + diff_ids[i].str(),
                  "the base image's config does not match its layers; Docker refuses it too: rebuild or re-push it");
  }
  return out;
}

// Whether an earlier check found `layer` safe with the diff_id `expected`. The mark holds the digest its
// uncompressed tar hashed to, so a config that names another diff_id for the same blob is refused without reading it.
bool checked_before(const store::CacheArea& marks, const image::Image& image, const image::Digest& layer,
                    const image::Digest& expected) {
  if (!marks.use(layer.hex())) return false;
  const fs::path file = marks.path_of(layer.hex());
  std::string text;
  try {
    text = read_file(file, 1024);
  } catch (const Error&) {  // unreadable, or too large to be a mark: damaged, below
  }
  std::optional<std::string_view> sealed = store::unseal(text);
  std::optional<image::Digest> hashed = sealed ? image::Digest::parse(*sealed) : std::nullopt;
  if (!hashed) {
    // Read again. An older trainpack's mark (the diff_id alone, unsealed) is no damage: it vouches for nothing.
    if (!image::Digest::parse(ascii_trim(text))) marks.report_damaged(file, "it is not a mark this trainpack wrote");
    return false;
  }
  if (*hashed != expected) throw diff_id_mismatch(image.describe() + " layer " + layer.str(), *hashed, expected);
  return true;
}

}  // namespace

void check_layers_are_safe(const image::Image& image, const std::vector<image::Digest>& layers,
                           const store::CacheArea& marks) {
  if (layers.empty()) return;
  const std::map<image::Digest, image::Digest> diff_ids = expected_diff_ids(image, layers);
  std::vector<image::Digest> todo;
  for (const auto& [digest, diff_id] : diff_ids)
    if (!checked_before(marks, image, digest, diff_id)) todo.push_back(digest);
  if (todo.empty()) return;
  // A few at once: each is one decompressing pass, bound by CPU or by the download.
  parallel_for(todo.size(), 4, [&](std::size_t k) {
    const image::Digest& diff_id = diff_ids.at(todo[k]);
    list_layer_blob(image.blob_path(todo[k]), diff_id, image.describe() + " layer " + todo[k].str());
    mark_layer_safe(marks, todo[k], diff_id);
  });
}

}  // namespace trainpack::layers
