#pragma once
// A helper kept running for a conversation, so that its start (a CPython's is tens of milliseconds) is paid once
// rather than once per piece of work: requests go to its stdin, and each answer comes back on its stdout after a
// line with its byte count ("1234\n" then 1234 bytes), once it has read the whole request. Its stdout and stderr are
// read while the request goes in, so a full pipe stalls neither side. What it writes to stderr is kept (the last
// 64 KiB); its last line says why it ended, if it does.
#include <chrono>
#include <string>
#include <vector>

#include "support/process.h"

namespace trainpack {

class ChildProcess {
 public:
  // Starts argv[0] (a path, or a name looked up with find_program); throws Error when it cannot be started.
  ChildProcess(const std::vector<std::string>& argv, const ProcessOptions& options);
  // Closes its stdin (the helper's cue to exit), waits a moment, then kills it.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Sends `request` and returns the answer. Throws Error, with the last line the helper wrote to stderr, when it
  // ends or `timeout` passes first; the child is then unusable (broken()).
  std::string exchange(const std::string& request, std::chrono::milliseconds timeout);
  bool broken() const { return broken_; }
  // Closes its stdin now, the cue to exit, so that several helpers end at once before their destructors wait.
  void close_input();

 private:
  [[noreturn]] void fail(const std::string& why);
  bool read_stderr();  // false once nothing more is there now
  void write_some(const std::string& request, std::size_t& written);
  void read_some(std::string& got);

  PipedChild child_;
  std::string stderr_;
  bool broken_ = false;
};

}  // namespace trainpack
