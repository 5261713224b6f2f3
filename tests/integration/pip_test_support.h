#pragma once
// Helpers for the Pip* integration tests: the local package index fixture (tests/fixtures/python-index.sh), whose
// state directory CTest passes as TRAINPACK_TEST_INDEX_STATE.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

namespace trainpack::testing {

// TRAINPACK_TEST_INDEX_URL / TRAINPACK_TEST_INDEX_DIR from the index fixture's env file.
inline std::map<std::string, std::string> index_env() {
  return read_env_file(std::filesystem::path(env_or_fail("TRAINPACK_TEST_INDEX_STATE")) / "env");
}

inline std::string index_url() { return index_env().at("TRAINPACK_TEST_INDEX_URL"); }
inline std::filesystem::path index_dir() { return index_env().at("TRAINPACK_TEST_INDEX_DIR"); }

// Builds `dockerfile` into the test dockerd as `tag` (the --executor-image-uri of the test), after loading
// `archive` (the docker-archive its FROM names; the bookworm test base by default), and exports it as an OCI
// layout for trainpack; returns "oci:DIR:x".
inline std::string derived_base(const std::filesystem::path& work, const std::string& tag,
                                const std::string& dockerfile, const std::string& archive = base_archive()) {
  auto docker = [](std::vector<std::string> args) {
    std::vector<std::string> argv = docker_command();
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  auto run_ok = [](const std::vector<std::string>& argv) {
    auto r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
  };
  run_ok(docker({"load", "-i", archive}));
  std::filesystem::path ctx = work / "base-context";
  std::filesystem::create_directories(ctx);
  write_file(ctx / "Dockerfile", dockerfile);
  std::vector<std::string> build = docker({"build", "--network", "host", "-t", tag, ctx.string()});
  build.insert(build.begin(), {"env", "DOCKER_BUILDKIT=1"});
  run_ok(build);
  run_ok(docker({"save", "-o", (work / "base.tar").string(), tag}));
  run_ok({"skopeo", "copy", "docker-archive:" + (work / "base.tar").string(),
          "oci:" + (work / "base-oci").string() + ":x"});
  return "oci:" + (work / "base-oci").string() + ":x";
}

// The bookworm test base with a venv at /opt/venv first on PATH (Debian's venv: pip 23.0.1 and setuptools, no
// `wheel`), its pip pointed at the index by ENV PIP_INDEX_URL, tp-beta 0.9 preinstalled by that pip.
inline std::string venv_base(const std::filesystem::path& work, const std::string& tag) {
  return derived_base(work, tag,
                      "FROM " + std::string(kBaseArchiveRef) + "\n"
                      "ENV PIP_INDEX_URL=" + index_url() + "\n"
                      "RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-cache-dir tp-beta==0.9\n"
                      "ENV PATH=/opt/venv/bin:$PATH VIRTUAL_ENV=/opt/venv\n");
}

// A trainer package: trainer/task.py (importing `module`), requirements.txt, and the local wheel of the index
// fixture in dist/.
inline std::filesystem::path trainer_package(const std::filesystem::path& work, const std::string& requirements,
                                             const std::string& module = "tp_alpha") {
  std::filesystem::path pkg = work / "pkg";
  std::filesystem::create_directories(pkg / "trainer");
  std::filesystem::create_directories(pkg / "dist");
  write_file(pkg / "trainer" / "task.py", "import " + module + "\nprint('trained')\n");
  write_file(pkg / "requirements.txt", requirements);
  std::filesystem::copy_file(index_dir() / "extra" / "tp_local-1.0-py3-none-any.whl",
                             pkg / "dist" / "tp_local-1.0-py3-none-any.whl");
  return pkg;
}

// The test index's files served by a python3 http.server of the test's own, so that the test can stop it; GETs of
// paths matching `slow_paths` (a Python regex) are answered `delay_seconds` late.
class OwnIndexServer {
 public:
  explicit OwnIndexServer(const std::string& slow_paths = "", double delay_seconds = 0) : port_(free_port()) {
    static constexpr const char* kServer = R"(
import functools, http.server, re, sys, time
class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if sys.argv[3] and re.search(sys.argv[3], self.path):
            time.sleep(float(sys.argv[4]))
        super().do_GET()
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])),
                                functools.partial(Handler, directory=sys.argv[2])).serve_forever()
)";
    CommandResult started = run_command(
        {"sh", "-c", "python3 -c \"$0\" \"$@\" >/dev/null 2>&1 & echo $!", kServer, std::to_string(port_),
         index_dir().string(), slow_paths, std::to_string(delay_seconds)});
    pid_ = std::stoi(started.out);
    for (int i = 0; i < 100; ++i) {
      if (run_command({"python3", "-c", "import urllib.request,sys; urllib.request.urlopen(sys.argv[1])", url()})
              .exit_code == 0)
        return;
      usleep(100 * 1000);
    }
    ADD_FAILURE() << "the index server on port " << port_ << " did not answer";
  }
  ~OwnIndexServer() { stop(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/simple/"; }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    run_command({"sh", "-c", "while kill -0 " + std::to_string(pid_) + " 2>/dev/null; do sleep 0.05; done"});
    pid_ = 0;
  }

 private:
  int port_;
  int pid_ = 0;
};

}  // namespace trainpack::testing
