// trainpack's memory is bounded by design, not by the workload: a framework-shaped wheel (one 1 GiB library member,
// 20,000 modules, each compiled to a .pyc) installed by a build of its own keeps the build's peak RSS under 150 MB.
// The peak is the kernel's: getrusage(RUSAGE_CHILDREN) in a process whose only child is that trainpack.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;

namespace {

constexpr long kPeakRssLimitKiB = 150 * 1000;  // 150 MB

// A wheel like a framework's: a 1 GiB member (stored, so trainpack compresses it: random bytes and zeros, half
// incompressible) and `modules` small modules in directories of 500, with their RECORD.
std::string write_framework_wheel(const fs::path& dir, int modules) {
  static constexpr const char* kMaker = R"(
import base64, hashlib, os, sys, zipfile
path, modules = sys.argv[1], int(sys.argv[2])
info = "tp_framework-1.0.dist-info/"
digest = lambda h: base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
rows = []
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
    for i in range(modules):
        name = "tp_framework/part%d/mod%d.py" % (i // 500, i)
        data = ("VALUE_%d = %d\ndef f_%d(x):\n    return x + %d\n" % (i, i, i, i)).encode()
        z.writestr(name, data)
        rows.append("%s,sha256=%s,%d" % (name, digest(hashlib.sha256(data)), len(data)))
    big = zipfile.ZipInfo("tp_framework/lib/libframework.so")
    big.compress_type = zipfile.ZIP_STORED
    h, size, block = hashlib.sha256(), 0, os.urandom(1 << 20) + bytes(1 << 20)
    with z.open(big, "w", force_zip64=True) as f:
        for k in range(512):
            chunk = block[k % 7:] + block[:k % 7]
            f.write(chunk)
            h.update(chunk)
            size += len(chunk)
    rows.append("tp_framework/lib/libframework.so,sha256=%s,%d" % (digest(h), size))
    files = {info + "METADATA": b"Metadata-Version: 2.1\nName: tp_framework\nVersion: 1.0\n",
             info + "WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    for n, b in files.items():
        z.writestr(n, b)
        rows.append("%s,sha256=%s,%d" % (n, digest(hashlib.sha256(b)), len(b)))
    z.writestr(info + "RECORD", "\n".join(rows + [info + "RECORD,,"]) + "\n")
)";
  fs::create_directories(dir);
  const fs::path wheel = dir / "tp_framework-1.0-py3-none-any.whl";
  CommandResult r = run_command({"python3", "-c", kMaker, wheel.string(), std::to_string(modules)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return wheel.string();
}

struct ChildPeak {
  int exit_code = -1;
  long max_rss_kib = 0;
};

// Runs `argv` (output to `log`) as the only child of a process forked for it, which reports its exit code and the
// child's peak RSS (getrusage(RUSAGE_CHILDREN): this test's other children are not counted).
ChildPeak run_measured(const std::vector<std::string>& argv, const fs::path& log) {
  int report[2];
  if (::pipe(report) != 0) return {};
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t measurer = ::fork();
  if (measurer == 0) {  // async-signal-safe calls only from here on
    ::close(report[0]);
    pid_t child = ::fork();
    if (child == 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    struct rusage usage {};
    ::getrusage(RUSAGE_CHILDREN, &usage);
    long result[2] = {WIFEXITED(status) ? WEXITSTATUS(status) : 128, usage.ru_maxrss};
    ssize_t ignored = ::write(report[1], result, sizeof result);
    (void)ignored;
    ::_exit(0);
  }
  ::close(report[1]);
  ::close(out);
  long result[2] = {-1, 0};
  ssize_t got = ::read(report[0], result, sizeof result);
  ::close(report[0]);
  ::waitpid(measurer, nullptr, 0);
  if (got != static_cast<ssize_t>(sizeof result)) return {};
  return {static_cast<int>(result[0]), result[1]};
}

}  // namespace

TEST(Memory, AFrameworkWheelWithA1GiBMemberAnd20000ModulesStaysUnder150MB) {
  TempDir dir("tp-memory");
  const fs::path pkg = dir.path() / "pkg";  // --extra-packages are in the build context, as gcloud copies them
  const std::string wheel = write_framework_wheel(pkg, 20000);
  ASSERT_FALSE(HasFailure());
  write_file(pkg / "task.py", "import tp_framework\n");
  std::vector<std::string> argv{trainpack_bin(), "build", "--executor-image-uri=python:3",
                                "--base-source=" + base_oci_ref(), "--local-package-path=" + pkg.string(),
                                "--script=task.py", "--output=oci:" + (dir.path() / "out").string() + ":x",
                                "--cache-dir=" + (dir.path() / "cache").string(), "--break-system-packages",
                                "--extra-packages=" + fs::path(wheel).filename().string(), "--format=json", "-q"};
  ChildPeak peak = run_measured(argv, dir.path() / "build.log");
  std::cout << "peak RSS of the build: " << peak.max_rss_kib << " KiB\n";
  ASSERT_EQ(peak.exit_code, 0) << read_file(dir.path() / "build.log");
  // The build did install it all: the layer holds the member and a .pyc per module.
  const std::string log = read_file(dir.path() / "build.log");
  EXPECT_NE(log.find("\"entries\""), std::string::npos) << log;
  std::size_t most_entries = 0;
  for (std::size_t at = log.find("\"entries\":"); at != std::string::npos; at = log.find("\"entries\":", at + 1))
    most_entries = std::max<std::size_t>(most_entries, std::stoul(log.substr(at + 10)));
  EXPECT_GE(most_entries, 40000u) << log;
  EXPECT_GT(peak.max_rss_kib, 10000) << "the measure itself failed";
  EXPECT_LT(peak.max_rss_kib, kPeakRssLimitKiB) << "peak RSS " << peak.max_rss_kib << " KiB";
}
