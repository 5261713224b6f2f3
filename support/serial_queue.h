#pragma once
// One background thread running posted jobs in order, started by the first. Hand-written: std::async starts a thread
// per call and gives no order; a pool (parallel.h) gives no order either.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

namespace trainpack {

// Destroying the queue drops the jobs not yet started and waits for the one running.
class SerialQueue {
 public:
  SerialQueue() = default;
  SerialQueue(const SerialQueue&) = delete;
  SerialQueue& operator=(const SerialQueue&) = delete;
  ~SerialQueue() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.clear();
      stopping_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

  template <typename Job>
  std::future<std::invoke_result_t<Job>> post(Job job) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<Job>()>>(std::move(job));
    std::future<std::invoke_result_t<Job>> result = task->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back([task] { (*task)(); });
      if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    }
    ready_.notify_one();
    return result;
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainpack
