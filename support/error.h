#pragma once
// The one error type that reaches the user: a one-line cause and, where we know one, a hint. A NUL in either is kept
// as "\x00": what() is a C string, and every message made from it would end there.
#include <stdexcept>
#include <string>

namespace trainpack {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string cause, std::string hint = {})
      : std::runtime_error(nul_escaped(std::move(cause))), hint_(nul_escaped(std::move(hint))) {}
  const std::string& hint() const { return hint_; }

 private:
  static std::string nul_escaped(std::string text) {
    for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at + 4))
      text.replace(at, 1, "\\x00");
    return text;
  }

  std::string hint_;
};

// A command line that cannot be run as written: a flag's value that is not one of its choices or not UTF-8, flags
// that exclude each other. Refused before any work, with the usage exit status (2), as argparse refuses.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace trainpack
