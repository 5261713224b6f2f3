// Google Application Default Credentials against fake token endpoints and a fake metadata server (no sockets):
// JWT signing verified with OpenSSL, each credential type, caching, discovery order and messages without secrets.
#include <gtest/gtest.h>

#include "tests/env_guard.h"
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "net/encoding.h"
#include "net/google_credentials.h"
#include "registry/credentials.h"
#include "support/error.h"
#include "support/fs.h"

using namespace trainpack;
using namespace trainpack::net;
using namespace trainpack::registry;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using trainpack::testing::EnvGuard;

struct KeyPair {
  std::string private_pem, public_pem;
};

const KeyPair& test_key() {
  static KeyPair kp = [] {
    KeyPair k;
    EVP_PKEY* pkey = EVP_RSA_gen(2048);
    BIO* b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, pkey, nullptr, nullptr, 0, nullptr, nullptr);  // PKCS#8
    char* data = nullptr;
    long n = BIO_get_mem_data(b, &data);
    k.private_pem.assign(data, static_cast<size_t>(n));
    BIO_free(b);
    b = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(b, pkey);
    n = BIO_get_mem_data(b, &data);
    k.public_pem.assign(data, static_cast<size_t>(n));
    BIO_free(b);
    EVP_PKEY_free(pkey);
    return k;
  }();
  return kp;
}

std::string b64url_decode(std::string s) {
  for (auto& c : s) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  return base64_decode(s).value_or("");
}

// Verifies an RS256 JWT with a PEM public key; returns the claims or nullopt.
std::optional<json> verify_jwt(const std::string& jwt, const std::string& public_pem, json* header = nullptr) {
  size_t d1 = jwt.find('.'), d2 = jwt.rfind('.');
  if (d1 == std::string::npos || d1 == d2) return std::nullopt;
  std::string input = jwt.substr(0, d2);
  std::string sig = b64url_decode(jwt.substr(d2 + 1));
  BIO* b = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* pub = PEM_read_bio_PUBKEY(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = pub && EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, pub) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(pub);
  if (!ok) return std::nullopt;
  if (header) *header = json::parse(b64url_decode(jwt.substr(0, d1)));
  return json::parse(b64url_decode(jwt.substr(d1 + 1, d2 - d1 - 1)));
}

std::map<std::string, std::string> form_of(const std::string& body) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  auto decode = [](const std::string& v) {
    std::string o;
    for (size_t j = 0; j < v.size(); ++j) {
      if (v[j] == '%' && j + 2 < v.size()) {
        o += static_cast<char>(std::stoi(v.substr(j + 1, 2), nullptr, 16));
        j += 2;
      } else {
        o += v[j];
      }
    }
    return o;
  };
  while (i <= body.size()) {
    size_t amp = body.find('&', i);
    if (amp == std::string::npos) amp = body.size();
    std::string kv = body.substr(i, amp - i);
    size_t eq = kv.find('=');
    if (!kv.empty()) out[decode(kv.substr(0, eq))] = eq == std::string::npos ? "" : decode(kv.substr(eq + 1));
    i = amp + 1;
  }
  return out;
}

std::string header_of(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return {};
}

HttpResponse respond(long status, const std::string& body, std::vector<std::pair<std::string, std::string>> h = {}) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  r.headers = std::move(h);
  return r;
}

class GoogleAdc : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<ScopedDir>(make_temp_dir({}, "tp-google-test"));
    env_.unset("GOOGLE_APPLICATION_CREDENTIALS");
    env_.set("CLOUDSDK_CONFIG", (dir_->path() / "gcloud").string());
    env_.set("HOME", (dir_->path() / "home").string());
    env_.unset("GCE_METADATA_HOST");
    env_.unset("GCE_METADATA_ROOT");
    env_.unset("GCE_METADATA_IP");
    env_.set("NO_GCE_CHECK", "True");
    options_.retry_delay = std::chrono::milliseconds(0);
    options_.http = [this](const HttpRequest& r) {
      requests_.push_back(r);
      return handler_(r);
    };
    options_.metadata_http = [this](const HttpRequest& r) {
      metadata_requests_.push_back(r);
      return metadata_(r);
    };
    metadata_ = [](const HttpRequest&) -> HttpResponse { throw Error("no metadata server here"); };
  }

  fs::path write_json(const std::string& name, const json& j) {
    fs::path p = dir_->path() / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << j.dump(2);
    return p;
  }

  json service_account(const std::string& token_uri = "https://oauth.test/token") {
    return {{"type", "service_account"},         {"project_id", "p"},
            {"private_key_id", "kid-123"},       {"private_key", test_key().private_pem},
            {"client_email", "sa@p.iam.gserviceaccount.com"}, {"client_id", "1"},
            {"token_uri", token_uri}};
  }

  // A token endpoint that checks the JWT like Google does.
  HttpResponse sa_endpoint(const HttpRequest& r) {
    auto form = form_of(r.body);
    if (form["grant_type"] != "urn:ietf:params:oauth:grant-type:jwt-bearer")
      return respond(400, R"({"error":"unsupported_grant_type"})");
    json header;
    auto claims = verify_jwt(form["assertion"], test_key().public_pem, &header);
    if (!claims) return respond(400, R"({"error":"invalid_grant","error_description":"Invalid JWT Signature."})");
    last_claims_ = *claims;
    last_header_ = header;
    return respond(200, R"({"access_token":"ya29.sa-token-)" + std::to_string(++issued_) +
                            R"(","expires_in":"3599","token_type":"Bearer"})");
  }

  EnvGuard env_;
  std::unique_ptr<ScopedDir> dir_;
  GoogleAdcOptions options_;
  std::vector<HttpRequest> requests_, metadata_requests_;
  std::function<HttpResponse(const HttpRequest&)> handler_ = [](const HttpRequest&) { return respond(500, ""); };
  std::function<HttpResponse(const HttpRequest&)> metadata_;
  json last_claims_, last_header_;
  int issued_ = 0;
};

}  // namespace

TEST(GoogleHosts, Recognised) {
  for (const char* h : {"gcr.io", "us.gcr.io", "eu.gcr.io", "marketplace.gcr.io", "us-docker.pkg.dev",
                        "europe-west4-docker.pkg.dev", "docker.us-central1.rep.pkg.dev", "gcr.io:443"})
    EXPECT_TRUE(is_google_registry_host(h)) << h;
  for (const char* h : {"docker.io", "ghcr.io", "127.0.0.1:5000", "notgcr.io", "us-python.pkg.dev", "pkg.dev"})
    EXPECT_FALSE(is_google_registry_host(h)) << h;
}

TEST(GoogleJwt, SignatureVerifiesWithThePublicKey) {
  std::string header = R"({"alg":"RS256","typ":"JWT"})";
  std::string claims = R"({"iss":"a","n":1})";
  std::string jwt = sign_jwt_rs256(header, claims, test_key().private_pem);
  json h;
  auto c = verify_jwt(jwt, test_key().public_pem, &h);
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)["iss"], "a");
  EXPECT_EQ(h["alg"], "RS256");
  EXPECT_EQ(jwt.find('='), std::string::npos);  // unpadded base64url
  // A flipped byte in the claims breaks the signature.
  std::string tampered = jwt;
  tampered[jwt.find('.') + 2] ^= 1;
  EXPECT_FALSE(verify_jwt(tampered, test_key().public_pem));
  EXPECT_THROW(sign_jwt_rs256(header, claims, "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n"), Error);
}

TEST_F(GoogleAdc, ServiceAccountExchangesASignedJwt) {
  auto path = write_json("sa.json", service_account());
  handler_ = [this](const HttpRequest& r) { return sa_endpoint(r); };
  auto creds = GoogleCredentials::from_file(path, options_);
  ASSERT_EQ(creds->kind(), "service_account");
  auto t = creds->token();
  EXPECT_EQ(t.token, "ya29.sa-token-1");
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].method, "POST");
  EXPECT_EQ(requests_[0].url, "https://oauth.test/token");
  EXPECT_EQ(header_of(requests_[0], "Content-Type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(last_header_["kid"], "kid-123");
  EXPECT_EQ(last_claims_["iss"], "sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(last_claims_["aud"], "https://oauth.test/token");
  EXPECT_EQ(last_claims_["scope"], kGoogleCloudPlatformScope);
  EXPECT_EQ(last_claims_["exp"].get<long long>() - last_claims_["iat"].get<long long>(), 3600);
  // expires_in arrived as a string: 3599 s from now.
  auto left = std::chrono::duration_cast<std::chrono::seconds>(t.expires_at - std::chrono::system_clock::now());
  EXPECT_GT(left.count(), 3500);
  // Cached.
  EXPECT_EQ(creds->token().token, "ya29.sa-token-1");
  EXPECT_EQ(requests_.size(), 1u);
  EXPECT_EQ(creds->account(), "sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(creds->describe(), "Google ADC (service_account " + path.string() + ")");
}

TEST_F(GoogleAdc, TokensAreRefreshedShortlyBeforeExpiry) {
  auto now = std::chrono::system_clock::now();
  options_.clock = [&] { return now; };
  auto path = write_json("sa.json", service_account());
  handler_ = [this](const HttpRequest& r) { return sa_endpoint(r); };
  auto creds = GoogleCredentials::from_file(path, options_);
  EXPECT_EQ(creds->token().token, "ya29.sa-token-1");
  now += std::chrono::minutes(50);
  EXPECT_EQ(creds->token().token, "ya29.sa-token-1");
  now += std::chrono::minutes(6);  // 56 min: within five minutes of expiry
  EXPECT_EQ(creds->token().token, "ya29.sa-token-2");
}

TEST_F(GoogleAdc, ServiceAccountRefusedNamesEmailNotKey) {
  auto sa = service_account();
  auto path = write_json("sa.json", sa);
  handler_ = [](const HttpRequest&) {
    return respond(400, R"({"error":"invalid_grant","error_description":"Invalid JWT Signature."})");
  };
  try {
    GoogleCredentials::from_file(path, options_)->token();
    FAIL() << "expected Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("sa@p.iam.gserviceaccount.com"), std::string::npos) << msg;
    EXPECT_NE(msg.find("invalid_grant: Invalid JWT Signature."), std::string::npos) << msg;
    EXPECT_EQ(msg.find("PRIVATE KEY"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("assertion"), std::string::npos) << msg;
  }
}

TEST_F(GoogleAdc, TransientFailuresAreRetried) {
  auto path = write_json("sa.json", service_account());
  int calls = 0;
  handler_ = [&](const HttpRequest& r) {
    if (++calls == 1) return respond(503, R"({"error":"temporarily_unavailable"})");
    return sa_endpoint(r);
  };
  EXPECT_EQ(GoogleCredentials::from_file(path, options_)->token().token, "ya29.sa-token-1");
  EXPECT_EQ(calls, 2);
}

TEST_F(GoogleAdc, AuthorizedUserRefreshGrant) {
  auto path = write_json("gcloud/application_default_credentials.json",
                         {{"type", "authorized_user"},
                          {"client_id", "cid.apps.googleusercontent.com"},
                          {"client_secret", "client-secret-value"},
                          {"refresh_token", "1//refresh-secret"},
                          {"account", "dev@example.com"}});
  handler_ = [](const HttpRequest& r) {
    auto f = form_of(r.body);
    if (f["grant_type"] != "refresh_token" || f["refresh_token"] != "1//refresh-secret" ||
        f["client_secret"] != "client-secret-value")
      return respond(400, R"({"error":"invalid_request"})");
    return respond(200, R"({"access_token":"ya29.user","expires_in":3599})");
  };
  auto creds = GoogleCredentials::find_default(options_);  // found via CLOUDSDK_CONFIG
  ASSERT_TRUE(creds);
  EXPECT_EQ(creds->kind(), "authorized_user");
  EXPECT_EQ(creds->location(), path.string());
  EXPECT_EQ(creds->token().token, "ya29.user");
  EXPECT_EQ(requests_.at(0).url, kGoogleDefaultTokenUri);
  EXPECT_EQ(creds->account(), "dev@example.com");
}

TEST_F(GoogleAdc, AuthorizedUserInvalidGrantSaysLogInAgain) {
  auto path = write_json("adc.json", {{"type", "authorized_user"},
                                      {"client_id", "cid"},
                                      {"client_secret", "client-secret-value"},
                                      {"refresh_token", "1//revoked-secret"},
                                      {"token_uri", "https://oauth.test/token"}});
  for (const char* code : {"invalid_grant", "invalid_rapt"}) {
    handler_ = [code](const HttpRequest&) {
      return respond(400, std::string(R"({"error":")") + code + R"(","error_description":"Token has been expired or revoked."})");
    };
    try {
      GoogleCredentials::from_file(path, options_)->token();
      FAIL() << "expected Error";
    } catch (const Error& e) {
      std::string all = std::string(e.what()) + e.hint();
      EXPECT_NE(all.find(code), std::string::npos) << all;
      EXPECT_NE(e.hint().find("gcloud auth application-default login"), std::string::npos) << e.hint();
      EXPECT_NE(all.find(path.string()), std::string::npos) << all;
      EXPECT_EQ(all.find("revoked-secret"), std::string::npos) << all;
      EXPECT_EQ(all.find("client-secret-value"), std::string::npos) << all;
    }
  }
}

TEST_F(GoogleAdc, ExplicitFileWinsAndMustExist) {
  write_json("gcloud/application_default_credentials.json", {{"type", "authorized_user"}});
  auto sa = write_json("sa.json", service_account());
  env_.set("GOOGLE_APPLICATION_CREDENTIALS", sa.string());
  auto creds = GoogleCredentials::find_default(options_);
  ASSERT_TRUE(creds);
  EXPECT_EQ(creds->kind(), "service_account");
  env_.set("GOOGLE_APPLICATION_CREDENTIALS", (dir_->path() / "missing.json").string());
  EXPECT_THROW(GoogleCredentials::find_default(options_), Error);
}

TEST_F(GoogleAdc, NoCredentialsAnywhere) {
  EXPECT_EQ(GoogleCredentials::find_default(options_), nullptr);
  EXPECT_TRUE(metadata_requests_.empty());  // NO_GCE_CHECK
}

TEST_F(GoogleAdc, MetadataServerWithFlavorCheck) {
  env_.unset("NO_GCE_CHECK");
  env_.set("GCE_METADATA_HOST", "metadata.test:8080");
  metadata_ = [](const HttpRequest& r) {
    if (header_of(r, "Metadata-Flavor") != "Google") return respond(403, "missing flavor");
    std::vector<std::pair<std::string, std::string>> h{{"metadata-flavor", "Google"}};
    if (r.url == "http://metadata.test:8080/") return respond(200, "computeMetadata/\n", h);
    if (r.url == "http://metadata.test:8080/computeMetadata/v1/instance/service-accounts/default/token")
      return respond(200, R"({"access_token":"ya29.gce","expires_in":3000,"token_type":"Bearer"})", h);
    if (r.url == "http://metadata.test:8080/computeMetadata/v1/instance/service-accounts/default/email")
      return respond(200, "vm-sa@p.iam.gserviceaccount.com", h);
    return respond(404, "", h);
  };
  auto creds = GoogleCredentials::find_default(options_);
  ASSERT_TRUE(creds);
  EXPECT_EQ(creds->kind(), "metadata server");
  EXPECT_EQ(creds->token().token, "ya29.gce");
  EXPECT_EQ(creds->account(), "vm-sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(creds->describe(), "Google ADC (metadata server metadata.test:8080)");
  for (const auto& r : metadata_requests_) EXPECT_TRUE(r.total_timeout.has_value());
}

TEST_F(GoogleAdc, SomethingThatIsNotAMetadataServer) {
  env_.unset("NO_GCE_CHECK");
  env_.set("GCE_METADATA_HOST", "impostor.test");
  metadata_ = [](const HttpRequest&) { return respond(200, R"({"access_token":"stolen"})"); };
  EXPECT_EQ(GoogleCredentials::find_default(options_), nullptr);
  // Used directly, it is refused too.
  EXPECT_THROW(GoogleCredentials::from_metadata_server("impostor.test", options_)->token(), Error);
}

TEST_F(GoogleAdc, ExternalAccountFileSourceWithImpersonation) {
  fs::path subject = dir_->path() / "oidc.json";
  std::ofstream(subject) << R"({"id_token":"subject-jwt-secret"})";
  auto path = write_json(
      "wif.json",
      {{"type", "external_account"},
       {"audience", "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x"},
       {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
       {"token_url", "https://sts.test/v1/token"},
       {"service_account_impersonation_url",
        "https://iam.test/v1/projects/-/serviceAccounts/builder@p.iam.gserviceaccount.com:generateAccessToken"},
       {"credential_source",
        {{"file", subject.string()}, {"format", {{"type", "json"}, {"subject_token_field_name", "id_token"}}}}}});
  handler_ = [](const HttpRequest& r) {
    if (r.url == "https://sts.test/v1/token") {
      auto f = form_of(r.body);
      if (f["grant_type"] != "urn:ietf:params:oauth:grant-type:token-exchange" ||
          f["subject_token"] != "subject-jwt-secret" ||
          f["requested_token_type"] != "urn:ietf:params:oauth:token-type:access_token" ||
          f["audience"].find("workloadIdentityPools/p") == std::string::npos)
        return respond(400, R"({"error":"invalid_request"})");
      return respond(200, R"({"access_token":"federated-token","expires_in":3600,"token_type":"Bearer"})");
    }
    if (header_of(r, "Authorization") != "Bearer federated-token") return respond(401, "{}");
    auto body = json::parse(r.body);
    if (body["lifetime"] != "3600s" || body["scope"][0] != kGoogleCloudPlatformScope) return respond(400, "{}");
    return respond(200, R"({"accessToken":"ya29.impersonated","expireTime":"2099-01-01T00:00:00Z"})");
  };
  auto creds = GoogleCredentials::from_file(path, options_);
  auto t = creds->token();
  EXPECT_EQ(t.token, "ya29.impersonated");
  EXPECT_EQ(creds->account(), "builder@p.iam.gserviceaccount.com");
  EXPECT_EQ(requests_.size(), 2u);
}

TEST_F(GoogleAdc, ExternalAccountUrlSourceTextFormat) {
  auto path = write_json("wif-url.json", {{"type", "external_account"},
                                          {"audience", "//iam.googleapis.com/x"},
                                          {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
                                          {"token_url", "https://sts.test/v1/token"},
                                          {"credential_source",
                                           {{"url", "http://169.254.169.254/token?aud=x"},
                                            {"headers", {{"Metadata", "True"}}}}}});
  handler_ = [](const HttpRequest& r) {
    if (r.method == "GET") {
      if (header_of(r, "Metadata") != "True") return respond(400, "");
      return respond(200, "  url-subject-token\n");
    }
    if (form_of(r.body)["subject_token"] != "url-subject-token") return respond(400, R"({"error":"invalid_grant"})");
    return respond(200, R"({"access_token":"federated-direct","expires_in":"3600"})");
  };
  EXPECT_EQ(GoogleCredentials::from_file(path, options_)->token().token, "federated-direct");
}

TEST_F(GoogleAdc, UnsupportedSourcesAndTypesAreOneLineErrors) {
  auto exe = write_json("exe.json", {{"type", "external_account"},
                                     {"audience", "a"},
                                     {"subject_token_type", "t"},
                                     {"credential_source", {{"executable", {{"command", "/bin/true"}}}}}});
  try {
    GoogleCredentials::from_file(exe, options_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("executable credential source"), std::string::npos) << e.what();
  }
  auto aws = write_json("aws.json", {{"type", "external_account"},
                                     {"audience", "a"},
                                     {"subject_token_type", "t"},
                                     {"credential_source", {{"environment_id", "aws1"}}}});
  EXPECT_THROW(GoogleCredentials::from_file(aws, options_), Error);
  auto gdch = write_json("gdch.json", {{"type", "gdch_service_account"}});
  try {
    GoogleCredentials::from_file(gdch, options_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gdch_service_account"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST_F(GoogleAdc, ProviderOnlyForGoogleHosts) {
  auto path = write_json("sa.json", service_account());
  env_.set("GOOGLE_APPLICATION_CREDENTIALS", path.string());
  handler_ = [this](const HttpRequest& r) { return sa_endpoint(r); };
  GoogleAdcProvider provider(options_);
  EXPECT_FALSE(provider.find("127.0.0.1:5000", "a/b"));
  EXPECT_TRUE(requests_.empty());
  auto c = provider.find("us-docker.pkg.dev", "p/r/img");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->username, "oauth2accesstoken");
  EXPECT_EQ(c->password, "ya29.sa-token-1");
  EXPECT_EQ(c->identity, "sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(c->source, "Google ADC (service_account " + path.string() + ")");
  ASSERT_TRUE(c->expires_at);
  EXPECT_EQ(c->describe(), "sa@p.iam.gserviceaccount.com from Google ADC (service_account " + path.string() + ")");
  EXPECT_EQ(provider.find("gcr.io", "p/img")->password, "ya29.sa-token-1");  // one token for both
  EXPECT_EQ(requests_.size(), 1u);
}
