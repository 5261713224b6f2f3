#include "python/configparser.h"

#include <algorithm>

#include "python/text.h"
#include "support/text.h"

namespace trainpack::python {

IniFile parse_ini(std::string_view text) {
  IniFile ini;
  std::vector<std::pair<std::string, std::string>>* section = nullptr;
  std::vector<std::string> value_lines;
  std::string* value_target = nullptr;
  std::size_t key_indent = 0;
  auto flush = [&] {
    if (value_target) {
      std::string v;
      for (std::size_t i = 0; i < value_lines.size(); ++i) v += (i ? "\n" : "") + value_lines[i];
      while (!v.empty() && is_py_space(v.back())) v.pop_back();
      *value_target = v;
    }
    value_target = nullptr;
    value_lines.clear();
  };
  for (std::string_view raw : split_lines(text)) {
    std::string_view stripped = py_strip(raw);
    if (stripped.starts_with("#") || stripped.starts_with(";")) continue;
    if (stripped.empty()) {
      if (value_target) value_lines.emplace_back();
      continue;
    }
    std::size_t indent = raw.find_first_not_of(" \t");
    if (value_target && indent > key_indent) {
      value_lines.emplace_back(stripped);
      continue;
    }
    flush();
    if (stripped.front() == '[' && stripped.back() == ']') {
      std::string name(stripped.substr(1, stripped.size() - 2));
      auto it = std::find_if(ini.sections.begin(), ini.sections.end(), [&](auto& s) { return s.first == name; });
      if (it == ini.sections.end()) {
        ini.sections.push_back({name, {}});
        section = &ini.sections.back().second;
      } else {
        section = &it->second;
      }
      continue;
    }
    if (!section) continue;  // configparser raises MissingSectionHeaderError; nothing usable either way
    std::size_t d = stripped.find_first_of("=:");
    if (d == std::string_view::npos) continue;
    std::string key = ascii_lower(py_strip(stripped.substr(0, d)));
    auto it = std::find_if(section->begin(), section->end(), [&](auto& kv) { return kv.first == key; });
    if (it == section->end()) {
      section->emplace_back(key, "");
      it = section->end() - 1;
    }
    value_target = &it->second;
    key_indent = indent;
    value_lines.emplace_back(py_strip(stripped.substr(d + 1)));
  }
  flush();
  return ini;
}

const std::vector<std::pair<std::string, std::string>>* ini_section(const IniFile& ini, std::string_view name) {
  for (const auto& [n, items] : ini.sections)
    if (n == name) return &items;
  return nullptr;
}

std::map<std::string, std::string> parse_pyvenv_cfg(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : split_lines(text)) {
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    out[ascii_lower(py_strip(line.substr(0, eq)))] = std::string(py_strip(line.substr(eq + 1)));
  }
  return out;
}

}  // namespace trainpack::python
