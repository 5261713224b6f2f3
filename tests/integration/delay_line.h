#pragma once
// A server put a round trip away: tests/fixtures/delay_line.py in front of it, whose trace gives each exchange's
// span, so that a test can count the round trips a client waited on one after another.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/test_support.h"

namespace trainpack::testing {

// One exchange through the delay line: a request and its answer, or a connection's handshake.
struct Exchange {
  int connection = 0;
  double start = 0, end = 0;  // seconds, CLOCK_MONOTONIC
  std::string request;        // "HEAD /v2/...", "(connect)"
  bool handshake() const { return request == "(connect)"; }
};

class DelayLine {
 public:
  DelayLine(const std::filesystem::path& dir, const std::string& target, int delay_ms) : dir_(dir) {
    std::filesystem::path ready = dir_ / "delay-line.ready";
    pid_ = ::fork();
    if (pid_ == 0) {
      std::string script = source_dir() + "/tests/fixtures/delay_line.py";
      std::string delay = std::to_string(delay_ms);
      std::string trace = (dir_ / "delay-line.trace").string();
      std::string ready_file = ready.string();
      ::execl("/usr/bin/python3", "python3", script.c_str(), "--target", target.c_str(), "--delay-ms", delay.c_str(),
              "--trace", trace.c_str(), "--ready-file", ready_file.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !std::filesystem::exists(ready); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (!std::filesystem::exists(ready)) throw std::runtime_error("delay_line.py did not start");
    port_ = nlohmann::json::parse(read_file(ready)).at("port").get<int>();
  }
  ~DelayLine() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  // Emptied, not removed: the proxy appends to the file it opened.
  void clear_trace() { std::ofstream(dir_ / "delay-line.trace", std::ios::trunc); }

  // The exchanges since clear_trace(), in the order they began: the latest end written for each.
  std::vector<Exchange> exchanges() const {
    std::map<std::pair<int, double>, Exchange> by_start;
    std::istringstream lines(std::filesystem::exists(dir_ / "delay-line.trace") ? read_file(dir_ / "delay-line.trace")
                                                                                : "");
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      Exchange e;
      fields >> e.connection >> e.start >> e.end;
      std::getline(fields >> std::ws, e.request);
      Exchange& kept = by_start[{e.connection, e.start}];
      if (e.end >= kept.end) kept = e;
    }
    std::vector<Exchange> out;
    for (auto& [key, e] : by_start) out.push_back(e);
    std::sort(out.begin(), out.end(), [](const Exchange& a, const Exchange& b) { return a.start < b.start; });
    return out;
  }

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// The longest chain of exchanges each of which began only after the one before it ended: the round trips waited
// on one after another. Returned first to last.
inline std::vector<Exchange> longest_sequential_chain(std::vector<Exchange> exchanges) {
  std::sort(exchanges.begin(), exchanges.end(), [](const Exchange& a, const Exchange& b) { return a.end < b.end; });
  std::vector<int> length(exchanges.size(), 1), before(exchanges.size(), -1);
  int best = -1;
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (exchanges[j].end <= exchanges[i].start && length[j] + 1 > length[i]) {
        length[i] = length[j] + 1;
        before[i] = static_cast<int>(j);
      }
    if (best < 0 || length[i] > length[best]) best = static_cast<int>(i);
  }
  std::vector<Exchange> chain;
  for (int i = best; i >= 0; i = before[i]) chain.insert(chain.begin(), exchanges[i]);
  return chain;
}

// The requests alone: each connection's first request is taken as sent when its connection was asked for, so that
// a handshake's wait does not make an independent request look like it waited on another.
inline std::vector<Exchange> requests_sent(const std::vector<Exchange>& exchanges) {
  std::map<int, double> asked;  // connection -> handshake start
  for (const Exchange& e : exchanges)
    if (e.handshake()) asked[e.connection] = e.start;
  std::vector<Exchange> requests;
  std::map<int, bool> seen;
  for (const Exchange& e : exchanges) {  // by start
    if (e.handshake()) continue;
    Exchange r = e;
    if (!seen[e.connection] && asked.count(e.connection)) r.start = asked[e.connection];
    seen[e.connection] = true;
    requests.push_back(r);
  }
  return requests;
}

inline std::string describe_chain(const std::vector<Exchange>& chain) {
  std::string out;
  for (const Exchange& e : chain) out += "  " + e.request + "\n";
  return out;
}

}  // namespace trainpack::testing
