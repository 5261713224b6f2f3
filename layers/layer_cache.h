#pragma once
// The input-fingerprint cache: fingerprint of a layer's entries → (diff_id, digest, size) of the blob already in
// the store. A hit means the layer is neither re-tarred, re-compressed nor re-hashed. Entries are small JSON
// files written atomically; a hit whose blob has vanished from the store counts as a miss.
#include <filesystem>
#include <optional>
#include <string>

#include "layers/file_entry.h"
#include "layers/layer_writer.h"
#include "store/blob_store.h"
#include "store/cache_dir.h"

namespace trainpack::layers {

// A layer record as the layer cache writes it (JSON: diff_id, digest, size; sealed, store/sealed_text.h); nullopt
// for anything else.
std::optional<LayerBlob> parse_layer_record(std::string_view text);

class LayerCache {
 public:
  LayerCache(const store::BlobStore& store, store::CacheArea entries);

  // Hash of everything that determines the layer's bytes: the writer's format version and options, and for
  // each entry its path, type, mode, owner, link target, size and either its inline bytes or its source's
  // path and stamp (size, mtime, inode); for a zip member, the archive's stamp (or content hash, computed
  // once per archive) plus the member's name and index. `entries` must be sorted (sort_and_check_entries).
  static std::string fingerprint(const FileEntries& entries, const LayerOptions& options);

  std::optional<LayerBlob> lookup(const std::string& fingerprint) const;
  void remember(const std::string& fingerprint, const LayerBlob& blob) const;

 private:
  const store::BlobStore& store_;
  store::CacheArea entries_;
};

struct BuiltLayer {
  LayerBlob blob;
  bool from_cache = false;
  FileEntries entries;  // the entries given, sorted: the caller's listing of the layer, without a copy
};

// A layer as the cache knows it before it is written: its entries sorted and checked (sort_and_check_entries), their
// fingerprint, and the blob when the cache has it. A dry run stops here; build_layer goes on.
struct LayerLookup {
  FileEntries entries;
  std::string fingerprint;
  std::optional<LayerBlob> cached;
};
LayerLookup look_up_layer(const LayerCache& cache, FileEntries entries, const LayerOptions& options);

// Returns the cached blob for these entries, or writes the layer and remembers it.
BuiltLayer build_layer(const store::BlobStore& store, const LayerCache& cache, FileEntries entries,
                       const LayerOptions& options);

}  // namespace trainpack::layers
