#pragma once
// The pip-step cache: a `RUN pip install …` step whose inputs are unchanged reuses the layers it made last time
// without resolving, downloading, installing or compiling anything, as docker's build cache reuses an unchanged RUN
// instruction (its text and the layers beneath it) without running it again, index changes notwithstanding.
// `--refresh-pip-steps` resolves every step again.
//
// Key: everything the step's layers depend on (PipStepInputs). Entry: per layer its blob (diff_id, digest, size) and
// its file entries, which later steps read (an installed distribution's metadata, the filesystem listing). Entry
// contents that would not outlive the build (inline bytes such as bytecode, files in the build's work directory)
// are kept as blobs in the store; an entry naming a blob or source file that is gone is a miss.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layers/blob_store.h"
#include "layers/file_entry.h"
#include "layers/layer_writer.h"

namespace trainpack::builder {

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

struct CachedPipLayer {
  std::string what;                       // as PipLayer::what
  std::optional<layers::LayerBlob> blob;  // none: the step changed nothing (a history entry without a layer)
  layers::FileEntries entries;
};

// A layer as remember() reads it: its entries stay where the build keeps them (a framework's listing is tens of
// thousands of entries, not worth a copy).
struct PipLayerMade {
  std::string what;
  std::optional<layers::LayerBlob> blob;
  const layers::FileEntries* entries = nullptr;  // never null
};

// An entry's listing (path, type, mode, owner, link target, size) as the cache writes it, without its contents;
// and back (a regular file then has no contents: its `source` is empty).
nlohmann::json entry_listing_json(const layers::FileEntry& entry);
layers::FileEntry entry_from_listing_json(const nlohmann::json& j);

class PipStepCache {
 public:
  PipStepCache(const layers::BlobStore& store, std::filesystem::path dir);

  std::optional<std::vector<CachedPipLayer>> lookup(const std::string& key) const;
  // Stores ephemeral entry contents as blobs, then writes the entry atomically.
  void remember(const std::string& key, const std::vector<PipLayerMade>& layers) const;
  void remember(const std::string& key, const std::vector<CachedPipLayer>& layers) const;

 private:
  const layers::BlobStore& store_;
  std::filesystem::path dir_;
};

}  // namespace trainpack::builder
