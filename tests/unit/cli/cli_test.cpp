// gcloud's list flags through the whole command line of each subcommand that takes them (dockerfile, build,
// local-run, job-spec): a repeated flag, the ^DELIM^ syntax, empty items and spaces, as Cloud SDK 578.0.0 reads them.
#include "cli/cli.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <chrono>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/unit/cli_test_support.h"
#include "tests/unit/image_test_support.h"
#include "store/blob_store.h"
#include "store/cache_dir.h"
#include "transports/docker_archive.h"
#include "transports/oci_layout.h"
#include "support/fs.h"
#include "support/privileges.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kPrebuilt = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest";
const std::string kImage = "us-central1-docker.pkg.dev/proj/repo/trainer@sha256:" + std::string(64, 'a');

using trainpack::testing::CliResult;
using trainpack::testing::trainpack;

std::string golden(const std::string& name) {
  return trainpack::read_file(fs::path(TRAINPACK_TESTDATA_DIR) / "dockerfile" / name);
}

// A temp dir with a package directory "pkg" in it.
class CliTest : public ::testing::Test {
 protected:
  CliTest() : root_(trainpack::make_temp_dir({}, "trainpack-cli-")) {
    pkg_ = fs::canonical(root_.path()) / "pkg";
    fs::create_directories(pkg_);
  }
  void file(const std::string& rel) {
    fs::create_directories((pkg_ / rel).parent_path());
    std::ofstream(pkg_ / rel) << "x";
  }
  void dir(const std::string& rel) { fs::create_directories(pkg_ / rel); }
  std::string pkg_flag() const { return "--local-package-path=" + pkg_.string(); }

  trainpack::ScopedDir root_;
  fs::path pkg_;
};

TEST_F(CliTest, DockerfileRepeatedListFlagsKeepTheLast) {
  // E.Dockerfile's inputs, each list given twice: the first occurrences name files that do not exist.
  for (const char* f : {"setup.py", "requirements.txt", "trainer/task.py", "dep/foo.tar.gz", "bar.whl"}) file(f);
  dir("dataset");
  dir("config");
  CliResult r = trainpack({"dockerfile", std::string("--executor-image-uri=") + kPrebuilt, pkg_flag(),
                           "--python-module=trainer.task", "--requirements=torch",
                           "--requirements=pandas==1.2.0,scipy>=1.3.0", "--extra-packages=gone.whl",
                           "--extra-packages", "dep/foo.tar.gz,bar.whl", "--extra-dirs=gone", "--extra-dirs=dataset,config"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, golden("E.Dockerfile"));
}

TEST_F(CliTest, DockerfileDelimiterSpacesAndTrailingDelimiter) {
  // F.Dockerfile is what gcloud's docker/build.py writes for these flags.
  file("trainer/task.py");
  file("dep/foo.tar.gz");
  dir("config");
  CliResult r = trainpack({"dockerfile", "--executor-image-uri=python:3.10", pkg_flag(), "--script=trainer/task.py",
                           "--requirements=^;^numpy>=1,<2; pandas==1.2.0", "--extra-packages=bar.whl",
                           "--extra-packages=dep/foo.tar.gz,", "--extra-dirs=dataset", "--extra-dirs=config,"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, golden("F.Dockerfile"));
}

TEST_F(CliTest, DockerfileEmptyItems) {
  file("task.py");
  file("a.whl");
  // An empty requirement is written as gcloud writes it (pip then refuses it in the build).
  CliResult r = trainpack({"dockerfile", "--executor-image-uri=python:3.10", pkg_flag(), "--script=task.py",
                           "--requirements=a,,b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nRUN pip install --no-cache-dir --upgrade a\n\nRUN pip install --no-cache-dir --upgrade ''\n\n"
                       "RUN pip install --no-cache-dir --upgrade b\n"),
            std::string::npos)
      << r.out;
  // An empty package path is the package dir itself, which is no file: gcloud's message.
  r = trainpack({"dockerfile", "--executor-image-uri=python:3.10", pkg_flag(), "--script=task.py",
                 "--extra-packages=a.whl,,"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trainpack: error: Invalid value for [--extra-packages]: Package file '' is not found under "
                       "the package: '" + pkg_.string() + "'."),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, DockerfileBadListValues) {
  file("task.py");
  CliResult r = trainpack({"dockerfile", "--executor-image-uri=python:3.10", pkg_flag(), "--script=task.py",
                           "--requirements=^^a"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trainpack: error: argument --requirements: Invalid delimeter."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\nhint: "), std::string::npos) << r.err;
  r = trainpack({"dockerfile", "--executor-image-uri=python:3.10", pkg_flag(), "--script=task.py", "--requirements"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("trainpack: error: argument --requirements: expected one argument"), std::string::npos) << r.err;
}

TEST_F(CliTest, BuildDryRunPlansTheLastExtraDirs) {
  file("trainer/task.py");
  file("data,set/d");
  file("config/c");
  const fs::path base = root_.path() / "base";
  {
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, base, "1");
  }
  CliResult r = trainpack({"build", "--dry-run", "--format=json", "-q", "--executor-image-uri=python:3.10",
                           "--base-source=oci:" + base.string() + ":1", "--cache-dir=" + (root_.path() / "cache").string(),
                           "--output=oci:" + (root_.path() / "out").string(), pkg_flag(), "--script=trainer/task.py",
                           "--extra-dirs=gone", "--extra-dirs=^:^data,set:config"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json plan = json::parse(r.out);
  std::vector<std::string> copies;
  for (const auto& layer : plan.at("layers")) {
    const std::string created_by = layer.at("created_by");
    if (created_by.starts_with("COPY")) copies.push_back(created_by);
  }
  EXPECT_EQ(copies, (std::vector<std::string>{"COPY [\"data,set\", \"data,set\"]", "COPY [\"config\", \"config\"]",
                                              "COPY [\"trainer\", \"trainer\"]"}))
      << r.out;
}

// A single-platform base is taken as it is, unless --platform asks for another: then the build stops, naming
// what the base is for (it used to build amd64 silently).
TEST_F(CliTest, BuildRefusesAPlatformASinglePlatformBaseIsNot) {
  file("trainer/task.py");
  const fs::path base = root_.path() / "base";
  {
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, base, "1");
  }
  auto build = [&](const std::string& platform_flag) {
    std::vector<std::string> args{"build", "--dry-run", "-q", "--executor-image-uri=python:3.10",
                                  "--base-source=oci:" + base.string() + ":1",
                                  "--cache-dir=" + (root_.path() / "cache").string(),
                                  "--output=oci:" + (root_.path() / "out").string(), pkg_flag(),
                                  "--script=trainer/task.py"};
    if (!platform_flag.empty()) args.push_back(platform_flag);
    return trainpack(args);
  };
  EXPECT_EQ(build("").exit_code, 0);
  EXPECT_EQ(build("--platform=linux/amd64").exit_code, 0);
  CliResult r = build("--platform=linux/arm64");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is for linux/amd64, not linux/arm64"), std::string::npos) << r.err;
}

// A side output that cannot be written is found before anything is built or written (it used to fail after the
// push, with "...: Success" for its cause).
TEST_F(CliTest, BuildChecksSideOutputsBeforeAnyWork) {
  file("trainer/task.py");
  const fs::path base = root_.path() / "base";
  {
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, base, "1");
  }
  const fs::path out = root_.path() / "out";
  for (const auto& [flag, cause] : std::vector<std::pair<std::string, std::string>>{
           {"--digest-file=" + root_.path().string(), "is a directory"},
           {"--digest-file=" + (root_.path() / "no" / "such" / "d").string(), "does not exist"}}) {
    CliResult r = trainpack({"build", "-q", "--executor-image-uri=python:3.10",
                             "--base-source=oci:" + base.string() + ":1",
                             "--cache-dir=" + (root_.path() / "cache").string(), "--output=oci:" + out.string(),
                             pkg_flag(), "--script=trainer/task.py", flag});
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_NE(r.err.find(cause), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Success"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "nothing is written before the side outputs are known to be writable";
  }
}

// --http-timeout (build and local-run) is a number of seconds, checked before any work.
TEST_F(CliTest, HttpTimeoutIsCheckedBeforeAnyWork) {
  file("trainer/task.py");
  const fs::path base = root_.path() / "base";
  {
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, base, "1");
  }
  const fs::path out = root_.path() / "out";
  auto run = [&](const std::string& command, const std::string& flag) {
    std::vector<std::string> args{command, "-q", "--executor-image-uri=python:3.10",
                                  "--base-source=oci:" + base.string() + ":1",
                                  "--cache-dir=" + (root_.path() / "cache").string(), pkg_flag(),
                                  "--script=trainer/task.py", flag};
    if (command == "build") args.push_back("--output=oci:" + out.string());
    return trainpack(args);
  };
  CliResult ok = run("build", "--http-timeout=5");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  fs::remove_all(out);
  for (std::string command : {"build", "local-run"}) {
    for (std::string value : {"0", "86401"}) {
      CliResult r = run(command, "--http-timeout=" + value);
      EXPECT_EQ(r.exit_code, 1) << command << " " << value;
      EXPECT_NE(r.err.find("trainpack: error: --http-timeout must be between 1 and 86400 seconds, not " + value + "\nhint: "),
                std::string::npos)
          << r.err;
    }
    CliResult words = run(command, "--http-timeout=a minute");
    EXPECT_EQ(words.exit_code, 2) << words.err;
    EXPECT_NE(words.err.find("--http-timeout"), std::string::npos) << words.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

// --compression-level is 1-9 for gzip and 1-19 for zstd; 0 and the like are refused before any work.
TEST_F(CliTest, CompressionLevelOutOfRangeIsRefused) {
  file("trainer/task.py");
  const fs::path out = root_.path() / "out";
  for (const auto& [compression, level, max] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"gzip", "0", "9"}, {"gzip", "10", "9"}, {"gzip", "-1", "9"}, {"zstd", "0", "19"}, {"zstd", "20", "19"}}) {
    CliResult r = trainpack({"build", "-q", "--executor-image-uri=python:3.10",
                             "--base-source=oci:" + (root_.path() / "no-base").string() + ":1",
                             "--cache-dir=" + (root_.path() / "cache").string(), "--output=oci:" + out.string(),
                             pkg_flag(), "--script=trainer/task.py", "--compression=" + compression,
                             "--compression-level=" + level});
    EXPECT_EQ(r.exit_code, 1) << compression << " " << level << ": " << r.err;
    EXPECT_NE(r.err.find("trainpack: error: --compression-level must be between 1 and " + max + " for " +
                         compression + ", not " + level + "\nhint: "),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(root_.path() / "cache")) << "refused before any work";
}

// An --output=oci: tag outside the image spec's ref.name grammar is refused before any work.
TEST_F(CliTest, BuildRefusesAnInvalidOciTagBeforeAnyWork) {
  file("trainer/task.py");
  const fs::path out = root_.path() / "out";
  for (std::string tag : {"bad tag!", "../../x"}) {
    CliResult r = trainpack({"build", "-q", "--executor-image-uri=python:3.10",
                             "--base-source=oci:" + (root_.path() / "no-base").string() + ":1",
                             "--cache-dir=" + (root_.path() / "cache").string(),
                             "--output=oci:" + out.string() + ":" + tag, pkg_flag(), "--script=trainer/task.py"});
    EXPECT_EQ(r.exit_code, 1) << tag << ": " << r.err;
    EXPECT_NE(r.err.find("trainpack: error: --output: \"" + tag + "\" is not a valid OCI layout tag\nhint: "),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(root_.path() / "cache")) << "refused before any work";
}

TEST_F(CliTest, BuildEmptyLastOccurrenceMeansNoList) {
  // "--requirements=x --requirements=" is no --requirements at all: nothing asks for an image to be built.
  CliResult r = trainpack({"build", "--executor-image-uri=python:3.10", pkg_flag(), "--requirements=x",
                           "--requirements="});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trainpack: error: nothing to build"), std::string::npos) << r.err;
  r = trainpack({"build", "--executor-image-uri=python:3.10", pkg_flag(), "--requirements=", "--requirements=x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("One of [--script, --python-module] must be supplied"), std::string::npos) << r.err;
}

TEST_F(CliTest, BuildJobArgsRefuseARepeatedItem) {
  CliResult r = trainpack({"build", "--executor-image-uri=python:3.10", pkg_flag(), "--args=--lr,1",
                           "--args=--epochs,1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trainpack: error: argument --args: \"1\" cannot be specified multiple times"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, LocalRunRepeatedExtraDirsKeepTheLast) {
  file("trainer/task.py");
  dir("config");
  const std::vector<std::string> common{"local-run", "-q", "--executor-image-uri=python:3.10",
                                        "--base-source=oci:" + (root_.path() / "no-base").string(),
                                        "--cache-dir=" + (root_.path() / "cache").string(), pkg_flag(),
                                        "--script=trainer/task.py"};
  // The last occurrence is checked: a missing directory there fails gcloud's validation...
  std::vector<std::string> args = common;
  args.insert(args.end(), {"--extra-dirs=config", "--extra-dirs=gone"});
  CliResult r = trainpack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Invalid value for [--extra-dirs]: Directory 'gone' is not found"), std::string::npos) << r.err;
  // ...and one in an earlier occurrence does not: the run gets as far as the (missing) base image.
  args = common;
  args.insert(args.end(), {"--extra-dirs=gone", "--extra-dirs=config", "--requirements=^:^", "--", "--epochs", "1"});
  r = trainpack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Package is set to " + pkg_.string()), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--extra-dirs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no-base"), std::string::npos) << r.err;
}

TEST_F(CliTest, JobSpecArgsAddUp) {
  CliResult r = trainpack({"job-spec", "--image-uri=" + kImage, "--args=a,b", "--args=^:^c,d:e", "--args=f, g,,",
                           "--command=python3,-m", "--command", "trainer.task", "--", "a", "a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json container = json::parse(r.out).at("workerPoolSpecs").at(0).at("containerSpec");
  EXPECT_EQ(container.at("args"), json({"a", "b", "c,d", "e", "f", " g", "", "a", "a"}));
  EXPECT_EQ(container.at("command"), json({"python3", "-m", "trainer.task"}));
  r = trainpack({"job-spec", "--image-uri=" + kImage, "--args=a", "--args=b,a"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trainpack: error: argument --args: \"a\" cannot be specified multiple times\nhint: "),
            std::string::npos)
      << r.err;
}

// A base layer Docker's extractor would refuse is refused before the build writes anything, even when no step
// reads the base's files (the layer is passed on into the output).
TEST_F(CliTest, BuildRefusesABaseLayerWithAnUnsafeEntry) {
  file("trainer/task.py");
  const fs::path base = root_.path() / "base";
  {
    auto image = trainpack::test_support::make_image_of_layers(root_.path() / "store", "amd64",
                                                               {{{"../../tmp/planted", "x"}}});
    trainpack::transports::write_oci_layout(*image.image, base, "1");
  }
  const fs::path out = root_.path() / "out";
  std::vector<std::string> args{"build", "-q", "--executor-image-uri=python:3.10",
                                "--base-source=oci:" + base.string() + ":1",
                                "--cache-dir=" + (root_.path() / "cache").string(), "--output=oci:" + out.string(),
                                pkg_flag(), "--script=trainer/task.py"};
  CliResult r = trainpack(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unsafe entry '../../tmp/planted' (its name leaves the root)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// A base whose config names a wrong diff_id for a layer (its bytes unchanged) is refused when its layers are passed
// on to a file output, naming the layer and both digests; nothing is written.
TEST_F(CliTest, BuildRefusesABaseLayerThatIsNotItsDiffId) {
  file("trainer/task.py");
  const fs::path base = root_.path() / "base";
  auto image = trainpack::test_support::make_image_of_layers(root_.path() / "store", "amd64",
                                                             {{{"etc/os-release", "ID=debian\n"}}});
  const std::string wrong = trainpack::image::sha256_of("not the layer").str();
  trainpack::transports::write_oci_layout(*trainpack::test_support::with_diff_id(*image.image, 0, wrong), base, "1");
  // The last with a pip step, which scans the base first (its index is never asked).
  for (auto [output, pip] : std::vector<std::pair<std::string, bool>>{
           {"oci:" + (root_.path() / "out").string(), false},
           {"docker-archive:" + (root_.path() / "out.tar").string(), false},
           {"oci:" + (root_.path() / "out").string(), true}}) {
    std::vector<std::string> args{"build", "-q", "--executor-image-uri=python:3.10",
                                  "--base-source=oci:" + base.string() + ":1",
                                  "--cache-dir=" + (root_.path() / "cache").string(), "--output=" + output, pkg_flag(),
                                  "--script=trainer/task.py"};
    if (pip) args.insert(args.end(), {"--requirements=six", "--index-url=http://127.0.0.1:9/simple"});
    CliResult r = trainpack(args);
    EXPECT_EQ(r.exit_code, 1) << output;
    EXPECT_NE(r.err.find("layer " + image.layers[0].digest.str() + ": its uncompressed tar hashes to " +
                         image.layers[0].diff_id.str() + " but the config's diff_id is " + wrong),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(fs::exists(root_.path() / "out"));
  EXPECT_FALSE(fs::exists(root_.path() / "out.tar"));
  EXPECT_FALSE(fs::exists(trainpack::store::kind_dir(root_.path() / "cache", trainpack::store::CacheKind::kCheckedLayers) / image.layers[0].digest.hex()));
}

// --format=json has the time of every phase (0 when it did not occur) and the total; -v prints them on stderr.
TEST_F(CliTest, BuildReportsPhaseTimings) {
  file("trainer/task.py");
  const fs::path base = root_.path() / "base";
  {
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, base, "1");
  }
  CliResult r = trainpack({"build", "-v", "--format=json", "--executor-image-uri=python:3.10",
                           "--base-source=oci:" + base.string() + ":1",
                           "--cache-dir=" + (root_.path() / "cache").string(),
                           "--output=oci:" + (root_.path() / "out").string(), pkg_flag(), "--script=trainer/task.py"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json timings = json::parse(r.out).at("timings");
  double sum = 0;
  for (const char* phase : {"base", "pip_cache", "facts", "resolve", "install", "layers", "output"}) {
    ASSERT_TRUE(timings.contains(phase) && timings[phase].is_number()) << phase << " in " << timings;
    EXPECT_GE(timings[phase].get<double>(), 0) << phase;
    sum += timings[phase].get<double>();
  }
  EXPECT_EQ(timings.at("facts"), 0) << "no pip step, no facts";
  EXPECT_LE(sum, timings.at("total").get<double>() + 0.004) << timings << " (each rounded to the millisecond)";
  EXPECT_NE(r.err.find("timings: base "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", total "), std::string::npos) << r.err;
}


// Files the user names as outputs are written as `> FILE` would write them: a device or a FIFO is written, never
// replaced; a symbolic link is followed. Device nodes of our own (1,7 is /dev/full's, 1,3 /dev/null's).
class CliOutputTest : public CliTest {
 protected:
  CliOutputTest() {
    file("trainer/task.py");
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, root_.path() / "base", "1");
  }
  CliResult build(const std::vector<std::string>& more) {
    std::vector<std::string> args{"build", "-q", "--executor-image-uri=python:3.10",
                                  "--base-source=oci:" + (root_.path() / "base").string() + ":1",
                                  "--cache-dir=" + (root_.path() / "cache").string(), pkg_flag(),
                                  "--script=trainer/task.py"};
    args.insert(args.end(), more.begin(), more.end());
    return trainpack(args);
  }
  fs::path node(const std::string& name, unsigned minor) {
    fs::path p = root_.path() / name;
    EXPECT_EQ(::mknod(p.c_str(), S_IFCHR | 0666, ::makedev(1, minor)), 0);
    return p;
  }
  static bool is_char_device(const fs::path& p) { return fs::is_character_file(fs::symlink_status(p)); }
};

TEST_F(CliOutputTest, DigestFileWritesADeviceAndNeverReplacesIt) {
  const fs::path full = node("full", 7), null = node("null", 3);
  CliResult r = build({"--output=oci:" + (root_.path() / "out1").string(), "--digest-file=" + full.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_TRUE(is_char_device(full)) << "the device node is still a device";
  r = build({"--output=oci:" + (root_.path() / "out2").string(), "--digest-file=" + null.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_char_device(null));
}

TEST_F(CliOutputTest, DigestFileToAFifoNeedsAReaderAndThroughALinkFollowsIt) {
  const fs::path fifo = root_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path out = root_.path() / "out";
  CliResult r = build({"--output=oci:" + out.string(), "--digest-file=" + fifo.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--digest-file: cannot write " + fifo.string() + ": it is a FIFO and nothing reads it"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out)) << "refused before any work";

  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  r = build({"--output=oci:" + out.string(), "--digest-file=" + fifo.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char buf[256];
  ssize_t n = ::read(reader, buf, sizeof buf);
  ::close(reader);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), r.out) << "the digest, as on stdout";
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));

  // A link to a regular file: the file gets the digest, the link stays.
  std::ofstream(root_.path() / "real") << "old";
  fs::create_symlink("real", root_.path() / "link");
  fs::remove_all(out);
  r = build({"--output=oci:" + out.string(), "--digest-file=" + (root_.path() / "link").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(root_.path() / "link"));
  EXPECT_EQ(trainpack::read_file(root_.path() / "real"), r.out);
}

// --digest-file=/dev/stdout prints the digest on standard output (here a file we put there), as `> /dev/stdout` does.
TEST_F(CliOutputTest, DigestFileDevStdoutPrintsTheDigest) {
  // A link of our own to /dev/stdout: writing through it must never replace what it points at.
  fs::create_symlink("/dev/stdout", root_.path() / "stdout");
  const fs::path captured = root_.path() / "captured";
  std::fflush(stdout);
  int saved = ::dup(1);
  int into = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(into, 0);
  ::dup2(into, 1);
  ::close(into);
  CliResult r = build({"--output=oci:" + (root_.path() / "out").string(),
                       "--digest-file=" + (root_.path() / "stdout").string()});
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(trainpack::read_file(captured), r.out);
  EXPECT_TRUE(fs::is_symlink(root_.path() / "stdout"));
  EXPECT_EQ(fs::read_symlink(root_.path() / "stdout"), "/dev/stdout");
}

TEST_F(CliOutputTest, DockerArchiveToADeviceOrAFifoWritesIt) {
  const fs::path null = node("null", 3);
  CliResult r = build({"--output=docker-archive:" + null.string() + ":trainer:1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_char_device(null));

  const fs::path fifo = root_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader is there before the build starts (as `cat FIFO &` would be); until a writer comes, reads say EOF.
  int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  ::fcntl(fd, F_SETFL, 0);
  std::string archive;
  std::thread reader([&] {
    char buf[65536];
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) archive.append(buf, static_cast<std::size_t>(n));
      else if (!archive.empty() || std::chrono::steady_clock::now() > give_up) break;
      else std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::close(fd);
  });
  r = build({"--output=docker-archive:" + fifo.string() + ":trainer:1"});
  reader.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  ASSERT_GT(archive.size(), 1024u);
  EXPECT_NE(archive.find("manifest.json"), std::string::npos) << "a tar with docker's manifest.json";
}

TEST_F(CliOutputTest, JobSpecOutputWritesADeviceAndRefusesAFifoNobodyReads) {
  const fs::path full = node("full", 7);
  CliResult r = trainpack({"job-spec", "--image-uri=" + kImage, "--output=" + full.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_TRUE(is_char_device(full));
  const fs::path fifo = root_.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = trainpack({"job-spec", "--image-uri=" + kImage, "--output=" + fifo.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("it is a FIFO and nothing reads it"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
}

// A requirements.txt (or setup.py) that is a FIFO or a link to a device is refused in one line, not skipped.
TEST_F(CliOutputTest, ARootFileThatIsNotRegularIsRefused) {
  ASSERT_EQ(::mkfifo((pkg_ / "requirements.txt").c_str(), 0600), 0);
  CliResult r = build({"--output=oci:" + (root_.path() / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find((pkg_ / "requirements.txt").string() + " is a FIFO, not a regular file"), std::string::npos)
      << r.err;
  fs::remove(pkg_ / "requirements.txt");
  node("zero", 5);
  fs::create_symlink(root_.path() / "zero", pkg_ / "requirements.txt");
  r = build({"--output=oci:" + (root_.path() / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("requirements.txt is a device, not a regular file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root_.path() / "out"));
}

// A --local-package-path its user cannot reach is "cannot be read: Permission denied", not "not found". Run as
// nobody in a child (root reads everything): root's 0700 temp dir is out of its reach, and so is a 0700 package.
TEST_F(CliTest, AnUnreadablePackagePathSaysPermissionDenied) {
  std::optional<trainpack::UserIds> nobody = trainpack::unprivileged_build_user();
  if (::geteuid() != 0 || !nobody) GTEST_SKIP() << "needs root, to become another user";
  file("trainer/task.py");
  const fs::path open_dir = fs::path("/tmp") / (root_.path().filename().string() + "-open");
  trainpack::ScopedDir open_root(open_dir);
  fs::create_directories(open_dir / "pkg");
  ::chmod(open_dir.c_str(), 0755);
  ::chmod((open_dir / "pkg").c_str(), 0700);  // root's, unreadable for nobody
  for (const fs::path& pkg : {pkg_, open_dir / "pkg"}) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    pid_t child = ::fork();
    if (child == 0) {
      ::close(p[0]);
      std::string err = "cannot become nobody";
      if (trainpack::become(*nobody))
        err = trainpack({"dockerfile", "--executor-image-uri=python:3.10", "--local-package-path=" + pkg.string(),
                         "--script=trainer/task.py"})
                  .err;
      [[maybe_unused]] ssize_t n = ::write(p[1], err.data(), err.size());
      ::_exit(0);
    }
    ::close(p[1]);
    std::string err;
    char buf[4096];
    for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
    ::close(p[0]);
    ::waitpid(child, nullptr, 0);
    EXPECT_NE(err.find("Directory '" + pkg.string() + "' cannot be read: Permission denied"), std::string::npos) << err;
    EXPECT_EQ(err.find("not found"), std::string::npos) << err;
  }
}

}  // namespace

namespace {

// A password in an image reference (user:password@host/...) is never echoed, whichever flag carries it.
TEST_F(CliTest, PasswordsInReferencesAreMaskedInErrors) {
  file("trainer/task.py");
  const std::string ref = "user:PASSWORD@host.example.com/repo:tag";
  for (const std::string& flag :
       {"--output=docker://" + ref, "--output=" + ref, "--output-image-uri=" + ref, "--executor-image-uri=" + ref,
        "--base-source=docker://" + ref, std::string("--cache-repo=user:PASSWORD@host.example.com/repo")}) {
    CliResult r = trainpack({"build", "-q", "--executor-image-uri=python:3.10", pkg_flag(), "--script=trainer/task.py",
                             "--cache-dir=" + (root_.path() / "cache").string(), "--http-timeout=1", flag});
    EXPECT_NE(r.exit_code, 0) << flag;
    EXPECT_EQ(r.err.find("PASSWORD"), std::string::npos) << flag << ": " << r.err;
    EXPECT_NE(r.err.find("user:***@host.example.com"), std::string::npos) << flag << ": " << r.err;
  }
}

// Once parsed, the arguments that carry credentials are blanked in trainpack's own argv (/proc/PID/cmdline).
TEST_F(CliTest, CredentialArgumentsAreBlankedAfterParsing) {
  std::vector<std::string> args{"trainpack", "build", "-q", "--executor-image-uri=python:3.10", pkg_flag(),
                                "--script=trainer/task.py", "--index-url=https://me:hunter2@pypi.example.com/simple",
                                "--extra-index-url", "https://me:hunter2@other.example.com/simple",
                                "--http-timeout=0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream err;
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  const int code = trainpack::cli::run_cli(static_cast<int>(argv.size()), argv.data());
  std::cerr.rdbuf(old_err);
  EXPECT_EQ(code, 1) << err.str();
  for (const std::string& a : args) EXPECT_EQ(a.find("hunter2"), std::string::npos) << a;
  EXPECT_STREQ(argv[6], "--index-url=https://me:***@pypi.example.com/simple");
  EXPECT_STREQ(argv[8], "https://me:***@other.example.com/simple");
}

// --tag, --label and --annotation, and the plans of --dry-run, on local outputs from a local base.
class ImageMetadataCliTest : public CliTest {
 protected:
  ImageMetadataCliTest() {
    file("trainer/task.py");
    auto image = trainpack::test_support::make_image(root_.path() / "store", "amd64", {{"f", "y"}});
    trainpack::transports::write_oci_layout(*image.image, base_, "1");
  }
  CliResult build(const std::string& output, std::vector<std::string> extra, const std::string& base = {}) {
    std::vector<std::string> args{"build", "-q", "--format=json", "--executor-image-uri=python:3.10",
                                  "--base-source=" + (base.empty() ? "oci:" + base_.string() + ":1" : base),
                                  "--cache-dir=" + (root_.path() / "cache").string(), "--output=" + output,
                                  pkg_flag(), "--script=trainer/task.py"};
    args.insert(args.end(), extra.begin(), extra.end());
    return trainpack(args);
  }
  // A blob of an OCI layout, as JSON.
  static json blob(const fs::path& layout, const std::string& digest) {
    return json::parse(trainpack::read_file(layout / "blobs" / "sha256" / digest.substr(7)));
  }
  static json manifest_of(const fs::path& layout) {
    json index = json::parse(trainpack::read_file(layout / "index.json"));
    return blob(layout, index.at("manifests").at(0).at("digest"));
  }

  const fs::path base_ = root_.path() / "base";
};

TEST_F(ImageMetadataCliTest, TagsLabelsAndAnnotationsGoWhereAskedAndNowhereElse) {
  const fs::path plain = root_.path() / "plain", out = root_.path() / "out";
  CliResult r = build("oci:" + plain.string() + ":v1", {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = build("oci:" + out.string() + ":v1",
            {"--tag=v2", "--tag=stable", "--label=team=ml", "--label=b=2", "--annotation=com.example.k=v"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string digest = json::parse(r.out).at("manifest_digest");

  json index = json::parse(trainpack::read_file(out / "index.json"));
  std::vector<std::string> names;
  for (const json& d : index.at("manifests")) {
    if (d.contains("artifactType")) continue;  // the SBOM and provenance beside it
    EXPECT_EQ(d.at("digest"), digest);
    // As skopeo's and buildah's layouts: the index descriptor names the tag, the manifest holds the annotations.
    EXPECT_EQ(d.at("annotations").size(), 1u) << d.dump();
    names.push_back(d.at("annotations").at("org.opencontainers.image.ref.name"));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"v1", "v2", "stable"}));
  json manifest = manifest_of(out);
  EXPECT_EQ(manifest.at("annotations").at("com.example.k"), "v");
  EXPECT_EQ(manifest.at("annotations").at("org.opencontainers.image.base.name"), "python:3.10");
  json config = blob(out, manifest.at("config").at("digest"));
  EXPECT_EQ(config.at("config").at("Labels"), json({{"team", "ml"}, {"b", "2"}}));

  // Without the flags: one tag, trainpack's two base annotations, no Labels.
  json plain_manifest = manifest_of(plain);
  EXPECT_EQ(plain_manifest.at("annotations").size(), 2u) << plain_manifest.dump();
  EXPECT_FALSE(blob(plain, plain_manifest.at("config").at("digest")).at("config").contains("Labels"));
  std::vector<std::string> entries;  // one tag: the image, then its SBOM and provenance, untagged
  const json plain_index = json::parse(trainpack::read_file(plain / "index.json"));
  for (const json& d : plain_index.at("manifests"))
    entries.push_back(d.contains("artifactType") ? d.at("artifactType")
                                                 : d.at("annotations").at("org.opencontainers.image.ref.name"));
  EXPECT_EQ(entries, (std::vector<std::string>{"v1", "application/spdx+json", "application/vnd.in-toto+json"}));

  // Labels merge over the base's, a later value of a key winning.
  r = build("oci:" + (root_.path() / "over").string() + ":v1", {"--label=b=3"}, "oci:" + out.string() + ":stable");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json over = manifest_of(root_.path() / "over");
  EXPECT_EQ(blob(root_.path() / "over", over.at("config").at("digest")).at("config").at("Labels"),
            json({{"team", "ml"}, {"b", "3"}}));
}

TEST_F(ImageMetadataCliTest, ExtraTagsAreRepoTagsOfADockerArchive) {
  const fs::path tar = root_.path() / "out.tar";
  CliResult r = build("docker-archive:" + tar.string() + ":trainer:v1", {"--tag=v2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  trainpack::store::BlobStore store(root_.path() / "read");
  for (const char* name : {"trainer:v1", "trainer:v2"}) {
    auto image = trainpack::transports::open_docker_archive(tar, name, trainpack::image::Platform::parse("linux/amd64"),
                                                            store);
    EXPECT_EQ(image->manifest_digest().str(), json::parse(r.out).at("manifest_digest")) << name;
  }
}

TEST_F(ImageMetadataCliTest, BadMetadataFlagsAreOneLineErrorsBeforeAnyWork) {
  const fs::path out = root_.path() / "out";
  const std::vector<std::string> flags{"--tag=-x", "--tag=a/b", "--tag=a..b", "--label=novalue", "--label==v",
                                       "--annotation=k",
                                       "--image-name-with-digest-file=" + (root_.path() / "n").string()};
  for (const std::string& flag : flags) {
    CliResult r = build("oci:" + out.string() + ":v1", {flag});
    EXPECT_EQ(r.exit_code, 1) << flag << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("trainpack: error: ")) << r.err;
    EXPECT_NE(r.err.find("\nhint: "), std::string::npos) << flag << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << flag << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << flag;
    EXPECT_FALSE(fs::exists(root_.path() / "n")) << flag;
  }
}

// A --tag of the referrers tag schema's shape (sha256-<hex>) is a usage error, before any output is written.
TEST_F(ImageMetadataCliTest, ATagShapedLikeTheReferrersTagIsAUsageError) {
  const fs::path out = root_.path() / "out";
  CliResult r = build("oci:" + out.string() + ":v1", {"--tag=sha256-" + std::string(64, 'e')});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.err.starts_with("trainpack: error: --tag=sha256-")) << r.err;
  EXPECT_NE(r.err.find("\nhint: "), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(fs::exists(out));
  // A pushed output's own tag of that shape too, before anything is sent.
  r = build("docker://registry.invalid/trainer:sha256-" + std::string(64, 'e'), {});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("has the shape of a referrers tag"), std::string::npos) << r.err;
}

TEST_F(ImageMetadataCliTest, DryRunTellsLayersToBuildFromCachedOnesAndListsTheirFiles) {
  const std::string out = "oci:" + (root_.path() / "out").string() + ":v1";
  CliResult plan = build(out, {"--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  bool lists_task = false;
  const json first_plan = json::parse(plan.out);
  for (const json& layer : first_plan.at("layers")) {
    EXPECT_EQ(layer.at("plan"), "build") << layer.dump();
    EXPECT_EQ(layer.at("files").size(), layer.at("entries")) << layer.dump();
    for (const json& f : layer.at("files")) lists_task |= f.get<std::string>().ends_with("trainer/task.py");
  }
  EXPECT_TRUE(lists_task) << plan.out;

  CliResult built = build(out, {});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  std::vector<json> built_digests, planned_digests;
  const json built_result = json::parse(built.out);
  for (const json& layer : built_result.at("layers"))
    if (layer.at("origin") != "base") built_digests.push_back(layer.at("digest"));
  plan = build(out, {"--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const json second_plan = json::parse(plan.out);
  for (const json& layer : second_plan.at("layers")) {
    EXPECT_EQ(layer.at("plan"), "cached") << layer.dump();
    planned_digests.push_back(layer.at("digest"));
  }
  EXPECT_EQ(planned_digests, built_digests);

  CliResult text = trainpack({"build", "--dry-run", "--executor-image-uri=python:3.10",
                              "--base-source=oci:" + base_.string() + ":1",
                              "--cache-dir=" + (root_.path() / "cache").string(), "--output=" + out, pkg_flag(),
                              "--script=trainer/task.py"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("would reuse from the layer cache a layer of"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("trainer/task.py\n"), std::string::npos) << text.out;
}

}  // namespace
