#include "support/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "support/error.h"

namespace trainpack {
namespace {

constexpr std::size_t kStderrKept = 64u << 10;
// An answer's header: its byte count in decimal and a newline.
constexpr std::size_t kLongestHeader = 24;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The last line with something on it: where a Python traceback says what went wrong.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  std::size_t newline = text.rfind('\n', end);
  std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end + 1 - start);
}

// The answer in `got`, once its header and all its bytes are there.
bool answer_complete(const std::string& got, std::string& answer) {
  std::size_t eol = got.find('\n');
  if (eol == std::string::npos) {
    if (got.size() > kLongestHeader) throw Error("a helper answered without announcing its size");
    return false;
  }
  std::size_t size = 0;
  for (std::size_t i = 0; i < eol; ++i) {
    if (got[i] < '0' || got[i] > '9' || i >= kLongestHeader) throw Error("a helper announced an unreadable size");
    size = size * 10 + static_cast<std::size_t>(got[i] - '0');
  }
  if (got.size() - eol - 1 < size) return false;
  if (got.size() - eol - 1 > size) throw Error("a helper said more than it announced");
  answer = got.substr(eol + 1);
  return true;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const ProcessOptions& options)
    : child_(spawn_piped(argv, options)) {
  if (child_.pid < 0) throw Error("cannot start " + argv.at(0) + ": not found");
  for (int fd : {child_.in, child_.out, child_.err})
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  close_fd(child_.in);
  close_fd(child_.out);
  close_fd(child_.err);
  if (child_.pid < 0) return;
  int status = 0;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (::waitpid(child_.pid, &status, broken_ ? 0 : WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      ::kill(child_.pid, SIGKILL);
      ::waitpid(child_.pid, &status, 0);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void ChildProcess::close_input() { close_fd(child_.in); }

void ChildProcess::fail(const std::string& why) {
  broken_ = true;
  for (int reads = 0; reads < 64 && read_stderr(); ++reads) {  // what is there now, bounded
  }
  if (child_.pid > 0) ::kill(child_.pid, SIGKILL);
  close_fd(child_.in);
  throw Error(why + (last_line(stderr_).empty() ? std::string() : ": " + last_line(stderr_)));
}

bool ChildProcess::read_stderr() {
  if (child_.err < 0) return false;
  char buf[4096];
  ssize_t r = ::read(child_.err, buf, sizeof buf);
  if (r > 0) {
    stderr_.append(buf, static_cast<std::size_t>(r));
    if (stderr_.size() > 2 * kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
    return true;
  }
  if (r == 0 || (errno != EAGAIN && errno != EINTR)) close_fd(child_.err);
  return false;
}

// Sends more of `request` from `written` on.
void ChildProcess::write_some(const std::string& request, std::size_t& written) {
  ssize_t w = ::write(child_.in, request.data() + written, request.size() - written);
  if (w < 0 && errno != EAGAIN && errno != EINTR) fail("the helper stopped reading");
  if (w > 0) written += static_cast<std::size_t>(w);
}

// Appends what the helper wrote to `got`; at its end, fails with what it said on stderr.
void ChildProcess::read_some(std::string& got) {
  char buf[65536];
  ssize_t r = ::read(child_.out, buf, sizeof buf);
  if (r > 0) got.append(buf, static_cast<std::size_t>(r));
  if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR))) return;
  // What it said before it went is in the stderr pipe once it has exited: wait a moment for that.
  int status = 0;
  for (int i = 0; i < 500 && child_.pid > 0; ++i) {
    if (::waitpid(child_.pid, &status, WNOHANG) == child_.pid) child_.pid = -1;
    else std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  fail("the helper ended");
}

std::string ChildProcess::exchange(const std::string& request, std::chrono::milliseconds timeout) {
  if (broken_) throw Error("internal: a broken helper was asked again");
  SigpipeGuard sigpipe;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t written = 0;
  std::string got, answer;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) fail("the helper did not answer in time");
    // Its stdout is read even while the request is still going in, so a helper that answers early cannot stall us.
    pollfd fds[3];
    nfds_t n = 0;
    if (written < request.size()) fds[n++] = {child_.in, POLLOUT, 0};
    fds[n++] = {child_.out, POLLIN, 0};
    if (child_.err >= 0) fds[n++] = {child_.err, POLLIN, 0};
    int ready = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) fail(std::string("poll: ") + std::strerror(errno));
    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == child_.err) {
        read_stderr();
      } else if (fds[i].fd == child_.in) {
        write_some(request, written);
      } else {
        read_some(got);
        try {
          if (!answer_complete(got, answer)) continue;
          if (written < request.size()) fail("the helper answered before it had read the request");
          return answer;
        } catch (const Error& e) {
          fail(e.what());
        }
      }
    }
  }
}

}  // namespace trainpack
