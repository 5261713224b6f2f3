#pragma once
// PEP 440 version specifiers, as packaging.specifiers.Specifier / SpecifierSet.
//
// Operator semantics follow packaging (all releases agree). Pre-release policy follows
// packaging >= 25 (pip >= 25.1/26): `prereleases` nullopt means "PEP 440 default" —
// filter() yields pre-releases only when no final release matches, and contains(v)
// is filter({v}) non-empty. An explicit true/false behaves identically in every
// packaging release.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "python/version.h"

namespace trainpack::python {

class Specifier {
 public:
  // Throws trainpack::Error ("invalid version specifier '...'") on bad syntax.
  explicit Specifier(std::string_view text, std::optional<bool> prereleases = std::nullopt);

  const std::string& op() const { return op_; }            // "~=", "==", "!=", "<=", ">=", "<", ">", "==="
  const std::string& version() const { return version_; }  // as written (stripped), e.g. "1.0.*"
  std::string str() const { return op_ + version_; }
  bool is_wildcard() const { return wildcard_; }

  // packaging's Specifier.prereleases: explicit override, else false for != and ==X.*,
  // nullopt for an unparsable === string, else whether the spec version is a pre-release.
  std::optional<bool> prereleases() const;
  void set_prereleases(std::optional<bool> p) { prereleases_ = p; }

  // The operator alone, no pre-release policy.
  bool matches(const Version& candidate) const;
  // === compares the raw candidate string case-insensitively; other operators parse it.
  bool matches(std::string_view candidate) const;

  bool contains(const Version& candidate, std::optional<bool> prereleases = std::nullopt) const;
  std::vector<Version> filter(const std::vector<Version>& versions,
                              std::optional<bool> prereleases = std::nullopt) const;

 private:
  std::string op_;
  std::string version_;
  bool wildcard_ = false;
  std::optional<Version> parsed_;  // spec version (without ".*"); nullopt only for unparsable ===
  std::optional<bool> prereleases_;
};

class SpecifierSet {
 public:
  SpecifierSet() = default;
  // Comma-separated; empty items are skipped. Throws trainpack::Error on a bad item.
  explicit SpecifierSet(std::string_view text, std::optional<bool> prereleases = std::nullopt);

  const std::vector<Specifier>& specifiers() const { return specs_; }
  bool empty() const { return specs_.empty(); }
  // Sorted, comma-joined, like str(SpecifierSet).
  std::string str() const;

  // Explicit override; else nullopt when empty; true if any specifier implies pre-releases; else nullopt.
  std::optional<bool> prereleases() const;
  void set_prereleases(std::optional<bool> p) { prereleases_ = p; }

  // Every specifier's operator matches (no pre-release policy).
  bool matches(const Version& candidate) const;

  bool contains(const Version& candidate, std::optional<bool> prereleases = std::nullopt,
                bool installed = false) const;
  // Keeps input order. prereleases: true keeps all matches, false drops pre-releases,
  // nullopt (after the set's own prereleases()) keeps pre-releases only if no final matches.
  std::vector<Version> filter(const std::vector<Version>& versions,
                              std::optional<bool> prereleases = std::nullopt) const;

 private:
  std::vector<Specifier> specs_;
  std::optional<bool> prereleases_;
};

}  // namespace trainpack::python
