#include "registry/credentials.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "net/encoding.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/process.h"
#include "support/redact.h"
#include "support/text.h"

extern char** environ;

namespace trainpack::registry {

namespace fs = std::filesystem;

// ---- Credential ---------------------------------------------------------------------------------------------------

std::string Credential::describe() const {
  if (anonymous()) return "anonymous";
  std::string who;
  if (!identity.empty()) who = identity;
  else if (!username.empty() && username != "<token>") who = username;
  else if (!registry_token.empty()) who = "a registry token";
  else if (!identity_token.empty()) who = "an identity token";
  else who = "a password without a user name";
  if (source.empty()) return who;
  return who + " from " + source;
}

// ---- small helpers ------------------------------------------------------------------------------------------------

namespace {

std::string getenv_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

fs::path home_dir() {
  std::string h = getenv_str("HOME");
  if (!h.empty()) return h;
  struct passwd pw {};
  struct passwd* result = nullptr;
  char buf[4096];
  if (::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &result) == 0 && result && result->pw_dir) return result->pw_dir;
  return "/";
}

bool has_scheme(std::string_view key) {
  return key.rfind("http://", 0) == 0 || key.rfind("https://", 0) == 0;
}

std::string strip_scheme(std::string_view key) {
  if (key.rfind("http://", 0) == 0) key.remove_prefix(7);
  else if (key.rfind("https://", 0) == 0) key.remove_prefix(8);
  return std::string(key);
}

// Docker Hub's aliases all become "docker.io".
std::string normalize_host(std::string host) {
  host = ascii_lower(std::move(host));
  if (is_docker_hub_host(host)) return "docker.io";
  return host;
}

// "host/path" with the host normalised; the path kept as written (without trailing '/').
std::string normalize_repo_key(std::string_view key) {
  std::string s = strip_scheme(key);
  while (!s.empty() && s.back() == '/') s.pop_back();
  size_t slash = s.find('/');
  if (slash == std::string::npos) return normalize_host(s);
  return normalize_host(s.substr(0, slash)) + s.substr(slash);
}

std::string first_line(std::string_view text, size_t max = 200) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    if (!line.empty()) {
      std::string out(line.substr(0, max));
      for (auto& c : out)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
      if (line.size() > max) out += "...";
      return out;
    }
    start = end + 1;
  }
  return {};
}

}  // namespace

std::string convert_to_hostname(std::string_view key) {
  std::string s = strip_scheme(key);
  size_t slash = s.find('/');
  if (slash != std::string::npos) s.resize(slash);
  return s;
}

bool is_docker_hub_host(std::string_view host) {
  return host == "docker.io" || host == "index.docker.io" || host == "registry-1.docker.io";
}

std::pair<std::string, std::string> decode_docker_auth(std::string_view auth, const std::string& where) {
  auto decoded = net::base64_decode(auth);
  if (!decoded)
    throw Error(where + ": the \"auth\" value is not base64",
                "log in again (docker login / podman login) or fix the entry");
  size_t colon = decoded->find(':');
  if (colon == std::string::npos)
    throw Error(where + ": the \"auth\" value does not decode to user:password",
                "log in again (docker login / podman login) or fix the entry");
  std::string user = decoded->substr(0, colon);
  std::string password = decoded->substr(colon + 1);
  while (!password.empty() && password.back() == '\0') password.pop_back();
  size_t lead = 0;
  while (lead < password.size() && password[lead] == '\0') ++lead;
  password.erase(0, lead);
  if (user.empty())
    throw Error(where + ": the \"auth\" value has an empty user name",
                "log in again (docker login / podman login) or fix the entry");
  return {user, password};
}

// ---- credential helpers -------------------------------------------------------------------------------------------

namespace {

std::mutex g_helper_mutex;
std::map<std::pair<std::string, std::string>, std::optional<Credential>> g_helper_cache;


}  // namespace

std::optional<Credential> run_credential_helper(const std::string& suffix, const std::string& server_address,
                                                const std::string& configured_in,
                                                std::chrono::milliseconds timeout) {
  const std::string program = "docker-credential-" + suffix;
  {
    std::lock_guard lock(g_helper_mutex);
    auto it = g_helper_cache.find({suffix, server_address});
    if (it != g_helper_cache.end()) return it->second;
  }
  const std::string where = configured_in.empty() ? std::string() : " (" + configured_in + ")";
  if (suffix.empty() || suffix.find('/') != std::string::npos)
    throw Error("invalid credential helper name \"" + suffix + "\"" + where,
                "credsStore/credHelpers values name a program docker-credential-<value> on PATH");
  const std::string exe = find_program(program);
  if (exe.empty())
    throw Error("credential helper " + program + " is not on PATH" + where,
                "install " + program + " or remove it from the configuration that names it");
  ProcessResult run = run_process({exe, "get"}, server_address, timeout);
  if (run.timed_out)
    throw Error(program + " get for " + server_address + " did not answer within " +
                    std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) + " s" + where,
                "check that the helper works: echo " + server_address + " | " + program + " get");
  std::optional<Credential> result;
  if (run.exit_code != 0) {
    // The helpers print "credentials not found in native keychain" (to stdout) for unknown servers.
    if (run.out.find("credentials not found") != std::string::npos ||
        run.err.find("credentials not found") != std::string::npos) {
      result = std::nullopt;
    } else {
      std::string line = mask_secrets(first_line(run.err));
      std::string status =
          run.exit_code < 0 ? std::string("was killed") : "exited with status " + std::to_string(run.exit_code);
      throw Error(program + " get for " + server_address + " " + status + where + (line.empty() ? "" : ": " + line),
                  "check that the helper works: echo " + server_address + " | " + program + " get");
    }
  } else {
    nlohmann::json j = nlohmann::json::parse(run.out, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(program + " get for " + server_address + " printed something that is not a JSON object" + where,
                  "check that the helper works: echo " + server_address + " | " + program + " get");
    auto str = [&](const char* k) {
      auto it = j.find(k);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    std::string user = str("Username"), secret = str("Secret");
    if (!user.empty() || !secret.empty()) {
      Credential c;
      c.source = program + where;
      if (user == "<token>") {
        c.identity_token = secret;
      } else {
        c.username = user;
        c.password = secret;
        c.identity = user;
      }
      result = std::move(c);
    }
  }
  std::lock_guard lock(g_helper_mutex);
  g_helper_cache[{suffix, server_address}] = result;
  return result;
}

void clear_credential_helper_cache() {
  std::lock_guard lock(g_helper_mutex);
  g_helper_cache.clear();
}

// ---- config.json / auth.json --------------------------------------------------------------------------------------

struct DockerConfigProvider::Parsed {
  std::string label;  // "docker config /x/config.json", "DOCKER_AUTH_CONFIG", "podman auth file /y/auth.json"
  struct Entry {
    std::string key;       // as written
    std::string repo_key;  // "host" or "host/path", normalised (legacy URLs reduced to their host)
    std::string auth, username, password, identity_token, registry_token;
    bool empty() const {
      return auth.empty() && username.empty() && password.empty() && identity_token.empty() && registry_token.empty();
    }
  };
  std::vector<Entry> auths;
  std::vector<std::pair<std::string, std::string>> cred_helpers;  // normalised key → suffix
  std::string creds_store;
};

namespace {

using Parsed = DockerConfigProvider::Parsed;

std::unique_ptr<Parsed> parse_auth_json(const std::string& text, const std::string& label) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Never quote the content: it holds secrets.
    throw Error(label + " is not valid JSON (error at byte " + std::to_string(e.byte) + ")",
                "fix or remove the file, then log in again");
  } catch (const nlohmann::json::out_of_range&) {  // a number beyond a double's range ("1e400")
    throw Error(label + " is not valid JSON (a number is out of range)", "fix or remove the file, then log in again");
  }
  if (!j.is_object()) throw Error(label + " is not a JSON object", "fix or remove the file, then log in again");
  auto p = std::make_unique<Parsed>();
  p->label = label;
  if (auto it = j.find("auths"); it != j.end() && it->is_object()) {
    for (auto& [key, value] : it->items()) {
      if (!value.is_object()) continue;
      Parsed::Entry e;
      e.key = key;
      // Legacy URLs ("https://host/v1/") mean the host; bare keys may carry a repository path.
      e.repo_key = has_scheme(key) ? normalize_host(convert_to_hostname(key)) : normalize_repo_key(key);
      // The entry by name: clang before 16 cannot capture a structured binding.
      auto str = [&entry = value](const char* k) {
        auto f = entry.find(k);
        return f != entry.end() && f->is_string() ? f->get<std::string>() : std::string();
      };
      e.auth = str("auth");
      e.username = str("username");
      e.password = str("password");
      e.identity_token = str("identitytoken");
      e.registry_token = str("registrytoken");
      p->auths.push_back(std::move(e));
    }
  }
  if (auto it = j.find("credHelpers"); it != j.end() && it->is_object()) {
    for (auto& [key, value] : it->items()) {
      if (!value.is_string() || value.get<std::string>().empty()) continue;
      std::string k = has_scheme(key) ? normalize_host(convert_to_hostname(key)) : normalize_repo_key(key);
      p->cred_helpers.emplace_back(k, value.get<std::string>());
    }
  }
  if (auto it = j.find("credsStore"); it != j.end() && it->is_string()) p->creds_store = it->get<std::string>();
  return p;
}

// docker's config.json and podman's auth.json hold a few entries; 4 MiB leaves room and stops a /dev/zero.
constexpr std::uintmax_t kAuthFileLimit = 4u << 20;

std::unique_ptr<Parsed> load_auth_file(const fs::path& path, const std::string& label) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  std::string text;
  try {
    text = read_file(path, kAuthFileLimit, "a registry auth file");
  } catch (const Error& e) {
    throw Error(label + ": " + e.what(), "fix it or point the environment elsewhere");
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return nullptr;  // docker treats empty as no config
  return parse_auth_json(text, label);
}

// The candidates to look up, most specific first: docker "host/repo", "host"; podman every prefix.
std::vector<std::string> candidates(const std::string& host, const std::string& repository, bool all_prefixes) {
  std::vector<std::string> out;
  if (!repository.empty()) {
    std::string full = host + "/" + repository;
    out.push_back(full);
    if (all_prefixes) {
      std::string s = full;
      for (size_t slash = s.rfind('/'); slash != std::string::npos && slash > host.size(); slash = s.rfind('/')) {
        s.resize(slash);
        out.push_back(s);
      }
    }
  }
  out.push_back(host);
  return out;
}

// The server address handed to a helper for a lookup key.
std::string server_address_for(const std::string& key) {
  if (key == "docker.io") return kDockerHubAuthKey;
  return key;
}

std::optional<Credential> lookup(const Parsed& p, const std::string& host, const std::string& repository,
                                 bool all_prefixes) {
  auto keys = candidates(host, repository, all_prefixes);
  // 1. credHelpers: a per-host program wins.
  for (const auto& key : keys) {
    for (const auto& [k, suffix] : p.cred_helpers) {
      if (k == key) return run_credential_helper(suffix, server_address_for(key), "credHelpers in " + p.label);
    }
  }
  // 2. auths: "host/repo" before "host"; an empty entry ({} left by docker login with a store) does not count.
  for (const auto& key : keys) {
    for (const auto& e : p.auths) {
      if (e.repo_key != key || e.empty()) continue;
      Credential c;
      c.source = p.label;
      std::string where = p.label + ", entry \"" + e.key + "\"";
      if (!e.auth.empty()) {
        auto [user, password] = decode_docker_auth(e.auth, where);
        c.username = std::move(user);
        c.password = std::move(password);
      } else {
        c.username = e.username;
        c.password = e.password;
      }
      c.identity_token = e.identity_token;
      c.registry_token = e.registry_token;
      if (c.username.empty() && !c.password.empty())
        throw Error(where + " has a password but an empty user name", "log in again (docker login / podman login)");
      if (c.username == "<token>") c.username.clear();
      c.identity = c.username;
      if (!c.anonymous()) return c;
    }
  }
  // 3. credsStore: the default program for every host.
  if (!p.creds_store.empty()) return run_credential_helper(p.creds_store, server_address_for(host), "credsStore in " + p.label);
  return std::nullopt;
}

}  // namespace

DockerConfigProvider::DockerConfigProvider() {
  std::string dir = getenv_str("DOCKER_CONFIG");
  config_file_ = dir.empty() ? home_dir() / ".docker" / "config.json" : fs::path(dir) / "config.json";
  if (const char* v = std::getenv("DOCKER_AUTH_CONFIG"); v && *v) auth_config_json_ = std::string(v);
}

DockerConfigProvider::DockerConfigProvider(fs::path config_file, std::optional<std::string> auth_config_json)
    : config_file_(std::move(config_file)), auth_config_json_(std::move(auth_config_json)) {}

DockerConfigProvider::~DockerConfigProvider() = default;

std::optional<Credential> DockerConfigProvider::find(const std::string& registry, const std::string& repository) {
  std::lock_guard lock(mutex_);
  if (!loaded_) {
    if (auth_config_json_ && !auth_config_json_->empty())
      env_ = parse_auth_json(*auth_config_json_, "DOCKER_AUTH_CONFIG");
    if (!config_file_.empty()) file_ = load_auth_file(config_file_, "docker config " + config_file_.string());
    loaded_ = true;
  }
  std::string host = normalize_host(registry);
  for (const Parsed* p : {env_.get(), file_.get()}) {
    if (!p) continue;
    if (auto c = lookup(*p, host, repository, false)) return c;
  }
  return std::nullopt;
}

PodmanAuthProvider::PodmanAuthProvider() {
  std::string explicit_file = getenv_str("REGISTRY_AUTH_FILE");
  if (!explicit_file.empty()) {
    files_.push_back(explicit_file);
    return;
  }
  std::string runtime = getenv_str("XDG_RUNTIME_DIR");
  if (!runtime.empty()) files_.push_back(fs::path(runtime) / "containers" / "auth.json");
  std::string config_home = getenv_str("XDG_CONFIG_HOME");
  files_.push_back((config_home.empty() ? home_dir() / ".config" : fs::path(config_home)) / "containers" / "auth.json");
}

PodmanAuthProvider::PodmanAuthProvider(std::vector<fs::path> files) : files_(std::move(files)) {}

PodmanAuthProvider::~PodmanAuthProvider() = default;

std::optional<Credential> PodmanAuthProvider::find(const std::string& registry, const std::string& repository) {
  std::lock_guard lock(mutex_);
  if (!loaded_) {
    for (const auto& f : files_) {
      if (auto p = load_auth_file(f, "podman auth file " + f.string())) parsed_.push_back(std::move(p));
    }
    loaded_ = true;
  }
  std::string host = normalize_host(registry);
  for (const auto& p : parsed_) {
    if (auto c = lookup(*p, host, repository, true)) return c;
  }
  return std::nullopt;
}

// ---- Keychain -----------------------------------------------------------------------------------------------------

Keychain::Keychain(std::vector<std::unique_ptr<CredentialProvider>> providers)
    : providers_(std::move(providers)), mutex_(std::make_unique<std::mutex>()) {}

Credential Keychain::resolve(const std::string& registry, const std::string& repository) {
  const std::string key = registry + "/" + repository;
  std::lock_guard lock(*mutex_);
  auto now = std::chrono::system_clock::now();
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first != key) continue;
    if (!it->second.expires_at || *it->second.expires_at - std::chrono::seconds(60) > now) return it->second;
    cache_.erase(it);
    break;
  }
  Credential found;
  for (auto& p : providers_) {
    if (auto c = p->find(registry, repository)) {
      found = std::move(*c);
      break;
    }
  }
  cache_.emplace_back(key, found);
  return found;
}

void Keychain::forget(const std::string& registry, const std::string& repository) {
  const std::string key = registry + "/" + repository;
  std::lock_guard lock(*mutex_);
  cache_.erase(std::remove_if(cache_.begin(), cache_.end(), [&](const auto& e) { return e.first == key; }),
               cache_.end());
}

// ---- The standard chain ------------------------------------------------------------------------------------------

Keychain Keychain::from_environment(std::shared_ptr<net::DefaultGoogleCredentials> google) {
  std::vector<std::unique_ptr<CredentialProvider>> providers;
  providers.push_back(std::make_unique<DockerConfigProvider>());
  providers.push_back(std::make_unique<PodmanAuthProvider>());
  providers.push_back(std::make_unique<GoogleAdcProvider>(std::move(google)));
  return Keychain(std::move(providers));
}

// ---- GoogleAdcProvider --------------------------------------------------------------------------------------------

GoogleAdcProvider::GoogleAdcProvider(std::shared_ptr<net::DefaultGoogleCredentials> google,
                                     std::function<bool(const std::string&)> applies_to)
    : google_(std::move(google)), applies_to_(std::move(applies_to)) {}

GoogleAdcProvider::GoogleAdcProvider(net::GoogleAdcOptions options, std::function<bool(const std::string&)> applies_to)
    : GoogleAdcProvider(std::make_shared<net::DefaultGoogleCredentials>(std::move(options)), std::move(applies_to)) {}

std::optional<Credential> GoogleAdcProvider::find(const std::string& registry, const std::string& repository) {
  bool applies = applies_to_ ? applies_to_(registry) : net::is_google_registry_host(registry);
  if (!applies) return std::nullopt;
  std::shared_ptr<net::GoogleCredentials> creds = google_->get();
  if (!creds) return std::nullopt;
  net::GoogleAccessToken token = creds->token();
  Credential c;
  c.username = "oauth2accesstoken";
  c.password = token.token;
  c.source = creds->describe();
  c.identity = creds->account();
  c.expires_at = token.expires_at;
  return c;
}

}  // namespace trainpack::registry
