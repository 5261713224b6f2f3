#include "support/process.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

using trainpack::find_program;
using trainpack::lower_this_thread_priority;
using trainpack::ProcessOptions;
using trainpack::run_process;
using namespace std::chrono_literals;

TEST(Process, PassesInputAndCollectsOutputsAndStatus) {
  auto r = run_process({"sh", "-c", "cat; echo oops >&2; exit 3"}, "hello\n", 10s);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_EQ(r.err, "oops\n");
  EXPECT_FALSE(r.timed_out);
}

TEST(Process, WorkingDirectoryAndEnvironment) {
  ProcessOptions o;
  o.cwd = "/usr";
  o.env = {"ONLY=this"};
  auto r = run_process({"/bin/sh", "-c", "pwd; env | grep -c ."}, "", 10s, o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "/usr\n2\n") << "PWD set by sh plus ONLY";
}

TEST(Process, TimeoutKillsAndMissingProgramIs127) {
  auto slow = run_process({"sleep", "30"}, "", 300ms);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_EQ(slow.exit_code, -1);
  auto missing = run_process({"no-such-program-trainpack"}, "", 1s);
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(find_program("no-such-program-trainpack"), "");
  EXPECT_EQ(find_program("/bin/sh"), "/bin/sh");
  EXPECT_FALSE(find_program("sh").empty());
}

TEST(Process, RunAttachedReturnsTheExitStatus) {
  using trainpack::ChildOutput;
  using trainpack::run_attached;
  EXPECT_EQ(run_attached({"sh", "-c", "exit 3"}, ChildOutput::kDiscard), 3);
  EXPECT_EQ(run_attached({"sh", "-c", "kill -TERM $$"}, ChildOutput::kDiscard), 128 + 15) << "128 + the signal";
  EXPECT_EQ(run_attached({"sleep", "30"}, ChildOutput::kDiscard, 300ms), -1) << "killed after the timeout";
  EXPECT_EQ(run_attached({"no-such-program-trainpack"}, ChildOutput::kDiscard), 127);
  // stdin is /dev/null: a reader sees end of file at once.
  EXPECT_EQ(run_attached({"sh", "-c", "read x"}, ChildOutput::kDiscard, 10s), 1);
}

// lower_this_thread_priority(): that thread's niceness goes up by 10 (at most 19), the rest of the process keeps its
// own, and a program the thread starts inherits it.
TEST(Process, ALoweredThreadPriorityIsThatThreadsAndItsChildrens) {
  int before = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  int in_thread = 0;
  std::string child_niceness;
  std::thread background([&] {
    lower_this_thread_priority();
    in_thread = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
    child_niceness = run_process({"nice"}, "", 10s).out;
  });
  background.join();
  EXPECT_EQ(in_thread, std::min(before + 10, 19));
  EXPECT_EQ(child_niceness, std::to_string(std::min(before + 10, 19)) + "\n");
  EXPECT_EQ(::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())), before) << "the calling thread was lowered";
}
