#include "support/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
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

// In a child after fork(): only async-signal-safe calls from here on (a threaded parent may hold any lock).
void write_stderr(const char* msg) {
  ssize_t ignored = ::write(2, msg, std::strlen(msg));
  (void)ignored;
}

[[noreturn]] void exec_child(const char* exe, char* const* args, char* const* env, const ProcessOptions& options) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (options.run_as && (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || !become(*options.run_as))) {
    write_stderr("cannot switch to the build's user\n");
    ::_exit(126);
  }
  if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
  ::execve(exe, args, env);
  write_stderr("cannot execute the program\n");
  ::_exit(127);
}

// What the supervisor of a confined program waits for: its children, and the signals that end it (the timeout's
// SIGTERM, the terminal's, and PR_SET_PDEATHSIG's when this process goes).
sigset_t supervisor_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  return set;
}

// The parent pid in /proc/PID/stat ("PID (COMM) S PPID ..."; COMM may hold spaces and parentheses), or -1.
pid_t parent_in_stat(const char* pid_digits) {
  char path[64] = "/proc/";
  std::size_t len = 6;
  for (const char* c = pid_digits; *c && len < 40; ++c) path[len++] = *c;
  std::memcpy(path + len, "/stat", 6);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* close_paren = nullptr;
  for (const char* c = buf; *c; ++c)
    if (*c == ')') close_paren = c;
  if (!close_paren || close_paren[1] != ' ' || !close_paren[2] || close_paren[3] != ' ') return -1;
  pid_t ppid = 0;
  for (const char* c = close_paren + 4; *c >= '0' && *c <= '9'; ++c) ppid = ppid * 10 + (*c - '0');
  return ppid;
}

// SIGKILL to every child of the calling process, found by scanning /proc (getdents64: opendir may allocate).
void kill_own_children() {
  const pid_t self = ::getpid();
  int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  alignas(8) char buf[8192];
  for (ssize_t n; (n = ::getdents64(dir, buf, sizeof buf)) > 0;) {
    for (ssize_t off = 0; off < n;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buf + off);
      off += entry->d_reclen;
      pid_t pid = 0;
      const char* c = entry->d_name;
      for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (*c != '\0' || pid <= 0 || pid == self) continue;
      if (parent_in_stat(entry->d_name) == self) ::kill(pid, SIGKILL);
    }
  }
  ::close(dir);
}

// Kills the program's group (its leader not reaped yet, so that the group id cannot have been reused) and every
// process left below the supervisor (orphans are reparented to it, a child subreaper), and reaps them, until it has
// no child left.
void kill_left_processes(pid_t group) {
  ::kill(-group, SIGKILL);
  for (;;) {
    kill_own_children();
    pid_t reaped;
    while ((reaped = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
    }
    if (reaped < 0 && errno == ECHILD) return;
    struct timespec pause {0, 1000000};
    ::nanosleep(&pause, nullptr);
  }
}

// The intermediate process of a confined program (ProcessOptions::confine); exits with the program's status.
[[noreturn]] void supervise_confined(const char* exe, char* const* args, char* const* env,
                                     const ProcessOptions& options) {
  const pid_t parent = ::getppid();
  const sigset_t waited = supervisor_signals();
  ::signal(SIGCHLD, SIG_DFL);  // not ignored: children must stay waitable
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) {
    write_stderr("cannot supervise the program's processes\n");
    ::_exit(126);
  }
  if (::getppid() != parent) ::_exit(126);  // the parent went before PR_SET_PDEATHSIG took
  // It never execs, so close-on-exec closes nothing: every descriptor but the program's stdin, stdout and stderr
  // goes, else a pipe of ours (this child's stdin, another helper's) would not see its end while the program runs.
  if (::close_range(3, ~0U, 0) != 0)
    for (int fd = 3; fd < 4096; ++fd) ::close(fd);
  pid_t program = ::fork();
  if (program < 0) ::_exit(126);
  if (program == 0) {
    ::setpgid(0, 0);
    exec_child(exe, args, env, options);
  }
  ::setpgid(program, program);
  siginfo_t ended {};
  for (;;) {
    int sig = 0;
    if (::sigwait(&waited, &sig) != 0) continue;
    if (sig != SIGCHLD) {
      kill_left_processes(program);
      ::_exit(128 + sig);
    }
    ended.si_pid = 0;  // WNOWAIT: the program stays a zombie, its pid (the group id) taken, until the group is killed
    if (::waitid(P_PID, static_cast<id_t>(program), &ended, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        ended.si_pid == program)
      break;
  }
  kill_left_processes(program);
  ::_exit(ended.si_code == CLD_EXITED ? ended.si_status : 128 + ended.si_status);
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

  // A confined child's supervisor must not die of a signal before it blocks them: they are blocked across fork().
  sigset_t old_mask;
  if (options.confine) {
    sigset_t supervised = supervisor_signals();
    ::pthread_sigmask(SIG_BLOCK, &supervised, &old_mask);
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    if (options.confine) ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    throw Error(std::string("cannot start ") + exe + ": " + std::strerror(e));
  }
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(options.merge_stderr ? out[1] : err[1], 2);
    char* const* env = options.env.empty() ? environ : envp.data();
    if (options.confine) supervise_confined(exe.c_str(), args.data(), env, options);
    exec_child(exe.c_str(), args.data(), env, options);
  }
  if (options.confine) ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
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
  // A confined program's supervisor kills what is below it on SIGTERM, then exits.
  if (run.timed_out) ::kill(pid, options.confine ? SIGTERM : SIGKILL);
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

// In the child after fork(), before exec_attached: a mount namespace of its own with `m` mounted. The outcome goes
// up `report` as an errno (0: mounted); then the child waits for a byte on `go` (none: the parent gave up).
void mount_privately(const PrivateMount& m, int report, int go) {
  auto tell = [report](int e) {
    ssize_t ignored = ::write(report, &e, sizeof e);
    (void)ignored;
  };
  auto fail = [&tell] {
    tell(errno);
    ::_exit(125);
  };
  if (::unshare(CLONE_NEWNS) != 0) fail();
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail();
  if (::chdir(m.cwd.c_str()) != 0) fail();
  if (::mount(m.source.c_str(), m.target.c_str(), m.type.c_str(), 0, m.data.c_str()) != 0) fail();
  if (::chdir("/") != 0) fail();
  tell(0);
  char byte;
  ssize_t n;
  do n = ::read(go, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) ::_exit(125);
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

namespace {

// What run_attached's child needs, made before fork(): only async-signal-safe calls may follow it.
struct AttachedChild {
  explicit AttachedChild(const std::vector<std::string>& argv)
      : exe(find_program(argv.at(0))), failure("trainpack: cannot execute " + argv[0] + "\n"), storage(argv) {
    if (exe.empty()) exe = argv[0];  // execve fails, the child says so and exits 127
    for (auto& a : storage) args.push_back(a.data());
    args.push_back(nullptr);
    // What we printed so far comes before the child's output.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) throw Error(std::string("cannot open /dev/null: ") + std::strerror(errno));
  }
  ~AttachedChild() { ::close(devnull); }
  AttachedChild(const AttachedChild&) = delete;
  AttachedChild& operator=(const AttachedChild&) = delete;

  std::string exe, failure;
  std::vector<std::string> storage;
  std::vector<char*> args;
  int devnull = -1;
};

}  // namespace

namespace {

int read_errno(int fd) {
  int e = 0;
  ssize_t n;
  do n = ::read(fd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof e) ? e : EIO;
}

// Two pipes, both ends close-on-exec: the child's report up, the parent's go-ahead down.
struct MountPipes {
  MountPipes() {
    if (::pipe2(report, O_CLOEXEC) != 0 || ::pipe2(go, O_CLOEXEC) != 0)
      throw Error(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  ~MountPipes() {
    for (int fd : {report[0], report[1], go[0], go[1]})
      if (fd >= 0) ::close(fd);
  }
  void close_end(int& fd) {
    ::close(fd);
    fd = -1;
  }
  int report[2] = {-1, -1}, go[2] = {-1, -1};
};

}  // namespace

AttachedRun run_attached_with_mount(const std::vector<std::string>& argv, ChildOutput output,
                                    const PrivateMount& mount,
                                    const std::function<void(const std::filesystem::path&)>& mounted) {
  if (argv.empty()) throw Error("internal: run_attached without a program");
  AttachedChild child(argv);
  MountPipes pipes;
  IgnoredTerminalSignals ignored;
  pid_t pid = ::fork();
  if (pid < 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    mount_privately(mount, pipes.report[1], pipes.go[0]);
    exec_attached(child.exe, child.args, child.devnull, output, child.failure);
  }
  pipes.close_end(pipes.report[1]);
  pipes.close_end(pipes.go[0]);
  AttachedRun run;
  run.mount_errno = read_errno(pipes.report[0]);
  if (run.mount_errno != 0) {
    wait_attached(pid, {});
    return run;
  }
  try {
    mounted(std::filesystem::path("/proc") / std::to_string(pid) / "root");
  } catch (...) {
    pipes.close_end(pipes.go[1]);  // the child reads no byte and exits
    wait_attached(pid, {});
    throw;
  }
  ssize_t sent = ::write(pipes.go[1], "g", 1);
  pipes.close_end(pipes.go[1]);
  run.status = wait_attached(pid, {});
  if (sent != 1) run.status = 125;
  return run;
}

int run_attached(const std::vector<std::string>& argv, ChildOutput output, std::chrono::milliseconds timeout) {
  if (argv.empty()) throw Error("internal: run_attached without a program");
  AttachedChild child(argv);
  IgnoredTerminalSignals ignored;
  pid_t pid = ::fork();
  if (pid < 0) throw Error("cannot start " + argv[0] + ": " + std::strerror(errno));
  if (pid == 0) exec_attached(child.exe, child.args, child.devnull, output, child.failure);
  return wait_attached(pid, timeout);
}

}  // namespace trainpack
