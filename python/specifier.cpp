#include "python/specifier.h"

#include <algorithm>

#include "support/byte_regex.h"
#include "support/error.h"
#include "python/text.h"
#include "support/text.h"

namespace trainpack::python {

namespace {

#define TP_PRE "(?:[-_.]?(?:alpha|beta|preview|pre|a|b|c|rc)[-_.]?[0-9]*)?"
#define TP_POST "(?:(?:-[0-9]+)|(?:[-_.]?(?:post|rev|r)[-_.]?[0-9]*))?"
#define TP_DEV "(?:[-_.]?dev[-_.]?[0-9]*)?"

const RE2& eq_regex() {  // == and !=
  static const RE2 re(
      "v?(?:[0-9]+!)?[0-9]+(?:\\.[0-9]+)*(?:\\.\\*|" TP_PRE TP_POST TP_DEV
      "(?:\\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?)",
      byte_regex_options(RegexCase::ignored));
  return re;
}
const RE2& compat_regex() {  // ~=
  static const RE2 re("v?(?:[0-9]+!)?[0-9]+(?:\\.[0-9]+)+" TP_PRE TP_POST TP_DEV,
                      byte_regex_options(RegexCase::ignored));
  return re;
}
const RE2& ordered_regex() {  // <= >= < >
  static const RE2 re("v?(?:[0-9]+!)?[0-9]+(?:\\.[0-9]+)*" TP_PRE TP_POST TP_DEV,
                      byte_regex_options(RegexCase::ignored));
  return re;
}

[[noreturn]] void invalid(std::string_view text) {
  throw Error("invalid version specifier '" + std::string(text) + "'",
              "use an operator (~= == != <= >= < > ===) and a PEP 440 version, e.g. '>=1.2,<2' or '==1.4.*'");
}

// ==V.* : same epoch and V's release is a prefix of the candidate's zero-padded release.
bool prefix_match(const Version& candidate, const Version& prefix) {
  if (candidate.epoch() != prefix.epoch()) return false;
  const auto& want = prefix.release();
  const auto& have = candidate.release();
  for (size_t i = 0; i < want.size(); ++i)
    if ((i < have.size() ? have[i] : 0) != want[i]) return false;
  return true;
}

std::vector<Version> apply_prereleases(std::vector<Version> matches, std::optional<bool> prereleases) {
  if (prereleases == true) return matches;
  std::vector<Version> finals;
  for (const auto& v : matches)
    if (!v.is_prerelease()) finals.push_back(v);
  if (prereleases == false || !finals.empty()) return finals;
  return matches;  // PEP 440 default: only pre-releases matched, so keep them
}

}  // namespace

Specifier::Specifier(std::string_view text, std::optional<bool> prereleases) : prereleases_(prereleases) {
  std::string_view s = py_strip(text);
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\0') invalid(text);
  size_t oplen = 0;
  if (s.starts_with("===")) oplen = 3;
  else if (s.starts_with("~=") || s.starts_with("==") || s.starts_with("!=") || s.starts_with("<=") ||
           s.starts_with(">="))
    oplen = 2;
  else if (s.starts_with("<") || s.starts_with(">"))
    oplen = 1;
  else
    invalid(text);
  op_ = std::string(s.substr(0, oplen));
  std::string_view ver = py_strip(s.substr(oplen));
  version_ = std::string(ver);
  if (op_ == "===") {
    for (char c : ver)
      if (is_py_space(c) || c == ';' || c == ')') invalid(text);
    parsed_ = Version::try_parse(ver);
    return;
  }
  const RE2& re = (op_ == "==" || op_ == "!=") ? eq_regex() : op_ == "~=" ? compat_regex() : ordered_regex();
  if (!RE2::FullMatch(version_, re)) invalid(text);
  wildcard_ = version_.ends_with(".*");
  parsed_ = Version::try_parse(wildcard_ ? ver.substr(0, ver.size() - 2) : ver);
  if (!parsed_) invalid(text);
}

std::optional<bool> Specifier::prereleases() const {
  if (prereleases_) return prereleases_;
  if (op_ == "!=") return false;
  if (op_ == "==" && wildcard_) return false;
  if (!parsed_) return std::nullopt;
  return parsed_->is_prerelease();
}

bool Specifier::matches(std::string_view candidate) const {
  if (op_ == "===") return ascii_lower(candidate) == ascii_lower(version_);
  auto v = Version::try_parse(candidate);
  return v && matches(*v);
}

bool Specifier::matches(const Version& c) const {
  if (op_ == "===") return ascii_lower(c.str()) == ascii_lower(version_);
  const Version& spec = *parsed_;
  if (op_ == "==" || op_ == "!=") {
    bool eq;
    if (wildcard_) eq = prefix_match(c, spec);
    else if (spec.has_local()) eq = c == spec;
    else eq = c.without_local() == spec;
    return op_ == "==" ? eq : !eq;
  }
  if (op_ == "~=") {
    // >=V and ==V-without-its-last-release-segment.*
    if (!(c.without_local() >= spec)) return false;
    Version prefix = Version::parse(spec.base_version());
    std::string p = prefix.base_version();
    p = p.substr(0, p.rfind('.'));
    return prefix_match(c, Version::parse(p));
  }
  if (op_ == "<=") return c.without_local() <= spec;
  if (op_ == ">=") return c.without_local() >= spec;
  if (op_ == "<") {
    if (!(c < spec)) return false;
    if (!spec.is_prerelease() && c.is_prerelease() && c.base() == spec.base()) return false;
    return true;
  }
  // ">"
  if (!(c > spec)) return false;
  if (!spec.is_postrelease() && c.is_postrelease() && c.base() == spec.base()) return false;
  if (c.has_local() && c.base() == spec.base()) return false;
  return true;
}

bool Specifier::contains(const Version& candidate, std::optional<bool> prereleases) const {
  if (!prereleases) {
    if (prereleases_) prereleases = prereleases_;
    else if (this->prereleases() == true) prereleases = true;
  }
  if (prereleases == false && candidate.is_prerelease()) return false;
  return matches(candidate);
}

std::vector<Version> Specifier::filter(const std::vector<Version>& versions,
                                       std::optional<bool> prereleases) const {
  if (!prereleases) {
    if (prereleases_) prereleases = prereleases_;
    else if (this->prereleases() == true) prereleases = true;
  }
  std::vector<Version> m;
  for (const auto& v : versions)
    if (matches(v)) m.push_back(v);
  return apply_prereleases(std::move(m), prereleases);
}

SpecifierSet::SpecifierSet(std::string_view text, std::optional<bool> prereleases) : prereleases_(prereleases) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = py_strip(text.substr(start, comma == text.npos ? text.npos : comma - start));
    if (!item.empty()) specs_.emplace_back(item);
    if (comma == text.npos) break;
    start = comma + 1;
  }
}

std::string SpecifierSet::str() const {
  std::vector<std::string> parts;
  for (const auto& s : specs_) parts.push_back(s.str());
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "," : "") + parts[i];
  return out;
}

std::optional<bool> SpecifierSet::prereleases() const {
  if (prereleases_) return prereleases_;
  if (specs_.empty()) return std::nullopt;
  for (const auto& s : specs_)
    if (s.prereleases() == true) return true;
  return std::nullopt;
}

bool SpecifierSet::matches(const Version& candidate) const {
  for (const auto& s : specs_)
    if (!s.matches(candidate)) return false;
  return true;
}

bool SpecifierSet::contains(const Version& candidate, std::optional<bool> prereleases, bool installed) const {
  if (installed && candidate.is_prerelease()) prereleases = true;
  return !filter({candidate}, prereleases).empty();
}

std::vector<Version> SpecifierSet::filter(const std::vector<Version>& versions,
                                          std::optional<bool> prereleases) const {
  if (!prereleases) prereleases = this->prereleases();
  std::vector<Version> m;
  for (const auto& v : versions)
    if (matches(v)) m.push_back(v);
  return apply_prereleases(std::move(m), prereleases);
}

}  // namespace trainpack::python
