#include "support/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/pid_files.h"

using trainpack::find_program;
using trainpack::lower_this_thread_priority;
using trainpack::ProcessOptions;
using trainpack::run_process;
using trainpack::testing::alive;
using trainpack::testing::pids_in;
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

namespace {

// A shell line that starts a daemon as daemons start (fork, setsid, fork again) which writes its pid to `file` and
// sleeps, keeping the program's stdout and stderr open; it waits until the pid is written.
std::string start_daemon(const std::filesystem::path& file) {
  return "setsid sh -c 'sh -c \"echo \\$\\$ >> " + file.string() + "; exec sleep 1000\" &' ; "
         "while [ ! -s " + file.string() + " ]; do sleep 0.01; done";
}

}  // namespace

// ProcessOptions::confine: the program's status and output come back as without it, and nothing it started (a
// daemon that left its session, a background child in its group) is alive once run_process returns.
TEST(Process, AConfinedProgramLeavesNoProcessBehind) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tp-confined-" + std::to_string(::getpid()));
  std::filesystem::remove(file);
  ProcessOptions o;
  o.confine = true;
  auto r = run_process({"sh", "-c", start_daemon(file) + "; sleep 1000 & echo $! >> " + file.string() +
                                        "; cat; echo done; exit 3"},
                       "input\n", 10s, o);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "input\ndone\n") << "its stdin ends when ours is written";
  EXPECT_FALSE(r.timed_out) << "the daemon holding stdout open does not keep run_process waiting";
  std::vector<pid_t> pids = pids_in(file);
  ASSERT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << pid;
  std::filesystem::remove(file);
}

TEST(Process, AConfinedProgramThatTimesOutIsKilledWithWhatItStarted) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tp-confined-timeout-" + std::to_string(::getpid()));
  std::filesystem::remove(file);
  ProcessOptions o;
  o.confine = true;
  auto start = std::chrono::steady_clock::now();
  auto r = run_process({"sh", "-c", start_daemon(file) + "; echo $$ >> " + file.string() + "; exec sleep 1000"}, "",
                       1s, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  std::vector<pid_t> pids = pids_in(file);
  ASSERT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << pid;
  std::filesystem::remove(file);
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
