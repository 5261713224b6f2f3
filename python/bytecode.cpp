#include "python/bytecode.h"

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/paths.h"
#include "support/process.h"

namespace trainpack::python {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Reads {"files": [[host, image, compiled_as]...], "mtime": N, "optimize": N, "invalidation": MODE, "out": DIR}
// on stdin; prints [[image, pyc]...]. The source's mtime is set first because py_compile takes the header's mtime
// from the file it reads. Before 3.7 (PEP 552) there is only the timestamp form and no invalidation_mode argument.
constexpr const char* kCompileScript = R"py(
import importlib.util, json, os, py_compile, sys
req = json.load(sys.stdin)
opt = req["optimize"]
mode = {}
if hasattr(py_compile, "PycInvalidationMode"):
    mode["invalidation_mode"] = py_compile.PycInvalidationMode[req["invalidation"]]
done = []
for host, image, compiled_as in req["files"]:
    os.utime(host, (req["mtime"], req["mtime"]))
    pyc = importlib.util.cache_from_source(image, optimization="" if opt == 0 else opt)
    try:
        py_compile.compile(host, cfile=os.path.join(req["out"], pyc.lstrip("/")), dfile=compiled_as, doraise=True,
                           optimize=opt, **mode)
    except Exception:
        continue
    done.append([image, pyc])
json.dump(done, sys.stdout)
)py";

}  // namespace

PycInvalidation default_invalidation(std::string_view source_date_epoch) {
  return source_date_epoch.empty() ? PycInvalidation::kTimestamp : PycInvalidation::kCheckedHash;
}

std::vector<Bytecode> compile_bytecode(const Interpreter& python, const std::vector<BytecodeSource>& sources,
                                       const BytecodeOptions& opts, const fs::path& work_dir) {
  if (sources.empty()) return {};
  if (opts.optimization < 0 || opts.optimization > 2)
    throw Error("internal: optimization level " + std::to_string(opts.optimization));
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
    files.push_back({host.string(), "/" + s.image_path, s.compiled_as.empty() ? "/" + s.image_path : s.compiled_as});
  }
  json request = {{"files", files},
                  {"mtime", opts.mtime},
                  {"optimize", opts.optimization},
                  {"invalidation", opts.invalidation == PycInvalidation::kCheckedHash ? "CHECKED_HASH" : "TIMESTAMP"},
                  {"out", out_dir.string()}};
  ProcessOptions options = python.process_options();
  options.output_cap = 64u << 20;
  ProcessResult r = run_process(python.stdlib_command({"-B", "-c", kCompileScript}), request.dump(), 30min, options);
  if (r.exit_code != 0 || r.timed_out)
    throw Error("compiling bytecode with " + python.description + " failed" +
                    (r.err.empty() ? std::string() : ": " + r.err.substr(0, r.err.find('\n'))),
                "pass --no-compile to skip bytecode");
  json done = json::parse(r.out, nullptr, false);
  if (!done.is_array()) throw Error("compiling bytecode with " + python.description + ": unreadable answer");
  std::vector<Bytecode> out;
  for (const auto& item : done) {
    std::string image = item.at(0);
    std::string pyc = item.at(1);
    out.push_back({image.substr(1), pyc.substr(1), out_dir / pyc.substr(1)});
  }
  return out;
}

}  // namespace trainpack::python
