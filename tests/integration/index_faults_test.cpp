// Faults while a build with a pip step reads the base's layers (downloaded from the registry to be scanned) and the
// Python index client fetches the project page and the wheel. The fault server is both the base's registry and
// the index (a page and a wheel seeded as plain files). Each fault either recovers, or fails with one line naming
// what failed, a non-zero exit, no output, and nothing half-written in the cache.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "image/digest.h"
#include "net/encoding.h"
#include "store/cache_dir.h"
#include "tests/integration/push_faults.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kWheel = "Demo_Pkg-1.0-py3-none-any.whl";

class IndexFaultsTest : public PushFaultsFixture {
 protected:
  void SetUp() override {
    PushFaultsFixture::SetUp();
    std::string wheel = read_file(fs::path(source_dir()) / "testdata" / "python" / "wheels" / kWheel);
    wheel_sha_ = trainpack::image::sha256_of(wheel).hex();
    server_->control_one({{"op", "seed_file"}, {"path", std::string("/files/") + kWheel},
                          {"data_b64", trainpack::net::base64_encode(wheel)}});
    server_->control_one({{"op", "seed_file"}, {"path", "/simple/demo-pkg/"}, {"content_type", "text/html"},
                          {"data", std::string("<!DOCTYPE html><html><body><a href=\"/files/") + kWheel + "#sha256=" +
                                       wheel_sha_ + "\">" + kWheel + "</a></body></html>\n"}});
    write_file(pkg_ / "requirements.txt", "demo-pkg\n");
    out_ = dir_->path() / "out";
  }

  CommandResult pip_build(int http_timeout = 3) {
    return build({"--output=oci:" + out_.string(), "--index-url=" + server_->url("/simple/"),
                  "--break-system-packages", "--no-compile", "--http-timeout=" + std::to_string(http_timeout)});
  }

  // The build failed with one line containing `cause`, wrote no output and left no half-written file in the cache.
  void expect_clean_failure(const CommandResult& r, const std::string& cause) {
    expect_one_line_error(r);
    EXPECT_NE(cause_of(r).find(cause), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out_));
    EXPECT_FALSE(fs::exists(blob_in_cache("sha256:" + wheel_sha_)));
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(trainpack::store::temp_dir_of(dir_->path() / "cache"), ec))
      ADD_FAILURE() << "left behind: " << e.path();
    const fs::path blobs = trainpack::store::kind_dir(dir_->path() / "cache", trainpack::store::CacheKind::kBlobs) / "sha256";
    for (const auto& e : fs::directory_iterator(blobs, ec))
      EXPECT_EQ(e.path().filename().string().find('.'), std::string::npos) << "a partial blob: " << e.path();
  }

  std::string wheel_url() const { return server_->url(std::string("/files/") + kWheel); }

  std::string wheel_sha_;
  fs::path out_;
};

TEST_F(IndexFaultsTest, FaultsOnceWhileTheBaseIsScannedAndPackagesDownloadedAreRetried) {
  server_->fault({{"method", "GET"}, {"path", base_layer_}, {"action", "truncate"}, {"bytes", 4096}});
  server_->fault({{"method", "GET"}, {"path", "^/simple/demo-pkg/$"}, {"action", "status"}, {"status", 503}});
  server_->fault({{"method", "GET"}, {"path", "^/files/"}, {"action", "reset"}, {"bytes", 1000}});
  server_->fault({{"method", "GET"}, {"path", "^/files/"}, {"action", "stall"}, {"bytes", 100}});
  auto r = pip_build(10);  // room for a reset, a stalled attempt (5 s) and the backoffs
  ASSERT_EQ(r.exit_code, 0) << describe({"trainpack build"}, r);
  EXPECT_TRUE(fs::exists(out_ / "index.json"));
  EXPECT_TRUE(fs::exists(blob_in_cache("sha256:" + wheel_sha_)));
  expect_every_fault_fired();
}

TEST_F(IndexFaultsTest, AStalledBaseLayerFailsAtTheDeadline) {
  server_->fault({{"method", "GET"}, {"path", base_layer_}, {"action", "stall"}, {"bytes", 100}, {"seconds", 60},
                  {"times", -1}});
  auto start = std::chrono::steady_clock::now();
  auto r = pip_build();
  EXPECT_LT(seconds_since(start), 20);
  expect_clean_failure(r, server_->host() + " stalled for 3 s (GET " + server_->url("/v2/base/python/blobs/" + base_layer_));
  EXPECT_FALSE(fs::exists(blob_in_cache(base_layer_)));
}

TEST_F(IndexFaultsTest, PersistentIndexFaultsFailInOneLine) {
  struct Case {
    json fault;
    std::string cause;
  };
  std::vector<Case> cases{
      {{{"path", "^/simple/demo-pkg/$"}, {"action", "status"}, {"status", 500}, {"format", "html"}},
       "GET " + server_->url("/simple/demo-pkg/") + " returned HTTP 500"},
      {{{"path", "^/simple/demo-pkg/$"}, {"action", "stall"}, {"bytes", 10}, {"seconds", 60}},
       server_->host() + " stalled for 3 s (GET " + server_->url("/simple/demo-pkg/") + ": "},
      {{{"path", "^/files/"}, {"action", "truncate"}, {"bytes", 1000}},
       server_->host() + " sent no complete answer within 3 s (GET " + wheel_url() + ": "},
      {{{"path", "^/files/"}, {"action", "stall"}, {"bytes", 1000}, {"seconds", 60}},
       server_->host() + " stalled for 3 s (GET " + wheel_url() + ": "},
      {{{"path", "^/files/"}, {"action", "status"}, {"status", 200}, {"body", "not the wheel"}},
       std::string("hash mismatch for ") + kWheel},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.fault.dump());
    server_->control_one({{"op", "clear_faults"}});
    c.fault["method"] = "GET";
    c.fault["times"] = -1;
    server_->fault(c.fault);
    auto start = std::chrono::steady_clock::now();
    auto r = pip_build();
    EXPECT_LT(seconds_since(start), 30);
    expect_clean_failure(r, c.cause);
    EXPECT_EQ(r.err.find("<html"), std::string::npos) << r.err;
  }
}

// The pid of the running trainpack whose command line mentions `marker` (its unique cache directory), or 0.
pid_t trainpack_pid_with(const std::string& marker) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    if (fs::read_symlink(e.path() / "exe", ec) != fs::canonical(trainpack_bin(), ec)) continue;
    std::string cmdline = read_file(e.path() / "cmdline");
    if (cmdline.find(marker) != std::string::npos) return static_cast<pid_t>(std::stoi(name));
  }
  return 0;
}

// While a build waits for the index, /proc/PID/cmdline (readable by every user, among them the one running a
// project's setup.py) shows the --index-url without its password.
TEST_F(IndexFaultsTest, TheIndexPasswordLeavesTheCommandLine) {
  server_->fault({{"method", "GET"}, {"path", "^/simple/demo-pkg/$"}, {"action", "delay"}, {"seconds", 6}});
  const std::string index = "http://me:hunter2@" + server_->host() + "/simple/";
  CommandResult result;
  std::thread running([&] {
    result = build({"--output=oci:" + out_.string(), "--index-url=" + index, "--break-system-packages",
                    "--no-compile", "--http-timeout=30"});
  });
  std::string cmdline;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < until && cmdline.empty();) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (server_->requests("GET", "^/simple/demo-pkg/$").empty()) continue;
    if (pid_t pid = trainpack_pid_with((dir_->path() / "cache").string()))
      cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  }
  running.join();
  ASSERT_EQ(result.exit_code, 0) << describe({"trainpack build"}, result);
  ASSERT_FALSE(cmdline.empty()) << "no running trainpack seen while the index answered slowly";
  EXPECT_EQ(cmdline.find("hunter2"), std::string::npos) << cmdline;
  EXPECT_NE(cmdline.find("--index-url=http://me:***@"), std::string::npos) << cmdline;
  expect_every_fault_fired();
}

}  // namespace
