#pragma once
// _sysconfigdata_*.py, the build configuration CPython's sysconfig module imports (its build_time_vars dict:
// SOABI, EXT_SUFFIX, MULTIARCH, LIBDIR, ...). Read as text, never run.
#include <map>
#include <string>
#include <string_view>

namespace trainpack::python {

// The `build_time_vars` literal of a _sysconfigdata_*.py: str and int values (ints as decimal text); other values
// are skipped. A small tokenizer for Python string/number literals, never eval.
std::map<std::string, std::string> parse_sysconfigdata(std::string_view text);

}  // namespace trainpack::python
