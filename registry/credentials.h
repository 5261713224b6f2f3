#pragma once
// Where registry credentials come from (registry.md §6, §7): docker config.json ($DOCKER_CONFIG or ~/.docker;
// auths, credsStore, credHelpers running docker-credential-* programs), podman/skopeo auth.json
// ($REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json), and, for Google
// registries, Google Application Default Credentials. Every credential says where it came from, so an auth failure
// can name the source and identity tried; secrets themselves are never printed.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainpack::registry {

struct Credential {
  std::string username;        // empty with a password means "error"; both empty = anonymous
  std::string password;        // secret
  std::string identity_token;  // secret: OAuth2 refresh token for the registry's token endpoint
  std::string registry_token;  // secret: bearer used as is
  std::string source;          // "docker config /root/.docker/config.json (auths)", "docker-credential-gcloud", ...
  std::string identity;        // who, when known: a user name or a service-account email (never a secret)

  bool anonymous() const { return username.empty() && password.empty() && identity_token.empty() && registry_token.empty(); }
  // "testuser from docker config /root/.docker/config.json" or "anonymous".
  std::string describe() const;
};

// One place credentials may come from.
class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;
  // Credential for `registry` ("docker.io", "127.0.0.1:5000", "us-docker.pkg.dev") and repository, or nullopt when
  // this provider has none. Throws Error when it is configured but broken (a helper that fails, a malformed file).
  virtual std::optional<Credential> find(const std::string& registry, const std::string& repository) = 0;
};

// Tries providers in order; results are cached per (registry, repository) for the process.
class Keychain {
 public:
  explicit Keychain(std::vector<std::unique_ptr<CredentialProvider>> providers);
  // The standard chain from the environment: docker config, podman auth.json, then Google ADC for Google hosts.
  static Keychain from_environment();
  Credential resolve(const std::string& registry, const std::string& repository);  // anonymous when none

 private:
  std::vector<std::unique_ptr<CredentialProvider>> providers_;
  std::vector<std::pair<std::string, Credential>> cache_;
};

}  // namespace trainpack::registry
