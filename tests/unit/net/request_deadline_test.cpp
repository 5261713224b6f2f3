// The arithmetic of one request's deadline (net/request_deadline.h) on made-up time points; the HTTP client's
// use of it against real sockets is in tests/integration/http_client_test.cpp.
#include "net/request_deadline.h"

#include <gtest/gtest.h>

#include <chrono>

using namespace std::chrono_literals;
using trainpack::net::RequestDeadline;
using Clock = RequestDeadline::Clock;

namespace {

const Clock::time_point t0{};  // the request starts here

// 60 s, 1 KiB/s: the defaults.
RequestDeadline standard() { return RequestDeadline(60s, 1024, t0); }

}  // namespace

TEST(RequestDeadline, SilenceRunsOutTheDeadline) {
  RequestDeadline d = standard();
  d.start_attempt(t0, false);
  EXPECT_FALSE(d.expired(t0 + 59999ms));
  EXPECT_TRUE(d.expired(t0 + 60s));
}

TEST(RequestDeadline, AnAttemptThatMayBeRetriedGetsHalf) {
  RequestDeadline d = standard();
  d.start_attempt(t0, false);
  EXPECT_EQ(d.connect_timeout(t0), 30s);
  EXPECT_FALSE(d.attempt_stalled(t0 + 29s));
  EXPECT_TRUE(d.attempt_stalled(t0 + 30s));
  // the second attempt, after a 1 s backoff, has what is left of the deadline
  d.start_attempt(t0 + 31s, false);
  EXPECT_EQ(d.connect_timeout(t0 + 31s), 29s);
  EXPECT_FALSE(d.attempt_stalled(t0 + 59s));
  EXPECT_TRUE(d.attempt_stalled(t0 + 60s));
}

TEST(RequestDeadline, TheLastAttemptGetsAllThatIsLeft) {
  RequestDeadline d = standard();
  d.start_attempt(t0, true);
  EXPECT_EQ(d.connect_timeout(t0), 60s);
  EXPECT_FALSE(d.attempt_stalled(t0 + 59s));
  EXPECT_TRUE(d.attempt_stalled(t0 + 60s));
}

TEST(RequestDeadline, ProgressStartsTheClockAgain) {
  RequestDeadline d = standard();
  d.start_attempt(t0, false);
  // 30 KiB (1 KiB/s over an attempt's 30 s) count as progress
  EXPECT_EQ(d.progress_bytes(), 30u * 1024);
  for (int s = 10; s <= 3600; s += 10) d.moved(1u << 20, t0 + std::chrono::seconds(s));
  // an hour of moving bytes, and the deadline is 60 s from the last of them
  Clock::time_point last = t0 + 3600s;
  EXPECT_FALSE(d.expired(last + 59s));
  EXPECT_TRUE(d.expired(last + 60s));
  EXPECT_FALSE(d.attempt_stalled(last + 29s));
  EXPECT_TRUE(d.attempt_stalled(last + 30s));
}

TEST(RequestDeadline, ATrickleIsNoProgress) {
  RequestDeadline d = standard();
  d.start_attempt(t0, true);
  // 100 bytes a second: 6000 bytes in a minute, below the 30 KiB that count
  for (int s = 1; s <= 60; ++s) d.moved(100, t0 + std::chrono::seconds(s));
  EXPECT_TRUE(d.expired(t0 + 60s));
  // bytes add up: 30 KiB in small pieces are progress when the last piece arrives
  RequestDeadline e = standard();
  e.start_attempt(t0, true);
  for (int s = 1; s <= 30; ++s) e.moved(1024, t0 + std::chrono::seconds(s));
  EXPECT_FALSE(e.expired(t0 + 89s));
  EXPECT_TRUE(e.expired(t0 + 90s));
}

TEST(RequestDeadline, ACommittedUploadGetsTimeInProportionToItsSize) {
  RequestDeadline d = standard();
  d.start_attempt(t0, true);
  const std::uint64_t body = 640ull << 20;  // 10 s at kCommitBytesPerSecond
  d.moved(body, t0 + 100s);
  d.body_sent(body);
  EXPECT_FALSE(d.attempt_stalled(t0 + 169s));
  EXPECT_TRUE(d.expired(t0 + 170s));
  // a new attempt does not inherit it
  d.moved(body, t0 + 200s);
  d.body_sent(body);
  d.start_attempt(t0 + 201s, true);
  EXPECT_TRUE(d.expired(t0 + 260s));
  // a small body is no progress, and gets (next to) no allowance
  RequestDeadline small = standard();
  small.start_attempt(t0, true);
  small.moved(2, t0 + 1s);
  small.body_sent(2);
  EXPECT_TRUE(small.expired(t0 + 60s));
}

// A server that takes each attempt's body into its socket buffers and then says nothing: the bytes look like
// progress, but the second stalled attempt ends the request.
TEST(RequestDeadline, ASecondStalledAttemptEndsTheRequest) {
  RequestDeadline d = standard();
  d.start_attempt(t0, false);
  d.moved(4u << 20, t0 + 1s);
  ASSERT_TRUE(d.attempt_stalled(t0 + 31s));
  d.abandoned_stalled_attempt();
  EXPECT_FALSE(d.expired(t0 + 31s));
  EXPECT_TRUE(d.allows_retry_after(1s, t0 + 31s));
  d.start_attempt(t0 + 32s, false);
  d.moved(4u << 20, t0 + 33s);
  ASSERT_TRUE(d.attempt_stalled(t0 + 63s));
  d.abandoned_stalled_attempt();
  EXPECT_TRUE(d.expired(t0 + 63s));
  EXPECT_FALSE(d.allows_retry_after(1s, t0 + 63s));
}

TEST(RequestDeadline, RetriesOnlyWhileTheyStartInTime) {
  RequestDeadline d = standard();
  d.start_attempt(t0, false);
  EXPECT_TRUE(d.allows_retry_after(29s, t0 + 30s));
  EXPECT_FALSE(d.allows_retry_after(30s, t0 + 30s));
  // after a retryable answer and the wait it asked for, the next attempt has the whole deadline again
  d.restart(t0 + 90s);
  EXPECT_EQ(d.connect_timeout(t0 + 90s), 30s);
  EXPECT_FALSE(d.expired(t0 + 149s));
}

TEST(RequestDeadline, SmallTimeoutsStayUsable) {
  RequestDeadline d(3s, 1024, t0);
  d.start_attempt(t0, false);
  EXPECT_EQ(d.connect_timeout(t0), 1500ms);
  EXPECT_EQ(d.progress_bytes(), 1536u);
  EXPECT_EQ(d.connect_timeout(t0 + 2999ms), 1ms);  // never zero: libcurl reads 0 as "its default"
  RequestDeadline tiny(0s, 0, t0);
  EXPECT_EQ(tiny.timeout(), 1ms);
  EXPECT_EQ(tiny.progress_bytes(), 1u);
}
