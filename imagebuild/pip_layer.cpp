#include "imagebuild/pip_layer.h"

#include "imagebuild/pip_step_cache.h"

namespace trainpack::imagebuild {

std::size_t PipLayer::entry_count() const { return deferred ? deferred->size() : entries.size(); }

const layers::FileEntries& PipLayer::listing() const { return deferred ? deferred->entries() : entries; }

void PipLayer::read_entries() {
  if (!deferred) return;
  entries = deferred->entries();
  deferred.reset();
}

}  // namespace trainpack::imagebuild
