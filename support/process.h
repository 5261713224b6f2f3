#pragma once
// Running a helper program and collecting what it says: credential helpers (docker-credential-*) and the host
// Python (PEP 517 builds, bytecode). Never a program from an image. Also running a program whose output is the
// user's to see (a container engine or runtime), attached to our stdout and stderr.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/privileges.h"

namespace trainpack {

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;  // each capped at `output_cap` bytes
  bool timed_out = false;  // then the program was killed
};

struct ProcessOptions {
  std::filesystem::path cwd;               // empty: ours
  std::vector<std::string> env;            // "K=V" items; empty: our environment
  std::size_t output_cap = 1u << 20;
  // stderr into the same pipe as stdout (`out`), so that their lines keep their order, and `out` keeps the last
  // output_cap bytes rather than the first: what a failing build printed last is where its reason is.
  bool merge_stderr = false;
  // Run as this user (support/privileges.h), with no_new_privs so that no setuid program gives root back.
  std::optional<UserIds> run_as;
  // Confine the program's process tree (code from a package: setup.py, a build backend). It runs in a process group
  // of its own under an intermediate process that is a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so that
  // what it starts, daemons that double-fork and setsid included, stays below that process. When the program exits,
  // times out, or this process goes (PR_SET_PDEATHSIG), the intermediate kills every process left below it.
  bool confine = false;
};

// The executable `name` would run: itself when it contains a '/', else the first match in $PATH (a default PATH
// when unset). Empty when there is none.
std::string find_program(const std::string& name);

// Lowers the calling thread's CPU priority for good (niceness +10: Linux keeps it per thread, and the processes the
// thread starts inherit it), for background work that should only take the CPU the rest leaves over. Call it on a
// thread of the work's own: an unprivileged process cannot raise a priority again.
void lower_this_thread_priority();

// Writing to a child that exited early must not kill us: SIGPIPE is blocked in this thread while a guard lives, and
// one our writes raised is swallowed when it goes.
class SigpipeGuard {
 public:
  SigpipeGuard();
  ~SigpipeGuard();
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_set_, old_set_;
};

// A started child and our ends of its pipes (close-on-exec); pid -1 when the program was not found.
struct PipedChild {
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;  // its stdin, stdout and stderr (stderr unused with merge_stderr)
};

// Starts argv[0] (a path, or a name looked up with find_program) with pipes on stdin, stdout and stderr; the caller
// owns the descriptors and reaps the child. Throws Error only when no process can be started.
PipedChild spawn_piped(const std::vector<std::string>& argv, const ProcessOptions& options);

// Runs argv[0] (a path, or a name looked up with find_program) with `input` on stdin, waits at most `timeout`.
// Throws Error only when the program cannot be started; a missing program gives exit_code 127.
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input,
                          std::chrono::milliseconds timeout, const ProcessOptions& options = {});

// Where an attached child's stdout and stderr go.
enum class ChildOutput {
  kMergedToStdout,  // both to our stdout, in the order written
  kToStderr,        // both to our stderr
  kDiscard,         // both to /dev/null
};

// Runs argv[0] (a path, or a name looked up with find_program) with stdin from /dev/null and its output where
// `output` says, and returns its exit status: 128+N when signal N ended it, 127 when it could not be executed, -1
// when `timeout` (> 0; 0 waits for ever) ran out and it was killed. While it runs, SIGINT, SIGTERM and SIGQUIT are
// ignored by us: the child, in our process group, gets the terminal's Ctrl-C itself (a container runtime forwards
// it to the container) and we go on once it has exited. Throws Error only when no process can be started.
int run_attached(const std::vector<std::string>& argv, ChildOutput output, std::chrono::milliseconds timeout = {});

// A file system mounted for one child alone: the child enters a mount namespace of its own (unshare(2) CLONE_NEWNS,
// every mount made private so nothing propagates back) and mounts it there before exec, so it goes with the child's
// processes whatever becomes of us. Relative names in `data` (overlayfs's lowerdir=) resolve from `cwd`, which keeps
// a long option string under the one page mount(2) takes.
struct PrivateMount {
  std::string type, source, data;
  std::filesystem::path target, cwd;
};

// run_attached with `mount` made for the child first. Once it is mounted, and before the child executes argv,
// `mounted` is called with the path through which we see the child's file system (/proc/PID/root): it may read what
// was mounted and write what the program needs; if it throws, the child exits unexecuted and the error goes on.
// When the mount fails nothing is executed: the result has `mount_errno` set (status unset), so the caller can fall
// back to another way.
struct AttachedRun {
  int status = -1;
  int mount_errno = 0;
};
AttachedRun run_attached_with_mount(const std::vector<std::string>& argv, ChildOutput output,
                                    const PrivateMount& mount,
                                    const std::function<void(const std::filesystem::path&)>& mounted);

}  // namespace trainpack
