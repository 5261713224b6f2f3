#pragma once
// The pip-step cache: a `RUN pip install …` step whose inputs are unchanged reuses the layers it made last time
// without resolving, downloading, installing or compiling anything, as docker's build cache reuses an unchanged RUN
// instruction (its text and the layers beneath it) without running it again, index changes notwithstanding.
// `--refresh-pip-steps` resolves every step again.
//
// Key: everything the step's layers depend on (PipStepInputs). Entry: per layer its blob (diff_id, digest, size) and
// its file entries, which later steps read (an installed distribution's metadata, the filesystem listing). Entry
// contents that would not outlive the build (inline bytes such as bytecode, files in the build's work directory)
// are kept as blobs in the store; an entry naming a layer blob that is gone is a miss. A hit reads only the
// entry's header (per layer its blob, entry count, and what layers::RootfsIndex::apply_deferred needs: the few
// shallow entries and the keys of the rest): a framework's listing, tens of thousands of entries, is read only when
// a later step needs it (DeferredListing).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "imagebuild/installed_artifact.h"
#include "imagebuild/pip_layer.h"
#include "layers/file_entry.h"
#include "layers/layer_writer.h"
#include "layers/rootfs_index.h"
#include "store/cache_dir.h"

namespace trainpack::imagebuild {

struct PythonOptions;

struct PipStepInputs {
  std::string base_manifest_digest;
  std::vector<std::string> earlier_steps;  // each earlier instruction with its layer's diff_id, if it made one
  std::string instruction;
  const PythonOptions* python = nullptr;
  layers::LayerOptions layer_options;
};

// The key of a step: a SHA-256 over the inputs, this build of trainpack and the contents of local --find-links
// directories (names, sizes, modification times).
std::string pip_step_key(const PipStepInputs& inputs);

// One layer's listing in a pip-step entry file, read when first asked for, with the files its entries name checked
// to be there (an Error, with a hint, when the cache lost one since the hit).
class DeferredListing {
 public:
  DeferredListing(std::filesystem::path file, std::uint64_t offset, std::size_t count,
                  layers::FileEntries shallow, std::set<std::string> keys)
      : file_(std::move(file)), offset_(offset), count_(count), shallow_(std::move(shallow)), keys_(std::move(keys)) {}
  std::size_t size() const { return count_; }
  std::uint64_t offset() const { return offset_; }
  // The layer as layers::RootfsIndex::apply_deferred takes it; its load() reads the listing.
  layers::RootfsIndex::DeferredLayer for_index(std::shared_ptr<DeferredListing> self) const;
  const layers::FileEntries& entries();
  // Called with the entry count when entries() reads the listing from the cache (once), e.g. to say so with -v.
  void on_read(std::function<void(std::size_t entries)> notify) { on_read_ = std::move(notify); }

 private:
  std::filesystem::path file_;
  std::uint64_t offset_;  // of the layer's first line, from the end of the header line
  std::size_t count_;
  layers::FileEntries shallow_;  // listings only (no contents)
  std::set<std::string> keys_;
  std::optional<layers::FileEntries> entries_;
  std::function<void(std::size_t)> on_read_;
};

// An entry's listing (path, type, mode, owner, link target, size) as the cache writes it, without its contents;
// and back (a regular file then has no contents: its `source` is empty).
nlohmann::json entry_listing_json(const layers::FileEntry& entry);
layers::FileEntry entry_from_listing_json(const nlohmann::json& j);

// An entry file as remember() writes it, read whole: the step's layers with their listings (regular files' sources
// as named, not checked to be there) and what it installed; nullopt for anything else, a damaged entry being a
// miss. lookup() reads the same, the listings only when they are needed.
std::optional<PipStepResult> parse_pip_step_entry(std::string_view file);

class PipStepCache {
 public:
  explicit PipStepCache(const store::CacheDir& cache);

  // The step's layers, their listings deferred; nullopt when there is no entry, or a blob or file it names is gone.
  std::optional<PipStepResult> lookup(const std::string& key) const;
  // Stores ephemeral entry contents as blobs, then writes the entry atomically. Every layer with entries has its
  // blob; a deferred listing is read.
  void remember(const std::string& key, const PipStepResult& step) const;

 private:
  const store::CacheDir& cache_;
  store::CacheArea entries_;
};

}  // namespace trainpack::imagebuild
