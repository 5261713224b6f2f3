#pragma once
// Independent pieces of work on a few threads: each index runs once, no new index starts after one fails, and the
// first failure in index order is rethrown once every thread has stopped. Hand-written: Debian's task pools (oneTBB,
// Boost.Asio's thread_pool) bring a scheduler or a dependency for what fits on a screen here.
#include <cstddef>
#include <functional>

namespace trainpack {

struct ParallelOptions {
  // Work on the calling thread too (it is one of the `threads`); false: only on threads started for it.
  bool caller_works = true;
  // Called first on each thread started (not on the caller's): e.g. a lower CPU priority for background work.
  std::function<void()> thread_start;
};

// body(i) for every i in [0, count), on at most `threads` threads (at least one).
void parallel_for(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& body,
                  const ParallelOptions& options = {});

}  // namespace trainpack
