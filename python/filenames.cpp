#include "python/filenames.h"

#include <algorithm>
#include <unordered_set>

#include "python/names.h"
#include "support/error.h"
#include "support/text.h"

namespace trainpack::python {

namespace {

constexpr const char* kWheelHint =
    "wheel filenames are {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl (PEP 427)";
constexpr const char* kSdistHint = "sdist filenames are {name}-{version}.tar.gz or {name}-{version}.zip";

// The wheel parser, reporting packaging's reason instead of throwing so try_parse stays cheap.
std::optional<WheelFilename> parse_wheel(std::string_view filename, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<WheelFilename> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (!filename.ends_with(".whl"))
    return fail("invalid wheel filename (extension must be '.whl'): " + std::string(filename));
  std::string_view stem = filename.substr(0, filename.size() - 4);
  const auto dashes = std::count(stem.begin(), stem.end(), '-');
  if (dashes != 4 && dashes != 5)
    return fail("invalid wheel filename (wrong number of parts): " + std::string(filename));
  std::vector<std::string_view> parts = split_at(stem, '-');  // name, version, [build], py, abi, plat

  // packaging: no "__" and only [\w\d._] (ASCII here; packaging also admits Unicode word characters).
  std::string_view name_part = parts[0];
  bool name_ok = name_part.find("__") == std::string_view::npos;
  for (char c : name_part)
    name_ok = name_ok && (ascii_alnum(c) || c == '_' || c == '.');
  if (!name_ok) return fail("invalid project name in wheel filename: " + std::string(filename));

  auto version = Version::try_parse(parts[1]);
  if (!version) return fail("invalid version '" + std::string(parts[1]) + "' in wheel filename: " + std::string(filename));

  WheelFilename out;
  out.name = canonicalize_name(name_part);
  out.version = std::move(*version);
  if (dashes == 5) {
    std::string_view build = parts[2];
    std::size_t digits = 0;
    while (digits < build.size() && ascii_digit(build[digits])) ++digits;
    if (digits == 0)
      return fail("invalid build number '" + std::string(build) + "' in wheel filename: " + std::string(filename));
    std::string_view number = build.substr(0, digits);
    while (number.size() > 1 && number.front() == '0') number.remove_prefix(1);
    out.build = BuildTag{std::string(number), std::string(build.substr(digits))};
  }
  const std::size_t n = parts.size();
  std::string tag_text = std::string(parts[n - 3]) + "-" + std::string(parts[n - 2]) + "-" + std::string(parts[n - 1]);
  auto tags = parse_compressed_tag(tag_text);  // exactly three parts by construction: only the bound can fail
  if (!tags) return fail("invalid wheel filename (compressed tag set too large): " + std::string(filename));
  out.tags = std::move(*tags);
  return out;
}

std::optional<SdistFilename> parse_sdist(std::string_view filename, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<SdistFilename> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::string_view stem;
  if (filename.ends_with(".tar.gz")) {
    stem = filename.substr(0, filename.size() - 7);
  } else if (filename.ends_with(".zip")) {
    stem = filename.substr(0, filename.size() - 4);
  } else {
    return fail("invalid sdist filename (extension must be '.tar.gz' or '.zip'): " + std::string(filename));
  }
  // A PEP 440 version has no '-', so the last one separates name and version.
  const std::size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos) return fail("invalid sdist filename: " + std::string(filename));
  auto version = Version::try_parse(stem.substr(dash + 1));
  if (!version)
    return fail("invalid version '" + std::string(stem.substr(dash + 1)) + "' in sdist filename: " +
                std::string(filename));
  return SdistFilename{canonicalize_name(stem.substr(0, dash)), std::move(*version)};
}

// What `parser` makes of `filename`, or an Error with the parser's reason and `hint`.
template <class Parsed>
Parsed parse_or_throw(std::optional<Parsed> (*parser)(std::string_view, std::string*), std::string_view filename,
                      const char* hint) {
  std::string why;
  auto out = parser(filename, &why);
  if (!out) throw Error(why, hint);
  return std::move(*out);
}

}  // namespace

std::strong_ordering BuildTag::operator<=>(const BuildTag& other) const {
  // Numbers are canonical (no leading zeros), so a longer one is larger.
  if (number.size() != other.number.size()) return number.size() <=> other.number.size();
  if (auto c = number.compare(other.number); c != 0) return c <=> 0;
  return rest.compare(other.rest) <=> 0;  // byte order of UTF-8 = Python's code point order
}

std::optional<std::vector<Tag>> parse_compressed_tag(std::string_view tag) {
  std::vector<std::string_view> parts = split_at(tag, '-');
  if (parts.size() != 3) return std::nullopt;
  std::vector<std::string_view> interpreters = split_at(parts[0], '.');
  std::vector<std::string_view> abis = split_at(parts[1], '.');
  std::vector<std::string_view> platforms = split_at(parts[2], '.');
  // Bounded so a hostile index cannot make a short filename expand into millions of tags.
  if (interpreters.size() * abis.size() * platforms.size() > kMaxCompressedTags) return std::nullopt;
  std::vector<Tag> out;
  std::unordered_set<Tag, TagHash> seen;
  for (auto i : interpreters)
    for (auto a : abis)
      for (auto p : platforms) {
        Tag t{ascii_lower(i), ascii_lower(a), ascii_lower(p)};  // packaging's Tag lower-cases
        if (seen.insert(t).second) out.push_back(std::move(t));
      }
  return out;
}

std::optional<WheelFilename> WheelFilename::try_parse(std::string_view filename) {
  return parse_wheel(filename, nullptr);
}

WheelFilename WheelFilename::parse(std::string_view filename) {
  return parse_or_throw(parse_wheel, filename, kWheelHint);
}

std::optional<SdistFilename> SdistFilename::try_parse(std::string_view filename) {
  return parse_sdist(filename, nullptr);
}

SdistFilename SdistFilename::parse(std::string_view filename) {
  return parse_or_throw(parse_sdist, filename, kSdistHint);
}

bool is_pure_wheel_filename(std::string_view filename) {
  auto wf = WheelFilename::try_parse(filename);
  if (!wf || wf->tags.empty()) return false;
  for (const Tag& t : wf->tags)
    if (t.abi != "none" || t.platform != "any") return false;
  return true;
}

}  // namespace trainpack::python
