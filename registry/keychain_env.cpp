// Keychain::from_environment lives apart from credentials.cpp so that code using only the providers does not pull
// in the HTTP client.
#include "registry/credentials.h"
#include "registry/google_credentials.h"
#include "registry/http_client.h"

namespace trainpack::registry {

namespace {

Keychain make_keychain(std::function<HttpResponse(const HttpRequest&)> http) {
  std::vector<std::unique_ptr<CredentialProvider>> providers;
  providers.push_back(std::make_unique<DockerConfigProvider>());
  providers.push_back(std::make_unique<PodmanAuthProvider>());
  GoogleAdcOptions options;
  options.http = std::move(http);
  providers.push_back(std::make_unique<GoogleAdcProvider>(std::move(options)));
  return Keychain(std::move(providers));
}

}  // namespace

Keychain Keychain::from_environment() {
  return make_keychain([](const HttpRequest& r) {
    static HttpClient client;  // created on first use: only when Google token endpoints are needed
    return client.send(r);
  });
}

Keychain Keychain::from_environment(HttpClient& http) {
  return make_keychain([&http](const HttpRequest& r) { return http.send(r); });
}

}  // namespace trainpack::registry
