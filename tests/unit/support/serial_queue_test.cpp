// support/serial_queue.h: jobs run in the order posted, one at a time on one thread that is not the caller's, their
// results and exceptions reach the futures, and destroying the queue drops what has not started.
#include "support/serial_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using trainpack::SerialQueue;

TEST(SupportSerialQueue, JobsRunInOrderOnOneThreadThatIsNotTheCallers) {
  std::vector<int> order;
  std::set<std::thread::id> threads;
  std::vector<std::future<int>> results;
  {
    SerialQueue queue;
    for (int i = 0; i < 100; ++i)
      results.push_back(queue.post([&, i] {
        order.push_back(i);  // no lock: one job at a time
        threads.insert(std::this_thread::get_id());
        return i * 2;
      }));
    for (int i = 0; i < 100; ++i) EXPECT_EQ(results[i].get(), i * 2);
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(*threads.begin(), std::this_thread::get_id());
}

TEST(SupportSerialQueue, AJobsExceptionReachesItsFutureAndTheNextJobsStillRun) {
  SerialQueue queue;
  std::future<void> failing = queue.post([] { throw std::runtime_error("broken"); });
  std::future<int> next = queue.post([] { return 7; });
  EXPECT_THROW(failing.get(), std::runtime_error);
  EXPECT_EQ(next.get(), 7);
}

TEST(SupportSerialQueue, DestroyingTheQueueWaitsForTheRunningJobAndDropsTheRest) {
  std::atomic<bool> first_done{false};
  std::atomic<int> started{0};
  std::promise<void> running;
  std::future<void> dropped;
  {
    SerialQueue queue;
    queue.post([&] {
      ++started;
      running.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the destructor clears the queue meanwhile
      first_done = true;
    });
    dropped = queue.post([&] { ++started; });
    running.get_future().wait();
  }
  EXPECT_TRUE(first_done) << "the running job was not waited for";
  EXPECT_EQ(started, 1) << "a job not yet started ran after the queue was destroyed";
  EXPECT_THROW(dropped.get(), std::future_error);  // broken promise: its task was dropped unrun
}
