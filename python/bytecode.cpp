#include "python/bytecode.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/child_process.h"
#include "support/error.h"
#include "support/parallel.h"
#include "support/paths.h"
#include "support/process.h"

namespace trainpack::python {
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Requests on stdin, one after another until it closes: a JSON line {"mtime", "optimize", "invalidation", "count"},
// then per source a JSON line [image, compiled_as, size] and its bytes. Each answer on stdout, once the whole request
// is read (support/child_process.h): its byte count on a line, then per source a JSON line [pyc, size] and the .pyc
// bytes, or [null, 0] when it does not compile. What py_compile.compile(file, cfile, dfile=compiled_as, optimize)
// does between reading the file and writing the .pyc (Lib/py_compile.py): compile as SourceLoader.source_to_code
// does, then the PEP 552 header with the source's size and the mtime the layer gives it. Before 3.7 there is only
// the timestamp form (_code_to_bytecode); an interpreter without these helpers gets py_compile itself over a
// temporary copy.
constexpr const char* kCompileScript = R"py(
import importlib.util, json, os, py_compile, sys
try:
    import importlib._bootstrap_external as bx
except ImportError:
    bx = None
inp, out = sys.stdin.buffer, sys.stdout.buffer
def via_py_compile(source, compiled_as):
    import tempfile
    mode = {}
    if hasattr(py_compile, "PycInvalidationMode"):
        mode["invalidation_mode"] = py_compile.PycInvalidationMode[req["invalidation"]]
    with tempfile.TemporaryDirectory() as d:
        src, pyc = os.path.join(d, "s.py"), os.path.join(d, "s.pyc")
        with open(src, "wb") as f:
            f.write(source)
        os.utime(src, (mtime, mtime))
        py_compile.compile(src, cfile=pyc, dfile=compiled_as, doraise=True, optimize=opt, **mode)
        with open(pyc, "rb") as f:
            return f.read()
def pyc_bytes(source, compiled_as):
    if checked and hasattr(bx, "_code_to_hash_pyc"):
        code = compile(source, compiled_as, "exec", dont_inherit=True, optimize=opt)
        return bx._code_to_hash_pyc(code, importlib.util.source_hash(source), True)
    if not checked and hasattr(bx, "_code_to_timestamp_pyc"):
        code = compile(source, compiled_as, "exec", dont_inherit=True, optimize=opt)
        return bx._code_to_timestamp_pyc(code, mtime, len(source))
    if not checked and hasattr(bx, "_code_to_bytecode"):
        code = compile(source, compiled_as, "exec", dont_inherit=True, optimize=opt)
        return bx._code_to_bytecode(code, mtime, len(source))
    return via_py_compile(source, compiled_as)
def frame(image, compiled_as, source):
    try:
        data = pyc_bytes(source, compiled_as)
    except Exception:
        return b"[null, 0]\n"
    pyc = importlib.util.cache_from_source(image, optimization="" if opt == 0 else opt)
    return json.dumps([pyc, len(data)]).encode() + b"\n" + data
for line in iter(inp.readline, b""):
    req = json.loads(line.decode())
    opt, mtime = req["optimize"], req["mtime"]
    checked = req["invalidation"] == "CHECKED_HASH" and hasattr(py_compile, "PycInvalidationMode")
    sources = []
    for _ in range(req["count"]):
        image, compiled_as, size = json.loads(inp.readline().decode())
        sources.append((image, compiled_as, inp.read(size)))
    answer = b"".join(frame(*s) for s in sources)
    out.write(b"%d\n" % len(answer) + answer)
    out.flush()
)py";

// Source bytes per interpreter run: bounds what is held in memory at once; and files per run at least, below which
// another interpreter's start costs more than it saves.
constexpr std::uint64_t kBatchBytes = 1u << 20;  // a batch's request, answer and .pyc: a few MiB per core
constexpr std::size_t kBatchFilesAtLeast = 64;

struct Batch {
  std::size_t first = 0, end = 0;  // [first, end) of the sources
};

// Contiguous batches of about equal source bytes: enough that no batch passes kBatchBytes (a single larger file
// aside) and, given enough files, one per core.
std::vector<Batch> plan_batches(const std::vector<BytecodeSource>& sources, std::size_t cores) {
  std::uint64_t total = 0;
  for (const BytecodeSource& s : sources) total += s.size;
  std::size_t count = std::max<std::size_t>({1, static_cast<std::size_t>((total + kBatchBytes - 1) / kBatchBytes),
                                             std::min(cores, sources.size() / kBatchFilesAtLeast)});
  std::vector<Batch> batches;
  std::uint64_t seen = 0;
  Batch current;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    seen += sources[i].size;
    current.end = i + 1;
    bool share_full = seen * count >= total * (batches.size() + 1);
    if (share_full || current.end == sources.size()) {
      batches.push_back(current);
      current = Batch{current.end, current.end};
    }
  }
  return batches;
}

std::string compile_request(const std::vector<BytecodeSource>& sources, Batch batch, const BytecodeOptions& opts,
                            std::mutex& reading) {
  json header = {{"mtime", opts.mtime},
                 {"optimize", opts.optimization},
                 {"invalidation", opts.invalidation == PycInvalidation::kCheckedHash ? "CHECKED_HASH" : "TIMESTAMP"},
                 {"count", batch.end - batch.first}};
  std::string request = header.dump() + "\n";
  for (std::size_t i = batch.first; i < batch.end; ++i) {
    const BytecodeSource& s = sources[i];
    std::string bytes;
    {
      std::lock_guard<std::mutex> lock(reading);
      bytes = s.read();
    }
    std::string compiled_as = s.compiled_as.empty() ? "/" + s.image_path : s.compiled_as;
    request += json::array({"/" + s.image_path, compiled_as, bytes.size()}).dump() + "\n";
    request += bytes;
  }
  return request;
}

// Reads the framed answer of kCompileScript: one Bytecode per source that compiled, in order.
std::vector<Bytecode> parse_answer(const std::string& answer, const std::vector<BytecodeSource>& sources, Batch batch,
                                   const std::string& who) {
  auto unreadable = [&who] { return Error("compiling bytecode with " + who + ": unreadable answer"); };
  std::vector<Bytecode> out;
  std::size_t at = 0;
  for (std::size_t i = batch.first; i < batch.end; ++i) {
    std::size_t eol = answer.find('\n', at);
    if (eol == std::string::npos) throw unreadable();
    json frame = json::parse(answer.begin() + static_cast<std::ptrdiff_t>(at),
                             answer.begin() + static_cast<std::ptrdiff_t>(eol), nullptr, false);
    if (!frame.is_array() || frame.size() != 2 || !frame[1].is_number_unsigned()) throw unreadable();
    std::size_t size = frame[1].get<std::size_t>();
    at = eol + 1;
    if (size > answer.size() - at) throw unreadable();
    if (frame[0].is_string()) {
      std::string pyc = frame[0].get<std::string>();
      if (pyc.empty() || pyc[0] != '/') throw unreadable();
      out.push_back({sources[i].image_path, pyc.substr(1), answer.substr(at, size)});
    }
    at += size;
  }
  if (at != answer.size()) throw unreadable();
  return out;
}

}  // namespace

PycInvalidation default_invalidation(std::string_view source_date_epoch) {
  return source_date_epoch.empty() ? PycInvalidation::kTimestamp : PycInvalidation::kCheckedHash;
}

BytecodeCompiler::BytecodeCompiler(const Interpreter& python) : python_(python) {}
// Every interpreter is told to exit before any is waited for, so they end together, not one after another.
BytecodeCompiler::~BytecodeCompiler() {
  for (auto& child : idle_) child->close_input();
}

// An idle interpreter, or a new one.
std::unique_ptr<ChildProcess> BytecodeCompiler::take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<ChildProcess> child = std::move(idle_.back());
      idle_.pop_back();
      return child;
    }
  }
  return std::make_unique<ChildProcess>(python_.stdlib_command({"-B", "-c", kCompileScript}),
                                        python_.process_options());
}

void BytecodeCompiler::give_back(std::unique_ptr<ChildProcess> child) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(child));
}

// The interpreter is taken (or started) before the request is made, so a new one starts up while the sources are
// read out of their wheel.
std::string BytecodeCompiler::answer(const std::function<std::string()>& make_request) {
  auto failed = [this](const Error& e) {
    return Error("compiling bytecode with " + python_.description + " failed: " + e.what(),
                 "pass --no-compile to skip bytecode");
  };
  std::unique_ptr<ChildProcess> child;
  try {
    child = take();
  } catch (const Error& e) {
    throw failed(e);
  }
  std::string request = make_request();
  try {
    std::string answer = child->exchange(request, 30min);
    give_back(std::move(child));
    return answer;
  } catch (const Error& e) {
    throw failed(e);
  }
}

std::vector<Bytecode> BytecodeCompiler::compile(const std::vector<BytecodeSource>& sources,
                                                const BytecodeOptions& opts) {
  return compile(sources, opts, nullptr);
}

std::vector<Bytecode> BytecodeCompiler::compile(const std::vector<BytecodeSource>& sources,
                                                const BytecodeOptions& opts,
                                                const std::function<void(Bytecode&)>& keep) {
  if (sources.empty()) return {};
  if (opts.optimization < 0 || opts.optimization > 2)
    throw Error("internal: optimization level " + std::to_string(opts.optimization));
  for (const BytecodeSource& s : sources)
    if (s.image_path.empty() || s.image_path.front() == '/' || has_parent_reference(s.image_path))
      throw Error("internal: bad bytecode source path " + s.image_path);
  // Files compile independently, so batches on several interpreters give what one run would, in the same order.
  std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Batch> batches = plan_batches(sources, cores);
  std::vector<std::vector<Bytecode>> done(batches.size());
  std::mutex reading;
  // Bytecode is background work, on threads (and interpreters) of its own at a lower CPU priority: where the CPU
  // is short (downloads from a nearby index), the downloads still being awaited go first.
  ParallelOptions background{false, lower_this_thread_priority};
  parallel_for(batches.size(), cores, [&](std::size_t b) {
    std::string got = answer([&] { return compile_request(sources, batches[b], opts, reading); });
    done[b] = parse_answer(got, sources, batches[b], python_.description);
    if (keep)
      for (Bytecode& compiled : done[b]) keep(compiled);
  }, background);
  std::vector<Bytecode> out;
  for (std::vector<Bytecode>& batch : done)
    for (Bytecode& b : batch) out.push_back(std::move(b));
  return out;
}

std::vector<Bytecode> compile_bytecode(const Interpreter& python, const std::vector<BytecodeSource>& sources,
                                       const BytecodeOptions& opts) {
  return BytecodeCompiler(python).compile(sources, opts);
}

}  // namespace trainpack::python
