#include "python/scripts.h"

#include <algorithm>

#include "python/metadata.h"
#include "support/error.h"
#include "support/text.h"

namespace trainpack::python {
namespace {

void upsert(ScriptEntryPoints& v, std::string key, std::string value) {
  for (auto& [k, val] : v)
    if (k == key) {
      val = std::move(value);
      return;
    }
  v.emplace_back(std::move(key), std::move(value));
}

bool contains_key(const ScriptEntryPoints& v, std::string_view key) {
  return std::any_of(v.begin(), v.end(), [&](const auto& kv) { return kv.first == key; });
}

bool is_word_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || u >= 0x80;
}

// distlib's export entry: the value must start with `module(:attr)?` where both are \w+ joined by '.'; pip
// requires the ":attr" part. Returns {module, attr}.
std::pair<std::string, std::string> parse_callable(const std::string& name, const std::string& value,
                                                   const std::string& wheel) {
  std::size_t i = 0;
  auto word = [&] {
    std::size_t s = i;
    while (i < value.size() && is_word_char(value[i])) ++i;
    return i > s;
  };
  std::string callable;
  if (word()) {
    while (i + 1 < value.size() && (value[i] == ':' || value[i] == '.') && is_word_char(value[i + 1])) {
      ++i;
      word();
    }
    callable = value.substr(0, i);
  }
  if (callable.empty())
    throw Error(wheel + ": invalid script entry point: " + name + " = " + value);
  auto colon = callable.find(':');
  if (colon == std::string::npos)
    throw Error(wheel + ": invalid script entry point: " + name + " = " + value + " - a callable suffix is required",
                "entry points should be module:callable, e.g. mypkg.cli:main");
  if (callable.find(':', colon + 1) != std::string::npos)
    throw Error(wheel + ": invalid script entry point: " + name + " = " + value);
  return {callable.substr(0, colon), callable.substr(colon + 1)};
}

// A launcher name must stay a single file in the scripts dir (distlib's name pattern is [\w.+-]+).
void check_script_name(const std::string& name, const std::string& wheel) {
  bool ok = !name.empty() && name != "." && name != ".." &&
            std::all_of(name.begin(), name.end(),
                        [](char c) { return is_word_char(c) || c == '-' || c == '.' || c == '+'; });
  if (!ok) throw Error(wheel + ": invalid script entry point name \"" + name + "\"");
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Removes and returns the value of `key`.
std::optional<std::string> take(ScriptEntryPoints& scripts, const std::string& key) {
  for (auto it = scripts.begin(); it != scripts.end(); ++it)
    if (it->first == key) {
      std::string value = it->second;
      scripts.erase(it);
      return value;
    }
  return std::nullopt;
}

template <typename Pred>
void drop_matching(ScriptEntryPoints& scripts, Pred pred) {
  scripts.erase(std::remove_if(scripts.begin(), scripts.end(), [&](const auto& kv) { return pred(kv.first); }),
                scripts.end());
}

// re.match(r"pip(\d+(\.\d+)?)?$", name)
bool is_versioned_pip(std::string_view name) {
  if (!name.starts_with("pip")) return false;
  std::string_view v = name.substr(3);
  if (v.empty()) return true;
  auto dot = v.find('.');
  return dot == std::string_view::npos ? is_digits(v) : is_digits(v.substr(0, dot)) && is_digits(v.substr(dot + 1));
}

// re.match(r"easy_install(-\d+\.\d+)?$", name)
bool is_versioned_easy_install(std::string_view name) {
  if (!name.starts_with("easy_install")) return false;
  std::string_view v = name.substr(12);
  if (v.empty()) return true;
  auto dot = v.find('.');
  return v.front() == '-' && dot != std::string_view::npos && is_digits(v.substr(1, dot - 1)) &&
         is_digits(v.substr(dot + 1));
}

// pip's templates (pip/_internal/operations/install/wheel.py, get_console_script_specs and the
// script template of its vendored distlib). `import_name` is the first component of the attribute path.
std::string launcher_body(std::string_view module, std::string_view attr, const Version& pip_version) {
  std::string m(module), f(attr), i(attr.substr(0, attr.find('.')));
  if (pip_version < Version::parse("25.2"))
    return "# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom " + m + " import " + i +
           "\nif __name__ == '__main__':\n"
           "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
           "    sys.exit(" + f + "())\n";
  if (pip_version < Version::parse("26.0"))
    return "import sys\nfrom " + m + " import " + i +
           "\nif __name__ == '__main__':\n"
           "    if sys.argv[0].endswith('.exe'):\n"
           "        sys.argv[0] = sys.argv[0][:-4]\n"
           "    sys.exit(" + f + "())\n";
  return "import sys\nfrom " + m + " import " + i +
         "\nif __name__ == '__main__':\n"
         "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
         "    sys.exit(" + f + "())\n";
}

}  // namespace

// console_scripts and gui_scripts from entry_points.txt (python/metadata.h reads it as importlib.metadata does);
// a name given twice keeps its first place and its last value, as pip's dict does.
EntryPointScripts read_entry_point_scripts(std::string_view text, const std::string& wheel) {
  EntryPointScripts eps;
  std::vector<EntryPoint> all;
  try {
    all = parse_entry_points(text);
  } catch (const Error& e) {
    throw Error(wheel + ": entry_points.txt: " + e.what());
  }
  for (EntryPoint& ep : all) {
    if (ep.group == "console_scripts") upsert(eps.console, std::move(ep.name), std::move(ep.value));
    else if (ep.group == "gui_scripts") upsert(eps.gui, std::move(ep.name), std::move(ep.value));
  }
  return eps;
}

std::string launcher_shebang(std::string_view sys_executable) {
  // distlib enquote_executable: quote an executable with spaces (only the part after "/usr/bin/env ").
  std::string exe(sys_executable);
  if (exe.find(' ') != std::string::npos) {
    if (exe.starts_with("/usr/bin/env ")) {
      std::string rest = exe.substr(13);
      if (rest.find(' ') != std::string::npos && !rest.starts_with("\"")) exe = "/usr/bin/env \"" + rest + "\"";
    } else if (!exe.starts_with("\"")) {
      exe = "\"" + exe + "\"";
    }
  }
  if (exe.find(' ') == std::string::npos && exe.size() + 3 <= 127) return "#!" + exe + "\n";
  return "#!/bin/sh\n'''exec' " + exe + " \"$0\" \"$@\"\n' '''\n";
}

std::string launcher_script(std::string_view sys_executable, std::string_view module, std::string_view attr,
                            const Version& pip_version) {
  return launcher_shebang(sys_executable) + launcher_body(module, attr, pip_version);
}

ScriptEntryPoints launcher_specs(EntryPointScripts scripts, const std::string& python_version) {
  ScriptEntryPoints& console = scripts.console;
  ScriptEntryPoints specs;
  const std::string py_major = python_version.substr(0, python_version.find('.'));
  if (auto pip = take(console, "pip")) {
    specs.emplace_back("pip", *pip);
    specs.emplace_back("pip" + py_major, *pip);
    specs.emplace_back("pip" + python_version, *pip);
    drop_matching(console, [](const std::string& k) { return is_versioned_pip(k); });
  }
  if (auto ei = take(console, "easy_install")) {
    specs.emplace_back("easy_install", *ei);
    specs.emplace_back("easy_install-" + python_version, *ei);
    drop_matching(console, [](const std::string& k) { return is_versioned_easy_install(k); });
  }
  specs.insert(specs.end(), console.begin(), console.end());
  specs.insert(specs.end(), scripts.gui.begin(), scripts.gui.end());  // same launcher on POSIX
  return specs;
}

bool is_entry_point_wrapper(std::string_view file_name, const EntryPointScripts& scripts) {
  std::string base(file_name);
  std::string lower = ascii_lower(base);
  std::string match = lower.ends_with(".exe") || lower.ends_with(".pya") ? base.substr(0, base.size() - 4)
                      : lower.ends_with("-script.py")                    ? base.substr(0, base.size() - 10)
                                                                         : base;
  return contains_key(scripts.console, match) || contains_key(scripts.gui, match);
}

std::string entry_point_launcher(const std::string& name, const std::string& value, std::string_view sys_executable,
                                 const Version& pip_version, const std::string& wheel) {
  check_script_name(name, wheel);
  auto [module, attr] = parse_callable(name, value, wheel);
  return launcher_script(sys_executable, module, attr, pip_version);
}

std::string fix_script_shebang(std::string_view script, std::string_view sys_executable) {
  auto nl = script.find('\n');
  std::string_view rest = nl == std::string_view::npos ? std::string_view() : script.substr(nl + 1);
  return "#!" + std::string(sys_executable) + "\n" + std::string(rest);
}

}  // namespace trainpack::python
