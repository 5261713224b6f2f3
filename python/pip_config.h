#pragma once
// The pip configuration an image sets for `pip install` (pip/_internal/configuration.py for the files and their
// order, cli/parser.py for how option values apply; https://pip.pypa.io/en/stable/topics/configuration/).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layers/image_filesystem.h"

namespace trainpack::python {

// The pip options the image's configuration sets for `pip install`, after pip's precedence: files (global
// /etc/xdg/pip then /etc, user ~/.pip then ~/.config/pip, site {sys.prefix}/pip.conf, PIP_CONFIG_FILE), each
// [global] then [install], then PIP_* environment variables. Values keep pip's own semantics, quirks included:
// a store_false option set from config stores strtobool(value) into its dest, so PIP_NO_COMPILE=1 leaves
// `compile` true and PIP_NO_COMPILE=0 turns it off (pip 23-26 behave so).
struct PipConfig {
  std::vector<std::string> files;  // config files read, in load order (absolute, as named)
  std::string index_url = "https://pypi.org/simple";
  std::vector<std::string> extra_index_urls;
  std::vector<std::string> find_links;
  std::vector<std::string> trusted_hosts;
  bool no_index = false;
  bool pre = false;
  bool compile = true;
  bool break_system_packages = false;
  bool prefer_binary = false;
  bool require_hashes = false;
  bool user = false;
  bool no_deps = false;
  bool ignore_installed = false;
  bool upgrade = false;
  std::string upgrade_strategy = "only-if-needed";
  bool build_isolation = true;     // --no-build-isolation: PEP 517 builds use the environment's own packages
  std::optional<bool> use_pep517;  // --use-pep517 / --no-use-pep517 (pip <= 25.2); unset: pip's default
  std::vector<std::string> only_binary;  // pip's FormatControl sets (canonical names, ":all:"), sorted
  std::vector<std::string> no_binary;
  std::string target;  // --target / --prefix / --root when configured (they change where pip installs)
  std::string prefix;
  std::string root;
  // Every (option, raw value) pip applied, in application order, including options trainpack does not model.
  std::vector<std::pair<std::string, std::string>> items;
  bool operator==(const PipConfig&) const = default;
};

// Reads the PIP_* environment and the pip.conf files pip would load; exposed for tests and `trainpack` diagnostics.
// `env` in the container's order (the order decides between PIP_ONLY_BINARY and PIP_NO_BINARY), `sys_prefix` is
// sys.prefix (site config file), `home` the HOME pip sees.
PipConfig read_pip_config(const layers::ImageFilesystem& fs, const std::vector<std::pair<std::string, std::string>>& env,
                          std::string_view sys_prefix, std::string_view home);

// Python's strtobool as pip's configuration applies it: y/yes/t/true/on/1 and n/no/f/false/off/0, any case.
bool strtobool(std::string_view value, bool& out);

}  // namespace trainpack::python
