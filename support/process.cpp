#include "support/process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "support/error.h"

namespace trainpack {
namespace {

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

}  // namespace

void lower_this_thread_priority() {
  // PRIO_PROCESS with a thread id names that thread alone (setpriority(2), Linux notes).
  id_t thread = static_cast<id_t>(::gettid());
  errno = 0;
  int now = ::getpriority(PRIO_PROCESS, thread);
  if (errno == 0) ::setpriority(PRIO_PROCESS, thread, std::min(now + 10, 19));
}

std::string find_program(const std::string& name) {
  auto runnable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return runnable(name) ? name : std::string();
  const char* env = std::getenv("PATH");
  std::string path = env && *env ? env : "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (runnable(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

SigpipeGuard::SigpipeGuard() {
  sigemptyset(&pipe_set_);
  sigaddset(&pipe_set_, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_set_);
}

SigpipeGuard::~SigpipeGuard() {
  sigset_t pending;
  sigpending(&pending);
  if (sigismember(&pending, SIGPIPE)) {
    struct timespec zero {0, 0};
    sigtimedwait(&pipe_set_, nullptr, &zero);
  }
  ::pthread_sigmask(SIG_SETMASK, &old_set_, nullptr);
}

PipedChild spawn_piped(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw Error("internal: spawn_piped without a program");
  // Resolved before fork(): only async-signal-safe calls may follow it in a threaded program.
  const std::string exe = find_program(argv[0]);
  if (exe.empty()) return {};
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    throw Error(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> args_storage = argv;
  std::vector<char*> args;
  for (auto& a : args_storage) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_storage = options.env;
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    throw Error(std::string("cannot start ") + exe + ": " + std::strerror(e));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(options.merge_stderr ? out[1] : err[1], 2);
    if (options.run_as && (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || !become(*options.run_as))) {
      static const char msg[] = "cannot switch to the build's user\n";
      ssize_t ignored = ::write(2, msg, sizeof msg - 1);
      (void)ignored;
      ::_exit(126);
    }
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::execve(exe.c_str(), args.data(), options.env.empty() ? environ : envp.data());
    static const char msg[] = "cannot execute the program\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  return {pid, in[1], out[0], err[0]};
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout, const ProcessOptions& options) {
  PipedChild child = spawn_piped(argv, options);
  if (child.pid < 0) {
    ProcessResult missing;
    missing.exit_code = 127;
    missing.err = argv[0] + ": not found";
    return missing;
  }
  pid_t pid = child.pid;
  int in_fd = child.in, out_fd = child.out, err_fd = child.err;

  SigpipeGuard sigpipe;

  ProcessResult run;
  size_t written = 0;
  if (input.empty()) close_fd(in_fd);
  else ::fcntl(in_fd, F_SETFL, ::fcntl(in_fd, F_GETFL) | O_NONBLOCK);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  const size_t kCap = options.output_cap;
  char buf[16384];
  while (in_fd >= 0 || out_fd >= 0 || err_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      break;
    }
    pollfd fds[3];
    nfds_t n = 0;
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    int pr = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (pr < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      int fd = fds[i].fd;
      if (fd == in_fd) {
        ssize_t w = ::write(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) close_fd(in_fd);
      } else {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r > 0) {
          std::string& dst = fd == out_fd ? run.out : run.err;
          if (options.merge_stderr) {
            dst.append(buf, static_cast<size_t>(r));
            if (dst.size() > 2 * kCap) dst.erase(0, dst.size() - kCap);
          } else if (dst.size() < kCap) {
            dst.append(buf, static_cast<size_t>(r));
          }
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          if (fd == out_fd) close_fd(out_fd);
          else close_fd(err_fd);
        }
      }
    }
  }
  close_fd(in_fd);
  close_fd(out_fd);
  close_fd(err_fd);
  if (run.timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

namespace {

// Ignores SIGINT, SIGTERM and SIGQUIT for as long as it lives, then puts the old handlers back.
class IgnoredTerminalSignals {
 public:
  IgnoredTerminalSignals() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &ignore, &old_[i]);
  }
  ~IgnoredTerminalSignals() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  IgnoredTerminalSignals(const IgnoredTerminalSignals&) = delete;
  IgnoredTerminalSignals& operator=(const IgnoredTerminalSignals&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGQUIT};
  std::array<struct sigaction, 3> old_{};
};

// In the child after fork(): the default signal dispositions, stdin from /dev/null, the output, then exec.
[[noreturn]] void exec_attached(const std::string& exe, std::vector<char*>& args, int devnull, ChildOutput output,
                                const std::string& failure) {
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_DFL);
  ::dup2(devnull, 0);
  switch (output) {
    case ChildOutput::kMergedToStdout: ::dup2(1, 2); break;
    case ChildOutput::kToStderr: ::dup2(2, 1); break;
    case ChildOutput::kDiscard:
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
      break;
  }
  ::execve(exe.c_str(), args.data(), environ);
  ssize_t ignored = ::write(2, failure.data(), failure.size());
  (void)ignored;
  ::_exit(127);
}

// Waits for `pid`; after `timeout` (> 0) kills it and returns -1.
int wait_attached(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    pid_t r = ::waitpid(pid, &status, timeout.count() > 0 ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw Error(std::string("waitpid: ") + std::strerror(errno));
    if (r == 0) {
      if (std::chrono::steady_clock::now() - start > timeout) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int run_attached(const std::vector<std::string>& argv, ChildOutput output, std::chrono::milliseconds timeout) {
  if (argv.empty()) throw Error("internal: run_attached without a program");
  // Everything the child needs is made before fork(): only async-signal-safe calls may follow it.
  std::string exe = find_program(argv[0]);
  if (exe.empty()) exe = argv[0];  // execve fails, the child says so and exits 127
  const std::string failure = "trainpack: cannot execute " + argv[0] + "\n";
  std::vector<std::string> args_storage = argv;
  std::vector<char*> args;
  for (auto& a : args_storage) args.push_back(a.data());
  args.push_back(nullptr);
  // What we printed so far comes before the child's output.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) throw Error(std::string("cannot open /dev/null: ") + std::strerror(errno));

  IgnoredTerminalSignals ignored;
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(devnull);
    throw Error("cannot start " + argv[0] + ": " + std::strerror(e));
  }
  if (pid == 0) exec_attached(exe, args, devnull, output, failure);
  ::close(devnull);
  return wait_attached(pid, timeout);
}

}  // namespace trainpack
