#include "python/pip_config.h"

#include <algorithm>
#include <map>

#include "python/configparser.h"
#include "python/image_root.h"
#include "python/requirements_file.h"
#include "python/text.h"
#include "support/error.h"
#include "support/text.h"

namespace trainpack::python {
namespace {

using layers::ImageFilesystem;

constexpr std::size_t kMaxConfigFile = 1u << 20;

enum class OptAction { kStoreTrue, kStoreFalse, kStore, kAppend, kOnlyBinary, kNoBinary };
struct OptSpec {
  std::string_view name;
  OptAction action;
};
// The `pip install` options trainpack models (long names; pip's config accepts long names only).
constexpr OptSpec kPipOptions[] = {
    {"index-url", OptAction::kStore},          {"extra-index-url", OptAction::kAppend},
    {"no-index", OptAction::kStoreTrue},       {"find-links", OptAction::kAppend},
    {"trusted-host", OptAction::kAppend},      {"pre", OptAction::kStoreTrue},
    {"compile", OptAction::kStoreTrue},        {"no-compile", OptAction::kStoreFalse},
    {"break-system-packages", OptAction::kStoreTrue}, {"prefer-binary", OptAction::kStoreTrue},
    {"require-hashes", OptAction::kStoreTrue}, {"user", OptAction::kStoreTrue},
    {"no-deps", OptAction::kStoreTrue},        {"no-dependencies", OptAction::kStoreTrue},
    {"ignore-installed", OptAction::kStoreTrue}, {"upgrade", OptAction::kStoreTrue},
    {"upgrade-strategy", OptAction::kStore},   {"only-binary", OptAction::kOnlyBinary},
    {"no-binary", OptAction::kNoBinary},       {"target", OptAction::kStore},
    {"prefix", OptAction::kStore},             {"root", OptAction::kStore},
    {"no-build-isolation", OptAction::kStoreFalse}, {"use-pep517", OptAction::kStoreTrue},
    {"no-use-pep517", OptAction::kStoreFalse},
};

// pip's configuration._normalize_name.
std::string normalize_option(std::string_view name) {
  std::string n = ascii_lower(name);
  std::replace(n.begin(), n.end(), '_', '-');
  if (n.starts_with("--")) n.erase(0, 2);
  return n;
}

void apply_pip_option(PipConfig& c, FormatControl& formats, const std::string& key,
                      const std::string& value) {
  const OptSpec* spec = nullptr;
  for (const auto& o : kPipOptions)
    if (o.name == key) spec = &o;
  c.items.emplace_back(key, value);
  if (!spec) return;  // options trainpack does not model stay in `items`
  bool flag = false;
  switch (spec->action) {
    case OptAction::kStoreTrue:
    case OptAction::kStoreFalse:
      if (!strtobool(value, flag))
        throw Error("pip configuration in the base image: " + value + " is not a valid value for " + key +
                        " option",
                    "pip would refuse to run: use a boolean like yes/no, true/false or 1/0");
      // pip stores strtobool(value) in the option's dest for store_false options too (no-compile -> compile).
      if (key == "pre") c.pre = flag;
      else if (key == "no-index") c.no_index = flag;
      else if (key == "compile" || key == "no-compile") c.compile = flag;
      else if (key == "break-system-packages") c.break_system_packages = flag;
      else if (key == "prefer-binary") c.prefer_binary = flag;
      else if (key == "require-hashes") c.require_hashes = flag;
      else if (key == "user") c.user = flag;
      else if (key == "no-deps" || key == "no-dependencies") c.no_deps = flag;
      else if (key == "ignore-installed") c.ignore_installed = flag;
      else if (key == "upgrade") c.upgrade = flag;
      else if (key == "no-build-isolation") c.build_isolation = flag;
      else if (key == "use-pep517" || key == "no-use-pep517") c.use_pep517 = flag;
      break;
    case OptAction::kStore:
      if (key == "index-url") c.index_url = value;
      else if (key == "upgrade-strategy") c.upgrade_strategy = value;
      else if (key == "target") c.target = value;
      else if (key == "prefix") c.prefix = value;
      else if (key == "root") c.root = value;
      break;
    case OptAction::kAppend: {
      auto parts = py_split(value);
      if (key == "extra-index-url") c.extra_index_urls = parts;
      else if (key == "find-links") c.find_links = parts;
      else if (key == "trusted-host") c.trusted_hosts = parts;
      break;
    }
    case OptAction::kOnlyBinary:
    case OptAction::kNoBinary:
      if (value.starts_with("-")) throw Error("pip configuration: --" + key + " requires 1 argument");
      if (spec->action == OptAction::kOnlyBinary) formats.add_only_binary(value);
      else formats.add_no_binary(value);
      break;
  }
}

std::string env_or(const std::map<std::string, std::string>& env, const std::string& key, std::string_view fallback) {
  auto it = env.find(key);
  return it == env.end() ? std::string(fallback) : it->second;
}

}  // namespace

bool strtobool(std::string_view value, bool& out) {
  std::string v = ascii_lower(value);
  if (v == "y" || v == "yes" || v == "t" || v == "true" || v == "on" || v == "1") {
    out = true;
    return true;
  }
  if (v == "n" || v == "no" || v == "f" || v == "false" || v == "off" || v == "0") {
    out = false;
    return true;
  }
  return false;
}

PipConfig read_pip_config(const ImageFilesystem& fs, const std::vector<std::pair<std::string, std::string>>& env_list,
                          std::string_view sys_prefix, std::string_view home) {
  ImageRoot root{fs};
  std::map<std::string, std::string> env(env_list.begin(), env_list.end());
  PipConfig c;
  // configuration.py: variants merged in OVERRIDE_ORDER (global, user, site, env file, env vars); a later
  // variant's "section.key" overrides, keeping the key's first position (a Python dict update).
  std::vector<std::pair<std::string, std::string>> merged;
  auto set = [&merged](const std::string& k, const std::string& v) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](auto& kv) { return kv.first == k; });
    if (it == merged.end()) merged.emplace_back(k, v);
    else it->second = v;
  };
  auto env_file = env.find("PIP_CONFIG_FILE");
  bool skip_files = env_file != env.end() && env_file->second == "/dev/null";
  if (!skip_files) {
    std::vector<std::string> files;
    std::string xdg_dirs(py_strip(env_or(env, "XDG_CONFIG_DIRS", "")));
    if (xdg_dirs.empty()) xdg_dirs = "/etc/xdg";
    std::size_t start = 0;
    for (std::size_t i = 0; i <= xdg_dirs.size(); ++i)
      if (i == xdg_dirs.size() || xdg_dirs[i] == ':') {
        std::string d = xdg_dirs.substr(start, i - start);
        if (!d.empty()) files.push_back(join(d, "pip/pip.conf"));
        start = i + 1;
      }
    files.push_back("/etc/pip.conf");
    bool env_file_exists = env_file != env.end() && root.is_file(env_file->second);
    if (!env_file_exists) {
      files.push_back(join(home, ".pip/pip.conf"));
      std::string xdg_home = env_or(env, "XDG_CONFIG_HOME", "");
      files.push_back(join(xdg_home.empty() ? join(home, ".config") : xdg_home, "pip/pip.conf"));
    }
    files.push_back(join(sys_prefix, "pip.conf"));
    if (env_file_exists) files.push_back(abs_path(env_file->second));
    for (const std::string& f : files) {
      auto text = root.read(f, kMaxConfigFile);
      if (!text) continue;
      c.files.push_back(f);
      IniFile ini = parse_ini(*text);
      for (const auto& [section, items] : ini.sections)
        for (const auto& [k, v] : items) set(section + "." + normalize_option(k), v);
    }
  }
  for (const auto& [k, v] : env_list) {
    if (!k.starts_with("PIP_")) continue;
    std::string name = ascii_lower(std::string_view(k).substr(4));
    if (name == "version" || name == "help") continue;
    set(":env:." + normalize_option(name), v);
  }
  FormatControl formats;
  for (std::string_view section : {"global", "install", ":env:"}) {
    for (const auto& [sk, v] : merged) {
      std::size_t dot = sk.find('.');
      if (sk.substr(0, dot) != section || v.empty()) continue;
      apply_pip_option(c, formats, sk.substr(dot + 1), v);
    }
  }
  c.only_binary.assign(formats.only_binary.begin(), formats.only_binary.end());
  c.no_binary.assign(formats.no_binary.begin(), formats.no_binary.end());
  return c;
}

}  // namespace trainpack::python
