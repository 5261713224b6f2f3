// Registry auth against real servers started by the auth_servers CTest fixture (tests/fixtures/auth-servers.sh):
// docker-registry with htpasswd, with token auth + tests/fixtures/tokensrv.py, over TLS from a self-signed CA, and
// tests/fixtures/google_standin.py (Google token endpoint, metadata server, and a registry that records the Basic
// credentials it receives). Credentials come from real docker config.json / podman auth.json files, a fake
// docker-credential helper, and Google ADC files / the metadata server.
#include <gtest/gtest.h>

#include "tests/env_guard.h"
#include <openssl/evp.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "net/encoding.h"
#include "net/google_credentials.h"
#include "net/http_client.h"
#include "net/url.h"
#include "registry/credentials.h"
#include "registry/registry_client.h"
#include "support/error.h"
#include "tests/integration/test_support.h"

namespace tt = trainpack::testing;
using trainpack::Error;
using namespace trainpack::net;
using namespace trainpack::registry;
namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> fixture_env() {
  std::string dir = tt::env_or_fail("TRAINPACK_TEST_AUTH_DIR");
  std::ifstream f(dir + "/env");
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (out.empty()) ADD_FAILURE() << "no fixture env in " << dir << "/env: run through ctest -L integration";
  return out;
}

using trainpack::testing::EnvGuard;

std::string sha256_digest(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string out = "sha256:";
  char buf[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", md[i]);
    out += buf;
  }
  return out;
}

HttpOptions quick_options() {
  HttpOptions o;
  o.max_attempts = 2;
  o.initial_backoff = std::chrono::milliseconds(50);
  o.certs_dirs.clear();
  return o;
}

Keychain keychain_of(std::unique_ptr<CredentialProvider> p) {
  std::vector<std::unique_ptr<CredentialProvider>> v;
  v.push_back(std::move(p));
  return Keychain(std::move(v));
}

std::string docker_config(const tt::TempDir& dir, const std::string& registry, const std::string& user,
                          const std::string& password) {
  std::string path = dir / "docker/config.json";
  tt::write_file(path, R"({"auths":{")" + registry + R"(":{"auth":")" + base64_encode(user + ":" + password) +
                           R"("}}})");
  return path;
}

HttpResponse tags(RegistryClient& c, const std::string& repo) {
  HttpRequest r;
  r.url = "/v2/" + repo + "/tags/list";
  return c.send(r, {pull_scope(repo)});
}

// POST + PUT of one small blob (a monolithic upload); returns the PUT status.
long push_blob(RegistryClient& c, const std::string& repo, const std::string& content) {
  HttpRequest start;
  start.method = "POST";
  start.url = "/v2/" + repo + "/blobs/uploads/";
  start.idempotent = false;
  HttpResponse r = c.send(start, {push_scope(repo)});
  EXPECT_EQ(r.status, 202) << describe_registry_error(r);
  if (r.status != 202) return r.status;
  std::string location = resolve_url(r.url.empty() ? c.base_url() + start.url : r.url, r.header("location"));
  HttpRequest put;
  put.method = "PUT";
  put.url = location + (location.find('?') == std::string::npos ? "?" : "&") + "digest=" + sha256_digest(content);
  put.headers = {{"Content-Type", "application/octet-stream"}};
  put.body = content;
  return c.send(put, {push_scope(repo)}).status;
}

std::string everything(const Error& e) { return std::string(e.what()) + " | " + e.hint(); }

// A docker-credential-test helper on PATH that answers with the given user and password.
void install_helper(EnvGuard& env, const tt::TempDir& dir, const std::string& user, const std::string& password) {
  std::string bin = dir / "bin";
  fs::create_directories(bin);
  std::string script = bin + "/docker-credential-test";
  tt::write_file(script, "#!/bin/sh\ncat >/dev/null\necho '{\"ServerURL\":\"x\",\"Username\":\"" + user +
                             "\",\"Secret\":\"" + password + "\"}'\n");
  ::chmod(script.c_str(), 0755);
  const char* path = std::getenv("PATH");
  env.set("PATH", bin + ":" + (path ? path : "/usr/bin:/bin"));
  clear_credential_helper_cache();
}

}  // namespace

// ---- htpasswd (Basic) -----------------------------------------------------------------------------------------------

TEST(AuthHtpasswd, AnonymousIsRefusedWithALoginHint) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_HTPASSWD_REGISTRY"];
  HttpClient http(quick_options());
  Keychain k({});
  RegistryClient c(http, k, reg);
  try {
    tags(c, "base/python");
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()), reg + " denied pull from base/python: anonymous access was refused (401 UNAUTHORIZED)");
    EXPECT_NE(e.hint().find("docker login " + reg), std::string::npos) << e.hint();
  }
}

TEST(AuthHtpasswd, DockerConfigPullAndPush) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_HTPASSWD_REGISTRY"];
  tt::TempDir dir("auth-htpasswd");
  std::string cfg = docker_config(dir, reg, "testuser", "testpass");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  EXPECT_EQ(tags(c, "auth-test/basic").status, 404);  // authenticated; the repository does not exist yet
  EXPECT_EQ(push_blob(c, "auth-test/basic", "hello basic auth\n"), 201);
  EXPECT_EQ(c.credential_for({push_scope("auth-test/basic")}).describe(), "testuser from docker config " + cfg);
}

TEST(AuthHtpasswd, WrongPasswordNamesSourceAndIdentity) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_HTPASSWD_REGISTRY"];
  tt::TempDir dir("auth-htpasswd");
  std::string cfg = docker_config(dir, reg, "testuser", "wrong-password-xyz");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  try {
    push_blob(c, "base/python", "x");
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()), reg + " denied push to base/python: authentication as testuser from docker config " +
                                         cfg + " failed (401 UNAUTHORIZED)");
    EXPECT_EQ(everything(e).find("wrong-password-xyz"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(AuthHtpasswd, CredentialHelperFromCredsStore) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_HTPASSWD_REGISTRY"];
  tt::TempDir dir("auth-helper");
  EnvGuard guard;
  install_helper(guard, dir, "testuser", "testpass");
  std::string cfg = dir / "docker/config.json";
  tt::write_file(cfg, R"({"credsStore":"test"})");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  EXPECT_EQ(push_blob(c, "auth-test/helper", "from a credential helper\n"), 201);
  EXPECT_EQ(c.credential_for({pull_scope("x")}).source, "docker-credential-test (credsStore in docker config " + cfg + ")");
  clear_credential_helper_cache();
}

// ---- token auth -------------------------------------------------------------------------------------------------------

namespace {
nlohmann::json token_calls(const std::string& server) {
  HttpClient http(quick_options());
  HttpRequest r;
  r.url = "http://" + server + "/_calls";
  return nlohmann::json::parse(http.send(r).body);
}
}  // namespace

TEST(AuthToken, AnonymousMayPullButNotPush) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_TOKEN_REGISTRY"];
  HttpClient http(quick_options());
  Keychain k({});
  RegistryClient c(http, k, reg);
  HttpResponse r = tags(c, "auth-test/anon");
  EXPECT_EQ(r.status, 404) << describe_registry_error(r);  // pull allowed: the repository is just unknown
  EXPECT_NE(describe_registry_error(r).find("NAME_UNKNOWN"), std::string::npos);
  try {
    push_blob(c, "auth-test/anon", "x");
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()), reg + " denied push to auth-test/anon: anonymous access was refused (401 UNAUTHORIZED)");
  }
}

TEST(AuthToken, BasicCredentialsPushAndOneTokenPerScopeSet) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_TOKEN_REGISTRY"];
  tt::TempDir dir("auth-token");
  std::string cfg = docker_config(dir, reg, "testuser", "testpass");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  int before = token_calls(env["TRAINPACK_TEST_TOKEN_SERVER"])["GET"];
  EXPECT_EQ(tags(c, "auth-test/token").status, 404);
  EXPECT_EQ(push_blob(c, "auth-test/token", "token auth blob\n"), 201);
  EXPECT_EQ(push_blob(c, "auth-test/token", "token auth blob 2\n"), 201);
  EXPECT_EQ(tags(c, "auth-test/token").status, 404);
  // One token for pull, one for the union with push; everything after that comes from the cache.
  EXPECT_EQ(token_calls(env["TRAINPACK_TEST_TOKEN_SERVER"])["GET"].get<int>() - before, 2);
}

TEST(AuthToken, PodmanAuthFile) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_TOKEN_REGISTRY"];
  tt::TempDir dir("auth-podman");
  std::string authfile = dir / "auth.json";
  tt::write_file(authfile, R"({"auths":{")" + reg + R"(/auth-test":{"auth":")" + base64_encode("testuser:testpass") +
                               R"("}}})");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<PodmanAuthProvider>(std::vector<fs::path>{authfile}));
  RegistryClient c(http, k, reg);
  EXPECT_EQ(push_blob(c, "auth-test/podman", "podman auth file\n"), 201);
}

TEST(AuthToken, IdentityTokenUsesTheOAuthPost) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_TOKEN_REGISTRY"];
  tt::TempDir dir("auth-idt");
  std::string cfg = dir / "docker/config.json";
  tt::write_file(cfg, R"({"auths":{")" + reg + R"(":{"auth":")" + base64_encode("<token>:") +
                          R"(","identitytoken":"test-identity-token"}}})");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  int before = token_calls(env["TRAINPACK_TEST_TOKEN_SERVER"])["POST"];
  EXPECT_EQ(push_blob(c, "auth-test/idt", "identity token\n"), 201);
  EXPECT_GE(token_calls(env["TRAINPACK_TEST_TOKEN_SERVER"])["POST"].get<int>() - before, 1);
}

TEST(AuthToken, UnknownIdentityTokenFallsBackToGetAndIsDeniedPush) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_TOKEN_REGISTRY"];
  tt::TempDir dir("auth-idt");
  std::string cfg = dir / "docker/config.json";
  tt::write_file(cfg, R"({"auths":{")" + reg + R"(":{"identitytoken":"stale-identity-secret"}}})");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  EXPECT_EQ(tags(c, "auth-test/idt2").status, 404);  // POST 404 → GET (anonymous) → pull only
  try {
    push_blob(c, "auth-test/idt2", "x");
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()), reg + " denied push to auth-test/idt2: authentication as an identity token from docker config " +
                                         cfg + " failed (401 UNAUTHORIZED)");
    EXPECT_EQ(everything(e).find("stale-identity-secret"), std::string::npos);
  }
}

TEST(AuthToken, WrongPasswordIsRefusedByTheTokenServer) {
  auto env = fixture_env();
  std::string reg = env["TRAINPACK_TEST_TOKEN_REGISTRY"];
  tt::TempDir dir("auth-token");
  std::string cfg = docker_config(dir, reg, "testuser", "bad-token-pass");
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  try {
    push_blob(c, "base/python", "x");
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()), reg + " denied push to base/python: authentication as testuser from docker config " +
                                         cfg + " failed (token server " + env["TRAINPACK_TEST_TOKEN_SERVER"] +
                                         " answered 401 UNAUTHORIZED)");
    EXPECT_EQ(everything(e).find("bad-token-pass"), std::string::npos);
  }
}

// ---- TLS ----------------------------------------------------------------------------------------------------------------

namespace {
std::string tls_registry(std::map<std::string, std::string>& env) {
  std::string reg = env["TRAINPACK_TEST_TLS_REGISTRY"];
  return reg;
}
}  // namespace

TEST(AuthTls, CaFileAuthenticatedPushAnonymousRefused) {
  auto env = fixture_env();
  std::string reg = tls_registry(env);
  if (reg.empty()) GTEST_SKIP() << "no host name or address other than localhost for the TLS registry";
  tt::TempDir dir("auth-tls");
  HttpOptions o = quick_options();
  o.ca_file = env["TRAINPACK_TEST_TLS_CA"];
  HttpClient http(o);
  ASSERT_EQ(http.scheme_for(reg), "https");
  {
    Keychain anon({});
    RegistryClient c(http, anon, reg);
    EXPECT_EQ(c.base_url(), "https://" + reg);
    EXPECT_THROW(tags(c, "auth-test/tls"), AuthError);
  }
  std::string cfg = docker_config(dir, reg, "testuser", "testpass");
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  EXPECT_EQ(push_blob(c, "auth-test/tls", "over tls\n"), 201);
}

TEST(AuthTls, CertsDirectory) {
  auto env = fixture_env();
  std::string reg = tls_registry(env);
  if (reg.empty()) GTEST_SKIP() << "no host name or address other than localhost for the TLS registry";
  tt::TempDir dir("auth-tls");
  fs::create_directories(dir.path() / "certs.d" / reg);
  fs::copy_file(env["TRAINPACK_TEST_TLS_CA"], dir.path() / "certs.d" / reg / "ca.crt");
  HttpOptions o = quick_options();
  o.certs_dirs = {dir.path() / "certs.d"};
  HttpClient http(o);
  std::string cfg = docker_config(dir, reg, "testuser", "testpass");
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  EXPECT_EQ(push_blob(c, "auth-test/tls-certsd", "certs.d\n"), 201);
}

TEST(AuthTls, UnknownCaIsATlsErrorNotAnAuthError) {
  auto env = fixture_env();
  std::string reg = tls_registry(env);
  if (reg.empty()) GTEST_SKIP() << "no host name or address other than localhost for the TLS registry";
  HttpClient http(quick_options());
  tt::TempDir dir("auth-tls");
  std::string cfg = docker_config(dir, reg, "testuser", "tls-secret-pass");
  Keychain k = keychain_of(std::make_unique<DockerConfigProvider>(cfg));
  RegistryClient c(http, k, reg);
  try {
    tags(c, "auth-test/tls");
    FAIL() << "expected Error";
  } catch (const AuthError& e) {
    FAIL() << "not an auth error: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(everything(e).find("tls-secret-pass"), std::string::npos);
  }
}

// ---- Google ---------------------------------------------------------------------------------------------------------------

namespace {

struct GoogleSetup {
  EnvGuard env;
  tt::TempDir dir{"auth-google"};
  explicit GoogleSetup() {
    env.unset("GOOGLE_APPLICATION_CREDENTIALS");
    env.set("CLOUDSDK_CONFIG", dir / "gcloud");
    env.set("HOME", dir / "home");
    env.set("NO_GCE_CHECK", "True");
    env.unset("GCE_METADATA_HOST");
    env.unset("GCE_METADATA_ROOT");
    env.unset("GCE_METADATA_IP");
  }
};

// A Keychain whose Google provider applies to the stand-in registry (127.0.0.1 is not a Google host).
Keychain google_keychain(HttpClient& http) {
  GoogleAdcOptions o;
  o.http = [&http](const HttpRequest& r) { return http.send(r); };
  o.retry_delay = std::chrono::milliseconds(10);
  return keychain_of(std::make_unique<GoogleAdcProvider>(o, [](const std::string&) { return true; }));
}

nlohmann::json record(const std::string& standin) {
  HttpClient http(quick_options());
  HttpRequest r;
  r.url = "http://" + standin + "/_record";
  return nlohmann::json::parse(http.send(r).body);
}

}  // namespace

TEST(AuthGoogle, ServiceAccountTokenReachesTheRegistryAsOauth2accesstoken) {
  auto fx = fixture_env();
  std::string reg = fx["TRAINPACK_TEST_GOOGLE_STANDIN"];
  GoogleSetup g;
  g.env.set("GOOGLE_APPLICATION_CREDENTIALS", fx["TRAINPACK_TEST_GOOGLE_SA_KEY"]);
  HttpClient http(quick_options());
  Keychain k = google_keychain(http);
  RegistryClient c(http, k, reg);
  Credential cred = c.credential_for({pull_scope("proj/repo/img")});
  EXPECT_EQ(cred.username, "oauth2accesstoken");
  EXPECT_EQ(cred.password.rfind("ya29.sa-", 0), 0u);
  EXPECT_EQ(cred.describe(), "trainpack-test@trainpack-test.iam.gserviceaccount.com from Google ADC (service_account " +
                                 fx["TRAINPACK_TEST_GOOGLE_SA_KEY"] + ")");
  EXPECT_EQ(tags(c, "proj/repo/img").status, 200);
  auto rec = record(reg);
  ASSERT_FALSE(rec["passwords"].empty());
  EXPECT_EQ(rec["users"].back(), "oauth2accesstoken");
  EXPECT_EQ(rec["passwords"].back(), cred.password);
  EXPECT_EQ(push_blob(c, "proj/repo/img", "pushed with a Google access token\n"), 201);
}

TEST(AuthGoogle, AuthorizedUserFromGcloudConfigDir) {
  auto fx = fixture_env();
  std::string reg = fx["TRAINPACK_TEST_GOOGLE_STANDIN"];
  GoogleSetup g;
  fs::create_directories(g.dir.path() / "gcloud");
  fs::copy_file(fx["TRAINPACK_TEST_GOOGLE_USER_ADC"], g.dir.path() / "gcloud" / "application_default_credentials.json");
  HttpClient http(quick_options());
  Keychain k = google_keychain(http);
  RegistryClient c(http, k, reg);
  EXPECT_EQ(tags(c, "proj/repo/user").status, 200);
  auto rec = record(reg);
  EXPECT_EQ(rec["passwords"].back().get<std::string>().rfind("ya29.user-", 0), 0u);
  EXPECT_EQ(c.credential_for({pull_scope("proj/repo/user")}).identity, "dev@example.com");
}

TEST(AuthGoogle, RevokedUserCredentialsSayLogInAgain) {
  auto fx = fixture_env();
  std::string reg = fx["TRAINPACK_TEST_GOOGLE_STANDIN"];
  GoogleSetup g;
  g.env.set("GOOGLE_APPLICATION_CREDENTIALS", fx["TRAINPACK_TEST_GOOGLE_REVOKED_ADC"]);
  HttpClient http(quick_options());
  Keychain k = google_keychain(http);
  RegistryClient c(http, k, reg);
  try {
    tags(c, "proj/repo/img");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    std::string all = everything(e);
    EXPECT_NE(std::string(e.what()).find("invalid_grant"), std::string::npos) << all;
    EXPECT_NE(e.hint().find("gcloud auth application-default login"), std::string::npos) << all;
    EXPECT_EQ(all.find("revoked-refresh-token"), std::string::npos) << all;
    EXPECT_EQ(all.find("test-client-secret"), std::string::npos) << all;
  }
}

TEST(AuthGoogle, MetadataServer) {
  auto fx = fixture_env();
  std::string reg = fx["TRAINPACK_TEST_GOOGLE_STANDIN"];
  GoogleSetup g;
  g.env.unset("NO_GCE_CHECK");
  g.env.set("GCE_METADATA_HOST", reg);
  HttpClient http(quick_options());
  Keychain k = google_keychain(http);
  RegistryClient c(http, k, reg);
  Credential cred = c.credential_for({pull_scope("proj/repo/img")});
  EXPECT_EQ(cred.password.rfind("ya29.gce-", 0), 0u);
  EXPECT_EQ(cred.describe(), "vm-sa@trainpack-test.iam.gserviceaccount.com from Google ADC (metadata server " + reg + ")");
  EXPECT_EQ(tags(c, "proj/repo/img").status, 200);
  EXPECT_EQ(record(reg)["passwords"].back(), cred.password);
}

TEST(AuthGoogle, MetadataServerWithoutFlavorIsIgnored) {
  auto fx = fixture_env();
  GoogleSetup g;
  g.env.unset("NO_GCE_CHECK");
  // The token server's host answers HTTP but is no metadata server (no Metadata-Flavor in its answers).
  g.env.set("GCE_METADATA_HOST", fx["TRAINPACK_TEST_TOKEN_SERVER"]);
  GoogleAdcOptions o;
  EXPECT_EQ(GoogleCredentials::find_default(o), nullptr);
}

TEST(AuthGoogle, RefusedAccessTokenNamesIdentityButNoSecret) {
  auto fx = fixture_env();
  std::string reg = fx["TRAINPACK_TEST_GOOGLE_STANDIN"];
  class Bogus : public CredentialProvider {
   public:
    std::optional<Credential> find(const std::string&, const std::string&) override {
      Credential c;
      c.username = "oauth2accesstoken";
      c.password = "ya29.bogus-secret-token";
      c.identity = "someone@example.iam.gserviceaccount.com";
      c.source = "Google ADC (service_account /k.json)";
      return c;
    }
  };
  HttpClient http(quick_options());
  Keychain k = keychain_of(std::make_unique<Bogus>());
  RegistryClient c(http, k, reg);
  try {
    push_blob(c, "proj/repo/img", "x");
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()),
              reg + " denied push to proj/repo/img: authentication as someone@example.iam.gserviceaccount.com from "
                    "Google ADC (service_account /k.json) failed (token server " + reg + " answered 401 UNAUTHORIZED)");
    EXPECT_EQ(everything(e).find("bogus-secret"), std::string::npos);
  }
}

// ---- the standard chain ---------------------------------------------------------------------------------------------

TEST(AuthEnvironment, KeychainFromEnvironment) {
  auto fx = fixture_env();
  std::string basic_reg = fx["TRAINPACK_TEST_HTPASSWD_REGISTRY"];
  std::string token_reg = fx["TRAINPACK_TEST_TOKEN_REGISTRY"];
  tt::TempDir dir("auth-env");
  EnvGuard env;
  std::string cfg = docker_config(dir, basic_reg, "testuser", "testpass");
  env.set("DOCKER_CONFIG", fs::path(cfg).parent_path().string());
  env.unset("DOCKER_AUTH_CONFIG");
  std::string authfile = dir / "podman/auth.json";
  tt::write_file(authfile, R"({"auths":{")" + token_reg + R"(":{"auth":")" + base64_encode("testuser:testpass") + R"("}}})");
  env.set("REGISTRY_AUTH_FILE", authfile);
  env.set("GOOGLE_APPLICATION_CREDENTIALS", fx["TRAINPACK_TEST_GOOGLE_SA_KEY"]);
  env.set("NO_GCE_CHECK", "True");
  HttpClient http(quick_options());
  Keychain k = Keychain::from_environment(std::make_shared<DefaultGoogleCredentials>(google_adc_options(http)));
  EXPECT_EQ(k.resolve(basic_reg, "a/b").describe(), "testuser from docker config " + cfg);
  EXPECT_EQ(k.resolve(token_reg, "a/b").describe(), "testuser from podman auth file " + authfile);
  EXPECT_TRUE(k.resolve("127.0.0.1:1", "a/b").anonymous());  // no Google ADC for non-Google hosts
  Credential g = k.resolve("us-docker.pkg.dev", "proj/repo/img");
  EXPECT_EQ(g.username, "oauth2accesstoken");
  EXPECT_EQ(g.password.rfind("ya29.sa-", 0), 0u);  // minted by the stand-in named as token_uri in the key file
  EXPECT_EQ(g.identity, "trainpack-test@trainpack-test.iam.gserviceaccount.com");
  // Pushing through the standard chain.
  RegistryClient c(http, k, token_reg);
  EXPECT_EQ(push_blob(c, "auth-test/env", "standard chain\n"), 201);
}
