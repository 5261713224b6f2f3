#pragma once
// The registries one run talks to: the run's HttpClient (shared connections, TLS sessions; made by the CLI and
// shared with the Python index client) and one Keychain, and one RegistryClient (auth state, token cache) per
// registry, created on first use.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "net/http_client.h"
#include "registry/credentials.h"
#include "registry/registry_client.h"

namespace trainpack::registry {

class Registries {
 public:
  // `http` must outlive the Registries.
  Registries(net::HttpClient& http, Keychain keychain);
  RegistryClient& client(const std::string& registry);
  net::HttpClient& http() { return http_; }

 private:
  net::HttpClient& http_;
  Keychain keychain_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<RegistryClient>> clients_;
};

}  // namespace trainpack::registry
