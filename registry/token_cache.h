#pragma once
// Registry bearer tokens (distribution docs/spec/auth/token.md): parsing token-endpoint responses and a
// thread-safe cache keyed by (realm, service, credential fingerprint, sorted scope set) that treats a token as gone
// a margin before it expires.
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "registry/credentials.h"

namespace trainpack::registry {

struct BearerToken {
  std::string token;                                  // secret
  std::chrono::system_clock::time_point issued_at;    // "issued_at" or the time of receipt
  std::chrono::system_clock::time_point expires_at;   // issued_at + expires_in (default 60 s, at least 60 s)
  std::string refresh_token;                          // only when the server sent one (secret)
};

// Parses a token response body: "token" or "access_token" (either), "expires_in" (number or numeric string;
// default 60, clamped to >= 60), "issued_at" (RFC 3339, else `now`). Throws Error (without the body) when the body
// is not JSON or carries no token.
BearerToken parse_token_response(std::string_view body, std::chrono::system_clock::time_point now,
                                 std::string_view what = "token server");

// A digest of everything secret in a credential, so cache keys never hold the secrets themselves.
std::string credential_fingerprint(const Credential& credential);

struct TokenKey {
  std::string realm;
  std::string service;
  std::string credential;           // credential_fingerprint()
  std::vector<std::string> scopes;  // kept sorted and unique

  TokenKey(std::string realm, std::string service, std::string credential, std::vector<std::string> scopes);
  bool operator<(const TokenKey& o) const {
    return std::tie(realm, service, credential, scopes) < std::tie(o.realm, o.service, o.credential, o.scopes);
  }
};

class TokenCache {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;
  // A token counts as expired `margin` before its expiry, but never earlier than half its lifetime.
  explicit TokenCache(std::chrono::seconds margin = std::chrono::seconds(30), Clock clock = {});

  std::optional<std::string> get(const TokenKey& key) const;
  // A cached token whose scope set includes every one of `scopes` (same realm, service and credential).
  std::optional<std::string> find_covering(const std::string& realm, const std::string& service,
                                           const std::string& credential,
                                           const std::vector<std::string>& scopes) const;
  void put(const TokenKey& key, const BearerToken& token);
  void erase(const TokenKey& key);
  void clear();
  size_t size() const;

 private:
  bool fresh(const BearerToken& t) const;
  std::chrono::seconds margin_;
  Clock clock_;
  mutable std::mutex mutex_;
  std::map<TokenKey, BearerToken> entries_;
};

}  // namespace trainpack::registry
