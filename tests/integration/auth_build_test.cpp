// trainpack build against registries that want credentials — htpasswd (Basic), token auth (Bearer from a token
// server) and TLS with a private CA — with the credentials users already have (a docker config.json), and the pushed
// image pulled and run by docker logged in the same way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "net/encoding.h"
#include "tests/integration/test_support.h"

using namespace trainpack::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::map<std::string, std::string> auth_fixture_env() {
  std::ifstream f(env_or_fail("TRAINPACK_TEST_AUTH_DIR") + "/env");
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(f, line);)
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  if (out.empty()) ADD_FAILURE() << "no auth fixture env: run through ctest -L integration";
  return out;
}

struct Case {
  std::string name;
  std::string registry;  // host:port
  std::string ca_file;   // TLS only
};

// Builds onto REGISTRY/base/python:3.11 and pushes REGISTRY/trainer/app:v1 with testuser's credentials from a
// docker config.json, then docker logs in, pulls and runs the image.
void build_push_pull_run(const Case& c) {
  SCOPED_TRACE(c.name);
  TempDir dir("tp-authbuild");
  const std::string user = "testuser", password = "testpass";
  std::vector<std::string> tls_flags{"--dest-tls-verify=false"};
  if (!c.ca_file.empty()) {
    fs::create_directories(dir.path() / "certs");
    fs::copy_file(c.ca_file, dir.path() / "certs" / "ca.crt");
    tls_flags = {"--dest-cert-dir", (dir.path() / "certs").string()};
  }
  std::vector<std::string> copy{"skopeo", "copy", "--dest-creds", user + ":" + password};
  copy.insert(copy.end(), tls_flags.begin(), tls_flags.end());
  copy.push_back(base_oci_ref());
  copy.push_back("docker://" + c.registry + "/base/python:3.11");
  auto pushed_base = run_command(copy);
  ASSERT_EQ(pushed_base.exit_code, 0) << describe(copy, pushed_base);

  fs::path docker_config = dir.path() / "docker";
  write_file(docker_config / "config.json",
             R"({"auths": {")" + c.registry + R"(": {"auth": ")" +
                 trainpack::net::base64_encode(user + ":" + password) + R"("}}})");
  fs::path pkg = dir.path() / "pkg";
  fs::copy(fs::path(source_dir()) / "testdata" / "example-trainer", pkg, fs::copy_options::recursive);
  const std::string target = c.registry + "/trainer/app:v1";
  std::vector<std::string> build{"env", "DOCKER_CONFIG=" + docker_config.string(), trainpack_bin(), "build",
                                 "--executor-image-uri=" + c.registry + "/base/python:3.11",
                                 "--local-package-path=" + pkg.string(), "--script=trainer/task.py",
                                 "--extra-dirs=config", "--output-image-uri=" + target,
                                 "--cache-dir=" + (dir.path() / "cache").string()};
  if (!c.ca_file.empty()) build.push_back("--ca-file=" + c.ca_file);
  auto r = run_command(build);
  ASSERT_EQ(r.exit_code, 0) << describe(build, r);
  EXPECT_TRUE(r.out.starts_with(c.registry + "/trainer/app@sha256:")) << r.out;
  EXPECT_EQ(r.err.find(password), std::string::npos) << "a secret reached the output";

  // docker, logged in with the same credentials (and trusting the CA through certs.d), pulls and runs it.
  fs::path certs_d = fs::path("/etc/docker/certs.d") / c.registry;
  if (!c.ca_file.empty()) {
    fs::create_directories(certs_d);
    fs::copy_file(c.ca_file, certs_d / "ca.crt", fs::copy_options::overwrite_existing);
  }
  auto docker = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = docker_command();
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == "--config") argv[i + 1] = docker_config.string();
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  };
  auto login = docker({"login", "-u", user, "--password-stdin", c.registry});
  auto l = run_command(login, password + "\n");
  EXPECT_EQ(l.exit_code, 0) << describe(login, l);
  auto pull = docker({"pull", target});
  auto p = run_command(pull);
  EXPECT_EQ(p.exit_code, 0) << describe(pull, p);
  auto run = docker({"run", "--rm", "--network", "none", target, "--epochs", "1"});
  auto out = run_command(run);
  EXPECT_EQ(out.exit_code, 0) << describe(run, out);
  EXPECT_NE(out.out.find("epoch 1/1"), std::string::npos) << out.out;
  run_command(docker({"rmi", "-f", target}));
  if (!c.ca_file.empty()) fs::remove_all(certs_d);
}

}  // namespace

TEST(AuthBuild, HtpasswdBasicAuth) {
  auto env = auth_fixture_env();
  build_push_pull_run({"htpasswd", env["TRAINPACK_TEST_HTPASSWD_REGISTRY"], ""});
}

TEST(AuthBuild, TokenAuth) {
  auto env = auth_fixture_env();
  build_push_pull_run({"token", env["TRAINPACK_TEST_TOKEN_REGISTRY"], ""});
}

TEST(AuthBuild, TlsWithPrivateCaAndBasicAuth) {
  auto env = auth_fixture_env();
  ASSERT_FALSE(env["TRAINPACK_TEST_TLS_REGISTRY"].empty()) << "the auth fixture found no host name for TLS";
  build_push_pull_run({"tls", env["TRAINPACK_TEST_TLS_REGISTRY"], env["TRAINPACK_TEST_TLS_CA"]});
}
