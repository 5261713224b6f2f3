#pragma once
// The processes a test's program started, as they wrote their pids to a file, and whether they still run: for the
// tests that check nothing a build or a confined program started outlives it (unit and integration tests).
#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <vector>

namespace trainpack::testing {

// The pids listed in `file`, one a line.
inline std::vector<pid_t> pids_in(const std::filesystem::path& file) {
  std::vector<pid_t> pids;
  std::ifstream in(file);
  for (long pid; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Whether `pid` runs (or is a zombie not yet reaped): kill(0) finds it.
inline bool alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace trainpack::testing
