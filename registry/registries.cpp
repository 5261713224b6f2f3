#include "registry/registries.h"

namespace trainpack::registry {

Registries::Registries(HttpOptions options) : http_(std::move(options)), keychain_(Keychain::from_environment(http_)) {}

Registries::Registries(HttpOptions options, Keychain keychain)
    : http_(std::move(options)), keychain_(std::move(keychain)) {}

RegistryClient& Registries::client(const std::string& registry) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = clients_[registry];
  if (!slot) slot = std::make_unique<RegistryClient>(http_, keychain_, registry);
  return *slot;
}

}  // namespace trainpack::registry
