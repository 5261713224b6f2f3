#pragma once
// Wall time per phase of a build, for `-v` and `--format=json`. A `Timings` accumulates; a `Timings::Scope`
// (RAII) charges the steady_clock time it is open to one phase. Scopes nest: an inner scope on the same thread
// pauses the outer one, so a second of work is charged to one phase only and the phases of a sequential build sum
// to at most its total. Thread-safe: each thread keeps its own stack of open scopes (phases of concurrent threads
// overlap in wall time, so then their sum may exceed the total).
#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace trainpack::imagebuild {

enum class Phase { kBase, kPipCache, kFacts, kResolve, kInstall, kLayers, kOutput };
inline constexpr std::size_t kPhaseCount = 7;

// "base", "pip_cache", "facts", "resolve", "install", "layers", "output": the keys of the JSON "timings" object.
std::string_view phase_name(Phase phase);

// What a build measured: seconds per phase (0 for a phase that did not occur) and in all.
struct PhaseTimes {
  std::array<double, kPhaseCount> seconds{};
  double total = 0;

  double operator[](Phase phase) const { return seconds[static_cast<std::size_t>(phase)]; }
  // "base 0.012 s, facts 0.003 s, ..., total 1.234 s"
  std::string summary() const;
};

class Timings {
 public:
  using Clock = std::chrono::steady_clock;

  class Scope {
   public:
    Scope(Timings& timings, Phase phase);
    ~Scope() { stop(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    // Ends the scope before its end of life (idempotent).
    void stop();

   private:
    Timings* timings_;
  };

  // Starts the total.
  explicit Timings(Clock::time_point start = Clock::now()) : start_(start) {}

  Scope scope(Phase phase) { return Scope(*this, phase); }
  // The phases so far, and the time since construction as the total.
  PhaseTimes snapshot(Clock::time_point now = Clock::now()) const;

  // The clock-level operations under Scope, public for tests that pass their own time points.
  void enter(Phase phase, Clock::time_point now);
  void leave(Clock::time_point now);

 private:
  struct Stack {
    std::vector<Phase> open;
    Clock::time_point since;  // when the innermost open phase last started being charged
  };
  void charge_locked(Stack& stack, Clock::time_point now);

  Clock::time_point start_;
  mutable std::mutex mutex_;
  std::array<Clock::duration, kPhaseCount> spent_{};
  std::map<std::thread::id, Stack> stacks_;
};

}  // namespace trainpack::imagebuild
