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

// The `pip install` options trainpack models (long names; pip's config accepts long names only), by where they go.
// pip stores strtobool(value) in a flag's dest for store_false options too (no-compile -> compile).
constexpr std::pair<std::string_view, bool PipConfig::*> kFlagOptions[] = {
    {"no-index", &PipConfig::no_index},               {"pre", &PipConfig::pre},
    {"compile", &PipConfig::compile},                 {"no-compile", &PipConfig::compile},
    {"break-system-packages", &PipConfig::break_system_packages},
    {"prefer-binary", &PipConfig::prefer_binary},     {"require-hashes", &PipConfig::require_hashes},
    {"user", &PipConfig::user},                       {"upgrade", &PipConfig::upgrade},
    {"no-deps", &PipConfig::no_deps},                 {"no-dependencies", &PipConfig::no_deps},
    {"ignore-installed", &PipConfig::ignore_installed}, {"no-build-isolation", &PipConfig::build_isolation},
};
constexpr std::pair<std::string_view, std::string PipConfig::*> kStringOptions[] = {
    {"index-url", &PipConfig::index_url}, {"upgrade-strategy", &PipConfig::upgrade_strategy},
    {"target", &PipConfig::target},       {"prefix", &PipConfig::prefix},
    {"root", &PipConfig::root},
};
constexpr std::pair<std::string_view, std::vector<std::string> PipConfig::*> kListOptions[] = {
    {"extra-index-url", &PipConfig::extra_index_urls},
    {"find-links", &PipConfig::find_links},
    {"trusted-host", &PipConfig::trusted_hosts},
};

// The member `options` sends `key` to, or nullptr.
template <class Member, std::size_t N>
Member PipConfig::*dest_of(const std::pair<std::string_view, Member PipConfig::*> (&options)[N],
                           std::string_view key) {
  for (const auto& [name, dest] : options)
    if (name == key) return dest;
  return nullptr;
}

// pip's configuration._normalize_name.
std::string normalize_option(std::string_view name) {
  std::string n = ascii_lower(name);
  std::replace(n.begin(), n.end(), '_', '-');
  if (n.starts_with("--")) n.erase(0, 2);
  return n;
}

// A flag's value as pip reads it (strtobool); pip refuses to run on anything else.
bool parse_flag(const std::string& key, const std::string& value) {
  bool flag = false;
  if (!strtobool(value, flag))
    throw Error("pip configuration in the base image: " + value + " is not a valid value for " + key + " option",
                "pip would refuse to run: use a boolean like yes/no, true/false or 1/0");
  return flag;
}

void apply_pip_option(PipConfig& c, FormatControl& formats, const std::string& key,
                      const std::string& value) {
  c.items.emplace_back(key, value);  // options trainpack does not model stay only here
  if (auto flag = dest_of(kFlagOptions, key)) {
    c.*flag = parse_flag(key, value);
  } else if (key == "use-pep517" || key == "no-use-pep517") {
    c.use_pep517 = parse_flag(key, value);
  } else if (auto text = dest_of(kStringOptions, key)) {
    c.*text = value;
  } else if (auto list = dest_of(kListOptions, key)) {
    c.*list = py_split(value);
  } else if (key == "only-binary" || key == "no-binary") {
    if (value.starts_with("-")) throw Error("pip configuration: --" + key + " requires 1 argument");
    if (key == "only-binary") formats.add_only_binary(value);
    else formats.add_no_binary(value);
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
        if (!d.empty()) files.push_back(abs_join(d, "pip/pip.conf"));
        start = i + 1;
      }
    files.push_back("/etc/pip.conf");
    bool env_file_exists = env_file != env.end() && root.exists(env_file->second);
    if (!env_file_exists) {
      files.push_back(abs_join(home, ".pip/pip.conf"));
      std::string xdg_home = env_or(env, "XDG_CONFIG_HOME", "");
      files.push_back(abs_join(xdg_home.empty() ? abs_join(home, ".config") : xdg_home, "pip/pip.conf"));
    }
    files.push_back(abs_join(sys_prefix, "pip.conf"));
    if (env_file_exists) files.push_back(abs_path(env_file->second));
    for (const std::string& f : files) {
      // pip opens whatever is there: a FIFO would hang it and a device like /dev/zero never end.
      if (const layers::PathInfo* info = root.info(f); info && info->type == layers::PathInfo::Type::kOther)
        throw Error("pip configuration in the base image: " + f + " is not a regular file (a FIFO or a device)",
                    "pip would block on it or read it without end; fix the base image");
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
