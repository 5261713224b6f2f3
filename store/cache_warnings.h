#pragma once
// What the cache says when an entry it reads back is damaged. The cache is input, not truth: a damaged entry (a
// listing that does not parse, a blob whose bytes do not hash to its name) is a miss, made or fetched again, and
// said in one warning naming its file. A build sends the warnings to its progress (imagebuild/progress.h); without a
// sink they go to stderr as "trainpack: warning: …". Thread-safe: layers are scanned and blobs written in parallel.
#include <functional>
#include <mutex>
#include <string>

namespace trainpack::store {

class CacheWarnings {
 public:
  using Sink = std::function<void(const std::string& text)>;
  void set_sink(Sink sink);
  void warn(const std::string& text) const;

 private:
  mutable std::mutex mutex_;
  Sink sink_;
};

}  // namespace trainpack::store
