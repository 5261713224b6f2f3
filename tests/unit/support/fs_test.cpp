// support/fs: reading refuses what is not a regular file without blocking on it (a FIFO named .dockerignore once
// hung a build), and a failed atomic write reports its real cause.
#include "support/fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include "context/dockerignore.h"
#include "support/error.h"
#include "tests/unit/error_of.h"

namespace fs = std::filesystem;

using trainpack::test_support::error_of;

TEST(SupportFs, AFifoIsRefusedAtOnceNotWaitedOn) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { trainpack::read_file(dir.path() / "fifo"); }).find("it is a FIFO, not a regular file"),
            std::string::npos);
  ASSERT_EQ(::mkfifo((dir.path() / ".dockerignore").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { trainpack::context::DockerIgnore::load(dir.path()); }).find("a FIFO"), std::string::npos);
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

// read_file's too-large message says which limit, for which kind of file.
TEST(SupportFs, ReadFileNamesTheLimitItApplies) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  trainpack::write_file_atomic(dir.path() / "f", std::string(2048, 'x'));
  std::string err = error_of([&] { trainpack::read_file(dir.path() / "f", 1024, "a CA file"); });
  // Both sizes in the one unit of every message (support/human.h).
  EXPECT_NE(err.find("is too large (2.0 kB): the limit for a CA file is 1.0 kB"), std::string::npos) << err;
  // A device like /dev/zero (made here: 1,5) is refused before a byte is read.
  ASSERT_EQ(::mknod((dir.path() / "zero").c_str(), S_IFCHR | 0600, ::makedev(1, 5)), 0);
  err = error_of([&] { trainpack::read_file(dir.path() / "zero", 1024, "a CA file"); });
  EXPECT_NE(err.find("it is a device, not a regular file"), std::string::npos) << err;
}

namespace {

bool is_char_device(const fs::path& p) { return fs::is_character_file(fs::symlink_status(p)); }

std::string read_fd(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

std::size_t entries_in(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

// A character device named as an output is written, as `> FILE` would, and stays a device: /dev/full's numbers
// (1,7) report its error, /dev/null's (1,3) take the bytes. Nodes of our own, never the host's.
TEST(SupportFs, OutputToACharacterDeviceWritesItAndKeepsIt) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  const fs::path full = dir.path() / "full", null = dir.path() / "null";
  ASSERT_EQ(::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)), 0);
  ASSERT_EQ(::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0);
  std::string err = error_of([&] { trainpack::write_output_file(full, "sha256:abc\n"); });
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_TRUE(is_char_device(full));
  EXPECT_EQ(error_of([&] { trainpack::write_output_file(null, "sha256:abc\n"); }), "(no error)");
  EXPECT_TRUE(is_char_device(null));
  EXPECT_EQ(entries_in(dir.path()), 2u) << "no temporary file left beside them";
}

// A FIFO with a reader gets the bytes; one without is an error at once, never a wait. It stays a FIFO.
TEST(SupportFs, OutputToAFifoNeedsAReaderAndNeverWaits) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  std::string err = error_of([&] { trainpack::write_output_file(fifo, "x"); });
  EXPECT_NE(err.find("it is a FIFO and nothing reads it"), std::string::npos) << err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_EQ(error_of([&] { trainpack::write_output_file(fifo, "sha256:abc\n"); }), "(no error)");
  EXPECT_EQ(read_fd(reader), "sha256:abc\n");
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
}

// A symbolic link is followed: its target is replaced (a regular file) or written (a device) or created (a link
// to nothing), and the link stays.
TEST(SupportFs, OutputThroughASymlinkFollowsIt) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  const fs::path d = dir.path();
  trainpack::write_file_atomic(d / "real", "old");
  fs::create_symlink("real", d / "to-real");
  fs::create_symlink(d / "missing", d / "dangling");
  ASSERT_EQ(::mknod((d / "null").c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0);
  fs::create_symlink("null", d / "to-null");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  fs::create_symlink("fifo", d / "to-fifo");

  trainpack::write_output_file(d / "to-real", "new");
  EXPECT_TRUE(fs::is_symlink(d / "to-real"));
  EXPECT_EQ(trainpack::read_file(d / "real"), "new");
  trainpack::write_output_file(d / "dangling", "made");
  EXPECT_TRUE(fs::is_symlink(d / "dangling"));
  EXPECT_EQ(trainpack::read_file(d / "missing"), "made");
  trainpack::write_output_file(d / "to-null", "gone");
  EXPECT_TRUE(fs::is_symlink(d / "to-null"));
  EXPECT_TRUE(is_char_device(d / "null"));
  EXPECT_NE(error_of([&] { trainpack::write_output_file(d / "to-fifo", "x"); }).find("nothing reads it"),
            std::string::npos);
  EXPECT_TRUE(fs::is_symlink(d / "to-fifo"));
  EXPECT_EQ(entries_in(d), 8u) << "no temporary file left";
}

// A link into /proc (like /dev/stdout → /proc/self/fd/1) is an open file, written where it is; and so is a socket.
TEST(SupportFs, OutputToAnOpenDescriptorOrASocketWritesIt) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  fs::create_symlink("/proc/self/fd/" + std::to_string(p[1]), dir.path() / "stdout");
  trainpack::write_output_file(dir.path() / "stdout", "sha256:abc\n");
  ::close(p[1]);
  EXPECT_EQ(read_fd(p[0]), "sha256:abc\n");
  ::close(p[0]);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "stdout"));

  const fs::path sock = dir.path() / "sock";
  int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  trainpack::write_output_file(sock, "sha256:abc\n");  // fits the socket buffer: accepted after
  int conn = ::accept(listener, nullptr, nullptr);
  ASSERT_GE(conn, 0);
  EXPECT_EQ(read_fd(conn), "sha256:abc\n");
  ::close(conn);
  ::close(listener);
  EXPECT_TRUE(fs::is_socket(fs::symlink_status(sock)));
}

// A regular or missing file is replaced whole; a directory or block device is refused.
TEST(SupportFs, OutputToARegularFileIsAtomicAndOddOnesAreRefused) {
  trainpack::ScopedDir dir(trainpack::make_temp_dir("", "tp-fs-"));
  trainpack::write_output_file(dir.path() / "f", "one");
  trainpack::write_output_file(dir.path() / "f", "two");
  EXPECT_EQ(trainpack::read_file(dir.path() / "f"), "two");
  {
    trainpack::OutputFile out(dir.path() / "g");
    out.write("never committed");
  }
  EXPECT_EQ(entries_in(dir.path()), 1u) << "an output not committed leaves nothing";
  EXPECT_NE(error_of([&] { trainpack::write_output_file(dir.path(), "x"); }).find("is a directory"), std::string::npos);
  ASSERT_EQ(::mknod((dir.path() / "disk").c_str(), S_IFBLK | 0600, ::makedev(7, 0)), 0);
  EXPECT_NE(error_of([&] { trainpack::write_output_file(dir.path() / "disk", "x"); }).find("block device"),
            std::string::npos);
}
