#include "registry/token_cache.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "net/encoding.h"
#include "support/error.h"
#include "support/hash.h"

namespace trainpack::registry {

namespace {

std::optional<long long> number_field(const nlohmann::json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_number_integer() || it->is_number_unsigned()) return it->get<long long>();
  if (it->is_number_float()) return static_cast<long long>(it->get<double>());
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    try {
      size_t used = 0;
      long long v = std::stoll(s, &used);
      if (used == s.size()) return v;
    } catch (...) {
    }
  }
  return std::nullopt;
}

}  // namespace

BearerToken parse_token_response(std::string_view body, std::chrono::system_clock::time_point now,
                                 std::string_view what) {
  const std::string broken = "the " + std::string(what) + " or a proxy in front of it sent a broken answer; try again, "
                             "and report it to the registry's operator if it persists";
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error("the " + std::string(what) + " answered with something that is not a JSON object", broken);
  BearerToken t;
  for (const char* name : {"token", "access_token"}) {
    auto it = j.find(name);
    if (it != j.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
      t.token = it->get<std::string>();
      break;
    }
  }
  if (t.token.empty()) throw Error("the " + std::string(what) + " answered without a token", broken);
  long long expires_in = number_field(j, "expires_in").value_or(60);
  if (expires_in < 60) expires_in = 60;
  t.issued_at = now;
  if (auto it = j.find("issued_at"); it != j.end() && it->is_string()) {
    if (auto tp = net::parse_rfc3339(it->get_ref<const std::string&>())) t.issued_at = *tp;
  }
  t.expires_at = t.issued_at + std::chrono::seconds(expires_in);
  if (auto it = j.find("refresh_token"); it != j.end() && it->is_string()) t.refresh_token = it->get<std::string>();
  return t;
}

std::string credential_fingerprint(const Credential& c) {
  if (c.anonymous()) return "anonymous";
  std::string all;
  for (const std::string* s : {&c.username, &c.password, &c.identity_token, &c.registry_token}) {
    all += std::to_string(s->size());
    all += ':';
    all += *s;
  }
  return sha256_hex(all).substr(0, 32);
}

TokenKey::TokenKey(std::string r, std::string s, std::string c, std::vector<std::string> sc)
    : realm(std::move(r)), service(std::move(s)), credential(std::move(c)), scopes(std::move(sc)) {
  std::sort(scopes.begin(), scopes.end());
  scopes.erase(std::unique(scopes.begin(), scopes.end()), scopes.end());
}

TokenCache::TokenCache(std::chrono::seconds margin, Clock clock)
    : margin_(margin), clock_(clock ? std::move(clock) : Clock([] { return std::chrono::system_clock::now(); })) {}

bool TokenCache::fresh(const BearerToken& t) const {
  auto lifetime = t.expires_at - t.issued_at;
  auto margin = std::min<std::chrono::system_clock::duration>(margin_, lifetime / 2);
  return clock_() < t.expires_at - margin;
}

std::optional<std::string> TokenCache::get(const TokenKey& key) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end() || !fresh(it->second)) return std::nullopt;
  return it->second.token;
}

std::optional<std::string> TokenCache::find_covering(const std::string& realm, const std::string& service,
                                                     const std::string& credential,
                                                     const std::vector<std::string>& scopes) const {
  std::lock_guard lock(mutex_);
  for (const auto& [key, token] : entries_) {
    if (key.realm != realm || key.service != service || key.credential != credential || !fresh(token)) continue;
    const std::vector<std::string>& held = key.scopes;  // clang before 16 cannot capture a structured binding
    bool all = std::all_of(scopes.begin(), scopes.end(),
                           [&](const std::string& s) { return std::binary_search(held.begin(), held.end(), s); });
    if (all) return token.token;
  }
  return std::nullopt;
}

void TokenCache::put(const TokenKey& key, const BearerToken& token) {
  std::lock_guard lock(mutex_);
  // Drop what has expired, so the cache does not grow over a long run.
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!fresh(it->second)) it = entries_.erase(it);
    else ++it;
  }
  entries_.insert_or_assign(key, token);
}

void TokenCache::erase(const TokenKey& key) {
  std::lock_guard lock(mutex_);
  entries_.erase(key);
}

void TokenCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

size_t TokenCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace trainpack::registry
