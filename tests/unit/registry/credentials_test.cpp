// Credential sources: docker config.json (auths, legacy keys, credHelpers/credsStore with fake helper programs),
// DOCKER_AUTH_CONFIG, podman auth.json, and the Keychain.
#include <gtest/gtest.h>

#include "tests/env_guard.h"
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "net/encoding.h"
#include "registry/credentials.h"
#include "support/error.h"
#include "support/fs.h"

using namespace trainpack;
using namespace trainpack::registry;
using namespace trainpack::net;
namespace fs = std::filesystem;

namespace {

using trainpack::testing::EnvGuard;

void write(const fs::path& p, const std::string& text, bool executable = false) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  if (executable) ::chmod(p.c_str(), 0755);
}

class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScopedDir>(make_temp_dir({}, "tp-cred-test"));
    clear_credential_helper_cache();
    // A fake helper: logs each call, answers per server address.
    bin_ = dir_->path() / "bin";
    log_ = dir_->path() / "helper.log";
    write(bin_ / "docker-credential-test",
          "#!/bin/sh\n"
          "server=$(cat)\n"
          "echo \"$1 $server\" >> '" + log_.string() + "'\n"
          "case \"$server\" in\n"
          "  reg.example.com|https://index.docker.io/v1/) echo '{\"ServerURL\":\"x\",\"Username\":\"helperuser\",\"Secret\":\"helper-secret\"}' ;;\n"
          "  tok.example.com) echo '{\"ServerURL\":\"x\",\"Username\":\"<token>\",\"Secret\":\"identity-secret\"}' ;;\n"
          "  broken.example.com) echo 'backend unavailable: keyring locked' >&2; echo 'leaked-stdout-secret'; exit 3 ;;\n"
          "  leaky.example.com) echo 'login to https://me:hunter2@leaky.example.com failed: password=hunter2, "
          "token ya29.a0AfH6SMBxQ3k9ZpLr7TqW2' >&2; echo 'Secret: hunter2' >&2; exit 4 ;;\n"
          "  garbage.example.com) echo 'not json at all: secretish' ;;\n"
          "  slow.example.com) exec sleep 5 ;;\n"
          "  *) echo 'credentials not found in native keychain'; exit 1 ;;\n"
          "esac\n",
          true);
    write(bin_ / "docker-credential-other",
          "#!/bin/sh\nserver=$(cat)\necho '{\"Username\":\"otheruser\",\"Secret\":\"other-secret\"}'\n", true);
    env_.set("PATH", bin_.string() + ":" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"));
  }
  void TearDown() override { clear_credential_helper_cache(); }

  fs::path config(const std::string& json) {
    fs::path p = dir_->path() / "docker" / "config.json";
    write(p, json);
    return p;
  }
  int helper_calls() {
    std::ifstream f(log_);
    int n = 0;
    std::string line;
    while (std::getline(f, line)) ++n;
    return n;
  }

  EnvGuard env_;
  std::unique_ptr<ScopedDir> dir_;
  fs::path bin_, log_;
};

std::string auth_of(const std::string& userpass) { return base64_encode(userpass); }

}  // namespace

TEST(CredentialHelpers, ConvertToHostname) {
  EXPECT_EQ(convert_to_hostname("https://index.docker.io/v1/"), "index.docker.io");
  EXPECT_EQ(convert_to_hostname("http://reg:5000/v2/"), "reg:5000");
  EXPECT_EQ(convert_to_hostname("reg:5000"), "reg:5000");
  EXPECT_EQ(convert_to_hostname("reg/ns/repo"), "reg");
  EXPECT_TRUE(is_docker_hub_host("index.docker.io"));
  EXPECT_FALSE(is_docker_hub_host("ghcr.io"));
}

TEST(CredentialHelpers, DecodeAuth) {
  EXPECT_EQ(decode_docker_auth(auth_of("u:p:with:colons"), "x"), std::make_pair(std::string("u"), std::string("p:with:colons")));
  EXPECT_EQ(decode_docker_auth(auth_of(std::string("u:pw\0\0", 6)), "x").second, "pw");
  EXPECT_THROW(decode_docker_auth(auth_of(":nouser"), "x"), Error);
  EXPECT_THROW(decode_docker_auth(auth_of("nocolon"), "x"), Error);
  EXPECT_THROW(decode_docker_auth("%%%", "x"), Error);
}

TEST(CredentialHelpers, DescribeNeverShowsSecrets) {
  Credential c;
  EXPECT_EQ(c.describe(), "anonymous");
  c.username = "testuser";
  c.password = "s3cret";
  c.source = "docker config /x/config.json";
  EXPECT_EQ(c.describe(), "testuser from docker config /x/config.json");
  Credential t;
  t.identity_token = "tok-secret";
  t.source = "DOCKER_AUTH_CONFIG";
  EXPECT_EQ(t.describe(), "an identity token from DOCKER_AUTH_CONFIG");
  Credential g;
  g.username = "oauth2accesstoken";
  g.password = "ya29.secret";
  g.identity = "sa@p.iam.gserviceaccount.com";
  g.source = "Google ADC (service_account /k.json)";
  EXPECT_EQ(g.describe(), "sa@p.iam.gserviceaccount.com from Google ADC (service_account /k.json)");
}

TEST_F(CredentialsTest, AuthsByHostAndLegacyUrl) {
  auto p = config(R"({"auths":{
      "127.0.0.1:5001":{"auth":")" + auth_of("testuser:testpass") + R"("},
      "https://legacy.example.com/v1/":{"auth":")" + auth_of("old:oldpass") + R"("},
      "https://index.docker.io/v1/":{"auth":")" + auth_of("hubuser:hubpass") + R"("},
      "plain.example.com":{"username":"plainuser","password":"plainpass"}}})");
  DockerConfigProvider prov(p);
  auto c = prov.find("127.0.0.1:5001", "base/python");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->username, "testuser");
  EXPECT_EQ(c->password, "testpass");
  EXPECT_EQ(c->source, "docker config " + p.string());
  EXPECT_EQ(c->describe(), "testuser from docker config " + p.string());
  auto legacy = prov.find("legacy.example.com", "x");
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->username, "old");
  auto hub = prov.find("docker.io", "library/ubuntu");
  ASSERT_TRUE(hub);
  EXPECT_EQ(hub->username, "hubuser");
  auto plain = prov.find("plain.example.com", "r");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->password, "plainpass");
  EXPECT_FALSE(prov.find("127.0.0.1:5002", "base/python"));
}

TEST_F(CredentialsTest, RepositoryKeyBeforeHostKey) {
  auto p = config(R"({"auths":{
      "reg.io":{"auth":")" + auth_of("hostuser:a") + R"("},
      "reg.io/team/app":{"auth":")" + auth_of("repouser:b") + R"("}}})");
  DockerConfigProvider prov(p);
  EXPECT_EQ(prov.find("reg.io", "team/app")->username, "repouser");
  EXPECT_EQ(prov.find("reg.io", "team/other")->username, "hostuser");
}

TEST_F(CredentialsTest, IdentityAndRegistryTokens) {
  auto p = config(R"({"auths":{
      "idt.example.com":{"auth":")" + auth_of("<token>:") + R"(", "identitytoken":"refresh-xyz"},
      "rt.example.com":{"registrytoken":"bearer-xyz"}}})");
  DockerConfigProvider prov(p);
  auto idt = prov.find("idt.example.com", "r");
  ASSERT_TRUE(idt);
  EXPECT_EQ(idt->identity_token, "refresh-xyz");
  EXPECT_TRUE(idt->username.empty());
  auto rt = prov.find("rt.example.com", "r");
  ASSERT_TRUE(rt);
  EXPECT_EQ(rt->registry_token, "bearer-xyz");
}

TEST_F(CredentialsTest, EmptyUserIsAnErrorWithoutTheSecret) {
  auto p = config(R"({"auths":{"bad.example.com":{"auth":")" + auth_of(":topsecretpw") + R"("}}})");
  DockerConfigProvider prov(p);
  try {
    prov.find("bad.example.com", "r");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string msg = std::string(e.what()) + e.hint();
    EXPECT_NE(msg.find("empty user"), std::string::npos) << msg;
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
    EXPECT_EQ(msg.find("topsecretpw"), std::string::npos) << msg;
  }
}

TEST_F(CredentialsTest, MalformedJsonNamesFileNotContent) {
  auto p = config(R"({"auths":{"x":{"auth":"c2VjcmV0"}} trailing-secret-garbage)");
  DockerConfigProvider prov(p);
  try {
    prov.find("x", "r");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(p.string()), std::string::npos) << msg;
    EXPECT_EQ(msg.find("trailing-secret"), std::string::npos) << msg;
  }
}

// A number beyond a double makes nlohmann's parser throw out_of_range, not parse_error: it was an internal error.
// Found by the credentials fuzz target.
TEST_F(CredentialsTest, NumberOutOfRangeIsMalformedJson) {
  auto p = config(R"({"auths":{"x":{"auth":"c2VjcmV0"}},"n":1e400})");
  DockerConfigProvider prov(p);
  try {
    prov.find("x", "r");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(p.string() + " is not valid JSON"), std::string::npos) << msg;
  }
}

TEST_F(CredentialsTest, MissingConfigMeansNoCredentials) {
  DockerConfigProvider prov(dir_->path() / "nope" / "config.json");
  EXPECT_FALSE(prov.find("reg.example.com", "r"));
}

TEST_F(CredentialsTest, DockerConfigEnvironmentAndAuthConfig) {
  fs::path p = config(R"({"auths":{"reg.io":{"auth":")" + auth_of("fileuser:f") + R"("}}})");
  env_.set("DOCKER_CONFIG", p.parent_path().string());
  env_.set("DOCKER_AUTH_CONFIG", R"({"auths":{"env.io":{"auth":")" + auth_of("envuser:e") + R"("}}})");
  DockerConfigProvider prov;
  EXPECT_EQ(prov.config_file(), p);
  EXPECT_EQ(prov.find("reg.io", "r")->username, "fileuser");
  auto e = prov.find("env.io", "r");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->username, "envuser");
  EXPECT_EQ(e->source, "DOCKER_AUTH_CONFIG");
}

TEST_F(CredentialsTest, HomeDockerConfigWhenNoDockerConfigVariable) {
  env_.unset("DOCKER_CONFIG");
  env_.unset("DOCKER_AUTH_CONFIG");
  env_.set("HOME", dir_->path().string());
  write(dir_->path() / ".docker" / "config.json", R"({"auths":{"h.io":{"auth":")" + auth_of("homeuser:x") + R"("}}})");
  DockerConfigProvider prov;
  EXPECT_EQ(prov.find("h.io", "r")->username, "homeuser");
}

TEST_F(CredentialsTest, CredsStoreHelper) {
  auto p = config(R"({"credsStore":"test","auths":{"reg.example.com":{}}})");
  DockerConfigProvider prov(p);
  auto c = prov.find("reg.example.com", "r");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->username, "helperuser");
  EXPECT_EQ(c->password, "helper-secret");
  EXPECT_EQ(c->source, "docker-credential-test (credsStore in docker config " + p.string() + ")");
  EXPECT_FALSE(prov.find("unknown.example.com", "r"));  // "credentials not found" = none
  auto hub = prov.find("docker.io", "library/python");
  ASSERT_TRUE(hub);  // the helper was asked for https://index.docker.io/v1/
  EXPECT_EQ(hub->username, "helperuser");
}

TEST_F(CredentialsTest, CredHelpersWinOverCredsStoreAndAuths) {
  auto p = config(R"({"credsStore":"test","credHelpers":{"reg.example.com":"other"},
                      "auths":{"reg.example.com":{"auth":")" + auth_of("authsuser:a") + R"("}}})");
  DockerConfigProvider prov(p);
  auto c = prov.find("reg.example.com", "r");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->username, "otheruser");
  EXPECT_NE(c->source.find("docker-credential-other (credHelpers in"), std::string::npos) << c->source;
}

TEST_F(CredentialsTest, HelperTokenUsernameIsIdentityToken) {
  auto p = config(R"({"credHelpers":{"tok.example.com":"test"}})");
  DockerConfigProvider prov(p);
  auto c = prov.find("tok.example.com", "r");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->identity_token, "identity-secret");
  EXPECT_TRUE(c->username.empty());
  EXPECT_TRUE(c->password.empty());
}

TEST_F(CredentialsTest, HelperResultsAreCachedPerProcess) {
  auto p = config(R"({"credsStore":"test"})");
  DockerConfigProvider prov(p);
  ASSERT_TRUE(prov.find("reg.example.com", "a"));
  ASSERT_TRUE(prov.find("reg.example.com", "b"));
  EXPECT_FALSE(prov.find("unknown.example.com", "a"));
  EXPECT_FALSE(prov.find("unknown.example.com", "b"));
  EXPECT_EQ(helper_calls(), 2);
  std::ifstream f(log_);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "get reg.example.com");
}

TEST_F(CredentialsTest, FailingHelperNamesItselfAndStderrOnly) {
  auto p = config(R"({"credHelpers":{"broken.example.com":"test"}})");
  DockerConfigProvider prov(p);
  try {
    prov.find("broken.example.com", "r");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("docker-credential-test"), std::string::npos) << msg;
    EXPECT_NE(msg.find("backend unavailable: keyring locked"), std::string::npos) << msg;
    EXPECT_NE(msg.find("status 3"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("leaked-stdout-secret"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST_F(CredentialsTest, FailingHelperStderrIsOneLineWithSecretsMasked) {
  auto p = config(R"({"credHelpers":{"leaky.example.com":"test"}})");
  DockerConfigProvider prov(p);
  try {
    prov.find("leaky.example.com", "r");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("login to https://me:***@leaky.example.com failed: password=***, token ***"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("ya29"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST_F(CredentialsTest, HelperPrintingGarbageIsAnErrorWithoutTheOutput) {
  auto p = config(R"({"credHelpers":{"garbage.example.com":"test"}})");
  DockerConfigProvider prov(p);
  try {
    prov.find("garbage.example.com", "r");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("secretish"), std::string::npos) << e.what();
  }
}

TEST_F(CredentialsTest, MissingHelperIsAnError) {
  auto p = config(R"({"credsStore":"nosuchhelper"})");
  DockerConfigProvider prov(p);
  try {
    prov.find("reg.example.com", "r");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("docker-credential-nosuchhelper is not on PATH"), std::string::npos)
        << e.what();
  }
}

TEST_F(CredentialsTest, SlowHelperTimesOut) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(run_credential_helper("test", "slow.example.com", "test", std::chrono::milliseconds(300)), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST_F(CredentialsTest, PodmanLongestPrefixWins) {
  fs::path auth = dir_->path() / "auth.json";
  write(auth, R"({"auths":{
      "quay.example.com":{"auth":")" + auth_of("hostuser:h") + R"("},
      "quay.example.com/ns":{"auth":")" + auth_of("nsuser:n") + R"("},
      "quay.example.com/ns/repo":{"auth":")" + auth_of("repouser:r") + R"("}}})");
  PodmanAuthProvider prov({auth});
  EXPECT_EQ(prov.find("quay.example.com", "ns/repo")->username, "repouser");
  EXPECT_EQ(prov.find("quay.example.com", "ns/repo/sub")->username, "repouser");
  EXPECT_EQ(prov.find("quay.example.com", "ns/other")->username, "nsuser");
  EXPECT_EQ(prov.find("quay.example.com", "nsx/other")->username, "hostuser");
  EXPECT_EQ(prov.find("quay.example.com", "ns/repo")->source, "podman auth file " + auth.string());
  EXPECT_FALSE(prov.find("other.example.com", "ns/repo"));
}

TEST_F(CredentialsTest, PodmanFileOrder) {
  fs::path runtime = dir_->path() / "run";
  fs::path home = dir_->path() / "home";
  write(runtime / "containers" / "auth.json", R"({"auths":{"a.io":{"auth":")" + auth_of("runtimeuser:x") + R"("}}})");
  write(home / ".config" / "containers" / "auth.json",
        R"({"auths":{"a.io":{"auth":")" + auth_of("homeuser:x") + R"("},"b.io":{"auth":")" + auth_of("homeb:x") + R"("}}})");
  env_.unset("REGISTRY_AUTH_FILE");
  env_.unset("XDG_CONFIG_HOME");
  env_.set("XDG_RUNTIME_DIR", runtime.string());
  env_.set("HOME", home.string());
  {
    PodmanAuthProvider prov;
    EXPECT_EQ(prov.find("a.io", "r")->username, "runtimeuser");
    EXPECT_EQ(prov.find("b.io", "r")->username, "homeb");
  }
  fs::path explicit_file = dir_->path() / "explicit.json";
  write(explicit_file, R"({"auths":{"c.io":{"auth":")" + auth_of("explicituser:x") + R"("}}})");
  env_.set("REGISTRY_AUTH_FILE", explicit_file.string());
  PodmanAuthProvider only;
  EXPECT_EQ(only.find("c.io", "r")->username, "explicituser");
  EXPECT_FALSE(only.find("a.io", "r"));  // REGISTRY_AUTH_FILE is used alone
}

namespace {
class CountingProvider : public CredentialProvider {
 public:
  explicit CountingProvider(std::optional<Credential> c) : c_(std::move(c)) {}
  std::optional<Credential> find(const std::string&, const std::string&) override {
    ++calls;
    return c_;
  }
  int calls = 0;

 private:
  std::optional<Credential> c_;
};
}  // namespace

TEST(Keychain, OrderAndCaching) {
  Credential second;
  second.username = "u2";
  second.password = "p2";
  auto p1 = std::make_unique<CountingProvider>(std::nullopt);
  auto p2 = std::make_unique<CountingProvider>(second);
  auto* c1 = p1.get();
  auto* c2 = p2.get();
  std::vector<std::unique_ptr<CredentialProvider>> v;
  v.push_back(std::move(p1));
  v.push_back(std::move(p2));
  Keychain k(std::move(v));
  EXPECT_EQ(k.resolve("r.io", "a").username, "u2");
  EXPECT_EQ(k.resolve("r.io", "a").username, "u2");
  EXPECT_EQ(c1->calls, 1);
  EXPECT_EQ(c2->calls, 1);
  k.forget("r.io", "a");
  k.resolve("r.io", "a");
  EXPECT_EQ(c2->calls, 2);
  Keychain moved = std::move(k);  // movable
  EXPECT_EQ(moved.resolve("r.io", "a").username, "u2");
}

TEST(Keychain, ExpiringCredentialsAreAskedForAgain) {
  Credential c;
  c.username = "oauth2accesstoken";
  c.password = "t";
  c.expires_at = std::chrono::system_clock::now() + std::chrono::seconds(30);  // inside the one-minute margin
  auto p = std::make_unique<CountingProvider>(c);
  auto* raw = p.get();
  std::vector<std::unique_ptr<CredentialProvider>> v;
  v.push_back(std::move(p));
  Keychain k(std::move(v));
  k.resolve("gcr.io", "p/i");
  k.resolve("gcr.io", "p/i");
  EXPECT_EQ(raw->calls, 2);
}

TEST(Keychain, NothingFoundIsAnonymous) {
  Keychain k({});
  EXPECT_TRUE(k.resolve("r.io", "a").anonymous());
}
