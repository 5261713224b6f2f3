#pragma once
// The "timings" object of a `trainpack build --format=json` result: every phase as a number of seconds, none
// negative, each moment charged to one phase, so they add up to at most the total (each is rounded to the
// millisecond, hence the epsilon).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace trainpack::testing {

inline void expect_phase_timings(const nlohmann::json& result) {
  ASSERT_TRUE(result.contains("timings")) << result;
  const nlohmann::json& timings = result.at("timings");
  ASSERT_TRUE(timings.contains("total") && timings.at("total").is_number()) << timings;
  double sum = 0;
  for (const char* phase : {"base", "pip_cache", "facts", "resolve", "install", "layers", "output"}) {
    ASSERT_TRUE(timings.contains(phase) && timings.at(phase).is_number()) << phase << " in " << timings;
    EXPECT_GE(timings.at(phase).get<double>(), 0) << phase << " in " << timings;
    sum += timings.at(phase).get<double>();
  }
  EXPECT_LE(sum, timings.at("total").get<double>() + 0.004) << timings;
}

}  // namespace trainpack::testing
