#pragma once
// A layer of a pip step, one type from install to cache: the PythonInstaller makes its entries, the build writes its
// blob, the pip-step cache keeps both (a reused layer's listing stays there until something reads it:
// DeferredListing), and the cache repository shares them.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "imagebuild/installed_artifact.h"
#include "layers/file_entry.h"
#include "layers/layer_writer.h"

namespace trainpack::imagebuild {

class DeferredListing;  // imagebuild/pip_step_cache.h

struct PipLayer {
  std::string what;  // "" for the step's own layer, else the very large distribution it holds ("torch 2.1.0")
  // Once written; none before, and for a layer the step left empty (a history entry without a layer).
  std::optional<layers::LayerBlob> blob;
  layers::FileEntries entries;  // empty while `deferred` holds them
  std::shared_ptr<DeferredListing> deferred;

  std::size_t entry_count() const;
  // The entries, read from the deferred listing when it holds them (may throw Error).
  const layers::FileEntries& listing() const;
  // Moves a deferred listing into `entries` (reads it; may throw Error).
  void read_entries();
};

// What one pip step made or reused: its layers (the step's own first), and what it installed, in install order.
struct PipStepResult {
  std::vector<PipLayer> layers;
  std::vector<InstalledArtifact> installed;
};

}  // namespace trainpack::imagebuild
