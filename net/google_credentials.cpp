#include "net/google_credentials.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "net/encoding.h"
#include "net/url.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/text.h"

namespace trainpack::net {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string getenv_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// "https://oauth2.googleapis.com/token" → "oauth2.googleapis.com/token" (no query: it may hold secrets).
std::string endpoint_label(const std::string& url) {
  UrlParts u = split_url(url);
  return u.authority + u.path;
}

// Credential files and subject tokens are a few KiB; 1 MiB leaves room and stops a /dev/zero.
std::string read_text_file(const fs::path& path, const std::string& what) {
  try {
    return read_file(path, 1u << 20, what);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what(), e.hint().empty() ? "check the path and its permissions" : e.hint());
  }
}

json parse_json_file(const fs::path& path, const std::string& what) {
  std::string text = read_text_file(path, what);
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(what + " " + path.string() + " is not a JSON object", "point it at a Google credentials JSON file");
  return j;
}

std::string str_field(const json& j, const char* name) {
  auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The first of `names` that `j` lacks as a non-empty string, or nullptr when it has them all.
const char* first_missing(const json& j, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (str_field(j, name).empty()) return name;
  return nullptr;
}

std::optional<long long> number_field(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_number()) return it->get<long long>();
  if (it->is_string()) {
    try {
      size_t used = 0;
      const std::string& s = it->get_ref<const std::string&>();
      long long v = std::stoll(s, &used);
      if (used == s.size()) return v;
    } catch (...) {
    }
  }
  return std::nullopt;
}

// {"error":"invalid_grant","error_description":"..."} or {"error":{"code":..,"message":..,"status":..}}.
std::pair<std::string, std::string> google_error(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {};
  auto it = j.find("error");
  if (it == j.end()) return {};
  if (it->is_string()) return {it->get<std::string>(), str_field(j, "error_description")};
  if (it->is_object()) return {str_field(*it, "status"), str_field(*it, "message")};
  return {};
}

std::string describe_failure(const HttpResponse& r) {
  auto [code, desc] = google_error(r.body);
  std::string out = "HTTP " + std::to_string(r.status);
  if (!code.empty()) out += ", " + code;
  if (!desc.empty()) out += ": " + one_line(desc, 200);
  return out;
}

GoogleAccessToken parse_access_token(const HttpResponse& r, std::chrono::system_clock::time_point now,
                                     const std::string& what) {
  json j = json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(what + " answered with something that is not JSON", "try again; if it persists, report it");
  GoogleAccessToken t;
  t.token = str_field(j, "access_token");
  if (t.token.empty()) t.token = str_field(j, "accessToken");
  if (t.token.empty()) throw Error(what + " answered without an access token", "try again; if it persists, report it");
  long long expires_in = number_field(j, "expires_in").value_or(3600);
  t.expires_at = now + std::chrono::seconds(std::max<long long>(expires_in, 0));
  if (auto e = str_field(j, "expireTime"); !e.empty()) {
    if (auto tp = parse_rfc3339(e)) t.expires_at = *tp;
  }
  return t;
}

struct EvpPkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};

}  // namespace

bool is_google_registry_host(std::string_view host_in) {
  std::string host = ascii_lower(std::string(host_in));
  if (size_t colon = host.find(':'); colon != std::string::npos) host.resize(colon);
  if (host == "gcr.io" || host.ends_with(".gcr.io")) return true;
  if (host.ends_with("-docker.pkg.dev")) return true;
  if (host.rfind("docker.", 0) == 0 && host.ends_with(".rep.pkg.dev")) return true;
  return false;
}

std::string sign_jwt_rs256(std::string_view header_json, std::string_view claims_json,
                           std::string_view private_key_pem) {
  std::unique_ptr<BIO, BioDeleter> bio(BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())));
  if (!bio) throw Error("out of memory while reading a private key");
  std::unique_ptr<EVP_PKEY, EvpPkeyDeleter> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key)
    throw Error("the private_key in the service-account key is not a PEM private key",
                "download a new JSON key for the service account (gcloud iam service-accounts keys create)");
  if (EVP_PKEY_base_id(key.get()) != EVP_PKEY_RSA)
    throw Error("the private_key in the service-account key is not an RSA key", "download a new JSON key");
  std::string signing_input = base64url_encode(header_json) + "." + base64url_encode(claims_json);
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  size_t sig_len = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &sig_len, reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1)
    throw Error("cannot sign a JWT with the service-account key", "download a new JSON key");
  std::string sig(sig_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &sig_len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) != 1)
    throw Error("cannot sign a JWT with the service-account key", "download a new JSON key");
  sig.resize(sig_len);
  return signing_input + "." + base64url_encode(sig);
}

// ---- metadata transport ---------------------------------------------------------------------------------------------

// The metadata server speaks plain HTTP on a link-local address; HttpClient reaches it directly, never through a
// proxy. One attempt, no redirects, within the request's total_timeout (3 s by default): a machine without one must
// not wait for retries.
HttpResponse metadata_http_get(const HttpRequest& request) {
  HttpOptions options;
  options.insecure_hosts = {split_url(request.url).authority};
  options.max_attempts = 1;
  HttpClient client(std::move(options));
  HttpRequest once = request;
  once.follow_redirects = false;
  once.max_response_bytes = 1u << 20;
  if (!once.total_timeout) once.total_timeout = std::chrono::seconds(3);
  return client.send(once);  // its errors name the host, the cause and what to check
}

// ---- GoogleCredentials ----------------------------------------------------------------------------------------------

GoogleCredentials::GoogleCredentials(std::string kind, std::string location, GoogleAdcOptions options)
    : kind_(std::move(kind)), location_(std::move(location)), options_(std::move(options)) {
  if (!options_.metadata_http) options_.metadata_http = metadata_http_get;
  if (options_.scopes.empty()) options_.scopes = {kGoogleCloudPlatformScope};
}

GoogleCredentials::~GoogleCredentials() = default;

std::string GoogleCredentials::describe() const { return "Google ADC (" + kind_ + " " + location_ + ")"; }

std::string GoogleCredentials::account() { return {}; }

std::chrono::system_clock::time_point GoogleCredentials::now() const {
  return options_.clock ? options_.clock() : std::chrono::system_clock::now();
}

GoogleAccessToken GoogleCredentials::token() {
  std::lock_guard lock(mutex_);
  auto t = now();
  if (cached_) {
    // Refresh five minutes before expiry, but never more than half a lifetime early.
    auto margin = std::chrono::minutes(5);
    if (t + margin < cached_->expires_at) return *cached_;
  }
  GoogleAccessToken fresh = fetch();
  auto lifetime = fresh.expires_at - t;
  if (lifetime > std::chrono::minutes(10)) cached_ = fresh;  // short-lived tokens: ask again next time
  else cached_.reset();
  return fresh;
}

HttpResponse GoogleCredentials::post_form(const std::string& url, const std::string& body,
                                          std::vector<std::pair<std::string, std::string>> headers) {
  if (!options_.http) throw Error("internal error: no HTTP transport for Google token endpoints");
  HttpRequest req;
  req.method = "POST";
  req.url = url;
  req.headers = std::move(headers);
  bool has_type = std::any_of(req.headers.begin(), req.headers.end(),
                              [](const auto& h) { return ascii_lower(h.first) == "content-type"; });
  if (!has_type) req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  req.body = body;
  req.idempotent = true;  // token grants may be repeated
  req.max_response_bytes = 1u << 20;
  req.total_timeout = std::chrono::seconds(60);
  HttpResponse r;
  for (int attempt = 1;; ++attempt) {
    r = options_.http(req);
    auto [code, desc] = google_error(r.body);
    bool transient = r.status >= 500 || code == "internal_failure" || code == "server_error" ||
                     code == "temporarily_unavailable";
    if (!transient || attempt >= 3) break;
    std::this_thread::sleep_for(options_.retry_delay * attempt);
  }
  return r;
}

namespace {

// ---- token_uri files ---------------------------------------------------------------------------------------------

// service_account and authorized_user files: both are granted tokens at their token_uri (Google's by default), and
// name their account in the field `account_field`.
class TokenUriCredentials : public GoogleCredentials {
 public:
  std::string account() override { return account_; }

 protected:
  TokenUriCredentials(std::string kind, const char* account_field, const json& j, const std::string& path,
                      GoogleAdcOptions options)
      : GoogleCredentials(std::move(kind), path, std::move(options)),
        token_uri_(str_field(j, "token_uri")),
        account_(str_field(j, account_field)) {
    if (token_uri_.empty()) token_uri_ = kGoogleDefaultTokenUri;
  }

  // The token endpoint, for messages.
  std::string endpoint() const { return "the Google token endpoint " + endpoint_label(token_uri_); }

  // POSTs the grant `form` to the token endpoint and reads the token, whose lifetime counts from `t`; an answer other
  // than 200 throws the Error `refused` makes of it.
  GoogleAccessToken grant(std::chrono::system_clock::time_point t, const std::string& form,
                          const std::function<Error(const HttpResponse&)>& refused) {
    HttpResponse r = post_form(token_uri_, form);
    if (r.status != 200) throw refused(r);
    return parse_access_token(r, t, endpoint());
  }

  std::string token_uri_;
  std::string account_;
};

// ---- service_account --------------------------------------------------------------------------------------------

class ServiceAccountCredentials : public TokenUriCredentials {
 public:
  ServiceAccountCredentials(const json& j, const std::string& path, GoogleAdcOptions options)
      : TokenUriCredentials("service_account", "client_email", j, path, std::move(options)) {
    if (const char* missing = first_missing(j, {"client_email", "private_key"}))
      throw Error("the service-account key " + path + " has no " + missing,
                  "download a new JSON key: gcloud iam service-accounts keys create");
    key_ = str_field(j, "private_key");
    key_id_ = str_field(j, "private_key_id");
  }

 protected:
  GoogleAccessToken fetch() override {
    auto t = now();
    long long iat = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
    json header = {{"alg", "RS256"}, {"typ", "JWT"}};
    if (!key_id_.empty()) header["kid"] = key_id_;
    json claims = {{"iss", account_},
                   {"scope", join(options_.scopes, " ")},
                   {"aud", token_uri_},
                   {"iat", iat},
                   {"exp", iat + 3600}};
    std::string assertion = sign_jwt_rs256(header.dump(), claims.dump(), key_);
    auto refused = [&](const HttpResponse& r) {
      return Error(endpoint() + " refused the service-account key of " + account_ + " (" + location_ +
                       "): " + describe_failure(r),
                   "check that the key is still valid (not deleted or disabled) and that the clock is right");
    };
    return grant(t,
                 form_encode({{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"}, {"assertion", assertion}}),
                 refused);
  }

 private:
  std::string key_, key_id_;
};

// ---- authorized_user --------------------------------------------------------------------------------------------

class AuthorizedUserCredentials : public TokenUriCredentials {
 public:
  AuthorizedUserCredentials(const json& j, const std::string& path, GoogleAdcOptions options)
      : TokenUriCredentials("authorized_user", "account", j, path, std::move(options)) {
    if (const char* missing = first_missing(j, {"client_id", "client_secret", "refresh_token"}))
      throw Error("the application-default credentials " + path + " lack " + missing,
                  "run gcloud auth application-default login to create them again");
    client_id_ = str_field(j, "client_id");
    client_secret_ = str_field(j, "client_secret");
    refresh_token_ = str_field(j, "refresh_token");
  }

 protected:
  GoogleAccessToken fetch() override {
    auto refused = [&](const HttpResponse& r) {
      auto [code, desc] = google_error(r.body);
      if (code == "invalid_grant" || code == "invalid_rapt")
        return Error("Google refused the application-default credentials in " + location_ + " (" + code +
                         (desc.empty() ? "" : ": " + one_line(desc, 200)) + "): they have expired or were revoked",
                     "run gcloud auth application-default login to log in again");
      return Error(endpoint() + " refused the application-default credentials in " + location_ + ": " +
                       describe_failure(r),
                   "run gcloud auth application-default login to log in again");
    };
    return grant(now(),
                 form_encode({{"grant_type", "refresh_token"},
                              {"client_id", client_id_},
                              {"client_secret", client_secret_},
                              {"refresh_token", refresh_token_}}),
                 refused);
  }

 private:
  std::string client_id_, client_secret_, refresh_token_;
};

// ---- external_account -------------------------------------------------------------------------------------------

class ExternalAccountCredentials : public GoogleCredentials {
 public:
  ExternalAccountCredentials(const json& j, const std::string& path, GoogleAdcOptions options)
      : GoogleCredentials("external_account", path, std::move(options)) {
    audience_ = str_field(j, "audience");
    subject_token_type_ = str_field(j, "subject_token_type");
    token_url_ = str_field(j, "token_url");
    if (token_url_.empty()) token_url_ = "https://sts.googleapis.com/v1/token";
    impersonation_url_ = str_field(j, "service_account_impersonation_url");
    client_id_ = str_field(j, "client_id");
    client_secret_ = str_field(j, "client_secret");
    if (auto it = j.find("service_account_impersonation"); it != j.end() && it->is_object())
      lifetime_ = number_field(*it, "token_lifetime_seconds").value_or(3600);
    auto src = j.find("credential_source");
    if (src == j.end() || !src->is_object())
      throw Error("the external_account credentials " + path + " have no credential_source",
                  "create the file again with gcloud iam workload-identity-pools create-cred-config");
    if (src->contains("executable"))
      throw Error("the external_account credentials " + path +
                      " use an executable credential source, which trainpack does not support",
                  "use a file or URL credential source, a service-account key, or gcloud auth application-default login");
    if (src->contains("environment_id"))
      throw Error("the external_account credentials " + path + " use an " + str_field(*src, "environment_id") +
                      " (AWS) credential source, which trainpack does not support",
                  "use a file or URL credential source, a service-account key, or gcloud auth application-default login");
    file_ = str_field(*src, "file");
    url_ = str_field(*src, "url");
    if (file_.empty() && url_.empty())
      throw Error("the external_account credentials " + path + " have a credential_source without file or url",
                  "create the file again with gcloud iam workload-identity-pools create-cred-config");
    if (auto h = src->find("headers"); h != src->end() && h->is_object())
      for (auto& [k, v] : h->items())
        if (v.is_string()) url_headers_.emplace_back(k, v.get<std::string>());
    if (auto f = src->find("format"); f != src->end() && f->is_object()) {
      format_ = str_field(*f, "type");
      field_ = str_field(*f, "subject_token_field_name");
    }
    if (format_.empty()) format_ = "text";
    if (format_ != "text" && format_ != "json")
      throw Error("the external_account credentials " + path + " use the unsupported subject token format \"" +
                      format_ + "\"",
                  "use format type text or json");
    if (format_ == "json" && field_.empty())
      throw Error("the external_account credentials " + path + " use format json without subject_token_field_name",
                  "add subject_token_field_name to credential_source.format");
    if (audience_.empty() || subject_token_type_.empty())
      throw Error("the external_account credentials " + path + " lack " +
                      (audience_.empty() ? "audience" : "subject_token_type"),
                  "create the file again with gcloud iam workload-identity-pools create-cred-config");
    // ".../serviceAccounts/NAME@PROJECT.iam.gserviceaccount.com:generateAccessToken"
    if (size_t p = impersonation_url_.find("/serviceAccounts/"); p != std::string::npos) {
      std::string rest = impersonation_url_.substr(p + 17);
      email_ = rest.substr(0, rest.find(':'));
    }
  }
  std::string account() override { return email_; }

 protected:
  std::string subject_token() {
    std::string raw;
    std::string from;
    if (!file_.empty()) {
      from = "the subject token file " + file_;
      raw = read_text_file(file_, "the subject token file");
    } else {
      from = "the subject token URL " + endpoint_label(url_);
      if (!options_.http) throw Error("internal error: no HTTP transport for Google token endpoints");
      HttpRequest req;
      req.url = url_;
      req.headers = url_headers_;
      req.max_response_bytes = 1u << 20;
      req.total_timeout = std::chrono::seconds(30);
      HttpResponse r = options_.http(req);
      if (r.status != 200)
        throw Error(from + " answered HTTP " + std::to_string(r.status) + " for " + location_,
                    "check the credential_source of the external_account credentials");
      raw = r.body;
    }
    std::string token;
    if (format_ == "json") {
      json j = json::parse(raw, nullptr, false);
      if (!j.is_discarded() && j.is_object()) token = str_field(j, field_.c_str());
      if (token.empty())
        throw Error(from + " holds no JSON field \"" + field_ + "\"",
                    "check credential_source.format in " + location_);
    } else {
      token = std::string(ascii_trim(raw));
    }
    if (token.empty()) throw Error(from + " is empty", "check the credential_source of " + location_);
    return token;
  }

  GoogleAccessToken fetch() override {
    auto t = now();
    std::string subject = subject_token();
    std::vector<std::pair<std::string, std::string>> headers;
    if (!client_id_.empty() && !client_secret_.empty())
      headers.emplace_back("Authorization", "Basic " + base64_encode(client_id_ + ":" + client_secret_));
    std::string scope = impersonation_url_.empty() ? join(options_.scopes, " ") : kGoogleCloudPlatformScope;
    HttpResponse r = post_form(token_url_,
                               form_encode({{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                                            {"audience", audience_},
                                            {"scope", scope},
                                            {"requested_token_type", "urn:ietf:params:oauth:token-type:access_token"},
                                            {"subject_token", subject},
                                            {"subject_token_type", subject_token_type_}}),
                               headers);
    if (r.status != 200)
      throw Error("the Google STS endpoint " + endpoint_label(token_url_) +
                      " refused the external_account credentials in " + location_ + ": " + describe_failure(r),
                  "check the workload identity pool provider and the subject token source");
    GoogleAccessToken federated = parse_access_token(r, t, "the Google STS endpoint " + endpoint_label(token_url_));
    if (impersonation_url_.empty()) return federated;
    json body = {{"scope", options_.scopes}, {"lifetime", std::to_string(lifetime_) + "s"}};
    HttpResponse ir = post_form(impersonation_url_, body.dump(),
                                {{"Authorization", "Bearer " + federated.token}, {"Content-Type", "application/json"}});
    if (ir.status != 200)
      throw Error("impersonating " + (email_.empty() ? std::string("the service account") : email_) + " via " +
                      endpoint_label(impersonation_url_) + " failed for " + location_ + ": " + describe_failure(ir),
                  "grant the workload identity principal roles/iam.workloadIdentityUser on the service account");
    return parse_access_token(ir, t, "the IAM credentials endpoint " + endpoint_label(impersonation_url_));
  }

 private:
  std::string audience_, subject_token_type_, token_url_, impersonation_url_, client_id_, client_secret_;
  std::string file_, url_, format_, field_, email_;
  std::vector<std::pair<std::string, std::string>> url_headers_;
  long long lifetime_ = 3600;
};

// ---- metadata server --------------------------------------------------------------------------------------------

HttpRequest metadata_request(const std::string& host, const std::string& path, std::chrono::milliseconds timeout) {
  HttpRequest req;
  req.url = "http://" + host + path;
  req.headers = {{"Metadata-Flavor", "Google"}};
  req.follow_redirects = false;
  req.max_response_bytes = 1u << 20;
  req.total_timeout = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  if (req.total_timeout->count() < 1) req.total_timeout = std::chrono::seconds(1);
  return req;
}

class MetadataCredentials : public GoogleCredentials {
 public:
  MetadataCredentials(std::string host, GoogleAdcOptions options)
      : GoogleCredentials("metadata server", host, std::move(options)), host_(std::move(host)) {}

  std::string account() override {
    std::lock_guard lock(account_mutex_);
    if (!account_asked_) {
      account_asked_ = true;
      try {
        HttpResponse r = options_.metadata_http(metadata_request(
            host_, "/computeMetadata/v1/instance/service-accounts/default/email", options_.metadata_timeout));
        if (r.status == 200 && r.header("metadata-flavor") == "Google") account_ = one_line(ascii_trim(r.body), 320);
      } catch (const std::exception&) {
        // The email is for messages only.
      }
    }
    return account_;
  }

 protected:
  GoogleAccessToken fetch() override {
    auto t = now();
    HttpResponse r;
    for (int attempt = 1;; ++attempt) {
      try {
        r = options_.metadata_http(metadata_request(
            host_, "/computeMetadata/v1/instance/service-accounts/default/token", options_.metadata_timeout));
      } catch (const Error& e) {
        if (attempt >= std::max(1, options_.metadata_tries)) throw;
        std::this_thread::sleep_for(options_.retry_delay);
        continue;
      }
      if (r.status < 500 || attempt >= std::max(1, options_.metadata_tries)) break;
      std::this_thread::sleep_for(options_.retry_delay);
    }
    if (r.header("metadata-flavor") != "Google")
      throw Error("the metadata server at " + host_ + " did not answer as a Google metadata server",
                  "unset GCE_METADATA_HOST or point it at a real metadata server");
    if (r.status != 200)
      throw Error("the metadata server at " + host_ + " refused an access token: HTTP " + std::to_string(r.status) +
                      (r.body.empty() ? "" : ": " + one_line(ascii_trim(r.body), 200)),
                  "check that the VM or workload has a service account attached");
    return parse_access_token(r, t, "the metadata server at " + host_);
  }

 private:
  std::string host_;
  std::mutex account_mutex_;
  bool account_asked_ = false;
  std::string account_;
};

bool env_true(const char* name) {
  std::string v = ascii_lower(getenv_str(name));
  return !v.empty() && v != "0" && v != "false" && v != "no";
}

bool dmi_says_google() {
  std::ifstream f("/sys/class/dmi/id/product_name");
  std::string s;
  std::getline(f, s);
  return s.find("Google") != std::string::npos;
}

}  // namespace

std::unique_ptr<GoogleCredentials> GoogleCredentials::from_file(const fs::path& path, GoogleAdcOptions options) {
  json j = parse_json_file(path, "the Google credentials file");
  std::string type = str_field(j, "type");
  std::string p = path.string();
  if (type == "service_account") return std::make_unique<ServiceAccountCredentials>(j, p, std::move(options));
  if (type == "authorized_user") return std::make_unique<AuthorizedUserCredentials>(j, p, std::move(options));
  if (type == "external_account") return std::make_unique<ExternalAccountCredentials>(j, p, std::move(options));
  if (type.empty())
    throw Error("the Google credentials file " + p + " has no \"type\"",
                "use a service-account key or run gcloud auth application-default login");
  throw Error("the Google credentials file " + p + " is of type " + type + ", which trainpack does not support",
              "use a service_account key, authorized_user credentials (gcloud auth application-default login) or "
              "external_account credentials with a file or URL source");
}

std::unique_ptr<GoogleCredentials> GoogleCredentials::from_metadata_server(std::string host, GoogleAdcOptions options) {
  return std::make_unique<MetadataCredentials>(std::move(host), std::move(options));
}

std::unique_ptr<GoogleCredentials> GoogleCredentials::find_default(GoogleAdcOptions options) {
  // 1. GOOGLE_APPLICATION_CREDENTIALS: named, so it must work.
  std::string explicit_file = getenv_str("GOOGLE_APPLICATION_CREDENTIALS");
  if (!explicit_file.empty()) {
    std::error_code ec;
    if (!fs::exists(explicit_file, ec))
      throw Error("GOOGLE_APPLICATION_CREDENTIALS names " + explicit_file + ", which does not exist",
                  "point it at a credentials JSON file or unset it");
    return from_file(explicit_file, std::move(options));
  }
  // 2. gcloud's application-default credentials.
  std::string config = getenv_str("CLOUDSDK_CONFIG");
  fs::path dir;
  if (!config.empty()) {
    dir = config;
  } else {
    std::string home = getenv_str("HOME");
    if (!home.empty()) dir = fs::path(home) / ".config" / "gcloud";
  }
  if (!dir.empty()) {
    fs::path adc = dir / "application_default_credentials.json";
    std::error_code ec;
    if (fs::exists(adc, ec)) return from_file(adc, std::move(options));  // a FIFO or device is refused there
  }
  // 3. The metadata server.
  if (env_true("NO_GCE_CHECK")) return nullptr;
  if (!options.metadata_http) options.metadata_http = metadata_http_get;
  std::string host = getenv_str("GCE_METADATA_HOST");
  if (host.empty()) host = getenv_str("GCE_METADATA_ROOT");
  std::string ip = getenv_str("GCE_METADATA_IP");
  bool overridden = !host.empty() || !ip.empty();
  bool on_gce = dmi_says_google();
  if (host.empty()) host = "metadata.google.internal";
  std::vector<std::string> candidates{host};
  if (!ip.empty() || on_gce) {
    std::string i = ip.empty() ? "169.254.169.254" : ip;
    if (i != host) candidates.push_back(i);
  }
  int tries = (overridden || on_gce) ? std::max(1, options.metadata_tries) : 1;
  auto timeout = (overridden || on_gce) ? options.metadata_timeout
                                        : std::min(options.metadata_timeout, std::chrono::milliseconds(1000));
  for (const auto& c : candidates) {
    for (int t = 0; t < tries; ++t) {
      try {
        HttpResponse r = options.metadata_http(metadata_request(c, "/", timeout));
        if (r.header("metadata-flavor") == "Google") return from_metadata_server(host, std::move(options));
        break;  // something answered, and it is not a metadata server
      } catch (const std::exception&) {
        // not reachable: try again / next candidate
      }
    }
  }
  return nullptr;
}

// ---- DefaultGoogleCredentials ------------------------------------------------------------------------------------

DefaultGoogleCredentials::DefaultGoogleCredentials(GoogleAdcOptions options) : options_(std::move(options)) {}

DefaultGoogleCredentials::DefaultGoogleCredentials(std::shared_ptr<GoogleCredentials> credentials)
    : discovered_(true), credentials_(std::move(credentials)) {}

std::shared_ptr<GoogleCredentials> DefaultGoogleCredentials::get() {
  std::lock_guard lock(mutex_);
  if (!discovered_) {
    credentials_ = GoogleCredentials::find_default(options_);
    discovered_ = true;
  }
  return credentials_;
}

GoogleAdcOptions google_adc_options(HttpClient& http) {
  GoogleAdcOptions options;
  options.http = [&http](const HttpRequest& r) { return http.send(r); };
  return options;
}

}  // namespace trainpack::net
