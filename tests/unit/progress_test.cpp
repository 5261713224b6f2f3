#include "builder/progress.h"

#include <gtest/gtest.h>

#include <sstream>

using trainpack::builder::human_bytes;
using trainpack::builder::Progress;

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
