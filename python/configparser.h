#pragma once
// Python's configparser as pip and the standard library read their files (RawConfigParser defaults: '=' or ':'
// delimiters, '#'/';' full-line comments, indented continuation lines, blank lines kept inside values, keys
// lower-cased): pip.conf (pip/_internal/configuration.py) and EXTERNALLY-MANAGED (PEP 668); and pyvenv.cfg's
// "key = value" lines (no sections; the venv module and getpath read it so, PEP 405).
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainpack::python {

struct IniFile {
  // section -> (key, value) in first-seen order; duplicate keys keep the first position and the last value.
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> sections;
};

IniFile parse_ini(std::string_view text);

// The items of section `name`; nullptr when the file has none.
const std::vector<std::pair<std::string, std::string>>* ini_section(const IniFile& ini, std::string_view name);

// pyvenv.cfg: "key = value" lines, keys lower-cased, later lines win.
std::map<std::string, std::string> parse_pyvenv_cfg(std::string_view text);

}  // namespace trainpack::python
