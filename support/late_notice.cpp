#include "support/late_notice.h"

#include <utility>

namespace trainpack {

LateNotice::LateNotice(std::function<void(const std::string&)> say, std::string line,
                       std::chrono::milliseconds delay) {
  if (!say) return;
  waiter_ = std::thread([this, say = std::move(say), line = std::move(line), delay] {
    std::unique_lock lock(mutex_);
    if (!over_.wait_for(lock, delay, [this] { return done_; })) say(line);
  });
}

LateNotice::~LateNotice() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  over_.notify_all();
  if (waiter_.joinable()) waiter_.join();
}

}  // namespace trainpack
