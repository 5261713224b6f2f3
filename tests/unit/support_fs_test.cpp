// support/fs: reading refuses what is not a regular file without blocking on it (a FIFO named .dockerignore once
// hung a build), and a failed atomic write reports its real cause.
#include "support/fs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <set>

#include "layers/dockerignore.h"
#include "support/error.h"

namespace fs = std::filesystem;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const trainpack::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(SupportFs, AFifoIsRefusedAtOnceNotWaitedOn) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { trainpack::read_file(dir.path() / "fifo"); }).find("it is a FIFO, not a regular file"),
            std::string::npos);
  ASSERT_EQ(::mkfifo((dir.path() / ".dockerignore").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { trainpack::layers::DockerIgnore::load(dir.path()); }).find("a FIFO"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(SupportFs, ReadFileKeepsItsLimitAndReadsWhatIsThere) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  trainpack::write_file_atomic(dir.path() / "f", "hello");
  EXPECT_EQ(trainpack::read_file(dir.path() / "f"), "hello");
  EXPECT_NE(error_of([&] { trainpack::read_file(dir.path() / "f", 3); }).find("too large"), std::string::npos);
  EXPECT_NE(error_of([&] { trainpack::read_file(dir.path() / "missing"); }).find("No such file"), std::string::npos);
}

TEST(SupportFs, AFailedAtomicWriteSaysWhyAndLeavesNothing) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  fs::create_directories(dir.path() / "taken" / "inside");
  std::string err = error_of([&] { trainpack::write_file_atomic(dir.path() / "taken", "x"); });
  EXPECT_NE(err.find("cannot rename into"), std::string::npos) << err;
  EXPECT_EQ(err.find("Success"), std::string::npos) << err;
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1) << "the staging file was removed";
}

// Temporary names carry their owner (pid and host); a later run removes those whose process is gone, and only
// those: a live process's, another host's and foreign names stay.
TEST(SupportFs, OrphanedTempsOfDeadProcessesAreSwept) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // now a pid of nobody (until reused, which only makes the sweep keep it)
  const std::string mine = trainpack::temp_owner_tag();
  const std::string host = mine.substr(mine.find('.') + 1);
  const std::string dead = "p" + std::to_string(child) + "." + host;
  fs::create_directories(dir.path() / ("pip-" + dead + "-AbCdEf") / "inside");
  trainpack::write_file_atomic(dir.path() / ("blob-" + dead + "-123456"), "x");
  trainpack::write_file_atomic(dir.path() / (".out.tmp-" + dead + "-0"), "x");
  fs::create_directories(dir.path() / ("pip-" + mine + "-live"));
  fs::create_directories(dir.path() / ("pip-p" + std::to_string(child) + ".00000000-otherhost"));
  fs::create_directories(dir.path() / "unrelated");
  EXPECT_EQ(trainpack::sweep_orphaned_temps(dir.path()), 3);
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"pip-" + mine + "-live", "pip-p" + std::to_string(child) + ".00000000-otherhost",
                                         "unrelated"}));
  EXPECT_EQ(trainpack::make_temp_dir(dir.path(), "x-").filename().string().rfind("x-" + mine + "-", 0), 0u);
}
