#pragma once
// The one error type that reaches the user: a one-line cause and, where we know one, a hint.
#include <stdexcept>
#include <string>

namespace trainpack {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string cause, std::string hint = {})
      : std::runtime_error(std::move(cause)), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

}  // namespace trainpack
