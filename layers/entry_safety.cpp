#include "layers/entry_safety.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include "layers/rootfs_index.h"
#include "support/fs.h"
#include "support/paths.h"

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

}  // namespace

std::optional<std::string> unsafe_entry_reason(std::string_view name, EntryKind kind, std::string_view link_target) {
  if (name.starts_with('/')) return "its name is absolute";
  if (leaves_root(name)) return "its name leaves the root";
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

void mark_layer_safe(const fs::path& cache_dir, const image::Digest& layer) {
  fs::create_directories(cache_dir / "checked-layers");
  write_file_atomic(cache_dir / "checked-layers" / layer.hex(), "safe\n");
}

void check_layers_are_safe(const image::Image& image, const std::vector<image::Digest>& layers, const fs::path& cache_dir) {
  const fs::path marks = cache_dir / "checked-layers";
  std::vector<image::Digest> todo;
  for (const image::Digest& d : layers) {
    std::error_code ec;
    if (!fs::exists(marks / d.hex(), ec)) todo.push_back(d);
  }
  if (todo.empty()) return;
  // A few at once: each is one decompressing pass, bound by CPU or by the download.
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(todo.size());
  auto worker = [&] {
    for (std::size_t k; (k = next++) < todo.size();) {
      try {
        list_layer_blob(image.blob_path(todo[k]), image.describe() + " layer " + todo[k].str());
        mark_layer_safe(cache_dir, todo[k]);
      } catch (...) {
        errors[k] = std::current_exception();
        next = todo.size();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < std::min<std::size_t>(4, todo.size()); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace trainpack::layers
