#pragma once
// A progress line said only when a step outlasts a delay: a step that is nearly always instant (removing a
// container's files) adds no line, and one that is not still tells the person watching what is going on.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace trainpack {

class LateNotice {
 public:
  // Says `line` through `say` (from another thread) once `delay` has passed, unless destroyed before.
  LateNotice(std::function<void(const std::string&)> say, std::string line, std::chrono::milliseconds delay);
  ~LateNotice();
  LateNotice(const LateNotice&) = delete;
  LateNotice& operator=(const LateNotice&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable over_;
  bool done_ = false;
  std::thread waiter_;
};

}  // namespace trainpack
