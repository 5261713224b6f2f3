#pragma once
// Distribution metadata files, as pip reads them:
//  - METADATA / PKG-INFO (core metadata): RFC 822 headers exactly as Python's email.parser (compat32 policy, what
//    importlib.metadata and pip use) splits them, plus the typed fields resolution needs;
//  - the wheel's WHEEL file (PEP 427; pip's wheel_version / check_compatibility / wheel_root_is_purelib);
//  - entry_points.txt (importlib.metadata's Sectioned / EntryPoint parsing).
// Pure functions of the text: callers read the files.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "python/requirement.h"
#include "python/specifier.h"
#include "python/version.h"

namespace trainpack::python {

// email.parser.Parser().parsestr(text) with the compat32 policy.
struct EmailMessage {
  // In file order, names as written. A value has its leading spaces/tabs removed, keeps continuation lines with
  // their line breaks ("a\n  b") and loses the final line break.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // the payload: everything after the blank line (or after the first non-header line)

  static EmailMessage parse(std::string_view text);

  // First value of a header (case-insensitive name), nullptr if absent: msg.get(name).
  const std::string* get(std::string_view name) const;
  // All values in order: msg.get_all(name) or [].
  std::vector<std::string> get_all(std::string_view name) const;
};

// Core metadata (METADATA in a wheel, PKG-INFO in an sdist).
struct CoreMetadata {
  EmailMessage message;           // every header and the body, for fields not typed here
  std::string metadata_version;   // "" when absent
  std::optional<std::string> name;          // as written
  std::optional<std::string> version_text;  // as written
  std::optional<Version> version;           // nullopt when absent or not PEP 440 (with a warning)
  std::vector<Requirement> requires_dist;
  std::optional<std::string> requires_python;          // as written
  std::optional<SpecifierSet> requires_python_specifier;  // nullopt when absent or invalid (with a warning, as pip)
  std::vector<std::string> provides_extra;
  std::vector<std::string> dynamic;  // PEP 643 (Metadata-Version >= 2.2): fields an sdist's build may change
  std::string description;           // the body
  std::vector<std::string> warnings;  // one line each: unknown newer Metadata-Version, invalid Version, ...

  // Throws trainpack::Error when Metadata-Version's major is above 2 or a Requires-Dist is not PEP 508.
  static CoreMetadata parse(std::string_view text);

  // Whether PKG-INFO declares `field` (case-insensitive) dynamic.
  bool is_dynamic(std::string_view field) const;
};

// A wheel's .dist-info/WHEEL.
struct WheelInfo {
  EmailMessage message;
  std::vector<std::uint64_t> wheel_version;  // "1.0" -> {1, 0}
  bool root_is_purelib = false;              // "Root-Is-Purelib: true", case-insensitive, unstripped (as pip)
  std::vector<std::string> tags;             // every "Tag:" line, as written
  std::optional<std::string> build;          // "Build:"
  std::vector<std::string> warnings;         // Wheel-Version newer than 1.0 (pip installs with a warning)

  // Throws trainpack::Error when Wheel-Version is missing, not dotted integers, or its major is above 1.
  static WheelInfo parse(std::string_view text);
};

struct EntryPoint {
  std::string group;  // section: "console_scripts", "gui_scripts", ...
  std::string name;   // case-sensitive, stripped
  std::string value;  // stripped, e.g. "pkg.cli:main [extra]"
  // importlib.metadata's EntryPoint.pattern `module(:attr)?([extras])?`; false leaves the three below empty (Python
  // only fails when the entry point is loaded).
  bool valid = false;
  std::string module;                 // "pkg.cli"
  std::optional<std::string> attr;    // "main", "App.run"; nullopt for "x = pkg"
  std::vector<std::string> extras;    // the \w+ words inside [...]
};

// entry_points.txt as importlib.metadata reads it: stripped lines, '#' comments, "[group]" sections, "name = value"
// split at the first '='; lines before any section are ignored; duplicates are kept in order (pip's dict keeps the
// last). Throws trainpack::Error for a line in a section without '=' (Python raises there too).
std::vector<EntryPoint> parse_entry_points(std::string_view text);

}  // namespace trainpack::python
