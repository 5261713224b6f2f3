#include "imagebuild/timings.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

using trainpack::imagebuild::Phase;
using trainpack::imagebuild::phase_name;
using trainpack::imagebuild::PhaseTimes;
using trainpack::imagebuild::Timings;
using namespace std::chrono_literals;

namespace {
const Timings::Clock::time_point t0{};
}

TEST(Timings, ChargesEachPhaseTheTimeItWasOpen) {
  Timings timings(t0);
  timings.enter(Phase::kBase, t0 + 10ms);
  timings.leave(t0 + 30ms);
  timings.enter(Phase::kLayers, t0 + 30ms);
  timings.leave(t0 + 130ms);
  timings.enter(Phase::kBase, t0 + 200ms);
  timings.leave(t0 + 205ms);
  PhaseTimes times = timings.snapshot(t0 + 300ms);
  EXPECT_DOUBLE_EQ(times[Phase::kBase], 0.025);
  EXPECT_DOUBLE_EQ(times[Phase::kLayers], 0.1);
  EXPECT_DOUBLE_EQ(times[Phase::kResolve], 0) << "a phase that did not occur";
  EXPECT_DOUBLE_EQ(times.total, 0.3);
}

TEST(Timings, InnerScopePausesTheOuterOne) {
  Timings timings(t0);
  timings.enter(Phase::kResolve, t0);
  timings.enter(Phase::kInstall, t0 + 40ms);  // an sdist built for its metadata during resolution
  timings.enter(Phase::kInstall, t0 + 50ms);  // the same phase again: still install
  timings.leave(t0 + 60ms);
  timings.leave(t0 + 100ms);
  timings.leave(t0 + 110ms);
  PhaseTimes times = timings.snapshot(t0 + 110ms);
  EXPECT_DOUBLE_EQ(times[Phase::kResolve], 0.05);
  EXPECT_DOUBLE_EQ(times[Phase::kInstall], 0.06);
  double sum = 0;
  for (double s : times.seconds) sum += s;
  EXPECT_DOUBLE_EQ(sum, times.total) << "each moment counted once";
}

TEST(Timings, SnapshotCountsOpenScopesWithoutClosingThem) {
  Timings timings(t0);
  timings.enter(Phase::kOutput, t0 + 10ms);
  EXPECT_DOUBLE_EQ(timings.snapshot(t0 + 20ms)[Phase::kOutput], 0.01);
  timings.leave(t0 + 50ms);
  EXPECT_DOUBLE_EQ(timings.snapshot(t0 + 90ms)[Phase::kOutput], 0.04);
}

TEST(Timings, LeaveWithoutEnterIsIgnored) {
  Timings timings(t0);
  timings.leave(t0 + 10ms);
  PhaseTimes times = timings.snapshot(t0 + 10ms);
  for (double s : times.seconds) EXPECT_EQ(s, 0);
}

TEST(Timings, RaiiScopesOnSeveralThreadsKeepTheirOwnStacks) {
  Timings timings;
  auto work = [&timings](Phase outer, Phase inner) {
    for (int k = 0; k < 20; ++k) {
      Timings::Scope a = timings.scope(outer);
      Timings::Scope b = timings.scope(inner);
      std::this_thread::sleep_for(1ms);
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(work, Phase::kResolve, Phase::kInstall);
  threads.emplace_back(work, Phase::kLayers, Phase::kOutput);
  for (auto& t : threads) t.join();
  PhaseTimes times = timings.snapshot();
  EXPECT_GT(times[Phase::kInstall], 0.019);
  EXPECT_GT(times[Phase::kOutput], 0.019);
  EXPECT_LT(times[Phase::kResolve], times[Phase::kInstall]) << "outer phases only pay for the switches";
  EXPECT_LT(times[Phase::kLayers], times[Phase::kOutput]);
  EXPECT_DOUBLE_EQ(times[Phase::kBase], 0);
}

TEST(Timings, ScopeStopIsIdempotent) {
  Timings timings;
  Timings::Scope s = timings.scope(Phase::kFacts);
  s.stop();
  double after_stop = timings.snapshot()[Phase::kFacts];
  std::this_thread::sleep_for(2ms);
  s.stop();
  EXPECT_DOUBLE_EQ(timings.snapshot()[Phase::kFacts], after_stop);
}

TEST(Timings, SummaryNamesEveryPhaseInOrderWithMilliseconds) {
  PhaseTimes times;
  times.seconds = {0.0124, 0.0021, 0.003, 0.061, 1.5, 0.25, 0};
  times.total = 2.0;
  EXPECT_EQ(times.summary(),
            "base 0.012 s, pip_cache 0.002 s, facts 0.003 s, resolve 0.061 s, install 1.500 s, layers 0.250 s, "
            "output 0.000 s, total 2.000 s");
  EXPECT_EQ(phase_name(Phase::kOutput), "output");
}
