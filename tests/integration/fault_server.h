#pragma once
// FaultServer: runs tests/fixtures/fault_server.py (an in-memory OCI registry with scripted faults; its control API is
// documented at the top of that file) as a child process for the lifetime of the object.
//
//   trainpack::testing::FaultServer server;                 // http on 127.0.0.1, kernel-chosen ports
//   server.control({{"op", "fault"}, {"path", "/blobs/"}, {"action", "status"}, {"status", 503}});
//   HttpResponse r = client.send({.url = server.url("/v2/")});
//   for (const auto& e : server.requests()) ...             // GET /_log entries (method, path, query, auth, ...)
//
// The child gets --exit-on-stdin-eof with a pipe as stdin, so it also dies when the test process dies. Control calls
// go through a private HttpClient (no retries) that trusts `ca_file` when the server speaks TLS.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "test_support.h"

namespace trainpack::testing {

class FaultServer {
 public:
  struct Options {
    std::vector<std::string> args;  // extra arguments, e.g. {"--tls-cert", c, "--tls-key", k}
    std::filesystem::path ca_file;   // CA the control client trusts (TLS servers; mTLS servers allow no control calls)
  };

  FaultServer() : FaultServer(Options{}) {}
  explicit FaultServer(Options options) : options_(std::move(options)) { start(); }
  ~FaultServer() { stop(); }
  FaultServer(const FaultServer&) = delete;
  FaultServer& operator=(const FaultServer&) = delete;

  int port() const { return port_; }
  int alt_port() const { return alt_port_; }
  const std::string& scheme() const { return scheme_; }
  pid_t pid() const { return pid_; }
  // "127.0.0.1:PORT" (what a Reference's registry would be)
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string url(const std::string& path) const { return scheme_ + "://" + host() + path; }
  std::string alt_url(const std::string& path) const {
    return scheme_ + "://127.0.0.1:" + std::to_string(alt_port_) + path;
  }

  // POST /_control with one op (object) or several (array); returns "results" (an array). Throws on failure.
  nlohmann::json control(const nlohmann::json& ops) {
    net::HttpRequest req;
    req.method = "POST";
    req.url = url("/_control");
    req.headers = {{"Content-Type", "application/json"}};
    req.body = ops.dump();
    req.idempotent = false;
    auto r = client().send(req);
    if (r.status != 200) throw std::runtime_error("fault server control failed (" + std::to_string(r.status) + "): " + r.body);
    return nlohmann::json::parse(r.body).at("results");
  }
  nlohmann::json control_one(const nlohmann::json& op) { return control(op).at(0); }

  void reset() { control({{"op", "reset"}}); }
  void clear_log() { control({{"op", "clear_log"}}); }
  void config(nlohmann::json settings) {
    settings["op"] = "config";
    control(settings);
  }
  // Adds a fault rule; returns its id.
  int fault(nlohmann::json rule) {
    rule["op"] = "fault";
    return control_one(rule).at("id").get<int>();
  }
  // Seeds a blob in `repo`: {"digest", "size"}.
  nlohmann::json seed_blob(const std::string& repo, const std::string& data) {
    return control_one({{"op", "seed_blob"}, {"repo", repo}, {"data", data}});
  }
  nlohmann::json seed_random_blob(const std::string& repo, std::size_t size, int seed = 0) {
    return control_one({{"op", "seed_blob"}, {"repo", repo}, {"size", size}, {"seed", seed}});
  }

  // GET /_log: every request so far (control requests excluded).
  std::vector<nlohmann::json> requests() {
    net::HttpRequest req;
    req.url = url("/_log");
    req.max_response_bytes = 64u << 20;
    auto r = client().send(req);
    if (r.status != 200) throw std::runtime_error("fault server log failed: " + std::to_string(r.status));
    return nlohmann::json::parse(r.body).at("requests").get<std::vector<nlohmann::json>>();
  }
  // Log entries with this method whose path matches `path_regex` (std::regex_search).
  std::vector<nlohmann::json> requests(const std::string& method, const std::string& path_regex) {
    std::vector<nlohmann::json> out;
    std::regex re(path_regex);
    for (auto& e : requests()) {
      if ((method.empty() || e.at("method") == method) && std::regex_search(e.at("path").get<std::string>(), re)) {
        out.push_back(std::move(e));
      }
    }
    return out;
  }

  nlohmann::json state() {
    net::HttpRequest req;
    req.url = url("/_state");
    req.max_response_bytes = 64u << 20;
    return nlohmann::json::parse(client().send(req).body);
  }

  static std::string script() { return source_dir() + "/tests/fixtures/fault_server.py"; }

 private:
  net::HttpClient& client() {
    if (!client_) {
      net::HttpOptions o;
      o.max_attempts = 1;
      o.ca_file = options_.ca_file;
      o.certs_dirs = {};
      client_ = std::make_unique<net::HttpClient>(o);
    }
    return *client_;
  }

  void start() {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    std::vector<std::string> argv{"/usr/bin/python3", script(), "--exit-on-stdin-eof"};
    argv.insert(argv.end(), options_.args.begin(), options_.args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_fd_ = in[1];
    // The ready line: {"port": N, "alt_port": M, "scheme": "...", "pid": P}
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (line.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{out[0], POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[512];
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    if (line.find('\n') == std::string::npos) {
      stop();
      throw std::runtime_error("fault_server.py did not start (output: " + line + ")");
    }
    auto ready = nlohmann::json::parse(line.substr(0, line.find('\n')));
    port_ = ready.at("port").get<int>();
    alt_port_ = ready.at("alt_port").get<int>();
    scheme_ = ready.at("scheme").get<std::string>();
  }

  void stop() {
    if (stdin_fd_ >= 0) {
      ::close(stdin_fd_);
      stdin_fd_ = -1;
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
    }
  }

  Options options_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int port_ = 0, alt_port_ = 0;
  std::string scheme_ = "http";
  std::unique_ptr<net::HttpClient> client_;
};

}  // namespace trainpack::testing
