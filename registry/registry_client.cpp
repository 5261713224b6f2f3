#include "registry/registry_client.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "net/encoding.h"
#include "net/google_credentials.h"
#include "net/url.h"
#include "registry/auth_challenge.h"
#include "registry/token_cache.h"
#include "support/text.h"

namespace trainpack::registry {

namespace {

constexpr std::uint64_t kTokenBodyCap = 1u << 20;

// Header lookup without net::HttpResponse::header (names are stored lower-cased).
std::vector<std::string> header_values(const net::HttpResponse& r, std::string_view name) {
  std::vector<std::string> out;
  std::string n = ascii_lower(std::string(name));
  for (const auto& [k, v] : r.headers)
    if (ascii_lower(k) == n) out.push_back(v);
  return out;
}

std::string reason_phrase(long status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return {};
  }
}

struct RegistryErrorItem {
  std::string code, message;
};

std::vector<RegistryErrorItem> parse_errors(const std::string& body) {
  std::vector<RegistryErrorItem> out;
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || body[first] != '{') return out;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return out;
  auto it = j.find("errors");
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& e : *it) {
    if (!e.is_object()) continue;
    RegistryErrorItem item;
    if (auto c = e.find("code"); c != e.end() && c->is_string()) item.code = c->get<std::string>();
    if (auto m = e.find("message"); m != e.end() && m->is_string()) item.message = m->get<std::string>();
    if (!item.code.empty() || !item.message.empty()) out.push_back(std::move(item));
  }
  return out;
}

// "401 UNAUTHORIZED" (codes only) or "401 Unauthorized".
std::string status_with_codes(const net::HttpResponse& r) {
  auto errors = parse_errors(r.body);
  std::string out = std::to_string(r.status);
  std::string codes;
  for (const auto& e : errors) {
    if (e.code.empty() || codes.find(e.code) != std::string::npos) continue;
    codes += codes.empty() ? " " : ", ";
    codes += e.code;
  }
  if (!codes.empty()) return out + codes;
  std::string reason = reason_phrase(r.status);
  return reason.empty() ? out : out + " " + reason;
}

// "127.0.0.1:5000" → "127.0.0.1"; "[::1]:5000" → "::1".
std::string host_without_port(const std::string& hostport) {
  if (!hostport.empty() && hostport[0] == '[') {
    size_t close = hostport.find(']');
    return ascii_lower(hostport.substr(1, close == std::string::npos ? std::string::npos : close - 1));
  }
  size_t colon = hostport.find(':');
  if (colon != std::string::npos && hostport.find(':', colon + 1) == std::string::npos)
    return ascii_lower(hostport.substr(0, colon));
  return ascii_lower(hostport);
}

enum class AddressKind { NotIp, Public, Loopback, Private, LinkLocal, Unspecified };

AddressKind classify_ip(const std::string& host) {
  unsigned char buf[16];
  if (::inet_pton(AF_INET, host.c_str(), buf) == 1) {
    if (buf[0] == 127) return AddressKind::Loopback;
    if (buf[0] == 0) return AddressKind::Unspecified;
    if (buf[0] == 10 || (buf[0] == 172 && (buf[1] & 0xf0) == 16) || (buf[0] == 192 && buf[1] == 168) ||
        (buf[0] == 100 && (buf[1] & 0xc0) == 64))
      return AddressKind::Private;
    if (buf[0] == 169 && buf[1] == 254) return AddressKind::LinkLocal;
    return AddressKind::Public;
  }
  if (::inet_pton(AF_INET6, host.c_str(), buf) == 1) {
    static const unsigned char loop[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const unsigned char any[16] = {};
    if (std::equal(buf, buf + 16, loop)) return AddressKind::Loopback;
    if (std::equal(buf, buf + 16, any)) return AddressKind::Unspecified;
    if ((buf[0] & 0xfe) == 0xfc) return AddressKind::Private;
    if (buf[0] == 0xfe && (buf[1] & 0xc0) == 0x80) return AddressKind::LinkLocal;
    // IPv4-mapped ::ffff:a.b.c.d
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::equal(buf, buf + 12, mapped)) {
      char v4[INET_ADDRSTRLEN];
      ::inet_ntop(AF_INET, buf + 12, v4, sizeof v4);
      return classify_ip(v4);
    }
    return AddressKind::Public;
  }
  return AddressKind::NotIp;
}

std::string api_host(const std::string& registry) {
  if (registry == "docker.io" || registry == "index.docker.io") return "registry-1.docker.io";
  return registry;
}

// The repository a set of scopes is about: the first one with push, else the first repository scope.
std::string repository_of(const std::vector<std::string>& scopes, bool* push = nullptr) {
  std::string first;
  for (const auto& s : scopes) {
    auto item = parse_scope_item(s);
    if (!item || item->type != "repository") continue;
    bool has_push = std::find(item->actions.begin(), item->actions.end(), "push") != item->actions.end() ||
                    std::find(item->actions.begin(), item->actions.end(), "*") != item->actions.end();
    if (has_push) {
      if (push) *push = true;
      return item->name;
    }
    if (first.empty()) first = item->name;
  }
  if (push) *push = false;
  return first;
}

std::string login_hint(const std::string& registry, bool google) {
  if (google)
    return "give trainpack Google credentials: gcloud auth application-default login, a service-account key in "
           "GOOGLE_APPLICATION_CREDENTIALS, or gcloud auth configure-docker " +
           registry;
  return "log in first: docker login " + registry +
         " (podman login and skopeo login work too; trainpack reads their credentials)";
}

void remove_header(net::HttpRequest& r, std::string_view name) {
  std::string n = ascii_lower(std::string(name));
  r.headers.erase(std::remove_if(r.headers.begin(), r.headers.end(),
                                 [&](const auto& h) { return ascii_lower(h.first) == n; }),
                  r.headers.end());
}

std::string basic_value(const std::string& user, const std::string& password) {
  return "Basic " + net::base64_encode(user + ":" + password);
}

bool lapsed_token(const net::HttpResponse& refusal) {
  for (const AuthChallenge& c : parse_www_authenticate(header_values(refusal, "www-authenticate")))
    if (c.scheme == "bearer" && c.param("error") == "invalid_token") return true;
  return false;
}

}  // namespace

// ---- public helpers -----------------------------------------------------------------------------------------------

std::string pull_scope(const std::string& repository) { return "repository:" + repository + ":pull"; }
std::string push_scope(const std::string& repository) { return "repository:" + repository + ":pull,push"; }

std::string describe_registry_error(const net::HttpResponse& response) {
  auto errors = parse_errors(response.body);
  std::string out = std::to_string(response.status);
  if (errors.empty()) {
    std::string reason = reason_phrase(response.status);
    return reason.empty() ? out : out + " " + reason;
  }
  for (size_t i = 0; i < errors.size(); ++i) {
    out += i == 0 ? " " : "; ";
    const auto& e = errors[i];
    out += e.code.empty() ? e.message : (e.message.empty() ? e.code : e.code + ": " + e.message);
  }
  return one_line(out, 300);
}

void validate_realm(const std::string& realm, const std::string& registry_host, const std::string& registry_scheme) {
  auto parts = net::origin_of(realm);
  if (!parts || (parts->scheme != "https" && parts->scheme != "http"))
    throw AuthError(registry_host + " named a token realm that is not an http(s) URL: " + one_line(realm, 200),
                    "the registry's WWW-Authenticate header is broken; report it to its operator", 0);
  if (parts->scheme == "http" && registry_scheme != "http")
    throw AuthError(registry_host + " named a plain-http token realm (" + one_line(realm, 200) +
                        ") although it is spoken to over https",
                    "trainpack sends credentials to token realms only over https", 0);
  AddressKind kind = classify_ip(parts->host);
  if (kind == AddressKind::Loopback || kind == AddressKind::Private || kind == AddressKind::LinkLocal ||
      kind == AddressKind::Unspecified) {
    std::string reg = host_without_port(registry_host);
    bool same = reg == parts->host || (reg == "localhost" && kind == AddressKind::Loopback);
    if (!same)
      throw AuthError(registry_host + " named a token realm at the internal address " + parts->host +
                          ", which trainpack refuses for a registry on another host",
                      "the realm must be a public host or the registry's own address", 0);
  }
}

// ---- RegistryClient -----------------------------------------------------------------------------------------------

struct RegistryClient::State {
  enum class Scheme { Unknown, Basic, Bearer };
  Scheme scheme = Scheme::Unknown;
  std::string realm, service;
  TokenCache tokens;
  std::map<std::string, std::vector<std::string>> held_scopes;  // credential fingerprint → scopes of latest token
};

RegistryClient::RegistryClient(HttpTransport transport, Keychain& keychain, std::string registry, std::string scheme)
    : transport_(std::move(transport)),
      keychain_(keychain),
      registry_(std::move(registry)),
      scheme_(std::move(scheme)),
      state_(std::make_shared<State>()) {}

RegistryClient::~RegistryClient() = default;

std::string RegistryClient::base_url() const { return scheme_ + "://" + api_host(registry_); }

Credential RegistryClient::credential_for(const std::vector<std::string>& scopes) {
  return keychain_.resolve(registry_, repository_of(scopes));
}

BearerToken RegistryClient::fetch_token(const Credential& cred, const std::string& realm, const std::string& service,
                                        const std::vector<std::string>& scopes) {
  const bool google = net::is_google_registry_host(registry_);
  bool push = false;
  std::string repo = repository_of(scopes, &push);
  auto realm_origin = net::origin_of(realm);
  std::string realm_host = realm_origin ? realm_origin->authority : realm;

  auto refused = [&](const net::HttpResponse& r) -> AuthError {
    std::string action = repo.empty() ? "access" : (push ? "push to " : "pull from ") + repo;
    std::string who = cred.anonymous() ? "anonymous access was refused"
                                       : "authentication as " + cred.describe() + " failed";
    return AuthError(registry_ + " denied " + action + ": " + who + " (token server " + realm_host + " answered " +
                         status_with_codes(r) + ")",
                     cred.anonymous() ? login_hint(registry_, google)
                                      : "check the credentials and log in again: " +
                                            (google ? std::string("gcloud auth application-default login")
                                                    : "docker login " + registry_),
                     r.status);
  };
  auto failed = [&](const net::HttpResponse& r) -> Error {
    return Error("the token server " + realm_host + " of " + registry_ + " answered " + describe_registry_error(r),
                 "try again later; if it persists, the registry's auth service is failing");
  };

  if (!cred.identity_token.empty()) {
    net::HttpRequest post;
    post.method = "POST";
    post.url = realm;
    post.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    std::vector<std::pair<std::string, std::string>> form{
        {"grant_type", "refresh_token"}, {"refresh_token", cred.identity_token}, {"client_id", "trainpack"}};
    if (!service.empty()) form.emplace_back("service", service);
    if (!scopes.empty()) {
      std::string joined;
      for (const auto& s : scopes) joined += (joined.empty() ? "" : " ") + s;
      form.emplace_back("scope", joined);
    }
    post.body = net::form_encode(form);
    post.idempotent = true;
    post.max_response_bytes = kTokenBodyCap;
    net::HttpResponse r = transport_(post);
    if (r.status >= 200 && r.status < 300)
      return parse_token_response(r.body, std::chrono::system_clock::now(), "token server " + realm_host);
    if (r.status == 401 || r.status == 403) throw refused(r);
    if (r.status != 404 && r.status != 405) throw failed(r);
    // No OAuth2 POST support: fall back to GET.
  }

  net::HttpRequest get;
  get.url = realm + (realm.find('?') == std::string::npos ? "?" : "&");
  std::vector<std::pair<std::string, std::string>> query;
  if (!service.empty()) query.emplace_back("service", service);
  for (const auto& s : scopes) query.emplace_back("scope", s);
  query.emplace_back("client_id", "trainpack");
  if (!cred.username.empty() && !cred.password.empty()) {
    query.emplace_back("account", cred.username);
    get.headers.emplace_back("Authorization", basic_value(cred.username, cred.password));
  } else if (!cred.anonymous() && cred.identity_token.empty()) {
    throw AuthError("the credential " + cred.describe() + " for " + registry_ +
                        (cred.username.empty() ? " has no user name" : " has no password"),
                    "log in again: docker login " + registry_, 0);
  }
  get.url += net::form_encode(query);
  get.max_response_bytes = kTokenBodyCap;
  net::HttpResponse r = transport_(get);
  if (r.status >= 200 && r.status < 300)
    return parse_token_response(r.body, std::chrono::system_clock::now(), "token server " + realm_host);
  if (r.status == 401 || r.status == 403) throw refused(r);
  throw failed(r);
}

// Under the client's lock, so that requests sent at once fetch one token: those that wait find it cached. A token
// the registry just refused (`refused`, the Authorization sent) is never handed out again; another one is.
std::string RegistryClient::authorization(const Credential& cred, const std::vector<std::string>& scopes,
                                          const std::vector<std::string>& challenge_scopes,
                                          const std::string& refused, bool* fetched) {
  if (!cred.registry_token.empty()) return "Bearer " + cred.registry_token;
  std::lock_guard lock(mutex_);
  State& st = *state_;
  switch (st.scheme) {
    case State::Scheme::Unknown:
      return {};
    case State::Scheme::Basic:
      if (cred.anonymous()) return {};
      if (cred.username.empty() || cred.password.empty())
        throw AuthError(registry_ + " asks for a user name and password (Basic auth), but the credential " +
                            cred.describe() + (cred.username.empty() ? " has no user name" : " has no password"),
                        "log in with a user name and password: docker login " + registry_, 0);
      return basic_value(cred.username, cred.password);
    case State::Scheme::Bearer:
      break;
  }
  const std::string fp = credential_fingerprint(cred);
  std::vector<std::string> wanted = union_scopes(challenge_scopes, scopes);
  auto usable = [&](const std::optional<std::string>& t) { return t && "Bearer " + *t != refused; };
  if (auto t = st.tokens.find_covering(st.realm, st.service, fp, wanted); usable(t)) return "Bearer " + *t;
  // New scopes first, then what this credential already holds (one token keeps covering everything).
  std::vector<std::string> request_scopes = union_scopes(wanted, st.held_scopes[fp]);
  if (auto t = st.tokens.get(TokenKey(st.realm, st.service, fp, request_scopes)); usable(t)) return "Bearer " + *t;
  BearerToken bt = fetch_token(cred, st.realm, st.service, request_scopes);
  if (fetched) *fetched = true;
  st.tokens.put(TokenKey(st.realm, st.service, fp, request_scopes), bt);
  st.held_scopes[fp] = request_scopes;
  return "Bearer " + bt.token;
}

// A 401/403 from an origin other than the registry's (a redirect to storage, an upload Location there) is not the
// registry's challenge to answer: its credentials would go to that origin.
AuthError RegistryClient::refused_elsewhere(const net::Origin& from, const net::HttpResponse& response,
                                            const std::string& how) const {
  return AuthError(from.authority + " (" + how + " " + registry_ + ") answered " + status_with_codes(response),
                   "the registry's storage refused the request; try again, or report it to the registry's operator",
                   response.status);
}

// A URL of another origin that the registry handed out (an upload Location at its storage) gets no Authorization:
// credentials belong to the origin they were issued for (RFC 9110 §11.6.2's protection space), as docker,
// containerd and go-containerregistry send none there. The URL itself is the storage's capability.
net::HttpResponse RegistryClient::send_elsewhere(const net::HttpRequest& request, const net::Origin& origin) {
  net::HttpResponse resp = transport_(request);
  if (resp.status == 401 || resp.status == 403) {
    auto from = net::origin_of(resp.url);
    throw refused_elsewhere(from ? *from : origin, resp, "named by");
  }
  return resp;
}

// The one-line cause of a refusal after the auth exchange: who asked for what, and what to do about it.
AuthError RegistryClient::denied(const Credential& cred, const std::string& repo, bool push,
                                 const net::HttpResponse& r, const std::string& extra) const {
  const bool google = net::is_google_registry_host(registry_);
  std::string action = repo.empty() ? "access" : (push ? "push to " : "pull from ") + repo;
  std::string who = cred.anonymous() ? "anonymous access was refused"
                                     : "authentication as " + cred.describe() + " failed";
  std::string hint;
  if (cred.anonymous()) {
    hint = login_hint(registry_, google);
  } else if (r.status == 403) {
    hint = google ? cred.describe() + " needs roles/artifactregistry." + (push ? "writer" : "reader") +
                        " on the repository (on GCE the VM's access scopes may also limit it)"
                  : "check that " + (cred.identity.empty() ? cred.describe() : cred.identity) + " may " +
                        (push ? "push to " : "pull from ") + (repo.empty() ? registry_ : repo) +
                        ", or log in as someone who may: docker login " + registry_;
  } else {
    hint = google ? "refresh the credentials: gcloud auth application-default login (or check "
                    "GOOGLE_APPLICATION_CREDENTIALS)"
                  : "check the password or token and log in again: docker login " + registry_;
  }
  return AuthError(registry_ + " denied " + action + ": " + who + " (" + status_with_codes(r) + extra + ")", hint,
                   r.status);
}

// Later requests answer the registry's Bearer challenge up front; a new realm or service holds none of the scopes.
void RegistryClient::adopt_bearer_challenge(const AuthChallenge& challenge) {
  std::string realm = challenge.param("realm");
  std::string service = challenge.param("service");
  validate_realm(realm, registry_, scheme_);
  std::lock_guard lock(mutex_);
  if (state_->realm != realm || state_->service != service) state_->held_scopes.clear();
  state_->scheme = State::Scheme::Bearer;
  state_->realm = realm;
  state_->service = service;
}

net::HttpResponse RegistryClient::send(net::HttpRequest request, const std::vector<std::string>& scopes) {
  if (!request.url.empty() && request.url[0] == '/') request.url = base_url() + request.url;
  remove_header(request, "Authorization");
  if (auto to = net::origin_of(request.url), own = net::origin_of(base_url()); to && own && !(*to == *own))
    return send_elsewhere(request, *to);
  bool push = false;
  const std::string repo = repository_of(scopes, &push);
  Credential cred = keychain_.resolve(registry_, repo);

  auto with_auth = [&](const std::string& auth) {
    net::HttpRequest r = request;
    if (!auth.empty()) r.headers.emplace_back("Authorization", auth);
    return r;
  };

  std::string auth = authorization(cred, scopes, {}, {});
  net::HttpResponse resp = transport_(with_auth(auth));
  if (resp.status != 401 && resp.status != 403) return resp;
  // A 401/403 from another host (a redirect to storage) is not this registry's challenge to answer.
  if (auto from = net::origin_of(resp.url), to = net::origin_of(request.url); from && to && !(*from == *to))
    throw refused_elsewhere(*from, resp, "redirected to from");
  if (resp.status == 403) throw denied(cred, repo, push, resp);

  auto challenges = parse_www_authenticate(header_values(resp, "www-authenticate"));
  const AuthChallenge* ch = pick_challenge(challenges);
  if (!ch)
    throw denied(cred, repo, push, resp,
                 challenges.empty() ? ", no WWW-Authenticate challenge" : ", no Basic or Bearer challenge");
  if (!cred.registry_token.empty()) throw denied(cred, repo, push, resp, ", the registry token was not accepted");

  std::string retry_auth;
  bool fetched = true;  // Basic: nothing to fetch again
  std::vector<std::string> challenge_scopes;
  if (ch->scheme == "basic") {
    {
      std::lock_guard lock(mutex_);
      state_->scheme = State::Scheme::Basic;
    }
    if (cred.anonymous() || auth.rfind("Basic ", 0) == 0) throw denied(cred, repo, push, resp);
    retry_auth = authorization(cred, scopes, {}, {});
  } else {
    if (ch->param("realm").empty()) throw denied(cred, repo, push, resp, ", a Bearer challenge without a realm");
    adopt_bearer_challenge(*ch);
    challenge_scopes = split_scopes(ch->param("scope"));
    fetched = false;
    retry_auth = authorization(cred, scopes, challenge_scopes, auth, &fetched);
  }
  net::HttpResponse again = transport_(with_auth(retry_auth));
  // A token shared with other requests may lapse before this one sends it, and so may one it fetched itself while
  // others used it: a 401 for a token not its own, or one saying the token lapsed (RFC 6750 §3.1 invalid_token), is
  // answered with a token fetched again, at most twice. Any other refusal of its own token is the credential's.
  for (int refetch = 0; again.status == 401 && (!fetched || lapsed_token(again)) && refetch < 2; ++refetch) {
    retry_auth = authorization(cred, scopes, challenge_scopes, retry_auth, &fetched);
    again = transport_(with_auth(retry_auth));
  }
  if (again.status == 401 || again.status == 403) throw denied(cred, repo, push, again);
  return again;
}

}  // namespace trainpack::registry
