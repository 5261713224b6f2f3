#include "net/request_deadline.h"

#include <algorithm>

namespace trainpack::net {

using std::chrono::milliseconds;

RequestDeadline::RequestDeadline(milliseconds timeout, std::uint64_t min_bytes_per_second, Clock::time_point now)
    : timeout_(std::max(timeout, milliseconds(1))), last_progress_(now), attempt_start_(now) {
  auto window = static_cast<std::uint64_t>(std::max(timeout_ / 2, milliseconds(1)).count());
  progress_bytes_ = std::max<std::uint64_t>(1, min_bytes_per_second * window / 1000);
}

milliseconds RequestDeadline::attempt_limit() const {
  return last_attempt_ ? timeout_ : std::max(timeout_ / 2, milliseconds(1));
}

void RequestDeadline::progressed(Clock::time_point now) {
  last_progress_ = now;
  pending_bytes_ = 0;
}

void RequestDeadline::start_attempt(Clock::time_point now, bool last) {
  attempt_start_ = now;
  last_attempt_ = last;
  allowance_ = milliseconds(0);
  pending_bytes_ = 0;
}

void RequestDeadline::moved(std::uint64_t bytes, Clock::time_point now) {
  pending_bytes_ += bytes;
  if (bytes == 0 || pending_bytes_ < progress_bytes_) return;
  allowance_ = milliseconds(0);  // bytes of the answer are coming: the wait for it is over
  progressed(now);
}

void RequestDeadline::body_sent(std::uint64_t bytes) { allowance_ = milliseconds(bytes / (kCommitBytesPerSecond / 1000)); }

void RequestDeadline::restart(Clock::time_point now) {
  allowance_ = milliseconds(0);
  progressed(now);
}

bool RequestDeadline::expired(Clock::time_point now) const {
  return stalled_attempts_ >= 2 || now - last_progress_ >= timeout_ + allowance_;
}

bool RequestDeadline::attempt_stalled(Clock::time_point now) const {
  Clock::time_point since = std::max(attempt_start_, last_progress_);
  return now - since >= attempt_limit() + allowance_ || expired(now);
}

milliseconds RequestDeadline::connect_timeout(Clock::time_point now) const {
  auto left = std::chrono::duration_cast<milliseconds>(last_progress_ + timeout_ - now);
  return std::max(std::min(attempt_limit(), left), milliseconds(1));
}

bool RequestDeadline::allows_retry_after(milliseconds backoff, Clock::time_point now) const {
  return stalled_attempts_ < 2 && now + backoff - last_progress_ < timeout_;
}

}  // namespace trainpack::net
