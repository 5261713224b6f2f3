// What a call throws, in the form the unit tests compare: one helper for all of them.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <string_view>

#include "support/error.h"

namespace trainpack::test_support {

inline constexpr std::string_view kNoError = "(no error)";

// The message of the trainpack::Error `f` throws; kNoError when it throws nothing. Another exception's message is
// marked as such: a test that expects a one-line Error with a hint sees the difference.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("NOT A trainpack::Error: ") + e.what();
  }
  return std::string(kNoError);
}

}  // namespace trainpack::test_support
