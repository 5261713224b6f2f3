#pragma once
// Google Application Default Credentials without gcloud, for Artifact Registry
// (*-docker.pkg.dev, docker.*.rep.pkg.dev, later *-python.pkg.dev) and Container Registry (gcr.io, *.gcr.io).
//
// Order (google-auth _default.py): $GOOGLE_APPLICATION_CREDENTIALS → $CLOUDSDK_CONFIG/application_default_credentials.json
// (default ~/.config/gcloud/application_default_credentials.json) → the GCE metadata server (unless NO_GCE_CHECK).
// Files are dispatched on "type":
//   service_account   RS256 JWT (iss, scope, aud = token_uri, iat, exp) signed with the PKCS#8 key, POSTed as a
//                     jwt-bearer grant to the file's token_uri;
//   authorized_user   refresh_token grant to the file's token_uri (else https://oauth2.googleapis.com/token);
//                     invalid_grant / invalid_rapt → Error telling the user to run gcloud auth application-default login;
//   external_account  subject token from credential_source.file or .url (format text|json), STS token exchange at
//                     token_url, then optional service-account impersonation; executable and AWS sources are
//                     refused with an Error naming them.
// The metadata server is http://metadata.google.internal (GCE_METADATA_HOST / GCE_METADATA_ROOT override; pinged
// also at GCE_METADATA_IP or 169.254.169.254), asked with Metadata-Flavor: Google, which must come back in the
// response; no proxy, short timeouts, a few tries.
// Access tokens are cached until five minutes (at most half their lifetime) before they expire.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/http_client.h"

namespace trainpack::net {

// *-docker.pkg.dev, docker.*.rep.pkg.dev, gcr.io, *.gcr.io (a port, if any, ignored).
bool is_google_registry_host(std::string_view host);

inline constexpr const char* kGoogleCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform";
inline constexpr const char* kGoogleDefaultTokenUri = "https://oauth2.googleapis.com/token";

// Signs `header_json`.`claims_json` with RS256 (RSASSA-PKCS1-v1_5 with SHA-256, OpenSSL EVP_DigestSign) using a PEM
// private key (PKCS#8 "BEGIN PRIVATE KEY" or PKCS#1), and returns the compact JWT
// b64url(header).b64url(claims).b64url(signature). Throws Error (never quoting the key) when the key is unusable.
std::string sign_jwt_rs256(std::string_view header_json, std::string_view claims_json, std::string_view private_key_pem);

struct GoogleAccessToken {
  std::string token;  // secret
  std::chrono::system_clock::time_point expires_at;
};

struct GoogleAdcOptions {
  std::vector<std::string> scopes{kGoogleCloudPlatformScope};
  // Token endpoints (token_uri, STS, impersonation, subject-token URLs).
  std::function<HttpResponse(const HttpRequest&)> http;
  // Metadata-server requests; default: a direct libcurl GET with no proxy and the request's total_timeout.
  std::function<HttpResponse(const HttpRequest&)> metadata_http;
  std::chrono::milliseconds metadata_timeout{3000};
  int metadata_tries = 3;
  std::function<std::chrono::system_clock::time_point()> clock;  // default: system_clock::now
  std::chrono::milliseconds retry_delay{500};  // between tries of a token request that failed transiently
};

class GoogleCredentials {
 public:
  virtual ~GoogleCredentials();

  // ADC in the order above; nullptr when there are none (no file, no metadata server). Throws Error for a file
  // that is named but unreadable, malformed or of an unsupported type.
  static std::unique_ptr<GoogleCredentials> find_default(GoogleAdcOptions options);
  // A credentials file of any supported type.
  static std::unique_ptr<GoogleCredentials> from_file(const std::filesystem::path& path, GoogleAdcOptions options);
  // The metadata server at `host` ("metadata.google.internal", "127.0.0.1:8080"), without detection.
  static std::unique_ptr<GoogleCredentials> from_metadata_server(std::string host, GoogleAdcOptions options);

  // "service_account", "authorized_user", "external_account", "metadata server".
  const std::string& kind() const { return kind_; }
  // The file, or the metadata host.
  const std::string& location() const { return location_; }
  // "Google ADC (service_account /path/key.json)".
  std::string describe() const;
  // The service-account email or user account when known (metadata: asked once), else empty. Never a secret.
  virtual std::string account();

  // A valid access token: cached, refreshed shortly before expiry. Thread-safe. Throws Error on failure (naming
  // the endpoint and the Google error code, never a secret).
  GoogleAccessToken token();

 protected:
  GoogleCredentials(std::string kind, std::string location, GoogleAdcOptions options);
  virtual GoogleAccessToken fetch() = 0;
  // POSTs a form to a Google token endpoint with a few tries on 5xx / transient error codes; returns the response
  // of the last try. `what` names the exchange for messages.
  HttpResponse post_form(const std::string& url, const std::string& body,
                         std::vector<std::pair<std::string, std::string>> headers = {});
  std::chrono::system_clock::time_point now() const;

  std::string kind_;
  std::string location_;
  GoogleAdcOptions options_;

 private:
  std::mutex mutex_;
  std::optional<GoogleAccessToken> cached_;
};

// Application Default Credentials looked up once, on first use, and shared by everything that needs them in a run
// (registry auth, Python indexes on Artifact Registry): one discovery and one token cache.
class DefaultGoogleCredentials {
 public:
  explicit DefaultGoogleCredentials(GoogleAdcOptions options);
  // Credentials found already (tests, or a caller that looked them up).
  explicit DefaultGoogleCredentials(std::shared_ptr<GoogleCredentials> credentials);
  // The credentials, or nullptr when there are none ("none" is remembered). Thread-safe; find_default's Errors
  // propagate (and the lookup is tried again next time).
  std::shared_ptr<GoogleCredentials> get();

 private:
  GoogleAdcOptions options_;
  std::mutex mutex_;
  bool discovered_ = false;
  std::shared_ptr<GoogleCredentials> credentials_;
};

// Options whose token endpoints are reached through `http` (which must outlive every use of them).
GoogleAdcOptions google_adc_options(HttpClient& http);

// The default metadata transport: GET with the request's headers, no proxy, no redirects, total_timeout honoured.
HttpResponse metadata_http_get(const HttpRequest& request);

}  // namespace trainpack::net
