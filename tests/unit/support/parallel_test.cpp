// support/parallel.h: each index once, the first failure in index order, nothing started after a failure, and the
// threads it starts.
#include "support/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using trainpack::parallel_for;

TEST(SupportParallel, EachIndexRunsOnceOnAtMostTheThreadsAsked) {
  std::vector<std::atomic<int>> runs(1000);
  std::mutex mutex;
  std::set<std::thread::id> seen;
  parallel_for(runs.size(), 4, [&](std::size_t i) {
    ++runs[i];
    std::lock_guard lock(mutex);
    seen.insert(std::this_thread::get_id());
  });
  for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
  EXPECT_LE(seen.size(), 4u);
  parallel_for(0, 4, [](std::size_t) { FAIL() << "no work, no call"; });
}

TEST(SupportParallel, TheFirstFailureInIndexOrderIsRethrownAndNothingStartsAfterOne) {
  std::vector<std::size_t> ran;
  try {
    parallel_for(10, 1, [&](std::size_t i) {
      ran.push_back(i);
      if (i == 2) throw std::runtime_error("two");
    });
    FAIL() << "the failure was not rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "two");
  }
  EXPECT_EQ(ran, (std::vector<std::size_t>{0, 1, 2}));

  try {
    parallel_for(8, 8, [](std::size_t i) {  // indices are taken in order: 3 has started when 6 fails
      if (i == 3) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (i == 3 || i == 6) throw std::runtime_error(std::to_string(i));
    });
    FAIL() << "the failure was not rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "3") << "the lowest failing index, whichever failed first";
  }
}

TEST(SupportParallel, BackgroundWorkRunsOnlyOnItsOwnThreadsAfterTheirStart) {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> starts{0};
  thread_local bool started_here = false;
  std::atomic<bool> on_caller{false}, before_start{false};
  trainpack::ParallelOptions options;
  options.caller_works = false;
  options.thread_start = [&] {
    started_here = true;
    ++starts;
  };
  parallel_for(50, 3, [&](std::size_t) {
    if (std::this_thread::get_id() == caller) on_caller = true;
    if (!started_here) before_start = true;
  }, options);
  EXPECT_FALSE(on_caller.load());
  EXPECT_FALSE(before_start.load());
  EXPECT_EQ(starts.load(), 3);
}
