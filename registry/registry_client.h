#pragma once
// An authenticated conversation with one registry (distribution-spec; Docker's token authentication specification): requests go out with the credentials the
// registry asks for; a 401 challenge (Basic, or Bearer realm/service/scope) is answered once — Basic directly,
// Bearer by fetching a token for the needed scopes (GET with Basic or anonymous, POST form with an identity token,
// falling back to GET on 404/405) — and the request is retried. Tokens are cached per scope set and refreshed before
// they expire. An auth failure is an Error naming the registry, the credential source and the identity tried.
//
// Details:
//  - once a registry is known to want Basic, every request carries it; once its Bearer realm is known, requests get
//    a token up front (cached by realm, service, credential and sorted scope set; a margin before expiry it is gone);
//  - a new scope set is requested as the union of the new scopes first and the scopes already held (some registries
//    honour only the first scope); a 401 that names more scopes is answered by one refetch and one retry;
//  - a credential with a registrytoken is sent as Bearer directly, without any exchange;
//  - realms must be https unless the registry itself is spoken to over http; realms that are private, loopback or
//    link-local IP literals are refused unless they are the registry's own host (SSRF guard);
//  - credentials go only to the registry's own origin (scheme, host, port): a URL it hands back on another origin
//    (an upload Location at its storage) gets none, nor do redirects elsewhere (net::HttpClient);
//  - thread-safe: several uploads may share one client.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "net/url.h"
#include "registry/credentials.h"
#include "support/error.h"

namespace trainpack::registry {

// "repository:<name>:pull" / "repository:<name>:pull,push".
std::string pull_scope(const std::string& repository);
std::string push_scope(const std::string& repository);

// What RegistryClient sends requests through: net::HttpClient::send, or a fake in tests.
using HttpTransport = std::function<net::HttpResponse(const net::HttpRequest&)>;

// An auth failure (401/403 that survived the exchange, a refused token request, a realm we will not talk to). It is
// an Error like any other; callers that can do without (a cross-repository mount) may catch it specifically.
class AuthError : public Error {
 public:
  AuthError(std::string cause, std::string hint, long status) : Error(std::move(cause), std::move(hint)), status_(status) {}
  long status() const { return status_; }  // 401, 403, or 0 when no registry status applies

 private:
  long status_;
};

struct BearerToken;

class RegistryClient {
 public:
  // `registry` as in Reference::registry; the API host and scheme are derived from it.
  RegistryClient(net::HttpClient& http, Keychain& keychain, std::string registry)
      : RegistryClient([&http](const net::HttpRequest& r) { return http.send(r); }, keychain, registry,
                       http.scheme_for(registry)) {}
  // With an explicit transport and scheme ("http" or "https").
  RegistryClient(HttpTransport transport, Keychain& keychain, std::string registry, std::string scheme);
  ~RegistryClient();

  const std::string& registry() const { return registry_; }
  // "https://registry-1.docker.io" / "http://127.0.0.1:5000".
  std::string base_url() const;

  // Sends `request` (url relative to base_url when it starts with "/v2/") with auth for `scopes`. Returns the final
  // response (any status); 401/403 after the auth exchange become an AuthError naming the credential used. A URL of
  // another origin (an upload Location at the registry's storage) is sent without credentials; a 401/403 from there
  // is an AuthError without any exchange.
  net::HttpResponse send(net::HttpRequest request, const std::vector<std::string>& scopes);

  // The credential send() would use for `scopes` (for messages such as "pushing as ...").
  Credential credential_for(const std::vector<std::string>& scopes);

 private:
  struct State;
  std::string authorization(const Credential& credential, const std::vector<std::string>& scopes,
                            const std::vector<std::string>& challenge_scopes, const std::string& refused,
                            bool* fetched = nullptr);
  AuthError denied(const Credential& credential, const std::string& repo, bool push, const net::HttpResponse& response,
                   const std::string& extra = {}) const;
  void adopt_bearer_challenge(const struct AuthChallenge& challenge);
  net::HttpResponse send_elsewhere(const net::HttpRequest& request, const net::Origin& origin);
  AuthError refused_elsewhere(const net::Origin& from, const net::HttpResponse& response, const std::string& how) const;
  BearerToken fetch_token(const Credential& credential, const std::string& realm, const std::string& service,
                          const std::vector<std::string>& scopes);

  HttpTransport transport_;
  Keychain& keychain_;
  std::string registry_;
  std::string scheme_;
  std::mutex mutex_;
  std::shared_ptr<State> state_;
};

// One-line message for a registry error response: parses {"errors":[{"code","message"}]} when JSON, else status.
std::string describe_registry_error(const net::HttpResponse& response);

// Realm check used by RegistryClient (exposed for tests): throws AuthError when `realm` may not be used for a
// registry at `registry_host` spoken to with `registry_scheme`.
void validate_realm(const std::string& realm, const std::string& registry_host, const std::string& registry_scheme);

}  // namespace trainpack::registry
