#pragma once
// WWW-Authenticate parsing (RFC 7235; the semantics of go-containerregistry's internal/authchallenge, extended to
// several challenges per header line) and registry token scopes (distribution docs/spec/auth/scope.md).
//
//   challenge   = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//   auth-param  = token BWS "=" BWS ( token / quoted-string )
//
// Scheme and parameter names are case-insensitive (returned lower-cased); quoted strings keep commas and "\x"
// escapes are unescaped. Several challenges may come in several header lines or comma-joined in one line.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainpack::registry {

struct AuthChallenge {
  std::string scheme;                                       // lower-case: "bearer", "basic", ...
  std::vector<std::pair<std::string, std::string>> params;  // names lower-case, values as sent (unescaped)
  std::string token68;                                      // for schemes like "Negotiate abc=="

  // Value of a parameter (name case-insensitive), or empty.
  std::string param(std::string_view name) const;
  bool has_param(std::string_view name) const;
};

// All challenges in the given WWW-Authenticate header values, in order. Malformed tails are dropped.
std::vector<AuthChallenge> parse_www_authenticate(const std::vector<std::string>& header_values);
std::vector<AuthChallenge> parse_www_authenticate(std::string_view header_value);

// The challenge to answer: Bearer first, then Basic (ggcr pickFromMultipleChallenges); nullptr when neither.
const AuthChallenge* pick_challenge(const std::vector<AuthChallenge>& challenges);

// One scope: "repository:base/python:pull,push", "repository(plugin):n:pull", "registry:catalog:*".
// The type ends at the first ':', the actions start after the last ':' (names may hold "host:port").
struct ScopeItem {
  std::string type;   // "repository" (with its "(class)" if any)
  std::string name;   // "base/python"
  std::vector<std::string> actions;  // "pull", "push", "*"

  std::string str() const;  // back to "type:name:a,b"
};
std::optional<ScopeItem> parse_scope_item(std::string_view scope);
// A `scope` challenge/query value is a space-separated list.
std::vector<std::string> split_scopes(std::string_view scope_list);

// `first` followed by the items of `rest` not already present (order kept, duplicates dropped). Used to put the
// scopes a 401 asked for before the ones already held (some registries honour only the first).
std::vector<std::string> union_scopes(const std::vector<std::string>& first, const std::vector<std::string>& rest);

}  // namespace trainpack::registry
