#pragma once
// The deadline of one HTTP request (HttpOptions::timeout): a clock of time without progress. It runs while nothing
// moves — resolving, connecting, waiting for an answer, a stalled body, the backoff after a network failure — and
// starts again when bytes move (request body out, 2xx body in) at no less than a floor rate. When it runs out, the
// request fails. So a dead host fails the request after `timeout`, and a multi-GB transfer that keeps moving is
// never cut, however long it takes. A status line alone is no progress: a server that sends its headers and then
// stalls, on every attempt, is as stuck as one that sends nothing.
//
// Inside that deadline an attempt that may be retried gets half of it: without progress for that long it is
// abandoned and retried on a fresh connection (a blackholed SYN, a stuck backend behind a load balancer) while time
// is left. The last attempt (and one that cannot be retried) may use all the time left. A second attempt abandoned
// that way ends the request too, whatever moved before it: two silences of half the deadline are the deadline (so a
// server that takes every body into its socket buffers and never answers cannot pass for one that makes progress).
//
// After the last byte of a request body the answer may take longer than a round trip: a registry hashes or moves a
// finished upload before answering (docker/distribution's storage drivers copy it into place). That wait gets one
// more second per kCommitBytesPerSecond of the body.
//
// Pure arithmetic on time points the caller passes in; the HTTP client feeds it from libcurl's callbacks.
#include <chrono>
#include <cstdint>

namespace trainpack::net {

class RequestDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint64_t kCommitBytesPerSecond = 64u << 20;

  // `timeout`: how long the request may go without progress; slower than `min_bytes_per_second` is no progress.
  RequestDeadline(std::chrono::milliseconds timeout, std::uint64_t min_bytes_per_second, Clock::time_point now);

  // `last`: no attempt follows this one (the last allowed, or a request that cannot be retried).
  void start_attempt(Clock::time_point now, bool last);
  // `bytes` more were sent or received by the current attempt.
  void moved(std::uint64_t bytes, Clock::time_point now);
  // The whole request body (`bytes`) is out; the answer is awaited with the commit allowance.
  void body_sent(std::uint64_t bytes);
  // The current attempt was abandoned because attempt_stalled().
  void abandoned_stalled_attempt() { ++stalled_attempts_; }
  // A retried request that got an answer (a retryable status) starts its next attempt with a full deadline: the
  // wait was the server's wish (Retry-After) or our backoff, not a silence.
  void restart(Clock::time_point now);

  // The current attempt went without progress for its share of the deadline (or the request ran out of time).
  bool attempt_stalled(Clock::time_point now) const;
  // No time left: `timeout` without progress, or a second attempt abandoned for a stall.
  bool expired(Clock::time_point now) const;
  // How long an attempt starting at `now` may take to connect.
  std::chrono::milliseconds connect_timeout(Clock::time_point now) const;
  // Whether an attempt after waiting `backoff` from `now` would start before the deadline.
  bool allows_retry_after(std::chrono::milliseconds backoff, Clock::time_point now) const;

  std::chrono::milliseconds timeout() const { return timeout_; }
  // Bytes that count as progress: the floor rate over an attempt's share of the deadline.
  std::uint64_t progress_bytes() const { return progress_bytes_; }

 private:
  void progressed(Clock::time_point now);
  std::chrono::milliseconds attempt_limit() const;

  std::chrono::milliseconds timeout_;
  std::uint64_t progress_bytes_;
  bool last_attempt_ = false;
  int stalled_attempts_ = 0;
  std::chrono::milliseconds allowance_{0};  // the commit allowance while an answer is awaited
  std::uint64_t pending_bytes_ = 0;         // moved since the last progress, not yet enough to count
  Clock::time_point last_progress_;
  Clock::time_point attempt_start_;
};

}  // namespace trainpack::net
