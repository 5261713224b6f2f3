// RegistryClient's auth exchange against an in-memory fake registry and token server (no sockets): Basic, Bearer
// with scopes, identity-token POST with GET fallback, registry tokens, retries, caching, realm checks, messages.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "net/encoding.h"
#include "registry/auth_challenge.h"
#include "registry/registry_client.h"
#include "registry/token_cache.h"

using namespace trainpack;
using namespace trainpack::registry;
using namespace trainpack::net;

namespace {

class FixedProvider : public CredentialProvider {
 public:
  explicit FixedProvider(Credential c) : c_(std::move(c)) {}
  std::optional<Credential> find(const std::string&, const std::string&) override {
    if (c_.anonymous()) return std::nullopt;
    return c_;
  }

 private:
  Credential c_;
};

Keychain keychain_with(Credential c) {
  std::vector<std::unique_ptr<CredentialProvider>> v;
  v.push_back(std::make_unique<FixedProvider>(std::move(c)));
  return Keychain(std::move(v));
}

Credential user(const std::string& u, const std::string& p) {
  Credential c;
  c.username = u;
  c.password = p;
  c.identity = u;
  c.source = "docker config /x/config.json";
  return c;
}

std::string header(const HttpRequest& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return {};
}

std::map<std::string, std::vector<std::string>> query_of(const std::string& url) {
  std::map<std::string, std::vector<std::string>> q;
  size_t qm = url.find('?');
  if (qm == std::string::npos) return q;
  std::string s = url.substr(qm + 1);
  size_t i = 0;
  while (i <= s.size()) {
    size_t amp = s.find('&', i);
    if (amp == std::string::npos) amp = s.size();
    std::string kv = s.substr(i, amp - i);
    size_t eq = kv.find('=');
    auto decode = [](std::string v) {
      std::string out;
      for (size_t j = 0; j < v.size(); ++j) {
        if (v[j] == '%' && j + 2 < v.size()) {
          out += static_cast<char>(std::stoi(v.substr(j + 1, 2), nullptr, 16));
          j += 2;
        } else {
          out += v[j];
        }
      }
      return out;
    };
    if (!kv.empty()) q[decode(kv.substr(0, eq))].push_back(eq == std::string::npos ? "" : decode(kv.substr(eq + 1)));
    i = amp + 1;
  }
  return q;
}

HttpResponse json_response(long status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  r.headers = {{"content-type", "application/json"}};
  return r;
}

// A registry at http://reg.test with Basic or Bearer auth and its token server at http://reg.test/token.
struct AuthRegistry {
  enum class Mode { Basic, Bearer } mode = Mode::Bearer;
  std::string user = "testuser", password = "testpass";
  std::string refresh_token = "refresh-secret";
  bool token_post_supported = false;
  int expires_in = 300;
  bool grant_nothing = false;  // token server hands out tokens without access
  int lapsing_tokens = 0;      // the first N tokens lapse before anyone uses them
  long token_status = 200;

  std::mutex mutex;
  std::vector<HttpRequest> requests;
  std::vector<HttpRequest> token_requests;
  std::map<std::string, std::set<std::string>> tokens;  // token → "repo:action" grants
  int next = 0;

  HttpResponse operator()(const HttpRequest& r) {
    std::lock_guard lock(mutex);
    requests.push_back(r);
    if (r.url.rfind("http://reg.test/token", 0) == 0) return token(r);
    return registry(r);
  }

  bool basic_ok(const std::string& auth) {
    return auth == "Basic " + base64_encode(user + ":" + password);
  }

  HttpResponse token(const HttpRequest& r) {
    token_requests.push_back(r);
    if (token_status != 200) return json_response(token_status, R"({"errors":[{"code":"UNAVAILABLE","message":"down"}]})");
    std::vector<std::string> scopes;
    bool authed = false;
    if (r.method == "POST") {
      if (!token_post_supported) return json_response(404, "{}");
      auto q = query_of("?" + r.body);
      if (q["grant_type"] != std::vector<std::string>{"refresh_token"} || q["refresh_token"].empty() ||
          q["refresh_token"][0] != refresh_token)
        return json_response(401, R"({"errors":[{"code":"UNAUTHORIZED"}]})");
      authed = true;
      if (!q["scope"].empty()) scopes = split_scopes(q["scope"][0]);
    } else {
      std::string auth = header(r, "Authorization");
      if (!auth.empty()) {
        if (!basic_ok(auth)) return json_response(401, R"({"errors":[{"code":"UNAUTHORIZED","message":"bad creds"}]})");
        authed = true;
      }
      scopes = query_of(r.url)["scope"];
    }
    std::string tok = "tok-" + std::to_string(++next);
    auto& grants = tokens[tok];
    for (const auto& s : scopes) {
      auto item = parse_scope_item(s);
      if (!item || grant_nothing) continue;
      for (const auto& a : item->actions)
        if (authed || a == "pull") grants.insert(item->name + ":" + a);
    }
    if (next <= lapsing_tokens) tokens.erase(tok);
    return json_response(200, R"({"access_token":")" + tok + R"(","expires_in":)" + std::to_string(expires_in) + "}");
  }

  HttpResponse challenge(const std::string& scope, const std::string& error) {
    HttpResponse resp = json_response(401, R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]})");
    if (mode == Mode::Basic) {
      resp.headers.emplace_back("www-authenticate", R"(Basic realm="fake")");
    } else {
      std::string c = R"(Bearer realm="http://reg.test/token",service="fake-registry")";
      if (!scope.empty()) c += ",scope=\"" + scope + "\"";
      if (!error.empty()) c += ",error=\"" + error + "\"";
      resp.headers.emplace_back("www-authenticate", c);
    }
    return resp;
  }

  HttpResponse registry(const HttpRequest& r) {
    // /v2/<repo>/tags/list (pull) or /v2/<repo>/blobs/uploads/ (push)
    std::string path = r.url.substr(std::string("http://reg.test").size());
    std::string repo, action;
    if (path == "/v2/") {
      action = "";
    } else if (size_t p = path.find("/tags/list"); p != std::string::npos) {
      repo = path.substr(4, p - 4);
      action = "pull";
    } else if (size_t u = path.find("/blobs/uploads/"); u != std::string::npos) {
      repo = path.substr(4, u - 4);
      action = "push";
    }
    std::string scope = repo.empty() ? "" : "repository:" + repo + ":" + (action == "push" ? "pull,push" : "pull");
    std::string auth = header(r, "Authorization");
    if (mode == Mode::Basic) {
      if (!basic_ok(auth)) return challenge("", "");
    } else {
      if (auth.rfind("Bearer ", 0) != 0) return challenge(scope, "");
      std::string tok = auth.substr(7);
      if (tok == "registry-token-secret") return json_response(200, "{}");
      auto it = tokens.find(tok);
      if (it == tokens.end()) return challenge(scope, "invalid_token");
      if (!action.empty() && !it->second.count(repo + ":" + action)) return challenge(scope, "insufficient_scope");
    }
    return json_response(action == "push" ? 202 : 200, "{}");
  }

  int token_calls() {
    std::lock_guard lock(mutex);
    return static_cast<int>(token_requests.size());
  }
};

HttpRequest get(const std::string& path) {
  HttpRequest r;
  r.url = path;
  return r;
}

HttpRequest post(const std::string& path) {
  HttpRequest r;
  r.method = "POST";
  r.url = path;
  r.idempotent = false;
  return r;
}

std::string everything(const Error& e) { return std::string(e.what()) + " | " + e.hint(); }

}  // namespace

TEST(RegistryAuth, BaseUrlAndScopes) {
  Keychain k({});
  AuthRegistry fake;
  RegistryClient hub(std::ref(fake), k, "docker.io", "https");
  EXPECT_EQ(hub.base_url(), "https://registry-1.docker.io");
  RegistryClient local(std::ref(fake), k, "127.0.0.1:5000", "http");
  EXPECT_EQ(local.base_url(), "http://127.0.0.1:5000");
  EXPECT_EQ(pull_scope("base/python"), "repository:base/python:pull");
  EXPECT_EQ(push_scope("base/python"), "repository:base/python:pull,push");
}

TEST(RegistryAuth, BasicIsAnsweredOnceThenSentUpFront) {
  AuthRegistry fake;
  fake.mode = AuthRegistry::Mode::Basic;
  Keychain k = keychain_with(user("testuser", "testpass"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  EXPECT_EQ(c.send(get("/v2/base/python/tags/list"), {pull_scope("base/python")}).status, 200);
  EXPECT_EQ(fake.requests.size(), 2u);
  EXPECT_EQ(c.send(post("/v2/base/python/blobs/uploads/"), {push_scope("base/python")}).status, 202);
  EXPECT_EQ(fake.requests.size(), 3u);  // no second challenge
  EXPECT_EQ(header(fake.requests.back(), "Authorization"), "Basic " + base64_encode("testuser:testpass"));
}

TEST(RegistryAuth, BasicWrongPasswordNamesSourceAndIdentity) {
  AuthRegistry fake;
  fake.mode = AuthRegistry::Mode::Basic;
  Keychain k = keychain_with(user("testuser", "wrong-secret-pw"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  try {
    c.send(post("/v2/base/python/blobs/uploads/"), {push_scope("base/python")});
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()),
              "reg.test denied push to base/python: authentication as testuser from docker config /x/config.json "
              "failed (401 UNAUTHORIZED)");
    EXPECT_NE(e.hint().find("docker login reg.test"), std::string::npos) << e.hint();
    EXPECT_EQ(everything(e).find("wrong-secret-pw"), std::string::npos);
    EXPECT_EQ(e.status(), 401);
  }
  EXPECT_EQ(fake.requests.size(), 2u);  // one retry, no more
}

TEST(RegistryAuth, BasicAnonymousIsRefusedWithLoginHint) {
  AuthRegistry fake;
  fake.mode = AuthRegistry::Mode::Basic;
  Keychain k({});
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  try {
    c.send(get("/v2/base/python/tags/list"), {pull_scope("base/python")});
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()),
              "reg.test denied pull from base/python: anonymous access was refused (401 UNAUTHORIZED)");
    EXPECT_NE(e.hint().find("docker login reg.test"), std::string::npos);
  }
}

TEST(RegistryAuth, BasicNeedsUserAndPassword) {
  AuthRegistry fake;
  fake.mode = AuthRegistry::Mode::Basic;
  Credential c = user("testuser", "");
  c.identity_token = "idt";
  Keychain k = keychain_with(c);
  RegistryClient client(std::ref(fake), k, "reg.test", "http");
  EXPECT_THROW(client.send(get("/v2/a/tags/list"), {pull_scope("a")}), AuthError);
}

TEST(RegistryAuth, BearerAnonymousPullThenCachedToken) {
  AuthRegistry fake;
  Keychain k({});
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  EXPECT_EQ(c.send(get("/v2/base/python/tags/list"), {pull_scope("base/python")}).status, 200);
  ASSERT_EQ(fake.token_calls(), 1);
  auto q = query_of(fake.token_requests[0].url);
  EXPECT_EQ(q["service"], std::vector<std::string>{"fake-registry"});
  EXPECT_EQ(q["scope"], std::vector<std::string>{"repository:base/python:pull"});
  EXPECT_TRUE(header(fake.token_requests[0], "Authorization").empty());
  EXPECT_EQ(c.send(get("/v2/base/python/tags/list"), {pull_scope("base/python")}).status, 200);
  EXPECT_EQ(fake.token_calls(), 1);  // cached
  EXPECT_EQ(fake.requests.size(), 4u);  // 401, token, 200, 200
}

TEST(RegistryAuth, BearerAnonymousPushIsDenied) {
  AuthRegistry fake;
  Keychain k({});
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  try {
    c.send(post("/v2/base/python/blobs/uploads/"), {push_scope("base/python")});
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()),
              "reg.test denied push to base/python: anonymous access was refused (401 UNAUTHORIZED)");
  }
}

TEST(RegistryAuth, NewScopesComeFirstInTheUnion) {
  AuthRegistry fake;
  Keychain k = keychain_with(user("testuser", "testpass"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  ASSERT_EQ(c.send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
  ASSERT_EQ(c.send(post("/v2/b/blobs/uploads/"), {push_scope("b")}).status, 202);
  ASSERT_EQ(fake.token_calls(), 2);
  auto q = query_of(fake.token_requests[1].url);
  EXPECT_EQ(q["scope"], (std::vector<std::string>{"repository:b:pull,push", "repository:a:pull"}));
  EXPECT_EQ(q["account"], std::vector<std::string>{"testuser"});
  EXPECT_EQ(header(fake.token_requests[1], "Authorization"), "Basic " + base64_encode("testuser:testpass"));
  // The union token covers both: no more token calls.
  ASSERT_EQ(c.send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
  ASSERT_EQ(c.send(post("/v2/b/blobs/uploads/"), {push_scope("b")}).status, 202);
  EXPECT_EQ(fake.token_calls(), 2);
}

TEST(RegistryAuth, InsufficientScopeIsRefetchedOnceWithTheChallengeScope) {
  AuthRegistry fake;
  Keychain k = keychain_with(user("testuser", "testpass"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  ASSERT_EQ(c.send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
  // The caller asks only for pull, but the request needs push: the 401's scope is added first.
  ASSERT_EQ(c.send(post("/v2/a/blobs/uploads/"), {pull_scope("a")}).status, 202);
  ASSERT_EQ(fake.token_calls(), 2);
  EXPECT_EQ(query_of(fake.token_requests[1].url)["scope"],
            (std::vector<std::string>{"repository:a:pull,push", "repository:a:pull"}));
}

TEST(RegistryAuth, AStubbornRefusalIsRetriedOnlyOnce) {
  AuthRegistry fake;
  fake.grant_nothing = true;
  Keychain k = keychain_with(user("testuser", "testpass"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  try {
    c.send(post("/v2/a/blobs/uploads/"), {push_scope("a")});
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()),
              "reg.test denied push to a: authentication as testuser from docker config /x/config.json failed (401 "
              "UNAUTHORIZED)");
  }
  EXPECT_EQ(fake.token_calls(), 1);
  EXPECT_EQ(fake.requests.size(), 3u);  // request, token, retry
}

// Requests share a token: one fetched by another request may expire (or be used up) before this one sends it. That
// refusal is the token's, not the credential's: a token of this request's own is fetched, and only its refusal fails.
TEST(RegistryAuth, ATokenAnotherRequestFetchedThatLapsedIsFetchedAgain) {
  AuthRegistry fake;
  Keychain k = keychain_with(user("testuser", "testpass"));
  bool armed = false, other_sent = false;
  RegistryClient* client = nullptr;
  auto transport = [&](const HttpRequest& r) {
    if (armed && header(r, "Authorization") == "Bearer tok-1") {
      // Meanwhile another request finds tok-1 lapsed, fetches tok-2, uses it, and tok-2 lapses too.
      armed = false;
      other_sent = true;
      EXPECT_EQ(client->send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
      fake.tokens.erase("tok-2");
    }
    return fake(r);
  };
  RegistryClient c(transport, k, "reg.test", "http");
  client = &c;
  ASSERT_EQ(c.send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
  fake.tokens.erase("tok-1");
  armed = true;
  EXPECT_EQ(c.send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
  EXPECT_TRUE(other_sent);
  EXPECT_EQ(fake.token_calls(), 3) << "tok-1 by the first request, tok-2 by the other, tok-3 by this one";
  EXPECT_EQ(header(fake.requests.back(), "Authorization"), "Bearer tok-3");
}

// A token of this request's own that lapsed before it arrived (invalid_token) is fetched again, twice at most.
TEST(RegistryAuth, ATokenThatLapsedBeforeItArrivedIsFetchedAgainTwiceAtMost) {
  for (int lapsing : {2, 3}) {
    AuthRegistry fake;
    fake.lapsing_tokens = lapsing;
    Keychain k = keychain_with(user("testuser", "testpass"));
    RegistryClient c(std::ref(fake), k, "reg.test", "http");
    if (lapsing == 2) {
      EXPECT_EQ(c.send(post("/v2/a/blobs/uploads/"), {push_scope("a")}).status, 202);
    } else {
      EXPECT_THROW(c.send(post("/v2/a/blobs/uploads/"), {push_scope("a")}), AuthError);
    }
    EXPECT_EQ(fake.token_calls(), 3);
  }
}

TEST(RegistryAuth, WrongPasswordAtTheTokenServer) {
  AuthRegistry fake;
  Keychain k = keychain_with(user("testuser", "nope-secret"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  try {
    c.send(get("/v2/a/tags/list"), {pull_scope("a")});
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg,
              "reg.test denied pull from a: authentication as testuser from docker config /x/config.json failed "
              "(token server reg.test answered 401 UNAUTHORIZED)");
    EXPECT_EQ(everything(e).find("nope-secret"), std::string::npos);
  }
}

TEST(RegistryAuth, TokenServerFailureIsAnError) {
  AuthRegistry fake;
  fake.token_status = 503;
  Keychain k({});
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  try {
    c.send(get("/v2/a/tags/list"), {pull_scope("a")});
    FAIL() << "expected Error";
  } catch (const AuthError&) {
    FAIL() << "a failing token server is not an auth refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("token server reg.test of reg.test answered 503 UNAVAILABLE: down"),
              std::string::npos)
        << e.what();
  }
}

TEST(RegistryAuth, IdentityTokenPostsAndFallsBackToGet) {
  Credential idt;
  idt.identity_token = "refresh-secret";
  idt.source = "docker config /x/config.json";
  {
    AuthRegistry fake;
    fake.token_post_supported = true;
    Keychain k = keychain_with(idt);
    RegistryClient c(std::ref(fake), k, "reg.test", "http");
    ASSERT_EQ(c.send(post("/v2/a/blobs/uploads/"), {push_scope("a")}).status, 202);
    ASSERT_EQ(fake.token_calls(), 1);
    const auto& t = fake.token_requests[0];
    EXPECT_EQ(t.method, "POST");
    EXPECT_EQ(header(t, "Content-Type"), "application/x-www-form-urlencoded");
    auto form = query_of("?" + t.body);
    EXPECT_EQ(form["grant_type"], std::vector<std::string>{"refresh_token"});
    EXPECT_EQ(form["service"], std::vector<std::string>{"fake-registry"});
    EXPECT_EQ(form["scope"], std::vector<std::string>{"repository:a:pull,push"});
  }
  {
    AuthRegistry fake;  // POST → 404: GET (anonymous: only pull is granted)
    Keychain k = keychain_with(idt);
    RegistryClient c(std::ref(fake), k, "reg.test", "http");
    ASSERT_EQ(c.send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
    ASSERT_EQ(fake.token_calls(), 2);
    EXPECT_EQ(fake.token_requests[0].method, "POST");
    EXPECT_EQ(fake.token_requests[1].method, "GET");
  }
}

TEST(RegistryAuth, RegistryTokenIsSentAsIs) {
  AuthRegistry fake;
  Credential rt;
  rt.registry_token = "registry-token-secret";
  rt.source = "docker config /x/config.json";
  Keychain k = keychain_with(rt);
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  ASSERT_EQ(c.send(get("/v2/a/tags/list"), {pull_scope("a")}).status, 200);
  EXPECT_EQ(fake.token_calls(), 0);
  EXPECT_EQ(header(fake.requests[0], "Authorization"), "Bearer registry-token-secret");
}

TEST(RegistryAuth, CallerAuthorizationHeaderIsReplaced) {
  AuthRegistry fake;
  fake.mode = AuthRegistry::Mode::Basic;
  Keychain k = keychain_with(user("testuser", "testpass"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  HttpRequest r = get("/v2/a/tags/list");
  r.headers.emplace_back("Authorization", "Bearer stale");
  ASSERT_EQ(c.send(r, {pull_scope("a")}).status, 200);
  EXPECT_TRUE(header(fake.requests[0], "Authorization").empty());
}

TEST(RegistryAuth, ParallelSendsShareTokens) {
  AuthRegistry fake;
  Keychain k = keychain_with(user("testuser", "testpass"));
  RegistryClient c(std::ref(fake), k, "reg.test", "http");
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 10; ++j)
        if (c.send(post("/v2/p/blobs/uploads/"), {push_scope("p")}).status == 202) ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 80);
  EXPECT_EQ(fake.token_calls(), 1);  // the racing first requests wait for the one fetch, not one each
}

TEST(RegistryAuth, ExpiredTokensAreFetchedAgain) {
  TokenCache cache(std::chrono::seconds(30));
  auto now = std::chrono::system_clock::now();
  BearerToken t;
  t.token = "x";
  t.issued_at = now - std::chrono::seconds(50);
  t.expires_at = now + std::chrono::seconds(10);  // 60 s token, margin min(30, 30) → stale
  TokenKey key("r", "s", "c", {"b", "a", "a"});
  EXPECT_EQ(key.scopes, (std::vector<std::string>{"a", "b"}));
  cache.put(key, t);
  EXPECT_FALSE(cache.get(key));
  t.issued_at = now;
  t.expires_at = now + std::chrono::seconds(300);
  cache.put(key, t);
  EXPECT_EQ(cache.get(key), "x");
  EXPECT_EQ(cache.get(TokenKey("r", "s", "c", {"a", "b"})), "x");  // order does not matter
  EXPECT_FALSE(cache.get(TokenKey("r", "s", "other", {"a", "b"})));
  EXPECT_EQ(cache.find_covering("r", "s", "c", {"a"}), "x");
  EXPECT_FALSE(cache.find_covering("r", "s", "c", {"a", "z"}));
}

TEST(RegistryAuth, TokenCacheUsesItsClock) {
  auto t0 = std::chrono::system_clock::now();
  auto now = t0;
  TokenCache cache(std::chrono::seconds(30), [&] { return now; });
  BearerToken t{"tok", t0, t0 + std::chrono::seconds(300), ""};
  TokenKey key("r", "s", "c", {"a"});
  cache.put(key, t);
  now = t0 + std::chrono::seconds(269);
  EXPECT_TRUE(cache.get(key));
  now = t0 + std::chrono::seconds(271);
  EXPECT_FALSE(cache.get(key));
}

TEST(RegistryAuth, TokenResponses) {
  auto now = std::chrono::system_clock::now();
  auto a = parse_token_response(R"({"token":"t1","access_token":"t2"})", now);
  EXPECT_EQ(a.token, "t1");
  EXPECT_EQ(a.expires_at - a.issued_at, std::chrono::seconds(60));  // default
  auto b = parse_token_response(R"({"access_token":"t2","expires_in":10})", now);
  EXPECT_EQ(b.token, "t2");
  EXPECT_EQ(b.expires_at - b.issued_at, std::chrono::seconds(60));  // clamped
  auto c = parse_token_response(R"({"token":"t3","expires_in":"600","issued_at":"2030-01-01T00:00:00Z"})", now);
  EXPECT_EQ(c.expires_at - c.issued_at, std::chrono::seconds(600));
  EXPECT_EQ(std::chrono::system_clock::to_time_t(c.issued_at), 1893456000);
  EXPECT_THROW(parse_token_response("<html>", now), Error);
  EXPECT_THROW(parse_token_response(R"({"expires_in":3})", now), Error);
}

TEST(RegistryAuth, RealmValidation) {
  EXPECT_NO_THROW(validate_realm("https://auth.docker.io/token", "docker.io", "https"));
  EXPECT_NO_THROW(validate_realm("http://127.0.0.1:5003/token", "127.0.0.1:5002", "http"));
  EXPECT_NO_THROW(validate_realm("http://127.0.0.1:5003/token", "localhost:5002", "http"));
  EXPECT_THROW(validate_realm("http://auth.example.com/token", "reg.example.com", "https"), AuthError);
  EXPECT_THROW(validate_realm("https://169.254.169.254/latest", "reg.example.com", "https"), AuthError);
  EXPECT_THROW(validate_realm("https://10.1.2.3/token", "reg.example.com", "https"), AuthError);
  EXPECT_THROW(validate_realm("https://[::1]/token", "reg.example.com", "https"), AuthError);
  EXPECT_THROW(validate_realm("https://127.0.0.1/token", "reg.example.com", "https"), AuthError);
  EXPECT_THROW(validate_realm("ftp://x/token", "reg.example.com", "https"), AuthError);
  EXPECT_NO_THROW(validate_realm("https://10.1.2.3:8443/token", "10.1.2.3:5000", "https"));
}

TEST(RegistryAuth, RealmOnAnInternalAddressIsNotContacted) {
  AuthRegistry fake;
  Keychain k = keychain_with(user("testuser", "testpass"));
  auto transport = [&](const HttpRequest& r) {
    HttpResponse resp = json_response(401, "{}");
    resp.headers.emplace_back("www-authenticate", R"(Bearer realm="https://169.254.169.254/token",service="x")");
    fake.requests.push_back(r);
    return resp;
  };
  RegistryClient c(transport, k, "reg.example.com", "https");
  EXPECT_THROW(c.send(get("/v2/a/tags/list"), {pull_scope("a")}), AuthError);
  EXPECT_EQ(fake.requests.size(), 1u);
}

TEST(RegistryAuth, DescribeRegistryError) {
  HttpResponse r = json_response(
      400, R"({"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not match"},{"code":"SIZE_INVALID"}]})");
  EXPECT_EQ(describe_registry_error(r), "400 DIGEST_INVALID: provided digest did not match; SIZE_INVALID");
  HttpResponse html;
  html.status = 502;
  html.body = "<html>bad gateway</html>";
  EXPECT_EQ(describe_registry_error(html), "502 Bad Gateway");
  HttpResponse odd;
  odd.status = 499;
  EXPECT_EQ(describe_registry_error(odd), "499");
}

TEST(RegistryAuth, RefusalFromARedirectTargetIsNotAnsweredWithRegistryCredentials) {
  Keychain k = keychain_with(user("testuser", "testpass"));
  std::vector<HttpRequest> seen;
  auto transport = [&](const HttpRequest& r) {
    seen.push_back(r);
    HttpResponse resp = json_response(403, "<Error>AccessDenied</Error>");
    resp.url = "https://storage.example.com/blob?sig=x";
    return resp;
  };
  RegistryClient c(transport, k, "reg.example.com", "https");
  try {
    c.send(get("/v2/a/blobs/sha256:00"), {pull_scope("a")});
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    EXPECT_EQ(std::string(e.what()), "storage.example.com (redirected to from reg.example.com) answered 403 Forbidden");
  }
  EXPECT_EQ(seen.size(), 1u);
}

// An upload Location on another origin (the registry's storage) gets no credentials, Basic or Bearer, and a refusal
// there is not answered with them.
TEST(RegistryAuth, UrlsOfAnotherOriginGetNoCredentials) {
  for (auto mode : {AuthRegistry::Mode::Basic, AuthRegistry::Mode::Bearer}) {
    AuthRegistry fake;
    fake.mode = mode;
    Keychain k = keychain_with(user("testuser", "testpass"));
    std::vector<HttpRequest> elsewhere;
    auto transport = [&](const HttpRequest& r) {
      if (r.url.rfind("http://reg.test/", 0) == 0) return fake(r);
      elsewhere.push_back(r);
      HttpResponse resp = json_response(r.method == "DELETE" ? 401 : 201, "{}");
      resp.url = r.url;
      return resp;
    };
    RegistryClient c(transport, k, "reg.test", "http");
    ASSERT_EQ(c.send(post("/v2/a/blobs/uploads/"), {push_scope("a")}).status, 202);
    HttpRequest put;
    put.method = "PUT";
    put.url = "http://storage.test/upload/1?digest=sha256%3A00";
    EXPECT_EQ(c.send(put, {push_scope("a")}).status, 201);
    HttpRequest same_host_other_port = put;
    same_host_other_port.url = "http://reg.test:5001/upload/2";
    EXPECT_EQ(c.send(same_host_other_port, {push_scope("a")}).status, 201);
    HttpRequest del;
    del.method = "DELETE";
    del.url = "http://storage.test/upload/1";
    try {
      c.send(del, {push_scope("a")});
      ADD_FAILURE() << "expected AuthError";
    } catch (const AuthError& e) {
      EXPECT_EQ(std::string(e.what()), "storage.test (named by reg.test) answered 401 Unauthorized");
    }
    ASSERT_EQ(elsewhere.size(), 3u);
    for (const HttpRequest& r : elsewhere) EXPECT_EQ(header(r, "Authorization"), "") << r.method << " " << r.url;
  }
}
