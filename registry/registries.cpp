#include "registry/registries.h"

namespace trainpack::registry {

Registries::Registries(net::HttpClient& http, Keychain keychain) : http_(http), keychain_(std::move(keychain)) {}

RegistryClient& Registries::client(const std::string& registry) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = clients_[registry];
  if (!slot) slot = std::make_unique<RegistryClient>(http_, keychain_, registry);
  return *slot;
}

}  // namespace trainpack::registry
