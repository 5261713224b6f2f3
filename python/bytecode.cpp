#include "python/bytecode.h"

#include <algorithm>
#include <future>
#include <thread>

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

constexpr std::size_t kFilesPerRunAtLeast = 64;  // below this, another interpreter's start costs more than it saves

// Runs kCompileScript over `files`; returns its [[image, pyc]...] answer.
json compile_share(const Interpreter& python, const json& files, const BytecodeOptions& opts, const fs::path& out_dir) {
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
  return done;
}

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
  // One interpreter per core, each compiling a contiguous share: files compile independently, so the result is the
  // same as one run's, in the same order.
  std::size_t runs = std::clamp<std::size_t>(files.size() / kFilesPerRunAtLeast, 1,
                                             std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::future<json>> shares;
  for (std::size_t k = 0; k < runs; ++k) {
    json share(files.begin() + static_cast<std::ptrdiff_t>(files.size() * k / runs),
               files.begin() + static_cast<std::ptrdiff_t>(files.size() * (k + 1) / runs));
    shares.push_back(std::async(std::launch::async, [&python, &opts, &out_dir, share = std::move(share)] {
      return compile_share(python, share, opts, out_dir);
    }));
  }
  std::vector<Bytecode> out;
  for (std::future<json>& share : shares) {
    for (const auto& item : share.get()) {
      std::string image = item.at(0);
      std::string pyc = item.at(1);
      out.push_back({image.substr(1), pyc.substr(1), out_dir / pyc.substr(1)});
    }
  }
  return out;
}

}  // namespace trainpack::python
