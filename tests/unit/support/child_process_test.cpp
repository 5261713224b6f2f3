#include "support/child_process.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "support/error.h"

using trainpack::ChildProcess;
using trainpack::Error;
using namespace std::chrono_literals;

namespace {

// A helper in the protocol: reads a line, answers it upper-cased after its byte count; "die" makes it say why on
// stderr and exit; "hang" makes it sleep.
const char* const kHelper = R"py(
import sys, time
for line in iter(sys.stdin.buffer.readline, b""):
    if line == b"die\n":
        sys.stderr.write("asked to die\n"); sys.stderr.flush(); sys.exit(3)
    if line == b"hang\n":
        time.sleep(30)
    answer = line.upper()
    sys.stdout.buffer.write(b"%d\n" % len(answer) + answer)
    sys.stdout.buffer.flush()
)py";

}  // namespace

TEST(ChildProcess, OneProcessAnswersRequestAfterRequest) {
  ChildProcess child({"python3", "-c", kHelper}, {});
  EXPECT_EQ(child.exchange("hello\n", 10s), "HELLO\n");
  EXPECT_EQ(child.exchange("again\n", 10s), "AGAIN\n");
  // Larger than any pipe buffer both ways.
  std::string big(1u << 20, 'x');
  EXPECT_EQ(child.exchange(big + "\n", 10s), std::string(1u << 20, 'X') + "\n");
  EXPECT_FALSE(child.broken());
}

TEST(ChildProcess, AHelperThatEndsIsAnErrorWithWhatItSaid) {
  ChildProcess child({"python3", "-c", kHelper}, {});
  try {
    child.exchange("die\n", 10s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("asked to die"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(child.broken());
  EXPECT_THROW(child.exchange("hello\n", 10s), Error);
}

TEST(ChildProcess, AHelperThatDoesNotAnswerInTimeIsKilled) {
  ChildProcess child({"python3", "-c", kHelper}, {});
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(child.exchange("hang\n", 300ms), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(child.broken());
}

TEST(ChildProcess, AMissingProgramCannotBeStarted) {
  EXPECT_THROW(ChildProcess({"no-such-program-trainpack"}, {}), Error);
}

TEST(ChildProcess, AnAnswerBeforeTheRequestIsReadIsAnError) {
  // Answers at once and never reads: the request, larger than a pipe holds, cannot all go in.
  ChildProcess child({"python3", "-c",
                      "import sys, time\nsys.stdout.buffer.write(b'2\\nok'); sys.stdout.flush(); time.sleep(30)"},
                     {});
  try {
    child.exchange(std::string(1u << 20, 'x'), 10s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("before it had read the request"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(child.broken());
}

// close_input() ends the helper's stdin while the object lives on: the helper sees the end of its requests and exits
// (so that several helpers can be told at once, then waited for).
TEST(ChildProcess, ClosingTheInputLetsTheHelperEndBeforeItIsWaitedFor) {
  std::filesystem::path mark = std::filesystem::temp_directory_path() /
                               ("tp-child-closed-" + std::to_string(::getpid()));
  std::filesystem::remove(mark);
  ChildProcess child({"sh", "-c", "cat >/dev/null; : > \"$0\"", mark.string()}, {});
  child.close_input();
  for (int i = 0; i < 500 && !std::filesystem::exists(mark); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(std::filesystem::exists(mark)) << "the helper did not see the end of its input";
  std::filesystem::remove(mark);
}
