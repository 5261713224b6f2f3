#include "support/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace trainpack {

void parallel_for(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& body,
                  const ParallelOptions& options) {
  if (count == 0) return;
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(count);
  auto work = [&] {
    for (std::size_t i; (i = next++) < count;) {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
        next = count;  // start no more
      }
    }
  };
  const std::size_t wanted = std::max<std::size_t>(1, std::min(threads, count));
  const std::size_t own = options.caller_works ? 1 : 0;
  std::vector<std::thread> started;
  started.reserve(wanted);
  try {
    for (std::size_t t = own; t < wanted; ++t)
      started.emplace_back([&] {
        if (options.thread_start) options.thread_start();
        work();
      });
  } catch (const std::system_error&) {
    // No more threads to be had: those started (or the caller) do the rest.
  }
  if (own || started.empty()) work();
  for (std::thread& t : started) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace trainpack
