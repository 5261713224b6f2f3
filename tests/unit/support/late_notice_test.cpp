// A progress line said only when a step outlasts its delay (support/late_notice.h).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/late_notice.h"

namespace {

using namespace std::chrono_literals;

struct Said {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
};

TEST(LateNotice, AStepThatEndsBeforeTheDelayAddsNoLine) {
  Said said;
  { trainpack::LateNotice notice(said.sink(), "Removing files", 10s); }
  EXPECT_TRUE(said.lines.empty());
}

TEST(LateNotice, AStepThatOutlastsTheDelayIsToldOnceWhileItRuns) {
  Said said;
  {
    trainpack::LateNotice notice(said.sink(), "Removing files", 20ms);
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(said.mutex);
        if (!said.lines.empty()) break;
      }
      std::this_thread::sleep_for(10ms);
    }
    std::lock_guard lock(said.mutex);
    EXPECT_EQ(said.lines, std::vector<std::string>{"Removing files"}) << "not told while the step ran";
  }
  EXPECT_EQ(said.lines.size(), 1u);
}

}  // namespace
