#pragma once
// The one error type that reaches the user: a one-line cause and, where we know one, a hint. A NUL in either is kept
// as "\x00": what() is a C string, and every message made from it would end there.
#include <stdexcept>
#include <string>

namespace trainpack {

class Error : public std::runtime_error {
 public:
  // Out of line: one copy for the hundreds of places that throw, and no inlined string search for GCC's -O3
  // flow analysis to misread (-Wmaybe-uninitialized).
  explicit Error(std::string cause, std::string hint = {});
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// A command line that cannot be run as written: a flag's value that is not one of its choices or not UTF-8, flags
// that exclude each other. Refused before any work, with the usage exit status (2), as argparse refuses.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace trainpack
