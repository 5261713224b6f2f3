#pragma once
// Strings as Python sees and writes them, for output that must match what a Python program (gcloud, pip) writes
// byte for byte: bytes decoded with surrogateescape, and json.dumps of a str.
#include <string>
#include <string_view>

namespace trainpack {

// How Python sees bytes from argv or the file system: UTF-8 decoded with surrogateescape, so each byte that is not part
// of a valid UTF-8 sequence (overlong forms and encoded surrogates included) becomes one code point U+DC80..U+DCFF.
std::u32string python_code_points(std::string_view utf8);

// json.dumps of one str with default arguments (ensure_ascii): '"' and '\' escaped, \n \r \t \b \f by letter, other
// characters outside ' '..'~' as lowercase \uXXXX (surrogate pairs above U+FFFF), '/' unescaped. The bytes are read
// as python_code_points reads them.
std::string python_json_string(std::string_view utf8);

}  // namespace trainpack
