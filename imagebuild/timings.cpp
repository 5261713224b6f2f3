#include "imagebuild/timings.h"

#include <cstdio>

namespace trainpack::imagebuild {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::kBase: return "base";
    case Phase::kPipCache: return "pip_cache";
    case Phase::kFacts: return "facts";
    case Phase::kResolve: return "resolve";
    case Phase::kInstall: return "install";
    case Phase::kLayers: return "layers";
    case Phase::kOutput: return "output";
  }
  return "?";
}

std::string PhaseTimes::summary() const {
  std::string out;
  char buf[64];
  for (std::size_t k = 0; k < kPhaseCount; ++k) {
    std::snprintf(buf, sizeof buf, "%s %.3f s, ", std::string(phase_name(Phase(k))).c_str(), seconds[k]);
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "total %.3f s", total);
  return out + buf;
}

Timings::Scope::Scope(Timings& timings, Phase phase) : timings_(&timings) { timings.enter(phase, Clock::now()); }

void Timings::Scope::stop() {
  if (!timings_) return;
  timings_->leave(Clock::now());
  timings_ = nullptr;
}

// Charges the time since the last switch to the innermost open phase of this thread.
void Timings::charge_locked(Stack& stack, Clock::time_point now) {
  if (!stack.open.empty()) spent_[static_cast<std::size_t>(stack.open.back())] += now - stack.since;
  stack.since = now;
}

void Timings::enter(Phase phase, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stack& stack = stacks_[std::this_thread::get_id()];
  charge_locked(stack, now);
  stack.open.push_back(phase);
}

void Timings::leave(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stacks_.find(std::this_thread::get_id());
  if (it == stacks_.end() || it->second.open.empty()) return;
  charge_locked(it->second, now);
  it->second.open.pop_back();
  if (it->second.open.empty()) stacks_.erase(it);
}

// Open scopes are counted up to `now` without closing them.
PhaseTimes Timings::snapshot(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::array<Clock::duration, kPhaseCount> spent = spent_;
  for (const auto& [thread, stack] : stacks_)
    if (!stack.open.empty()) spent[static_cast<std::size_t>(stack.open.back())] += now - stack.since;
  PhaseTimes times;
  using Seconds = std::chrono::duration<double>;
  for (std::size_t k = 0; k < kPhaseCount; ++k) times.seconds[k] = Seconds(spent[k]).count();
  times.total = Seconds(now - start_).count();
  return times;
}

}  // namespace trainpack::imagebuild
