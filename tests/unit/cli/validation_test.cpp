// A command line that cannot work is refused before any work (no cache directory made, no output written): flag
// values outside their choices and flags that exclude each other with the usage status 2 and a hint, values that are
// not UTF-8 naming their flag, an output whose directory is missing; every message on one line, whatever names and
// bytes it quotes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/cli_test_support.h"
#include "tests/unit/image_test_support.h"
#include "support/fs.h"
#include "transports/oci_layout.h"

namespace {

namespace fs = std::filesystem;
using trainpack::testing::CliResult;
using trainpack::testing::trainpack;

const char* const kServiceAccountKey =
    R"({"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n",
        "client_email": "trainer@p.iam.gserviceaccount.com"})";

class CliValidationTest : public ::testing::Test {
 protected:
  CliValidationTest() : root_(trainpack::make_temp_dir({}, "trainpack-cli-validation-")) {
    pkg_ = fs::canonical(root_.path()) / "pkg";
    write(pkg_ / "trainer" / "task.py", "print('x')\n");
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, root_.path() / "base", "1");
  }
  static void write(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << bytes;
  }
  fs::path cache() const { return root_.path() / "cache"; }
  fs::path out() const { return root_.path() / "out"; }
  // COMMAND with a base, a cache and the package, then `extra`.
  CliResult run(const std::string& command, std::vector<std::string> extra) const {
    std::vector<std::string> args{command, "-q", "--executor-image-uri=python:3.10",
                                  "--base-source=oci:" + (root_.path() / "base").string() + ":1",
                                  "--cache-dir=" + cache().string(), "--local-package-path=" + pkg_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return trainpack(args);
  }
  CliResult build(std::vector<std::string> extra) const {
    extra.insert(extra.begin(), "--output=oci:" + out().string() + ":v1");
    return run("build", std::move(extra));
  }
  // One "trainpack: error:" line and one "hint:" line, nothing else.
  static void expect_error_and_hint(const CliResult& r, const std::string& cause, const std::string& hint) {
    EXPECT_TRUE(r.err.starts_with("trainpack: error: ")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
    EXPECT_NE(r.err.find(cause), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\nhint: " + hint), std::string::npos) << r.err;
  }
  void expect_no_work(const std::string& what) const {
    EXPECT_FALSE(fs::exists(cache())) << what << ": refused before any work";
    EXPECT_FALSE(fs::exists(out())) << what;
  }

  trainpack::ScopedDir root_;
  fs::path pkg_;
};

TEST_F(CliValidationTest, ChoicesAndExclusiveFlagsAreUsageErrorsBeforeAnyWork) {
  struct Case {
    std::string command;
    std::vector<std::string> flags;
    std::string cause, hint;
  };
  const std::vector<Case> cases{
      {"build", {"--script=trainer/task.py", "--format=yaml"}, "--format must be text or json, not \"yaml\"",
       "--help"},
      {"build", {"--script=trainer/task.py", "--compression=zst"}, "--compression must be gzip or zstd, not \"zst\"",
       "did you mean --compression=zstd?"},
      {"build", {"--script=trainer/task.py", "--python-module=trainer.task"},
       "At most one of --python-module | --script", "--python-module a.b.c"},
      {"local-run", {"--script=trainer/task.py", "--engine=rnc"},
       "--engine must be auto, docker, podman or runc, not \"rnc\"", "did you mean --engine=runc?"},
      {"local-run", {"--script=trainer/task.py", "--gpu", "--engine=runc"}, "--gpu needs docker or podman",
       "use --engine=docker"},
  };
  for (const Case& c : cases) {
    CliResult r = c.command == "build" ? build(c.flags) : run(c.command, c.flags);
    std::string what = c.command + " " + c.flags.back();
    EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
    expect_error_and_hint(r, c.cause, c.hint);
    EXPECT_EQ(r.err.find("Package is set to"), std::string::npos) << what << ": " << r.err;
    expect_no_work(what);
  }
  CliResult r = trainpack({"dockerfile", "--executor-image-uri=python:3.10", "--local-package-path=" + pkg_.string(),
                           "--script=trainer/task.py", "--python-module=trainer.task"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  expect_error_and_hint(r, "At most one of --python-module | --script", "--python-module a.b.c");
}

// JSON holds UTF-8 only (the image config's labels, the manifest's annotations, a job spec's args, a container's
// runtime config): a value that is not UTF-8 is refused while parsing, naming its flag, its bytes escaped.
TEST_F(CliValidationTest, ValuesThatAreNotUtf8AreRefusedNamingTheirFlag) {
  struct Case {
    std::string command;
    std::vector<std::string> flags;
    std::string cause;
  };
  const std::vector<Case> cases{
      {"build", {"--script=trainer/task.py", "--label=k=caf\xe9"}, "--label: the value \"k=caf\\xe9\" is not UTF-8"},
      {"build", {"--script=trainer/task.py", "--annotation", "k=\xff\xfe"}, "--annotation: the value \"k=\\xff\\xfe\""},
      {"build", {"--script=trainer/task.py", "--args=--lr=\xc0\xaf", "--job-spec-out=" + (root_.path() / "j").string()},
       "--args: the value \"--lr=\\xc0\\xaf\" is not UTF-8"},
      {"build", {"--script=trainer/task\xed\xa0\x80.py"}, "--script: the value \"trainer/task\\xed\\xa0\\x80.py\""},
      {"local-run", {"--script=trainer/task.py", "--", "--epochs", "\xff"}, "the argument \"\\xff\" after --"},
  };
  for (const Case& c : cases) {
    CliResult r = c.command == "build" ? build(c.flags) : run(c.command, c.flags);
    EXPECT_EQ(r.exit_code, 2) << c.cause << ": " << r.err;
    expect_error_and_hint(r, c.cause, "");
    expect_no_work(c.cause);
    EXPECT_FALSE(fs::exists(root_.path() / "j"));
  }
  const std::string pinned = "--image-uri=r.example/p/t@sha256:" + std::string(64, 'a');
  const std::string spec = "--output=" + (root_.path() / "job.json").string();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"job-spec", pinned, spec, "--args=a,\xff"}, {"job-spec", pinned, spec, "--", "\xe2\x82"}}) {
    CliResult r = trainpack(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    expect_error_and_hint(r, "is not UTF-8", "");
    EXPECT_FALSE(fs::exists(root_.path() / "job.json"));
  }
  // Valid UTF-8 passes, whatever it holds.
  CliResult r = trainpack({"job-spec", pinned, "--args=caf\xc3\xa9,\xf0\x9f\x9a\x80", "--", "a\tb"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"caf\xc3\xa9\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"a\\tb\""), std::string::npos) << r.out;
}

// An oci: output goes through a staging directory beside it: a missing parent is found before the layers are built
// and named, as docker-archive: and --digest-file outputs are.
TEST_F(CliValidationTest, AnOutputWhoseDirectoryIsMissingIsRefusedBeforeAnyWork) {
  const fs::path missing = root_.path() / "missing";
  for (const std::string& output :
       {"oci:" + (missing / "t").string() + ":v1", "oci:" + (missing / "t").string() + "/:v1",
        "docker-archive:" + (missing / "t.tar").string()}) {
    CliResult r = run("build", {"--script=trainer/task.py", "--output=" + output});
    EXPECT_EQ(r.exit_code, 1) << output << ": " << r.err;
    expect_error_and_hint(r, "the directory " + missing.string() + " does not exist", "create it first");
    EXPECT_EQ(r.err.find(".tmp"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(cache())) << output << ": refused before any work";
    EXPECT_FALSE(fs::exists(missing));
  }
}

// File names are quoted on one line, their control characters escaped: a warning cannot forge lines or drive the
// terminal.
TEST_F(CliValidationTest, NamesInMessagesHaveTheirControlCharactersEscaped) {
  write(pkg_ / "trainer" / "key\n\x1b[2J.json", kServiceAccountKey);
  CliResult r = build({"--script=trainer/task.py", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("trainpack: warning: trainer/key\\n\\x1b[2J.json in the package path looks like a Google "
                       "service-account key"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  r = build({"--script=trainer/task.py", "--fail-on-secrets"});
  EXPECT_EQ(r.exit_code, 1);
  expect_error_and_hint(r, "trainer/key\\n\\x1b[2J.json (a Google service-account key)", "leave them out");
  r = build({"--script=trainer/\tgone\r.py"});
  EXPECT_EQ(r.exit_code, 1);
  expect_error_and_hint(r, "'trainer/\\tgone\\r.py' is not found", "");
}

// COPY copies a link as a link: a link named like a key whose target, copied too, holds one puts the key in the
// image under the link's name.
TEST_F(CliValidationTest, ALinkNamedLikeAKeyIsFlaggedByItsTargetsContent) {
  write(pkg_ / "trainer" / "data" / "blob.bin", kServiceAccountKey);
  fs::create_symlink("data/blob.bin", pkg_ / "trainer" / "key.json");
  fs::create_symlink("data/task.py.bak", pkg_ / "trainer" / "gone.json");
  CliResult r = build({"--script=trainer/task.py", "--fail-on-secrets"});
  EXPECT_EQ(r.exit_code, 1);
  expect_error_and_hint(r, "files that look like credentials: trainer/key.json (a Google service-account key)", "");
  EXPECT_EQ(r.err.find("gone.json"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("blob.bin"), std::string::npos) << "the target's own name is no key's: " << r.err;
  EXPECT_FALSE(fs::exists(out()));
}

}  // namespace
