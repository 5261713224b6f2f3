#pragma once
// Wheel and sdist filenames as packaging.utils.parse_wheel_filename / parse_sdist_filename read them (PEP 427,
// PEP 425 compressed tag sets, the sdist naming convention). Pure functions of the name: no file is opened.
#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "python/tags.h"
#include "python/version.h"

namespace trainpack::python {

// PEP 427 build tag: leading digits as a number, then the rest; ordered like packaging's (int, str) tuple.
struct BuildTag {
  std::string number;  // decimal, leading zeros dropped ("007" -> "7", "0" stays); arbitrarily long like a Python int
  std::string rest;    // "" for "1", "abc" for "1abc"

  std::strong_ordering operator<=>(const BuildTag& other) const;
  bool operator==(const BuildTag& other) const = default;
};

struct WheelFilename {
  std::string name;  // canonicalized (PEP 503)
  Version version;
  std::optional<BuildTag> build;  // nullopt when the filename has none (packaging's `()`, which sorts first)
  std::vector<Tag> tags;          // compressed tag sets expanded (interpreter x abi x platform), lower-cased, unique

  // nullopt where packaging raises InvalidWheelFilename (or InvalidVersion).
  static std::optional<WheelFilename> try_parse(std::string_view filename);
  // Throws trainpack::Error with packaging's reason on an invalid name.
  static WheelFilename parse(std::string_view filename);
};

// A wheel file name whose every tag is platform "any" with abi "none": pure Python, good for any image.
bool is_pure_wheel_filename(std::string_view filename);

struct SdistFilename {
  std::string name;  // canonicalized
  Version version;

  // `{name}-{version}.tar.gz` or `.zip`, split at the last '-'; nullopt where packaging raises.
  static std::optional<SdistFilename> try_parse(std::string_view filename);
  static SdistFilename parse(std::string_view filename);
};

// packaging.tags.parse_tag: "py2.py3-none-any" -> {py2-none-any, py3-none-any}. nullopt unless exactly 3 parts,
// or when the set would expand to more than kMaxCompressedTags tags (a bound packaging 23.0 does not have).
constexpr std::size_t kMaxCompressedTags = 4096;
std::optional<std::vector<Tag>> parse_compressed_tag(std::string_view tag);

}  // namespace trainpack::python
