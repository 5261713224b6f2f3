// The command line explaining itself: help grouped by concern with examples and the program name `trainpack`, the
// exit codes, an unknown command or flag reported first with the closest valid one, docs/cli.md made from the same
// definitions.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/unit/cli_test_support.h"
#include "support/fs.h"

namespace {

namespace fs = std::filesystem;
using trainpack::testing::CliResult;
using trainpack::testing::trainpack;

const std::vector<std::string> kCommands{"dockerfile", "build", "local-run", "job-spec", "sbom", "cache",
                                         "completion", "help"};

// Where `text` is in `s` from `from` on, failing the test when it is not.
std::size_t position(const std::string& s, const std::string& text, std::size_t from = 0) {
  std::size_t at = s.find(text, from);
  EXPECT_NE(at, std::string::npos) << "no \"" << text << "\" in:\n" << s;
  return at;
}

TEST(CliHelp, BuildHelpShowsItsFlagsByConcernThenExamples) {
  CliResult r = trainpack({"build", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: trainpack build [OPTIONS]"), std::string::npos) << r.out;
  std::vector<std::string> in_order{"gcloud flags", "--executor-image-uri",
                                    "Where the image comes from and goes", "--output",
                                    "Registry and network", "--insecure-registry",
                                    "Python and pip", "--build-python",
                                    "Caching", "--cache-dir",
                                    "Job spec", "--job-spec-out",
                                    "Output and diagnostics", "--dry-run",
                                    "Examples:", "trainpack build --executor-image-uri="};
  std::size_t last = r.out.find("\n\n");  // after the description and usage
  for (const std::string& text : in_order) last = position(r.out, text, last);
}

TEST(CliHelp, EveryFlagIsInAHelpGroup) {
  // CLI11 puts a flag of no group under "Options:"; each flag's group is a line of kOptionGroups (cli_help.cpp).
  for (const std::string& command : kCommands) {
    CliResult r = trainpack({command, "--help"});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_EQ(r.out.find("\nOptions:\n"), std::string::npos) << "a flag of " << command << " is in no group:\n" << r.out;
    EXPECT_NE(r.out.find("Examples:\n  # "), std::string::npos) << command << " has no examples:\n" << r.out;
  }
  CliResult top = trainpack({"--help"});
  EXPECT_EQ(top.out.find("\nOptions:\n"), std::string::npos) << top.out;
}

TEST(CliHelp, TopLevelHelpNamesTrainpackAndListsTheExitCodes) {
  CliResult r = trainpack({"--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Usage: trainpack [OPTIONS] SUBCOMMAND"), std::string::npos) << r.out;
  std::size_t exits = position(r.out, "Exit status:\n");
  for (const char* line : {"\n  0      success", "\n  1      the build or the command failed",
                                  "\n  2      usage error", "\n  70     internal error",
                                  "\n  other  local-run: the trainer's own exit status"})
    EXPECT_NE(r.out.find(line, exits), std::string::npos) << line << " in:\n" << r.out;
  EXPECT_EQ(r.out.find(" man "), std::string::npos) << "man is a hidden command:\n" << r.out;
}

TEST(CliHelp, AnUnknownCommandIsReportedWithTheClosestOne) {
  CliResult r = trainpack({"bild"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("trainpack: error: unknown command \"bild\"\nhint: did you mean build? "), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("required"), std::string::npos) << r.err;
  CliResult far = trainpack({"deploy"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_NE(far.err.find("hint: trainpack --help lists the commands"), std::string::npos) << far.err;
}

// `trainpack help COMMAND` prints what `trainpack COMMAND --help` prints; an unknown one is a usage error.
TEST(CliHelp, HelpCommandPrintsTheCommandsHelp) {
  CliResult help = trainpack({"help", "build"});
  CliResult flag = trainpack({"build", "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_EQ(help.out, flag.out);
  EXPECT_NE(help.out.find("Usage: trainpack build"), std::string::npos) << help.out;
  CliResult top = trainpack({"help"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(top.out, trainpack({"--help"}).out);
  CliResult typo = trainpack({"help", "bild"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("unknown command \"bild\"\nhint: did you mean build?"), std::string::npos) << typo.err;
}

TEST(CliHelp, AnUnknownFlagIsReportedBeforeAMissingOneOrAMissingCommand) {
  CliResult version = trainpack({"--verison"});
  EXPECT_EQ(version.exit_code, 2);
  EXPECT_NE(version.err.find("unknown flag --verison for trainpack\nhint: did you mean --version? "),
            std::string::npos)
      << version.err;

  CliResult bogus = trainpack({"build", "--bogus"});
  EXPECT_EQ(bogus.exit_code, 2);
  EXPECT_NE(bogus.err.find("unknown flag --bogus for trainpack build"), std::string::npos) << bogus.err;
  EXPECT_EQ(bogus.err.find("--executor-image-uri is required"), std::string::npos) << bogus.err;

  CliResult typo = trainpack({"build", "--executor-image-uri=python:3.11", "--scrpt=task.py"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("hint: did you mean --script? trainpack build --help lists its flags"), std::string::npos)
      << typo.err;

  CliResult short_flag = trainpack({"build", "-qx"});
  EXPECT_EQ(short_flag.exit_code, 2);
  EXPECT_NE(short_flag.err.find("unknown flag -x for trainpack build"), std::string::npos) << short_flag.err;

  CliResult stray = trainpack({"build", "task.py"});
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("trainpack build takes no argument \"task.py\""), std::string::npos) << stray.err;
}

TEST(CliHelp, KnownFlagsAndValuesThatLookLikeFlagsStillParse) {
  // A negative number and a value holding a space are values (argparse's rule), and what follows -- is the
  // trainer's: none of them is checked as a flag.
  CliResult r = trainpack({"job-spec", "--image-uri=r.example/a@sha256:" + std::string(64, 'a'), "--args",
                           "-x 1", "--", "--anything", "-z"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"-x 1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"--anything\""), std::string::npos) << r.out;
}

TEST(CliDocs, MarkdownReferenceIsUpToDate) {
  CliResult r = trainpack({"man", "--markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path doc = fs::path(TRAINPACK_SOURCE_DIR) / "docs" / "cli.md";
  std::string committed = fs::exists(doc) ? trainpack::read_file(doc) : "";
  EXPECT_TRUE(committed == r.out) << "docs/cli.md is not what the flag definitions make; regenerate it: "
                                     "build/trainpack man --markdown > docs/cli.md";
}

TEST(CliDocs, MarkdownAndManPageHaveEveryCommandFlagAndExitCode) {
  CliResult md = trainpack({"man", "--markdown"});
  CliResult man = trainpack({"man"});
  ASSERT_EQ(man.exit_code, 0) << man.err;
  for (const std::string& command : kCommands) {
    EXPECT_NE(md.out.find("## trainpack " + command + "\n"), std::string::npos) << command;
    EXPECT_NE(man.out.find(".SS \"trainpack " + command + "\""), std::string::npos) << command;
  }
  EXPECT_NE(md.out.find("| `--build-python={auto,host,image}` |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| `-q`, `--quiet` |"), std::string::npos) << md.out;
  EXPECT_NE(man.out.find("\\fB\\-\\-build\\-python\\fR \\fI{auto,host,image}\\fR"), std::string::npos) << man.out;
  EXPECT_NE(md.out.find("| 70 | internal error"), std::string::npos);
  EXPECT_NE(man.out.find(".SH EXIT STATUS\n.TP\n\\fB0\\fR\nsuccess\n"), std::string::npos) << man.out;
}

}  // namespace
