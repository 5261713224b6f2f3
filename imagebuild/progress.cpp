#include "imagebuild/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <ostream>

#include "support/text.h"

namespace trainpack::imagebuild {

Progress::Mode Progress::detect(bool quiet) {
  if (quiet) return Mode::kQuiet;
  const char* ci = std::getenv("CI");
  const char* term = std::getenv("TERM");
  bool tty = ::isatty(STDERR_FILENO) && !(ci && *ci) && !(term && std::strcmp(term, "dumb") == 0);
  return tty ? Mode::kLive : Mode::kPlain;
}

Progress::Progress(Mode mode, bool verbose, std::ostream& out) : mode_(mode), verbose_(verbose), out_(out) {}

Progress::~Progress() { finish(); }

void Progress::redraw_locked() {
  // Move to the first live row, rewrite every row, clear what is left below.
  if (drawn_) out_ << "\x1b[" << drawn_ << "F";
  for (const auto& key : order_) out_ << "\x1b[2K" << rows_[key] << "\n";
  out_ << "\x1b[J" << std::flush;
  drawn_ = order_.size();
}

void Progress::line(const std::string& text) {
  if (mode_ == Mode::kQuiet) return;
  std::lock_guard<std::mutex> lock(mutex_);
  print_locked(text);
}

void Progress::warning(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string line = "trainpack: warning: " + text;
  if (&out_ == &std::cerr) print_locked(line);
  else std::cerr << visible_text(line) << "\n" << std::flush;  // a dry run's plan goes to stdout; warnings never do
}

// Every line stays one line, whatever file names it quotes.
void Progress::print_locked(const std::string& text) {
  if (mode_ == Mode::kLive && drawn_) {
    out_ << "\x1b[" << drawn_ << "F\x1b[J" << visible_text(text) << "\n";
    drawn_ = 0;
    redraw_locked();
    return;
  }
  out_ << visible_text(text) << "\n" << std::flush;
}

void Progress::detail(const std::string& text) {
  if (verbose_) line(text);
}

void Progress::row(const std::string& key, const std::string& text, bool final) {
  if (mode_ == Mode::kQuiet) return;
  if (mode_ == Mode::kPlain) {
    if (final) line(text);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!rows_.count(key)) order_.push_back(key);
  rows_[key] = visible_text(text);
  redraw_locked();
}

bool Progress::transfer_due_locked(const std::string& key, std::uint64_t done, std::uint64_t total,
                                   std::chrono::steady_clock::time_point now) {
  using namespace std::chrono_literals;
  std::uint64_t tenths = total ? done * 10 / total : 0;
  auto [it, fresh] = transfers_.try_emplace(key, Transfer{now, tenths});
  Transfer& t = it->second;
  if (mode_ == Mode::kLive) {
    if (!fresh && now - t.shown < 250ms) return false;
  } else if (fresh || now - t.shown < 3s || (total && tenths <= t.tenths)) {
    return false;  // plain: nothing at the start (the step's own line says what begins), then few lines
  }
  t.shown = now;
  t.tenths = tenths;
  return true;
}

void Progress::transfer(const std::string& key, const std::string& label, std::uint64_t done, std::uint64_t total,
                        std::chrono::steady_clock::time_point now) {
  if (mode_ == Mode::kQuiet) return;
  std::string text = label + "  " + human_bytes(done);
  if (total) text += " / " + human_bytes(total) + " (" + std::to_string(done * 100 / total) + "%)";
  std::unique_lock<std::mutex> lock(mutex_);
  if (!transfer_due_locked(key, done, total, now)) return;
  if (mode_ == Mode::kPlain) {
    lock.unlock();
    line(text);
    return;
  }
  if (!rows_.count(key)) order_.push_back(key);
  rows_[key] = text;
  redraw_locked();
}

void Progress::transfer_done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  transfers_.erase(key);
  if (!rows_.erase(key)) return;
  order_.erase(std::find(order_.begin(), order_.end(), key));
  redraw_locked();
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  order_.clear();
  rows_.clear();
  transfers_.clear();
  drawn_ = 0;  // rows stay on screen as their final state
}

}  // namespace trainpack::imagebuild
