#pragma once
// Helpers for integration tests (header-only): run programs without a shell, read the CTest fixture environment,
// make scratch directories.
//
// Environment set by tests/CMakeLists.txt for every integration test:
//   TRAINPACK_BIN              the trainpack binary under test
//   TRAINPACK_SOURCE_DIR       the source tree (testdata/, tests/fixtures/)
//   TRAINPACK_TEST_BASE        fixture dir: oci/ (OCI layout, tag 3.11), base.tar (docker-archive,
//                              trainpack-test/python:3.11), env
//   TRAINPACK_TEST_DOCKERD     dockerd state dir: docker.sock, config/, env (DOCKER_HOST=..., DOCKER_CONFIG=...)
//   DOCKER_HOST, DOCKER_CONFIG the same daemon and an empty client config, for any docker CLI a test runs
//   TRAINPACK_TEST_REGISTRY    127.0.0.1:PORT of a plain-HTTP, no-auth registry (empty storage at first)
//   TRAINPACK_TEST_TMPDIR      where TempDir creates directories (inside the build tree)
// PipBases*.* tests also get
//   TRAINPACK_TEST_BASES       fixture dir of tests/fixtures/python-bases.sh: NAME/oci (tag NAME), NAME/base.tar
//                              (trainpack-test/NAME:1) for NAME in debian11, cpython, conda; env (their paths)
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace trainpack::testing {

struct CommandResult {
  int exit_code;    // the exit status; 128+N when killed by signal N; 127 when the program could not be started
  std::string out;  // everything written to stdout
  std::string err;  // everything written to stderr (or the exec failure)
};

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0).
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

namespace detail {

inline void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

inline void make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
}

}  // namespace detail

// Runs argv[0] (looked up in PATH if it has no '/') with argv, no shell. Feeds stdin_text on stdin and captures
// stdout and stderr completely; poll() drives all three pipes, so large outputs cannot deadlock.
inline CommandResult run_command(const std::vector<std::string>& argv, const std::string& stdin_text = "") {
  if (argv.empty()) throw std::invalid_argument("run_command: empty argv");
  int in[2], out[2], err[2], status_pipe[2];
  detail::make_pipe(in);
  detail::make_pipe(out);
  detail::make_pipe(err);
  detail::make_pipe(status_pipe);  // the child reports an exec failure through it; CLOEXEC closes it on success

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = ::write(status_pipe[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }

  detail::close_fd(in[0]);
  detail::close_fd(out[1]);
  detail::close_fd(err[1]);
  detail::close_fd(status_pipe[1]);

  CommandResult result{0, {}, {}};
  int exec_errno = 0;
  if (::read(status_pipe[0], &exec_errno, sizeof exec_errno) != static_cast<ssize_t>(sizeof exec_errno)) exec_errno = 0;
  detail::close_fd(status_pipe[0]);

  // The child may exit without reading stdin: writing must not kill us with SIGPIPE.
  struct sigaction ignore_pipe {}, previous {};
  ignore_pipe.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore_pipe, &previous);

  int in_fd = in[1], out_fd = out[0], err_fd = err[0];
  size_t written = 0;
  if (stdin_text.empty() || exec_errno != 0) detail::close_fd(in_fd);
  if (in_fd >= 0) ::fcntl(in_fd, F_SETFL, ::fcntl(in_fd, F_GETFL) | O_NONBLOCK);

  char buf[65536];
  while (in_fd >= 0 || out_fd >= 0 || err_fd >= 0) {
    pollfd fds[3];
    nfds_t n = 0;
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (::poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      int fd = fds[i].fd;
      if (fd == in_fd) {
        ssize_t w = ::write(in_fd, stdin_text.data() + written, stdin_text.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_text.size()) detail::close_fd(in_fd);
      } else {
        ssize_t r = ::read(fd, buf, sizeof buf);
        if (r > 0) {
          (fd == out_fd ? result.out : result.err).append(buf, static_cast<size_t>(r));
        } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
          if (fd == out_fd) detail::close_fd(out_fd);
          else detail::close_fd(err_fd);
        }
      }
    }
  }
  ::sigaction(SIGPIPE, &previous, nullptr);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  if (exec_errno != 0) {
    result.exit_code = 127;
    result.err += "run_command: cannot execute " + argv[0] + ": " + std::strerror(exec_errno) + "\n";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

// For assertion messages: the command line and both streams.
inline std::string describe(const std::vector<std::string>& argv, const CommandResult& r) {
  std::string s = "command:";
  for (const auto& a : argv) s += " " + a;
  s += "\nexit code: " + std::to_string(r.exit_code) + "\n--- stdout ---\n" + r.out + "\n--- stderr ---\n" + r.err;
  return s;
}

// The value of an environment variable the test cannot run without. Throws (which fails the current test with the
// message) when it is missing or empty: integration tests are meant to be started by ctest, which sets them.
inline std::string env_or_fail(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    ADD_FAILURE() << "environment variable " << name
                  << " is not set: run integration tests through ctest (ctest --test-dir build -L integration)";
    throw std::runtime_error(std::string("missing environment variable ") + name);
  }
  return v;
}

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

inline std::string trainpack_bin() {
#ifdef TRAINPACK_DEFAULT_BIN
  return env_or("TRAINPACK_BIN", TRAINPACK_DEFAULT_BIN);
#else
  return env_or_fail("TRAINPACK_BIN");
#endif
}

inline std::string source_dir() {
#ifdef TRAINPACK_SOURCE_DIR
  return env_or("TRAINPACK_SOURCE_DIR", TRAINPACK_SOURCE_DIR);
#else
  return env_or_fail("TRAINPACK_SOURCE_DIR");
#endif
}

// Fixture paths (see the top of this file).
inline std::string base_dir() { return env_or_fail("TRAINPACK_TEST_BASE"); }
inline std::string base_oci_dir() { return base_dir() + "/oci"; }
inline std::string base_oci_ref() { return "oci:" + base_oci_dir() + ":3.11"; }
inline std::string base_archive() { return base_dir() + "/base.tar"; }
inline constexpr const char* kBaseArchiveRef = "trainpack-test/python:3.11";

// The docker CLI talking to the test daemon: {cli, -H, host, --config, dir}; append the subcommand.
// Prefers /usr/bin/docker (docker.io, same release as the daemon) over any other docker on PATH.
inline std::vector<std::string> docker_command(std::initializer_list<std::string> args = {}) {
  std::string state = env_or_fail("TRAINPACK_TEST_DOCKERD");
  std::string cli = ::access("/usr/bin/docker", X_OK) == 0 ? "/usr/bin/docker" : "docker";
  std::vector<std::string> argv{cli, "-H", "unix://" + state + "/docker.sock", "--config", state + "/config"};
  argv.insert(argv.end(), args);
  return argv;
}

// A fresh directory under $TRAINPACK_TEST_TMPDIR (else $TMPDIR, else /tmp), removed with its contents on
// destruction unless TRAINPACK_KEEP_TEST_TMP is set (then its path is printed for inspection).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "trainpack-it") {
    std::filesystem::path parent = env_or("TRAINPACK_TEST_TMPDIR", env_or("TMPDIR", "/tmp"));
    std::filesystem::create_directories(parent);
    std::string templ = (parent / (prefix + ".XXXXXX")).string();
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp " + templ);
    path_ = buf.data();
  }
  ~TempDir() {
    if (path_.empty()) return;
    if (std::getenv("TRAINPACK_KEEP_TEST_TMP") != nullptr) {
      std::fprintf(stderr, "keeping %s\n", path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&& o) noexcept : path_(std::exchange(o.path_, {})) {}

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& rel) const { return (path_ / rel).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// KEY=VALUE lines of a fixture's env file (tests/fixtures/*.sh write them); empty when it cannot be read.
inline std::map<std::string, std::string> read_env_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(f, line);) {
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

inline void write_file(const std::filesystem::path& p, const std::string& content) {
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write " + p.string());
  f << content;
}

// busybox httpd serving `root` on a free port (it answers ranges by offset, not suffix ranges, and says
// Accept-Ranges: bytes), its -vv log in `log`; stopped on destruction.
class BusyboxHttpd {
 public:
  BusyboxHttpd(const std::filesystem::path& root, const std::filesystem::path& log) : port_(free_port()) {
    std::string cmd = "exec busybox httpd -f -vv -p 127.0.0.1:" + std::to_string(port_) + " -h '" + root.string() +
                      "' 2>'" + log.string() + "'";
    CommandResult started = run_command({"sh", "-c", cmd + " >/dev/null & echo $!"});
    pid_ = std::stoi(started.out);
    for (int i = 0; i < 100; ++i) {
      if (run_command({"curl", "-s", "-o", "/dev/null", url() + "/"}).exit_code == 0) return;
      usleep(50 * 1000);
    }
    throw std::runtime_error("busybox httpd did not answer");
  }
  ~BusyboxHttpd() {
    ::kill(pid_, SIGTERM);
    run_command({"sh", "-c", "while kill -0 " + std::to_string(pid_) + " 2>/dev/null; do sleep 0.05; done"});
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_;
  int pid_ = 0;
};

}  // namespace trainpack::testing
