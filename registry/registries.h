#pragma once
// The registries one run talks to: one HttpClient (shared connections, TLS sessions) and one Keychain for the
// process, and one RegistryClient (auth state, token cache) per registry, created on first use.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "registry/credentials.h"
#include "registry/http_client.h"
#include "registry/registry_client.h"

namespace trainpack::registry {

class Registries {
 public:
  // Credentials come from the environment (docker and podman config, Google ADC through this HttpClient).
  explicit Registries(HttpOptions options);
  Registries(HttpOptions options, Keychain keychain);
  RegistryClient& client(const std::string& registry);
  HttpClient& http() { return http_; }

 private:
  HttpClient http_;
  Keychain keychain_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<RegistryClient>> clients_;
};

}  // namespace trainpack::registry
