// Build code from a package (a PEP 517 backend in an sdist given with --extra-packages) is confined in time and in
// process tree: a call that never returns is stopped after --build-timeout with a one-line error naming the sdist,
// and nothing it started, a daemon that left its session included, is alive once the build is over.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"
#include "tests/integration/test_wheels.h"
#include "tests/pid_files.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

// An sdist of `name` (a module name: tp_sleepy) 1.0 whose in-tree backend (backend.py, PEP 517 backend-path) is `backend`, with a wheel of
// it in prebuilt/ for the backend to hand back; it needs nothing from an index. Written to pkg/dist/NAME-1.0.tar.gz;
// returns its path relative to pkg.
std::string sdist_with_backend(const fs::path& pkg, const std::string& name, const std::string& backend) {
  const fs::path src = pkg.parent_path() / "sdist-src" / (name + "-1.0");
  write_test_wheel(src / "prebuilt", name, "py3-none-any");
  write_file(src / "PKG-INFO", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n");
  write_file(src / "pyproject.toml",
             "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n");
  write_file(src / "backend.py", backend);
  fs::create_directories(pkg / "dist");
  const std::string rel = "dist/" + name + "-1.0.tar.gz";
  CommandResult tar = run_command({"tar", "-czf", (pkg / rel).string(), "-C", src.parent_path().string(),
                                   name + "-1.0"});
  EXPECT_EQ(tar.exit_code, 0) << tar.err;
  return rel;
}

// Python that appends the calling process's pid, or `pid`, to the file `pids` (readable by a build that runs as
// another user: the directory is world-writable).
std::string note_pid_function(const fs::path& pids) {
  return "import os, shutil, subprocess, time\n"
         "PIDS = '" + pids.string() + "'\n"
         "def note(pid):\n"
         "    with open(PIDS, 'a') as f:\n"
         "        f.write('%d\\n' % pid)\n";
}

// A directory any user may write the pid file into.
fs::path pid_dir(const fs::path& work) {
  fs::path dir = work / "pids";
  fs::create_directories(dir);
  EXPECT_EQ(::chmod(dir.c_str(), 01777), 0);
  return dir;
}

// The work directory, readable by a build that runs as an unprivileged user.
void open_to_builds(const fs::path& work) { ASSERT_EQ(::chmod(work.c_str(), 0755), 0); }

}  // namespace

TEST(BuildConfinement, ABackendThatNeverReturnsIsStoppedAfterTheBuildTimeout) {
  TempDir dir("tp-build-timeout");
  open_to_builds(dir.path());
  const fs::path pids = pid_dir(dir.path()) / "pids";
  const fs::path pkg = dir.path() / "pkg";
  write_file(pkg / "task.py", "print('trained')\n");
  const std::string sdist =
      sdist_with_backend(pkg, "tp_sleepy", note_pid_function(pids) +
                                               "def get_requires_for_build_wheel(config_settings=None):\n"
                                               "    note(os.getpid())\n"
                                               "    note(subprocess.Popen(['/bin/sleep', '100000']).pid)\n"
                                               "    time.sleep(100000)\n");
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = build_on_test_base(pkg, dir.path(), {"--extra-packages=" + sdist, "--build-timeout=3"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("trainpack: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--extra-packages " + fs::path(sdist).filename().string() +
                       " did not finish within 3 s (--build-timeout)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  std::vector<pid_t> started = pids_in(pids);
  ASSERT_EQ(started.size(), 2u) << "the backend and its child";
  for (pid_t pid : started) {
    EXPECT_FALSE(alive(pid)) << "pid " << pid << " outlived the build";
    if (alive(pid)) ::kill(pid, SIGKILL);
  }
}

TEST(BuildConfinement, ADaemonABackendStartsDoesNotOutliveTheBuild) {
  TempDir dir("tp-build-daemon");
  open_to_builds(dir.path());
  const fs::path pids = pid_dir(dir.path()) / "pids";
  const fs::path pkg = dir.path() / "pkg";
  write_file(pkg / "task.py", "print('trained')\n");
  // A classic daemon: fork, setsid, fork again, standard streams on /dev/null; the backend returns its wheel once
  // the daemon has written its pid.
  const std::string sdist = sdist_with_backend(
      pkg, "tp_daemon",
      note_pid_function(pids) +
          "def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):\n"
          "    if os.fork() == 0:\n"
          "        os.setsid()\n"
          "        if os.fork() == 0:\n"
          "            null = os.open(os.devnull, os.O_RDWR)\n"
          "            for fd in (0, 1, 2):\n"
          "                os.dup2(null, fd)\n"
          "            note(os.getpid())\n"
          "            time.sleep(100000)\n"
          "        os._exit(0)\n"
          "    while not os.path.exists(PIDS) or not open(PIDS).read().endswith('\\n'):\n"
          "        time.sleep(0.01)\n"
          "    name = 'tp_daemon-1.0-py3-none-any.whl'\n"
          "    shutil.copy(os.path.join('prebuilt', name), wheel_directory)\n"
          "    return name\n");
  CommandResult r = build_on_test_base(pkg, dir.path(), {"--extra-packages=" + sdist});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<pid_t> started = pids_in(pids);
  ASSERT_EQ(started.size(), 1u) << "the daemon";
  EXPECT_FALSE(alive(started[0])) << "the daemon (pid " << started[0] << ") outlived the build";
  if (alive(started[0])) ::kill(started[0], SIGKILL);
}
