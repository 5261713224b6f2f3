#pragma once
// Where registry credentials come from: docker config.json ($DOCKER_CONFIG or ~/.docker;
// auths, credsStore, credHelpers running docker-credential-* programs; DOCKER_AUTH_CONFIG), podman/skopeo auth.json
// ($REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json), and, for Google
// registries, Google Application Default Credentials (net/google_credentials.h). Every credential says where
// it came from, so an auth failure can name the source and identity tried; secrets themselves are never printed.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/google_credentials.h"

namespace trainpack::registry {

struct Credential {
  std::string username;        // empty with a password means "error"; both empty = anonymous
  std::string password;        // secret
  std::string identity_token;  // secret: OAuth2 refresh token for the registry's token endpoint
  std::string registry_token;  // secret: bearer used as is
  std::string source;          // "docker config /root/.docker/config.json", "docker-credential-gcloud (...)", ...
  std::string identity;        // who, when known: a user name or a service-account email (never a secret)
  // Short-lived credentials (Google access tokens) expire: the Keychain asks its providers again after this.
  std::optional<std::chrono::system_clock::time_point> expires_at;

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

// Tries providers in order; results are cached per (registry, repository) for the process (until a credential's
// expires_at, less a minute). Thread-safe.
class Keychain {
 public:
  explicit Keychain(std::vector<std::unique_ptr<CredentialProvider>> providers);
  // The standard chain from the environment: docker config, podman auth.json, then Google ADC (`google`, shared
  // with whatever else in the run needs them) for Google hosts.
  static Keychain from_environment(std::shared_ptr<net::DefaultGoogleCredentials> google);
  Credential resolve(const std::string& registry, const std::string& repository);  // anonymous when none
  // Forgets cached results (e.g. after a credential was refused).
  void forget(const std::string& registry, const std::string& repository);

 private:
  std::vector<std::unique_ptr<CredentialProvider>> providers_;
  std::vector<std::pair<std::string, Credential>> cache_;
  std::unique_ptr<std::mutex> mutex_;
};

// ---- Helpers shared by the file-based providers (exposed for tests) --------------------------------------------

// docker/cli ConvertToHostname: "https://index.docker.io/v1/" → "index.docker.io", "http://host:5000/x" → "host:5000",
// "host:5000" → "host:5000". Keys without a scheme are cut at the first '/' too.
std::string convert_to_hostname(std::string_view key);
// docker.io, index.docker.io, registry-1.docker.io.
bool is_docker_hub_host(std::string_view host);
// Key under which docker stores Docker Hub credentials.
inline constexpr const char* kDockerHubAuthKey = "https://index.docker.io/v1/";

// Decodes an "auth" field: base64("user:password"), split at the first ':', NULs trimmed from the password.
// Throws Error (naming `where`, never the value) when it is not base64, has no ':' or has an empty user.
std::pair<std::string, std::string> decode_docker_auth(std::string_view auth, const std::string& where);

// ---- docker-credential-* programs ------------------------------------------------------------------------------

// Runs `docker-credential-<suffix> get` (found on PATH, executed without a shell, environment inherited), writes
// `server_address` to its stdin and parses {"ServerURL","Username","Secret"} from stdout. nullopt when the program
// reports "credentials not found" or returns empty credentials. A Username of "<token>" makes Secret an identity
// token. Results (including "not found") are cached per (suffix, server address) for the process. Throws Error
// naming the program and the first line of its stderr (never its stdout, never a secret) when it fails, is missing
// or does not answer within `timeout`. `configured_in` says where the helper was configured, for messages.
std::optional<Credential> run_credential_helper(const std::string& suffix, const std::string& server_address,
                                                const std::string& configured_in,
                                                std::chrono::milliseconds timeout = std::chrono::seconds(60));
void clear_credential_helper_cache();  // tests

// ---- Providers ---------------------------------------------------------------------------------------------------

// docker's config.json: credHelpers.<host> (wins) → auths entry ("host/repo" key before "host"; keys may be legacy
// URLs) → credsStore. DOCKER_AUTH_CONFIG (JSON {"auths":{...}}) is consulted before the file.
class DockerConfigProvider : public CredentialProvider {
 public:
  // $DOCKER_CONFIG/config.json, else ~/.docker/config.json; DOCKER_AUTH_CONFIG from the environment.
  DockerConfigProvider();
  // An explicit file (may be missing) and optional DOCKER_AUTH_CONFIG-style JSON.
  explicit DockerConfigProvider(std::filesystem::path config_file, std::optional<std::string> auth_config_json = {});
  ~DockerConfigProvider() override;
  std::optional<Credential> find(const std::string& registry, const std::string& repository) override;
  const std::filesystem::path& config_file() const { return config_file_; }

  struct Parsed;

 private:
  std::filesystem::path config_file_;
  std::optional<std::string> auth_config_json_;
  std::mutex mutex_;
  std::unique_ptr<Parsed> file_, env_;
  bool loaded_ = false;
};

// podman/skopeo/buildah auth.json: $REGISTRY_AUTH_FILE alone when set, else $XDG_RUNTIME_DIR/containers/auth.json
// then ~/.config/containers/auth.json. Keys may be "host", "host/ns" or "host/ns/repo": the longest matching
// prefix of "host/repository" wins. credHelpers are honoured like docker's.
class PodmanAuthProvider : public CredentialProvider {
 public:
  PodmanAuthProvider();
  explicit PodmanAuthProvider(std::vector<std::filesystem::path> files);
  ~PodmanAuthProvider() override;
  std::optional<Credential> find(const std::string& registry, const std::string& repository) override;
  const std::vector<std::filesystem::path>& files() const { return files_; }

 private:
  std::vector<std::filesystem::path> files_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<DockerConfigProvider::Parsed>> parsed_;
  bool loaded_ = false;
};

// CredentialProvider for Google registries: Credential{username "oauth2accesstoken", password <access token>,
// source "Google ADC (<kind> <path or metadata host>)", identity <client_email or account>, expires_at}.
// ADC are discovered on first use (and "none" is remembered).
class GoogleAdcProvider : public CredentialProvider {
 public:
  explicit GoogleAdcProvider(std::shared_ptr<net::DefaultGoogleCredentials> google,
                             std::function<bool(const std::string& registry)> applies_to = {});
  explicit GoogleAdcProvider(net::GoogleAdcOptions options,
                             std::function<bool(const std::string& registry)> applies_to = {});
  std::optional<Credential> find(const std::string& registry, const std::string& repository) override;

 private:
  std::shared_ptr<net::DefaultGoogleCredentials> google_;
  std::function<bool(const std::string&)> applies_to_;
};

}  // namespace trainpack::registry
