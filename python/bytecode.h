#pragma once
// Bytecode as `pip install` leaves it (pip compiles by default: compileall.compile_file(path, force=True,
// quiet=True) for every installed .py; failures ignored). Marshal data can only come from a CPython of the same
// X.Y as the image's (python/interpreter.h: a host python3.X, or the image's own run from the cache). Sources go to
// it on stdin and the .pyc bytes come back on stdout, with no file written: what py_compile does between reading
// the source and writing the .pyc, done in memory. The header follows PEP 552 as py_compile writes it for pip: timestamp-invalidated with the mtime the
// layer gives the .py (so the runtime finds it valid), or checked-hash when the image's environment sets
// SOURCE_DATE_EPOCH (py_compile._get_default_invalidation_mode). co_filename is the path in the image, as pip's
// compileall records it, never the copy's.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "python/interpreter.h"

namespace trainpack {
class ChildProcess;
}

namespace trainpack::python {

// PEP 552's invalidation modes that pip can produce.
enum class PycInvalidation { kTimestamp, kCheckedHash };

// py_compile's default for the environment pip runs in: checked-hash when SOURCE_DATE_EPOCH is set and not empty.
PycInvalidation default_invalidation(std::string_view source_date_epoch);

struct BytecodeSource {
  std::string image_path;  // the .py in the image, relative to "/": "usr/lib/python3/dist-packages/pkg/m.py"
  // The path pip hands compileall, which becomes co_filename: lib_dir joined with the RECORD path, so a file
  // outside lib_dir keeps its ".." ("/venv/lib/python3.11/site-packages/../../../bin/tool.py"); empty: "/" +
  // image_path.
  std::string compiled_as;
  std::uint64_t size = 0;  // the source's byte count
  // The source's bytes (called once, from one thread at a time).
  std::function<std::string()> read;
};

struct Bytecode {
  std::string source_image_path;  // as given
  std::string image_path;         // "usr/lib/python3/dist-packages/pkg/__pycache__/m.cpython-311.pyc"
  std::string pyc;                // the .pyc bytes
};

struct BytecodeOptions {
  std::int64_t mtime = 0;  // the sources' mtime in the layer (seconds)
  int optimization = 0;    // 0 for plain .pyc, 1 or 2 for the image's PYTHONOPTIMIZE level (.opt-N.pyc)
  PycInvalidation invalidation = PycInvalidation::kTimestamp;
};

// Compiles with interpreters kept for as long as the compiler lives: at most one per core, each started once and
// given batch after batch (support/child_process.h), so a step installing many wheels pays for a few interpreter
// starts, not one per wheel and core. Thread-safe.
class BytecodeCompiler {
 public:
  explicit BytecodeCompiler(const Interpreter& python);
  ~BytecodeCompiler();
  BytecodeCompiler(const BytecodeCompiler&) = delete;
  BytecodeCompiler& operator=(const BytecodeCompiler&) = delete;

  // Compiles `sources` in batches of a few MiB run on every core; the result is in the order of `sources`. Sources
  // that do not compile are left out, as pip leaves them. Throws Error when the interpreter itself fails.
  std::vector<Bytecode> compile(const std::vector<BytecodeSource>& sources, const BytecodeOptions& options);
  // The same, handing each .pyc to `keep` as its batch arrives (on the compiling threads, concurrently): bytes it
  // moves out of `pyc` (to disk) are not held until every batch is done, so memory stays at a few batches.
  std::vector<Bytecode> compile(const std::vector<BytecodeSource>& sources, const BytecodeOptions& options,
                                const std::function<void(Bytecode&)>& keep);

 private:
  std::unique_ptr<ChildProcess> take();
  void give_back(std::unique_ptr<ChildProcess> child);
  std::string answer(const std::function<std::string()>& make_request);

  const Interpreter& python_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ChildProcess>> idle_;
};

// BytecodeCompiler(python).compile(sources, options): interpreters for this call only.
std::vector<Bytecode> compile_bytecode(const Interpreter& python, const std::vector<BytecodeSource>& sources,
                                       const BytecodeOptions& options);

}  // namespace trainpack::python
