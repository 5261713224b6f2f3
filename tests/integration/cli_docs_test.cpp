// The documents trainpack makes from its flag definitions, checked by the programs that read them: the completion
// scripts load in bash, zsh and fish (and bash's and fish's offer the right candidates), the man page has no groff
// warning, and the build made trainpack.1 from the same definitions.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

bool have(const std::string& program) {
  return run_command({"sh", "-c", "command -v \"$0\" >/dev/null", program}).exit_code == 0;
}

// `trainpack ARGS` written to DIR/NAME.
fs::path trainpack_output(const TempDir& dir, const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> argv{trainpack_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = run_command(argv);
  EXPECT_EQ(r.exit_code, 0) << describe(argv, r);
  write_file(dir.path() / name, r.out);
  return dir.path() / name;
}

// The candidates bash's completion function offers for the command line `words`, the last one being completed.
std::string bash_candidates(const fs::path& script, const std::string& words) {
  CommandResult r = run_command(
      {"bash", "-c", "source \"$0\"; COMP_WORDS=(" + words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _trainpack; "
                     "echo \"${COMPREPLY[*]}\"",
       script.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return r.out;
}

TEST(CliDocsRead, BashCompletionLoadsAndOffersCommandsFlagsAndValues) {
  TempDir dir("tp-completion");
  fs::path script = trainpack_output(dir, "trainpack.bash", {"completion", "bash"});
  CommandResult syntax = run_command({"bash", "-n", script.string()});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  EXPECT_EQ(bash_candidates(script, "trainpack bu"), "build\n");
  EXPECT_EQ(bash_candidates(script, "trainpack ''"), "dockerfile build local-run job-spec sbom cache completion help\n");
  EXPECT_EQ(bash_candidates(script, "trainpack --ver"), "--version\n");
  EXPECT_EQ(bash_candidates(script, "trainpack build --dry"), "--dry-run\n");
  EXPECT_EQ(bash_candidates(script, "trainpack build -q --build-python ''"), "auto host image\n");
  // --flag=VALUE: bash's COMP_WORDBREAKS makes '=' a word of its own.
  EXPECT_EQ(bash_candidates(script, "trainpack build --compression ="), "gzip zstd\n");
  EXPECT_EQ(bash_candidates(script, "trainpack build --format = j"), "json\n");
  EXPECT_EQ(bash_candidates(script, "trainpack local-run --engine=r"), "--engine=runc\n");
  EXPECT_EQ(bash_candidates(script, "trainpack job-spec --format ''"), "config rest\n");
  EXPECT_EQ(bash_candidates(script, "trainpack completion ''"), "bash zsh fish\n");
  EXPECT_EQ(bash_candidates(script, "trainpack cache ''"), "du prune\n");
  EXPECT_EQ(bash_candidates(script, "trainpack cache prune --ol"), "--older-than\n");
  EXPECT_EQ(bash_candidates(script, "trainpack help l"), "local-run\n");
  // A path, and the trainer's arguments after --, are left to the shell's file name completion.
  EXPECT_EQ(bash_candidates(script, "trainpack build --cache-dir ''"), "\n");
  EXPECT_EQ(bash_candidates(script, "trainpack local-run -- --ep"), "\n");
}

TEST(CliDocsRead, ZshCompletionLoads) {
  if (!have("zsh")) GTEST_SKIP() << "no zsh (scripts/install-deps.sh --test installs it)";
  TempDir dir("tp-completion");
  fs::path script = trainpack_output(dir, "_trainpack", {"completion", "zsh"});
  CommandResult syntax = run_command({"zsh", "-n", script.string()});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  // Loaded in an interactive zsh with its completion system, the script registers itself for trainpack.
  CommandResult loaded = run_command(
      {"zsh", "-f", "-c", "autoload -Uz compinit && compinit -u -D && source \"$0\" && print -r -- ${_comps[trainpack]}",
       script.string()});
  EXPECT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_EQ(loaded.out, "_trainpack\n") << loaded.err;
}

TEST(CliDocsRead, FishCompletionLoadsAndOffersFlagsAndValues) {
  if (!have("fish")) GTEST_SKIP() << "no fish (scripts/install-deps.sh --test installs it)";
  TempDir dir("tp-completion");
  fs::path script = trainpack_output(dir, "trainpack.fish", {"completion", "fish"});
  CommandResult syntax = run_command({"fish", "-n", script.string()});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  auto candidates = [&script](const std::string& line) {
    CommandResult r = run_command({"fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]",
                                   script.string(), line});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string words;  // the candidates without fish's descriptions
    for (std::size_t at = 0; at < r.out.size();) {
      std::size_t end = r.out.find('\n', at);
      std::string line_out = r.out.substr(at, end - at);
      words += (words.empty() ? "" : " ") + line_out.substr(0, line_out.find('\t'));
      at = end == std::string::npos ? r.out.size() : end + 1;
    }
    return words;
  };
  EXPECT_EQ(candidates("trainpack bui"), "build");
  EXPECT_EQ(candidates("trainpack build --compression="), "--compression=gzip --compression=zstd");
  EXPECT_EQ(candidates("trainpack build --dry-"), "--dry-run");
  EXPECT_EQ(candidates("trainpack completion "), "bash fish zsh");
  EXPECT_EQ(candidates("trainpack help j"), "job-spec");
}

TEST(CliDocsRead, ManPageHasNoGroffWarning) {
  if (!have("groff")) GTEST_SKIP() << "no groff (groff-base)";
  TempDir dir("tp-man");
  fs::path page = trainpack_output(dir, "trainpack.1", {"man"});
  CommandResult r = run_command({"groff", "-man", "-Tutf8", "-ww", "-z", page.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "groff warns about trainpack.1";
  CommandResult shown = run_command({"groff", "-man", "-Tutf8", "-P-cbou", page.string()});  // plain text
  EXPECT_NE(shown.out.find("EXIT STATUS"), std::string::npos) << shown.out;
}

TEST(CliDocsRead, TheBuildMadeTheManPageFromTheBinary) {
  fs::path built = fs::path(trainpack_bin()).parent_path() / "trainpack.1";
  ASSERT_TRUE(fs::exists(built)) << built << " (CMake's man page target)";
  CommandResult r = run_command({trainpack_bin(), "man"});
  EXPECT_EQ(read_file(built), r.out);
}

}  // namespace
