#include "store/cache_warnings.h"

#include <iostream>

namespace trainpack::store {

void CacheWarnings::set_sink(Sink sink) {
  std::lock_guard<std::mutex> lock(mutex_);
  sink_ = std::move(sink);
}

void CacheWarnings::warn(const std::string& text) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (sink_) sink_(text);
  else std::cerr << "trainpack: warning: " << text << "\n" << std::flush;
}

}  // namespace trainpack::store
