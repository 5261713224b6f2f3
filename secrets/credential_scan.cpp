#include "secrets/credential_scan.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layers/rootfs_index.h"

#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"
#include "support/text.h"

namespace trainpack::secrets {

namespace {

using json = nlohmann::json;

std::string_view base_name(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// --- names -----------------------------------------------------------------------------------------------------

bool is_json(const std::string& name) { return name.ends_with(".json"); }

bool is_gha_creds(const std::string& name) { return name.starts_with("gha-creds-") && is_json(name); }

bool is_key_file(const std::string& name) {
  for (const char* ext : {".pem", ".key", ".p8", ".pk8"})
    if (name.ends_with(ext)) return true;
  // OpenSSH's default names (id_rsa, id_ed25519, ...), not their .pub halves
  if (name.find('.') != std::string::npos) return false;
  if (name.starts_with("id_")) return true;
  for (const char* end : {"_rsa", "_dsa", "_ecdsa", "_ed25519"})
    if (name.ends_with(end)) return true;
  return false;
}

bool is_netrc(const std::string& name) { return name == ".netrc" || name == "_netrc"; }

bool is_git_credentials(const std::string& name) { return name == ".git-credentials"; }

// .env, .env.production, prod.env; a template of one (.env.example, example.env) holds placeholders.
bool is_env_file(const std::string& name) {
  if (name != ".env" && !name.starts_with(".env.") && !name.ends_with(".env")) return false;
  for (std::size_t start = 0; start <= name.size();) {
    std::size_t end = std::min(name.find('.', start), name.size());
    std::string_view part = std::string_view(name).substr(start, end - start);
    if (part == "example" || part == "sample" || part == "template" || part == "tmpl" || part == "dist") return false;
    start = end + 1;
  }
  return true;
}

bool is_aws_file(const std::string& name, std::string_view path) {
  std::vector<std::string_view> components = path_components(path);
  return name == "credentials" || std::find(components.begin(), components.end(), ".aws") != components.end();
}

// What pip reads index URLs from in a trainer's context: requirement and constraint files, pip's config.
bool is_pip_file(const std::string& name) {
  bool txt = name.ends_with(".txt") || name.ends_with(".in");
  return ((name.starts_with("requirements") || name.starts_with("constraints")) && txt) || name == "pip.conf" ||
         name == "pip.ini";
}

// --- contents --------------------------------------------------------------------------------------------------

bool has_pem_private_key(std::string_view bytes) {
  std::size_t begin = bytes.find("-----BEGIN ");
  return begin != std::string_view::npos && bytes.find("PRIVATE KEY-----", begin) != std::string_view::npos;
}

bool non_empty_string(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

std::string json_kind(std::string_view bytes) {
  json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  std::string type;
  if (auto t = j.find("type"); t != j.end() && t->is_string()) type = t->get<std::string>();
  if (non_empty_string(j, "private_key") && (type == "service_account" || j.contains("client_email")))
    return "a Google service-account key";
  if (non_empty_string(j, "refresh_token")) return "Google user credentials (a refresh token)";
  if (auto auths = j.find("auths"); auths != j.end() && auths->is_object())
    for (const auto& [registry, entry] : auths->items())
      if (entry.is_object() && (non_empty_string(entry, "auth") || non_empty_string(entry, "identitytoken") ||
                                non_empty_string(entry, "password")))
        return "registry credentials (a docker config.json with auths)";
  return "";
}

bool netrc_has_password(std::string_view bytes) {
  bool after_password = false;
  std::size_t i = 0;
  while (i < bytes.size()) {
    while (i < bytes.size() && std::isspace(static_cast<unsigned char>(bytes[i]))) ++i;
    std::size_t start = i;
    while (i < bytes.size() && !std::isspace(static_cast<unsigned char>(bytes[i]))) ++i;
    if (start == i) break;
    if (after_password) return true;
    after_password = bytes.substr(start, i - start) == "password";
  }
  return false;
}

// A URL's userinfo with a non-empty password ("https://user:secret@host/"), not a variable pip expands ("${TOKEN}").
bool has_url_with_password(std::string_view bytes) {
  for (std::size_t at = bytes.find("://"); at != std::string_view::npos; at = bytes.find("://", at + 3)) {
    std::string_view rest = bytes.substr(at + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?# \t\r\n\"'"));
    std::size_t userinfo_end = authority.rfind('@');
    if (userinfo_end == std::string_view::npos) continue;
    std::string_view userinfo = authority.substr(0, userinfo_end);
    std::size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view password = userinfo.substr(colon + 1);
    if (!password.empty() && password.front() != '$') return true;
  }
  return false;
}

bool is_secret_name(std::string_view name) {
  std::string lowered = ascii_lower(name);
  for (const char* part : {"secret", "password", "passwd"})
    if (lowered.find(part) != std::string::npos) return true;
  for (const char* end : {"token", "_key", "credentials", "apikey"})
    if (lowered.ends_with(end)) return true;
  return false;
}

// `NAME=value` lines (optionally `export NAME=value`) whose name looks like a secret's and whose value is set.
std::vector<std::string> env_secret_names(std::string_view bytes) {
  std::vector<std::string> names;
  for (std::string_view line : split_lines(bytes)) {
    line = ascii_trim(line);
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with("export ")) line = ascii_trim(line.substr(7));
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string name(ascii_trim(line.substr(0, eq)));
    std::string_view value = ascii_trim(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    if (!value.empty() && value.front() != '$' && is_secret_name(name)) names.push_back(name);
  }
  return names;
}

std::string env_kind(std::string_view bytes) {
  std::vector<std::string> names = env_secret_names(bytes);
  if (names.empty()) return "";
  std::string listed;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) listed += (i ? ", " : "") + names[i];
  if (names.size() > 3) listed += ", ...";
  return "an environment file setting secrets: " + listed;
}

bool has_aws_secret(std::string_view bytes) {
  std::string text = ascii_lower(bytes);
  for (std::string_view line : split_lines(text)) {
    line = ascii_trim(line);
    std::size_t eq = line.find('=');
    if (line.starts_with("aws_secret_access_key") && eq != std::string_view::npos &&
        !ascii_trim(line.substr(eq + 1)).empty())
      return true;
  }
  return false;
}

}  // namespace

bool may_hold_credentials(std::string_view path) {
  std::string name = ascii_lower(base_name(path));
  return is_json(name) || is_key_file(name) || is_netrc(name) || is_git_credentials(name) || is_env_file(name) ||
         is_aws_file(name, path) || is_pip_file(name);
}

std::string credential_kind(std::string_view path, std::string_view bytes) {
  std::string name = ascii_lower(base_name(path));
  if (is_gha_creds(name)) return "credentials google-github-actions/auth wrote";
  if (is_json(name))
    if (std::string kind = json_kind(bytes); !kind.empty()) return kind;
  if ((is_key_file(name) || is_json(name)) && has_pem_private_key(bytes)) return "a PEM private key";
  if (is_netrc(name) && netrc_has_password(bytes)) return "a .netrc with a password";
  if (is_git_credentials(name) && has_url_with_password(bytes)) return "git credentials (URLs with passwords)";
  if (is_env_file(name))
    if (std::string kind = env_kind(bytes); !kind.empty()) return kind;
  if (is_aws_file(name, path) && has_aws_secret(bytes)) return "AWS credentials";
  if (is_pip_file(name) && has_url_with_password(bytes)) return "a package index URL with a password";
  return "";
}

namespace {

// A candidate's bytes: read from its host file, or inline; nullopt when it is not a regular file of at most kMaxRead
// bytes one can read (copying it then fails with the reason).
std::optional<std::string> candidate_bytes(const layers::FileEntry& e) {
  if (e.type != layers::FileEntry::Type::kRegular || !e.zip_member.empty() || e.size > kMaxRead) return std::nullopt;
  try {
    return e.source.empty() ? e.data : read_file(e.source, kMaxRead, "a file of the build context");
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The entries' symlinks resolved in the image they make: the regular file a link leads to, or nullptr.
class LinkTargets {
 public:
  explicit LinkTargets(const layers::FileEntries& entries) {
    index_.apply(entries);
    for (const layers::FileEntry& e : entries)
      if (e.type == layers::FileEntry::Type::kRegular) regular_[e.path] = &e;
  }
  const layers::FileEntry* target_of(const layers::FileEntry& link) const {
    std::string resolved;
    try {
      resolved = index_.resolve(link.path);
    } catch (const Error&) {
      return nullptr;  // a loop: the link leads nowhere
    }
    auto it = regular_.find(resolved);
    return it == regular_.end() ? nullptr : it->second;
  }

 private:
  layers::RootfsIndex index_;
  std::map<std::string, const layers::FileEntry*, std::less<>> regular_;
};

}  // namespace

std::vector<Finding> find_credentials(const layers::FileEntries& entries, const std::filesystem::path& context_dir,
                                      std::string_view context_in_image) {
  std::vector<Finding> found;
  std::optional<LinkTargets> links;  // made for the first link named like a candidate
  for (const layers::FileEntry& e : entries) {
    if (!may_hold_credentials(e.path)) continue;
    const layers::FileEntry* file = &e;
    std::string context_path = e.path;
    if (e.type == layers::FileEntry::Type::kSymlink) {
      if (!links) links.emplace(entries);
      file = links->target_of(e);
      if (!file) continue;
      std::string relative = std::filesystem::path(e.path).lexically_relative(context_in_image).generic_string();
      if (!relative.empty() && !relative.starts_with("..")) context_path = relative;
    } else if (!e.source.empty()) {
      std::string relative = std::filesystem::path(e.source).lexically_relative(context_dir).generic_string();
      if (!relative.empty() && !relative.starts_with("..")) context_path = relative;
    }
    std::optional<std::string> bytes = candidate_bytes(*file);
    if (!bytes) continue;
    std::string kind = credential_kind(e.path, *bytes);
    if (!kind.empty()) found.push_back({context_path, e.path, kind});
  }
  return found;
}

}  // namespace trainpack::secrets
