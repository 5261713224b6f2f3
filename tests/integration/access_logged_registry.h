#pragma once
// A docker-registry (distribution) child process with filesystem storage and its access log on, so that a test can
// count what crossed the wire (registry_build_test.cpp, cache_repo_test.cpp).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/test_support.h"

namespace trainpack::testing {

// A docker-registry child process with filesystem storage and an access log, on a free port.
class AccessLoggedRegistry {
 public:
  explicit AccessLoggedRegistry(const std::filesystem::path& dir) : dir_(dir) {
    for (int attempt = 0; attempt < 20 && pid_ <= 0; ++attempt) {
      port_ = free_port();
      write_file(dir_ / "config.yml", "version: 0.1\n"
                                      "log: {level: info, accesslog: {disabled: false}}\n"
                                      "storage: {filesystem: {rootdirectory: " + (dir_ / "data").string() +
                                          "}, delete: {enabled: true}}\n"
                                      "http: {addr: 127.0.0.1:" + std::to_string(port_) + ", secret: itest}\n");
      pid_t pid = ::fork();
      if (pid == 0) {
        int fd = ::open((dir_ / "registry.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execlp("docker-registry", "docker-registry", "serve", (dir_ / "config.yml").c_str(), nullptr);
        ::_exit(127);
      }
      for (int i = 0; i < 100; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (run_command({"curl", "-sf", "-o", "/dev/null", "http://" + host() + "/v2/"}).exit_code == 0) {
          pid_ = pid;
          break;
        }
        int status;
        if (::waitpid(pid, &status, WNOHANG) == pid) break;  // port taken: try another
      }
      if (pid_ <= 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
    if (pid_ <= 0) throw std::runtime_error("could not start docker-registry: " + read_file(dir_ / "registry.log"));
  }
  ~AccessLoggedRegistry() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }

  struct Request {
    std::string method, path;
  };
  // Requests logged since the last clear_log(), from distribution's combined-format access log.
  std::vector<Request> requests() const {
    std::vector<Request> out;
    std::string log = read_file(dir_ / "registry.log").substr(log_offset_);
    static const std::regex line(R"re("([A-Z]+) (/v2/[^ "]*) HTTP/[0-9.]+")re");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator(); ++it)
      out.push_back({(*it)[1], (*it)[2]});
    return out;
  }
  void clear_log() { log_offset_ = read_file(dir_ / "registry.log").size(); }
  // Upload sessions the registry holds open in `repository`: distribution's filesystem layout keeps a directory
  // under _uploads for each, with its `startedat` until the upload is completed or cancelled (a cancelled one may
  // leave an empty hashstates tree behind).
  int open_uploads(const std::string& repository) const {
    std::filesystem::path uploads = dir_ / "data" / "docker" / "registry" / "v2" / "repositories" / repository / "_uploads";
    std::error_code ec;
    int n = 0;
    for (auto it = std::filesystem::directory_iterator(uploads, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
      n += std::filesystem::exists(it->path() / "startedat");
    return n;
  }

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::size_t log_offset_ = 0;
};

inline int count(const std::vector<AccessLoggedRegistry::Request>& reqs, const std::string& method, const std::string& needle) {
  int n = 0;
  for (const auto& r : reqs) n += r.method == method && r.path.find(needle) != std::string::npos;
  return n;
}

inline std::string hex_of(const std::string& digest) { return digest.substr(digest.find(':') + 1); }

// Copies the test base into `registry` as `repository:3.11`; returns its reference and fills `layers` with its layer
// digests.
inline std::string push_test_base(const AccessLoggedRegistry& registry, const std::string& repository,
                                  std::vector<std::string>& layers) {
  std::string ref = registry.host() + "/" + repository + ":3.11";
  auto copy = run_command({"skopeo", "copy", "--dest-tls-verify=false", base_oci_ref(), "docker://" + ref});
  EXPECT_EQ(copy.exit_code, 0) << describe({"skopeo copy"}, copy);
  auto raw = run_command({"skopeo", "inspect", "--raw", "--tls-verify=false", "docker://" + ref});
  nlohmann::json manifest = nlohmann::json::parse(raw.out);  // named: a temporary's member would dangle in the loop
  for (const auto& l : manifest["layers"]) layers.push_back(l["digest"]);
  return ref;
}

}  // namespace trainpack::testing
