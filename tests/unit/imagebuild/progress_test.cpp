#include "imagebuild/progress.h"

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

using trainpack::imagebuild::human_bytes;
using trainpack::imagebuild::Progress;

TEST(Progress, PlainModePrintsLinesAndOnlyFinalRows) {
  std::ostringstream out;
  Progress p(Progress::Mode::kPlain, /*verbose=*/false, out);
  p.line("base x");
  p.row("sha256:a", "uploading sha256:a", false);
  p.row("sha256:a", "uploaded sha256:a 1.0 kB", true);
  p.detail("only with --verbose");
  EXPECT_EQ(out.str(), "base x\nuploaded sha256:a 1.0 kB\n");
}

TEST(Progress, QuietPrintsNothingAndVerboseShowsDetails) {
  std::ostringstream quiet, verbose;
  Progress q(Progress::Mode::kQuiet, true, quiet);
  q.line("x");
  q.row("k", "y", true);
  EXPECT_EQ(quiet.str(), "");
  Progress v(Progress::Mode::kPlain, true, verbose);
  v.detail("HEAD /v2/x");
  EXPECT_EQ(verbose.str(), "HEAD /v2/x\n");
}

// --quiet silences progress, not warnings; a dry run's plan goes to stdout, its warnings still to stderr.
TEST(Progress, WarningsReachStderrInEveryMode) {
  std::ostringstream err, plan;
  std::streambuf* saved = std::cerr.rdbuf(err.rdbuf());
  {
    Progress quiet(Progress::Mode::kQuiet, false, std::cerr);
    quiet.line("progress");
    quiet.warning(".env looks like credentials");
    Progress dry_run(Progress::Mode::kPlain, false, plan);
    dry_run.line("layer 1");
    dry_run.warning("id_rsa looks like credentials");
  }
  std::cerr.rdbuf(saved);
  EXPECT_EQ(err.str(), "trainpack: warning: .env looks like credentials\n"
                       "trainpack: warning: id_rsa looks like credentials\n");
  EXPECT_EQ(plan.str(), "layer 1\n");
}

TEST(Progress, LiveModeRedrawsRowsInPlaceBelowLogLines) {
  std::ostringstream out;
  Progress p(Progress::Mode::kLive, false, out);
  p.row("a", "a: uploading", false);
  p.row("b", "b: exists", false);
  p.row("a", "a: done", false);
  p.line("log");
  std::string s = out.str();
  EXPECT_NE(s.find("\x1b[2Ka: uploading\n"), std::string::npos);
  EXPECT_NE(s.find("\x1b[2F"), std::string::npos) << "moves up over the two live rows to redraw them";
  // The log line lands above the rows, which are drawn again after it.
  auto log_at = s.rfind("log\n");
  ASSERT_NE(log_at, std::string::npos);
  EXPECT_NE(s.find("\x1b[2Ka: done\n", log_at), std::string::npos);
  EXPECT_NE(s.find("\x1b[2Kb: exists\n", log_at), std::string::npos);
}

TEST(Progress, HumanBytes) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1500), "1.5 kB");
  EXPECT_EQ(human_bytes(37897395), "37.9 MB");
}

TEST(Progress, PlainTransfersPrintAFewLinesOnlyAsTheyCrossTenths) {
  using namespace std::chrono_literals;
  std::ostringstream out;
  Progress p(Progress::Mode::kPlain, false, out);
  const std::chrono::steady_clock::time_point t0{};
  const std::uint64_t total = 100u << 20;
  p.transfer("l", "writing layer", 0, total, t0);              // the start: the step's own line says it
  p.transfer("l", "writing layer", total / 20, total, t0 + 4s);  // 5%: no new tenth
  p.transfer("l", "writing layer", total / 2, total, t0 + 5s);   // 50%: printed
  p.transfer("l", "writing layer", total * 6 / 10, total, t0 + 6s);  // a new tenth, but within 3 s
  p.transfer("l", "writing layer", total * 9 / 10, total, t0 + 9s);  // printed
  p.transfer_done("l");
  EXPECT_EQ(out.str(), "writing layer  52.4 MB / 104.9 MB (50%)\nwriting layer  94.4 MB / 104.9 MB (90%)\n");
}

TEST(Progress, LiveTransfersRedrawAtMostFourTimesASecondAndGoAwayWhenDone) {
  using namespace std::chrono_literals;
  std::ostringstream out;
  Progress p(Progress::Mode::kLive, false, out);
  const std::chrono::steady_clock::time_point t0{};
  p.transfer("d", "downloading x", 1000, 0, t0);
  p.transfer("d", "downloading x", 2000, 0, t0 + 100ms);  // throttled
  p.transfer("d", "downloading x", 3000, 0, t0 + 300ms);
  std::string s = out.str();
  EXPECT_NE(s.find("\x1b[2Kdownloading x  1.0 kB\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("2.0 kB"), std::string::npos) << s;
  EXPECT_NE(s.find("\x1b[2Kdownloading x  3.0 kB\n"), std::string::npos) << s;
  p.transfer_done("d");
  EXPECT_TRUE(out.str().ends_with("\x1b[1F\x1b[J")) << "the row is cleared";
  p.line("built");
  EXPECT_TRUE(out.str().ends_with("built\n"));
}

TEST(Progress, QuietShowsNoTransfers) {
  std::ostringstream out;
  Progress p(Progress::Mode::kQuiet, true, out);
  p.transfer("d", "downloading", 1, 2, std::chrono::steady_clock::time_point{} + std::chrono::hours(1));
  p.transfer_done("d");
  EXPECT_EQ(out.str(), "");
}
