#include "python/bytecode.h"

#include <unistd.h>

#include <set>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/paths.h"
#include "support/process.h"

namespace trainpack::python {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Reads {"files": [[host, image]...], "mtime": N, "optimize": N, "out": DIR} on stdin; prints [[image, pyc]...].
// The source's mtime is set first because py_compile takes the header's mtime from the file it reads.
constexpr const char* kCompileScript = R"py(
import importlib.util, json, os, py_compile, sys
req = json.load(sys.stdin)
opt = req["optimize"]
done = []
for host, image in req["files"]:
    os.utime(host, (req["mtime"], req["mtime"]))
    pyc = importlib.util.cache_from_source(image, optimization="" if opt == 0 else opt)
    try:
        py_compile.compile(host, cfile=os.path.join(req["out"], pyc.lstrip("/")), dfile=image, doraise=True,
                           optimize=opt, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    except Exception:
        continue
    done.append([image, pyc])
json.dump(done, sys.stdout)
)py";

}  // namespace

std::optional<HostPython> find_host_python(std::string_view major_minor, std::string_view preferred_version) {
  const std::string name = "python" + std::string(major_minor);
  std::vector<std::string> candidates{find_program(name), "/usr/bin/" + name, "/usr/local/bin/" + name};
  std::optional<HostPython> first;
  std::set<std::string> seen;
  for (const std::string& exe : candidates) {
    std::error_code ec;
    if (exe.empty() || ::access(exe.c_str(), X_OK) != 0) continue;
    std::string real = fs::canonical(exe, ec).string();
    if (ec || !seen.insert(real).second) continue;
    ProcessResult r = run_process(
        {exe, "-I", "-c", "import platform, sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2], platform.python_version())"},
        "", 30s);
    if (r.exit_code != 0) continue;
    std::string expected = "cpython " + std::string(major_minor) + " ";
    if (!r.out.starts_with(expected)) continue;
    std::string version = r.out.substr(expected.size());
    while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) version.pop_back();
    HostPython found{exe, version};
    if (preferred_version.empty() || version == preferred_version) return found;
    if (!first) first = found;
  }
  return first;
}

std::vector<Bytecode> compile_bytecode(const HostPython& python, const std::vector<BytecodeSource>& sources,
                                       std::int64_t mtime, int optimization, const fs::path& work_dir) {
  if (sources.empty()) return {};
  if (optimization < 0 || optimization > 2) throw Error("internal: optimization level " + std::to_string(optimization));
  fs::path src_dir = work_dir / "src";
  fs::path out_dir = work_dir / "out";
  json files = json::array();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto& s = sources[i];
    if (s.image_path.empty() || s.image_path.front() == '/' || has_parent_reference(s.image_path))
      throw Error("internal: bad bytecode source path " + s.image_path);
    fs::path host = src_dir / std::to_string(i) / fs::path(s.image_path).filename();
    fs::create_directories(host.parent_path());
    s.write_to(host);
    files.push_back({host.string(), "/" + s.image_path});
  }
  json request = {{"files", files}, {"mtime", mtime}, {"optimize", optimization}, {"out", out_dir.string()}};
  ProcessOptions options;
  options.output_cap = 64u << 20;
  ProcessResult r = run_process({python.path, "-I", "-B", "-c", kCompileScript}, request.dump(), 30min, options);
  if (r.exit_code != 0 || r.timed_out)
    throw Error("compiling bytecode with " + python.path + " failed" +
                    (r.err.empty() ? std::string() : ": " + r.err.substr(0, r.err.find('\n'))),
                "pass --no-compile to skip bytecode");
  json done = json::parse(r.out, nullptr, false);
  if (!done.is_array()) throw Error("compiling bytecode with " + python.path + ": unreadable answer");
  std::vector<Bytecode> out;
  for (const auto& item : done) {
    std::string image = item.at(0);
    std::string pyc = item.at(1);
    out.push_back({image.substr(1), pyc.substr(1), out_dir / pyc.substr(1)});
  }
  return out;
}

}  // namespace trainpack::python
