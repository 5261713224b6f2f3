#pragma once
// What a build tells the person watching: on a terminal, a live block of rows (one per layer being pushed) redrawn
// in place under the log lines; elsewhere (CI, pipes, CI=true) plain log lines only, one per event; nothing with
// --quiet. Thread-safe: upload workers report from their own threads.
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "support/human.h"

namespace trainpack::imagebuild {

class Progress {
 public:
  enum class Mode { kQuiet, kPlain, kLive };
  // kLive only when stderr is a terminal, TERM is not "dumb" and CI is not set.
  static Mode detect(bool quiet);

  Progress(Mode mode, bool verbose, std::ostream& out);
  ~Progress();

  // A log line: printed above the live rows (kLive) or as is (kPlain).
  void line(const std::string& text);
  // Printed only with --verbose.
  void detail(const std::string& text);
  // "trainpack: warning: TEXT" on stderr, in every mode (--quiet silences progress, not warnings).
  void warning(const std::string& text);
  // Sets the live row `key` (kLive); in kPlain mode rows are not shown unless `final` (then printed as a line).
  void row(const std::string& key, const std::string& text, bool final);
  // A large transfer under way (a layer being written, a download): `done` of `total` bytes (total 0: unknown).
  // Throttled: on a terminal its row is redrawn at most 4 times a second; in plain mode a line is printed at most
  // every 3 seconds, and only once another tenth of `total` is done. The caller's own line tells the end.
  void transfer(const std::string& key, const std::string& label, std::uint64_t done, std::uint64_t total,
                std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // The transfer is over: its live row goes away.
  void transfer_done(const std::string& key);
  // Clears the live block (rows stay printed as they last were).
  void finish();

  Mode mode() const { return mode_; }
  bool verbose() const { return verbose_; }

 private:
  void redraw_locked();
  void print_locked(const std::string& text);
  Mode mode_;
  bool verbose_;
  std::ostream& out_;
  std::mutex mutex_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> rows_;
  std::size_t drawn_ = 0;  // rows currently on screen
  struct Transfer {
    std::chrono::steady_clock::time_point shown;  // when it was last drawn or printed
    std::uint64_t tenths = 0;                     // of its total, when it was last printed
  };
  std::map<std::string, Transfer> transfers_;
  // Whether transfer `key` is due to be shown now; records it as shown.
  bool transfer_due_locked(const std::string& key, std::uint64_t done, std::uint64_t total,
                           std::chrono::steady_clock::time_point now);
};

using trainpack::human_bytes;  // progress rows and summaries print sizes as support/human.h does

}  // namespace trainpack::imagebuild
