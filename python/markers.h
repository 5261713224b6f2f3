#pragma once
// PEP 508 environment markers, as pip's bundled `packaging` (22+: _tokenizer.py, _parser.py, markers.py) parses,
// normalises and evaluates them.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace trainpack::python {

// The values a marker is evaluated against. `extra` is "" when no extra is requested (packaging's default).
struct MarkerEnvironment {
  std::string python_version;                  // "3.10"
  std::string python_full_version;             // "3.10.12", "3.13.0rc1"
  std::string implementation_name;             // "cpython"
  std::string implementation_version;          // "3.10.12", "3.13.0c1" (sys.implementation.version formatting)
  std::string os_name;                         // "posix"
  std::string sys_platform;                    // "linux"
  std::string platform_system;                 // "Linux"
  std::string platform_release;                // kernel release of the build host: we use "" (as uv does)
  std::string platform_version;                // kernel version string: we use ""
  std::string platform_machine;                // "x86_64", "aarch64"
  std::string platform_python_implementation;  // "CPython"
  std::string extra;

  // The environment of CPython `version` ("3.10.12", "3.13.0rc1", "3.12.0b2"...) on Linux for `machine`
  // ("x86_64" or "aarch64"; "amd64"/"arm64" are mapped). platform_release/platform_version are "" because
  // they describe the (unknowable, nondeterministic) kernel of whoever runs the image.
  static MarkerEnvironment cpython_linux(std::string_view version, std::string_view machine);

  // The value of a marker variable by its canonical name (`platform_python_implementation`, ...); nullptr if unknown.
  const std::string* lookup(std::string_view name) const;
};

// PEP 508's version comparison: `Specifier(op + rhs).contains(lhs, prereleases=True)`. Only asked for the
// variables packaging (>= 26) compares as versions: python_version, python_full_version, implementation_version,
// platform_release. Return nullopt when `op + rhs` is not a valid PEP 440 specifier or `lhs` is not a valid
// version: the marker then applies the string rules (==, !=, in, not in; <=/>= as ==; </> false; ~=/=== error).
// Divergence: packaging 26 answers False for an invalid left-hand version instead of using the string rules. Callers pass the PEP 440 implementation (python/specifier.*); the default below
// knows no versions at all (always nullopt, except `===`, which it treats as a case-insensitive string match).
using VersionCompare =
    std::function<std::optional<bool>(std::string_view op, std::string_view lhs, std::string_view rhs)>;
std::optional<bool> string_only_version_compare(std::string_view op, std::string_view lhs, std::string_view rhs);

class Marker {
 public:
  struct Operand {
    bool is_variable = false;
    std::string value;  // canonical variable name (os.name -> os_name, python_implementation ->
                        // platform_python_implementation) or the literal's decoded text
  };
  struct Item {
    Operand lhs;
    std::string op;  // "==", "!=", "<=", "<", ">=", ">", "~=", "===", "in", "not in"
    Operand rhs;
  };
  struct List;
  // One element of packaging's marker list: a comparison, a parenthesised sub-list, or "and"/"or".
  using Element = std::variant<Item, std::shared_ptr<List>, std::string>;
  struct List {
    std::vector<Element> elements;
  };

  // Evaluation follows packaging >= 26 (what current pip bundles); packaging <= 25 compared every variable as a
  // version when possible and used Python's ordered string operators otherwise.
  // Throws trainpack::Error("invalid marker '...': <packaging's message> at position N").
  explicit Marker(std::string_view text);
  Marker(List parsed) : list_(std::move(parsed)) { normalize_extra(); }  // from the requirement parser

  bool evaluate(const MarkerEnvironment& env,
                const VersionCompare& compare = string_only_version_compare) const;
  std::string str() const;  // packaging's str(Marker): double quotes, single spaces, redundant parens dropped
  const List& list() const { return list_; }
  bool operator==(const Marker& other) const { return str() == other.str(); }

 private:
  void normalize_extra();
  List list_;
};

namespace detail {
// Shared with the requirement parser: packaging's context-sensitive tokenizer over one source string.
struct MarkerSyntaxError {
  std::string message;
  size_t span_start = 0;
  size_t span_end = 0;
};
class Tokenizer {
 public:
  explicit Tokenizer(std::string_view source) : src_(source) {}
  // Length of a match of token `name` at the current position, or nullopt.
  std::optional<size_t> match(std::string_view name) const;
  bool check(std::string_view name);               // matches and loads the token
  bool peek(std::string_view name) const { return match(name).has_value(); }
  void consume(std::string_view name) { if (check(name)) read(); }
  std::string read();
  std::string expect(std::string_view name, std::string_view expected);
  [[noreturn]] void fail(std::string message, std::optional<size_t> start = {}, std::optional<size_t> end = {}) const;
  size_t position() const { return pos_; }
  std::string_view source() const { return src_; }

 private:
  std::string_view src_;
  size_t pos_ = 0;
  std::optional<size_t> pending_;  // length of the checked, unread token
};
Marker::List parse_marker_list(Tokenizer& t);
std::string format_syntax_error(std::string_view what, std::string_view source, const MarkerSyntaxError& e);
}  // namespace detail

}  // namespace trainpack::python
