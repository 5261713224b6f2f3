// Configuration and credential files trainpack reads from its flags or the environment: one that is a FIFO or a
// device like /dev/zero is refused at once, in one line naming it (never read without end, never waited on).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "net/google_credentials.h"
#include "net/http_client.h"
#include "python/index_client.h"
#include "registry/credentials.h"
#include "store/cache_dir.h"
#include "support/error.h"
#include "support/fs.h"
#include "tests/env_guard.h"

namespace {

namespace fs = std::filesystem;
using trainpack::Error;

// Files that must be refused: a FIFO and a node with /dev/zero's numbers (1,5), each made here.
class ConfigFilesTest : public ::testing::Test {
 protected:
  ConfigFilesTest() : dir_(trainpack::make_temp_dir({}, "tp-config-")) {}

  fs::path fifo(const std::string& rel) {
    fs::path p = dir_.path() / rel;
    fs::create_directories(p.parent_path());
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p;
  }
  fs::path zero(const std::string& rel) {
    fs::path p = dir_.path() / rel;
    fs::create_directories(p.parent_path());
    EXPECT_EQ(::mknod(p.c_str(), S_IFCHR | 0600, ::makedev(1, 5)), 0);
    return p;
  }
  // `read` (which reads the file at `path`) fails at once, in one line that names the file and what it is.
  static void expect_refused(const fs::path& path, const std::function<void()>& read) {
    auto start = std::chrono::steady_clock::now();
    std::string message = "(no error)";
    try {
      read();
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << path;
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_TRUE(message.find("it is a FIFO, not a regular file") != std::string::npos ||
                message.find("it is a device, not a regular file") != std::string::npos)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // Both kinds of file at `rel`, each given to `read`.
  void expect_both_refused(const std::string& rel, const std::function<void(const fs::path&)>& read) {
    fs::path f = fifo(rel + ".fifo"), z = zero(rel + ".zero");
    expect_refused(f, [&] { read(f); });
    expect_refused(z, [&] { read(z); });
  }

  trainpack::ScopedDir dir_;
  trainpack::testing::EnvGuard env_;
};

TEST_F(ConfigFilesTest, CaFileAndSslCertFile) {
  expect_both_refused("ca.pem", [](const fs::path& p) {
    trainpack::net::HttpOptions o;
    o.ca_file = p;
    trainpack::net::HttpClient client(o);
  });
  expect_both_refused("bundle.pem", [this](const fs::path& p) {
    env_.set("SSL_CERT_FILE", p.string());
    trainpack::net::HttpClient client(trainpack::net::HttpOptions{});
  });
}

TEST_F(ConfigFilesTest, CertsDirectoryFiles) {
  // certs.d/<host:port>/*.crt, read when the first request to that host is made (the port is closed: no traffic).
  for (const std::string kind : {"fifo", "zero"}) {
    fs::path root = dir_.path() / ("certs-" + kind);
    fs::path crt = kind == "fifo" ? fifo("certs-fifo/127.0.0.1:9/ca.crt") : zero("certs-zero/127.0.0.1:9/ca.crt");
    trainpack::net::HttpOptions o;
    o.certs_dirs = {root};
    o.max_attempts = 1;
    trainpack::net::HttpClient client(o);
    trainpack::net::HttpRequest r;
    r.url = "https://127.0.0.1:9/v2/";
    expect_refused(crt, [&] { client.send(r); });
  }
}

TEST_F(ConfigFilesTest, DockerConfigAndRegistryAuthFile) {
  expect_both_refused("docker/config.json", [](const fs::path& p) {
    trainpack::registry::DockerConfigProvider(p).find("reg.example.com", "r");
  });
  expect_both_refused("auth.json", [this](const fs::path& p) {
    env_.set("REGISTRY_AUTH_FILE", p.string());
    trainpack::registry::PodmanAuthProvider().find("reg.example.com", "r");
  });
}

TEST_F(ConfigFilesTest, GoogleCredentialFiles) {
  env_.set("NO_GCE_CHECK", "true");
  expect_both_refused("sa.json", [this](const fs::path& p) {
    env_.set("GOOGLE_APPLICATION_CREDENTIALS", p.string());
    trainpack::net::GoogleCredentials::find_default({});
  });
  env_.unset("GOOGLE_APPLICATION_CREDENTIALS");
  for (const std::string kind : {"fifo", "zero"}) {
    fs::path adc = kind == "fifo" ? fifo(kind + "/application_default_credentials.json")
                                  : zero(kind + "/application_default_credentials.json");
    env_.set("CLOUDSDK_CONFIG", adc.parent_path().string());
    expect_refused(adc, [] { trainpack::net::GoogleCredentials::find_default({}); });
  }
}

TEST_F(ConfigFilesTest, Netrc) {
  trainpack::net::HttpClient http(trainpack::net::HttpOptions{});
  trainpack::store::CacheDir cache(dir_.path() / "store");
  expect_both_refused("netrc", [&](const fs::path& p) {
    trainpack::python::IndexClientOptions o;
    o.netrc_file = p;
    trainpack::python::IndexClient client(http, cache, o);
  });
}

}  // namespace
