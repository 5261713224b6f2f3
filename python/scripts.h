#pragma once
// Scripts a wheel installs (pip/_internal/operations/install/wheel.py; the "Entry points specification" of the
// PyPA; PEP 427 "Recommended installer features"): launchers for console_scripts and gui_scripts entry points, as
// the given pip's vendored distlib writes them, and the "#!python" shebang of .data/scripts rewritten.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "python/version.h"

namespace trainpack::python {

// name → "module:attr", in file order; a name given twice keeps its first place and its last value (pip's dict).
using ScriptEntryPoints = std::vector<std::pair<std::string, std::string>>;

struct EntryPointScripts {
  ScriptEntryPoints console, gui;
};

// console_scripts and gui_scripts from entry_points.txt. Throws Error starting with `wheel`.
EntryPointScripts read_entry_point_scripts(std::string_view entry_points_txt, const std::string& wheel);

// The launchers pip writes, in order (pip's get_console_script_specs): pip and easy_install also get their
// versioned names for the image's X.Y (`python_version`) and drop the wheel's own; gui scripts last.
ScriptEntryPoints launcher_specs(EntryPointScripts scripts, const std::string& python_version);

// Whether a .data/scripts file is one of setuptools' wrappers for an entry point (EP, EP.exe, EP-script.py,
// EP.pya): pip skips them and writes its own launcher.
bool is_entry_point_wrapper(std::string_view file_name, const EntryPointScripts& scripts);

// An entry point's launcher: the checked name and the script text for `value` ("module:attr").
std::string entry_point_launcher(const std::string& name, const std::string& value, std::string_view sys_executable,
                                 const Version& pip_version, const std::string& wheel);

// An entry-point launcher as the given pip version writes it: shebang for `sys_executable`, then the
// template calling `attr` (e.g. "Main.run") from `module`.
std::string launcher_script(std::string_view sys_executable, std::string_view module, std::string_view attr,
                            const Version& pip_version);

// distlib's shebang: "#!exe\n" when short and free of spaces, else the /bin/sh exec trick.
std::string launcher_shebang(std::string_view sys_executable);

// pip's fix_script: a script starting "#!python" gets its whole first line replaced by "#!<sys_executable>\n"
// (arguments dropped).
std::string fix_script_shebang(std::string_view script, std::string_view sys_executable);

}  // namespace trainpack::python
