#pragma once
// An authenticated conversation with one registry (registry.md §5): requests go out with the credentials the
// registry asks for; a 401 challenge (Basic, or Bearer realm/service/scope) is answered once — Basic directly,
// Bearer by fetching a token for the needed scopes (GET with Basic or anonymous, POST form with an identity token,
// falling back to GET on 404/405) — and the request is retried. Tokens are cached per scope set and refreshed before
// they expire. An auth failure is an Error naming the registry, the credential source and the identity tried.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "registry/credentials.h"
#include "registry/http_client.h"

namespace trainpack::registry {

// "repository:<name>:pull" / "repository:<name>:pull,push".
std::string pull_scope(const std::string& repository);
std::string push_scope(const std::string& repository);

class RegistryClient {
 public:
  // `registry` as in Reference::registry; the API host and scheme are derived from it.
  RegistryClient(HttpClient& http, Keychain& keychain, std::string registry);

  const std::string& registry() const { return registry_; }
  // "https://registry-1.docker.io" / "http://127.0.0.1:5000".
  std::string base_url() const;

  // Sends `request` (url relative to base_url when it starts with "/v2/") with auth for `scopes`. Returns the final
  // response (any status); 401/403 after the auth exchange become an Error naming the credential used.
  HttpResponse send(HttpRequest request, const std::vector<std::string>& scopes);

 private:
  HttpClient& http_;
  Keychain& keychain_;
  std::string registry_;
  std::mutex mutex_;
  struct State;
  std::shared_ptr<State> state_;
};

// One-line message for a registry error response: parses {"errors":[{"code","message"}]} when JSON, else status.
std::string describe_registry_error(const HttpResponse& response);

}  // namespace trainpack::registry
