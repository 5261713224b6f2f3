#include "python/interpreter.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "support/error.h"

namespace trainpack::python {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<std::string> Interpreter::command(const std::vector<std::string>& args) const {
  std::vector<std::string> out = argv;
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

std::vector<std::string> Interpreter::stdlib_command(const std::vector<std::string>& args) const {
  std::vector<std::string> out = argv;
  if (from_image) out.insert(out.end(), {"-s", "-S"});
  else out.insert(out.end(), {"-I", "-S"});
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

std::vector<std::string> Interpreter::environment() const {
  std::vector<std::string> out = env;
  std::string path;
  for (const std::string& p : sys_path) path += (path.empty() ? "" : ":") + p;
  if (!path.empty()) out.push_back("PYTHONPATH=" + path);
  return out;
}

ProcessOptions Interpreter::process_options() const {
  ProcessOptions options;
  options.env = environment();
  options.cwd = scratch;
  return options;
}

std::vector<std::string> clean_environment(const fs::path& scratch, std::string_view locale) {
  fs::create_directories(scratch / "home");
  fs::create_directories(scratch / "tmp");
  return {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "LC_ALL=" + std::string(locale),  // set: no PEP 538 coercion to a locale found elsewhere
      "PYTHONUTF8=1",                   // PEP 540: UTF-8 whatever the locale
      "PYTHONNOUSERSITE=1",             // no ~/.local site-packages (PEP 370)
      "PYTHONDONTWRITEBYTECODE=1",      // imports never write __pycache__ into the interpreter's (shared) files
      "PYTHONHASHSEED=0",               // set and dict orders that end up in build outputs do not vary
      "HOME=" + (scratch / "home").string(),
      "TMPDIR=" + (scratch / "tmp").string(),
  };
}

namespace {

// Asks one candidate for its implementation and version; nullopt when it is not CPython `major_minor`.
bool is_elf(const std::string& path) {
  char magic[4] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(magic, 4) && std::string_view(magic, 4) == "\x7f" "ELF";
}

std::optional<Interpreter> probe_host_python(const std::string& exe, std::string_view major_minor,
                                             const fs::path& scratch) {
  Interpreter python;
  python.argv = {exe};
  python.env = clean_environment(scratch);
  python.scratch = scratch;
  ProcessResult r = run_process(
      // -S and no `platform`: half the start-up of a plain run. The first word of sys.version is what
      // platform.python_version() parses out of it.
      python.command({"-I", "-S", "-c", "import sys; print(sys.implementation.name, '%d.%d' % "
                                        "sys.version_info[:2], sys.version.split()[0]); print(sys.executable)"}),
      "", 30s, python.process_options());
  std::string expected = "cpython " + std::string(major_minor) + " ";
  if (r.exit_code != 0 || !r.out.starts_with(expected)) return std::nullopt;
  std::string_view answer = r.out;
  std::string_view first_line = answer.substr(0, answer.find('\n'));
  python.version = std::string(first_line.substr(expected.size()));
  while (!python.version.empty() && python.version.back() == '\r') python.version.pop_back();
  // The interpreter itself rather than a launcher in front of it (pyenv's shims are shell scripts that cost
  // ~0.1 s a start): later runs exec it directly.
  std::string executable(answer.substr(first_line.size() + (first_line.size() < answer.size() ? 1 : 0)));
  while (!executable.empty() && (executable.back() == '\n' || executable.back() == '\r')) executable.pop_back();
  if (!executable.empty() && executable.front() == '/' && ::access(executable.c_str(), X_OK) == 0)
    python.argv = {executable};
  python.major_minor = major_minor;
  python.description = "the host's " + exe;
  return python;
}

}  // namespace

std::optional<Interpreter> find_host_python(std::string_view major_minor, std::string_view preferred_version,
                                            const fs::path& scratch) {
  const std::string name = "python" + std::string(major_minor);
  std::vector<std::string> candidates;  // PATH's first: without one of the image's exact version, it is taken
  std::set<std::string> seen;
  for (std::string exe : {find_program(name), "/usr/bin/" + name, "/usr/local/bin/" + name}) {
    std::error_code ec;
    if (exe.empty() || ::access(exe.c_str(), X_OK) != 0) continue;
    std::string real = fs::canonical(exe, ec).string();
    if (!ec && seen.insert(real).second) candidates.push_back(exe);
  }
  // Binaries are asked first: a wrapper script (a pyenv or asdf shim) starts shells on every probe, so one is probed
  // only when no binary has the image's exact version.
  std::vector<std::string> probe_order = candidates;
  std::stable_partition(probe_order.begin(), probe_order.end(), [](const std::string& exe) { return is_elf(exe); });
  std::optional<Interpreter> fallback;
  std::size_t fallback_rank = candidates.size();
  for (const std::string& exe : probe_order) {
    std::optional<Interpreter> found = probe_host_python(exe, major_minor, scratch);
    if (!found) continue;
    if (preferred_version.empty() || found->version == preferred_version) return found;
    std::size_t rank = static_cast<std::size_t>(std::find(candidates.begin(), candidates.end(), exe) - candidates.begin());
    if (rank < fallback_rank) fallback = std::move(found), fallback_rank = rank;
  }
  return fallback;
}

}  // namespace trainpack::python
