#pragma once
// Dependency resolution that picks what `pip install` picks: resolvelib's backtracking resolver (Resolution.resolve,
// _attempt_to_pin_criterion, _backjump, _patch_criteria; resolvelib >= 1.1) driven by a port of pip's provider and
// factory (resolution/resolvelib/{provider,factory,candidates,requirements,found_candidates,resolver}.py):
// ExtrasCandidate(base, extras) depending on base==same version, Requires-Python as a virtual requirement, yanked and
// pre-release filtering as pip's PackageFinder does it, installed dists preferred unless upgrading, constraints that
// only filter, pip's narrow_requirement_selection + get_preference order, get_installation_order's leaf-first
// weights, and pip's error texts (DistributionNotFound, UnsupportedPythonVersion, ResolutionImpossible).
//
// The resolver does no I/O: a CandidateSource lists a project's files and fetches a candidate's metadata, lazily
// (only for candidates actually tried). When several solutions exist the one chosen follows pip's order; it can still
// differ from an old pip whose preference order differed (pip 23 ranked by depth instead of upper bounds).
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "python/markers.h"
#include "python/requirement.h"
#include "python/version.h"
#include "support/error.h"

namespace trainpack::python {

// One distribution file of a project as the index (or find-links) lists it. The caller has already dropped files
// whose tags do not fit the target and orders files of the SAME version by its preference; the resolver orders
// versions and uses the first usable file of each version.
struct CandidateInfo {
  Version version;
  bool yanked = false;
  std::string yanked_reason;
  std::string requires_python;  // the index's data-requires-python; "" when not given
  bool is_wheel = true;
  std::size_t handle = 0;       // opaque to the resolver, handed back in the result
};

// What a candidate's metadata (wheel METADATA / PKG-INFO / built sdist) says about its dependencies.
struct CandidateMetadata {
  std::vector<std::string> requires_dist;   // PEP 508 strings, markers included
  std::string requires_python;              // "" when absent
  std::vector<std::string> provides_extra;  // as written; compared after PEP 685 normalisation
  bool operator==(const CandidateMetadata&) const = default;
};

class CandidateSource {
 public:
  virtual ~CandidateSource() = default;
  // Every file of the project (canonical name) usable on the target; an unknown project is an empty list.
  virtual std::vector<CandidateInfo> candidates(const std::string& canonical_name) = 0;
  // The expensive metadata fetch. Called at most once per (name, handle).
  virtual CandidateMetadata metadata(const std::string& canonical_name, const CandidateInfo& candidate) = 0;
};

// A distribution already in the target environment (a *.dist-info in site-packages).
struct InstalledDist {
  std::string name;
  Version version;
  std::vector<std::string> requires_dist;
  std::vector<std::string> provides_extra;
};

struct RootRequirement {
  Requirement requirement;
  bool user_requested = true;  // pip's user_supplied: counts for the "user order" preference and `requested`
  bool upgrade = false;        // eligible for upgrade (pip --upgrade, strategy only-if-needed)
};

enum class UpgradeStrategy {
  only_if_needed,  // roots flagged `upgrade` go to the best candidate; everything else keeps satisfying installs
  eager,           // every project prefers the best candidate over the installed one
};

// Which yanked files the resolver may pick (PEP 592), by pip version.
enum class YankedRule {
  ranked_last,                   // pip 20.3.0-20.3.1: never skipped, tried after every file that is not yanked
  unless_all_yanked,             // pip 20.3.2-21.3.1: only when every matching file is yanked
  unless_all_yanked_and_pinned,  // pip >= 22.0: ... and the requirement pins a version (== without *, or ===)
};

struct ResolveOptions {
  MarkerEnvironment environment;
  std::string python_version;  // the target's full version ("3.11.2"); Requires-Python sees major.minor.micro
  std::vector<InstalledDist> installed;
  std::vector<Requirement> constraints;  // -c: filter only (no extras, no URLs)
  UpgradeStrategy upgrade_strategy = UpgradeStrategy::only_if_needed;
  bool pre = false;             // --pre
  // pip >= 26: a specifier that only pre-releases match selects them (and packaging >= 25 decides which operators
  // "explicitly request" a pre-release). pip <= 25 (default) falls back to pre-releases only for a bare name.
  bool prerelease_fallback = false;
  YankedRule yanked_rule = YankedRule::unless_all_yanked_and_pinned;
  bool require_hashes = false;  // hash-checking mode: every requirement of an index candidate must be ==/=== pinned
  std::size_t max_rounds = 200000;
  std::function<void(std::string_view)> log;  // pip's INFO/WARNING lines about skipped candidates; may be empty
};

struct ResolvedDist {
  std::string name;  // canonical
  Version version;
  std::optional<CandidateInfo> file;  // nullopt when the installed dist is kept
  std::set<std::string> extras;       // normalised extras requested for it
  bool user_requested = false;
  bool already_installed = false;     // kept as is: nothing to install
  std::optional<Version> replaces_installed;
};

struct Resolution {
  // Install order (dependencies first, pip's get_installation_order); kept installed dists are ordered likewise.
  std::vector<ResolvedDist> dists;
};

class ResolutionError : public Error {
 public:
  enum class Kind {
    no_matching_distribution,  // "No matching distribution found for foo>=2" (+ versions seen)
    only_yanked,               // as above, but yanked files would have matched
    requires_python,           // "Package 'foo' requires a different Python: 3.8.10 not in '>=3.9'"
    conflict,                  // ResolutionImpossible with several causes
    hash_unpinned,             // --require-hashes and a requirement that is not pinned with ==/===
    too_deep,                  // max_rounds exhausted
  };
  ResolutionError(Kind kind, std::string cause, std::string explanation, std::string hint)
      : Error(std::move(cause), hint.empty() ? explanation : explanation.empty() ? hint : explanation + "\n" + hint),
        kind_(kind), explanation_(std::move(explanation)) {}
  Kind kind() const { return kind_; }
  // A few readable lines ("The conflict is caused by:\n    foo 1.0 depends on bar<2\n    The user requested bar>=2").
  const std::string& explanation() const { return explanation_; }

 private:
  Kind kind_;
  std::string explanation_;
};

// Throws ResolutionError; trainpack::Error for invalid input (a bad Requires-Dist string is skipped with a log line,
// as pip does for installed dists, but a bad root requirement or constraint throws).
Resolution resolve(const std::vector<RootRequirement>& roots, const ResolveOptions& options, CandidateSource& source);

}  // namespace trainpack::python
