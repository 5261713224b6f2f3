#include "python/resolver.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "python/marker_compare.h"
#include "python/names.h"
#include "python/specifier.h"
#include "support/text.h"

namespace trainpack::python {
namespace {

// pip's REQUIRES_PYTHON_IDENTIFIER: the virtual project every Requires-Python turns into.
const std::string kPythonId = "<Python from Requires-Python>";

// pip's format_name: "name[a,b]" with sorted extras.
std::string identifier_for(const std::string& name, const std::set<std::string>& extras) {
  if (extras.empty()) return name;
  return name + "[" + join(std::vector<std::string>(extras.begin(), extras.end()), ",") + "]";
}

std::set<std::string> normalized_extras(const std::set<std::string>& extras) {
  std::set<std::string> out;
  for (const auto& e : extras) out.insert(canonicalize_name(e));  // PEP 685 is the PEP 503 rule
  return out;
}

enum class CandidateKind { index, installed, python };

struct ResolverRequirement;

struct Candidate {
  CandidateKind kind = CandidateKind::index;
  std::string id;    // resolver identifier: name, name[extras] or kPythonId
  std::string name;  // canonical project name
  std::set<std::string> extras;
  Version version;
  const CandidateInfo* file = nullptr;       // index candidates
  const InstalledDist* installed = nullptr;  // installed candidates
  const Candidate* base = nullptr;                // extras candidates
  // pip's template InstallRequirement: the requirement whose lookup created the candidate, and its parent.
  const ResolverRequirement* template_req = nullptr;
  const Candidate* template_parent = nullptr;
};

enum class RequirementKind { specifier, explicit_candidate, requires_python };

struct ResolverRequirement {
  RequirementKind kind = RequirementKind::specifier;
  std::string id;
  std::string name;
  std::set<std::string> extras;
  std::optional<Requirement> req;  // specifier requirements
  SpecifierSet spec;               // specifier and Requires-Python requirements
  std::string spec_text;           // str(SpecifierSet)
  const Candidate* candidate = nullptr; // explicit requirements
  std::string display;             // pip's format_for_error
};

struct Info {
  const ResolverRequirement* requirement = nullptr;
  const Candidate* parent = nullptr;
};

struct Criterion {
  std::vector<const Candidate*> candidates;
  std::vector<Info> information;
  std::vector<const Candidate*> incompatibilities;
};
using CritPtr = std::shared_ptr<const Criterion>;
using Criteria = std::map<std::string, CritPtr>;

struct State {
  std::vector<std::pair<std::string, const Candidate*>> mapping;  // insertion ordered: the last pin is at the back
  std::map<std::string, const Candidate*> pins;                   // the same pins, for lookups
  Criteria criteria;
  std::vector<Info> backtrack_causes;

  const Candidate* pin(const std::string& name) const {
    auto it = pins.find(name);
    return it == pins.end() ? nullptr : it->second;
  }
  void set_pin(const std::string& name, const Candidate* c) {
    if (pins.count(name)) std::erase_if(mapping, [&](const auto& p) { return p.first == name; });
    mapping.emplace_back(name, c);
    pins[name] = c;
  }
  void pop_last_pin() {
    pins.erase(mapping.back().first);
    mapping.pop_back();
  }
};

struct RequirementsConflicted {
  CritPtr criterion;
};
struct Impossible {
  std::vector<Info> causes;
};

struct Constraint {
  std::vector<Specifier> specs;
  std::string text;
};

// get_preference's key (pip >= 25.1); smaller is preferred.
struct Preference {
  bool not_direct, not_pinned, not_upper_bounded;
  double requested_order;
  bool not_unfree;
  std::string identifier;
  auto operator<=>(const Preference&) const = default;
};

bool matches_all(const std::vector<Specifier>& specs, const Version& v) {
  return std::all_of(specs.begin(), specs.end(), [&v](const Specifier& s) { return s.matches(v); });
}

// packaging 21.3's Specifier.prereleases (what pip <= 25 consults): only ==, >=, <=, ~=, === on a pre-release.
bool spec_requests_prerelease_pip23(const Specifier& s) {
  const std::string& op = s.op();
  if (op != "==" && op != ">=" && op != "<=" && op != "~=" && op != "===") return false;
  std::string v = s.version();
  if (op == "==" && s.is_wildcard() && v.size() >= 2) v.resize(v.size() - 2);
  auto parsed = Version::try_parse(v);
  return parsed && parsed->is_prerelease();
}

// The resolved graph pip orders the installation by: "" is the root.
struct InstallGraph {
  std::map<std::string, std::set<std::string>> children;
  std::set<std::string> connected;  // keys connected to the root through current pins
};

class Resolver {
 public:
  Resolver(const std::vector<RootRequirement>& roots, const ResolveOptions& options, CandidateSource& source)
      : roots_(roots), opt_(options), source_(source) {
    auto py = Version::try_parse(options.python_version);
    if (!py) throw Error("invalid target Python version '" + options.python_version + "'");
    python_version_ = Version::parse(std::to_string(py->major()) + "." + std::to_string(py->minor()) + "." +
                                     std::to_string(py->micro()));
    python_cand_ = new_cand();
    python_cand_->kind = CandidateKind::python;
    python_cand_->id = python_cand_->name = kPythonId;
    python_cand_->version = python_version_;
    for (const auto& dist : options.installed) installed_by_name_[canonicalize_name(dist.name)] = &dist;
  }

  Resolution run();

 private:
  // ---- candidates and requirements (pip's factory) ----
  Candidate* new_cand() {
    cands_.push_back(std::make_unique<Candidate>());
    return cands_.back().get();
  }
  ResolverRequirement* new_req() {
    reqs_.push_back(std::make_unique<ResolverRequirement>());
    return reqs_.back().get();
  }
  void log(const std::string& line) const {
    if (opt_.log) opt_.log(line);
  }
  bool marker_matches(const Requirement& r, const std::set<std::string>& extras) const {
    if (!r.marker) return true;
    MarkerEnvironment env = opt_.environment;
    if (extras.empty()) {
      env.extra = "";
      return r.marker->evaluate(env, pep440_version_compare);
    }
    for (const auto& e : extras) {
      env.extra = e;
      if (r.marker->evaluate(env, pep440_version_compare)) return true;
    }
    return false;
  }
  const ResolverRequirement* make_specifier_req(const Requirement& r) {
    if (!r.url.empty())
      throw Error("direct URL requirement '" + r.str() + "' is not supported by the resolver",
                  "download the file and pass it as a local path, or publish it to an index");
    ResolverRequirement* q = new_req();
    q->kind = RequirementKind::specifier;
    q->name = canonicalize_name(r.name);
    q->extras = normalized_extras(r.extras);
    q->id = identifier_for(q->name, q->extras);
    q->spec = SpecifierSet(r.specifier);
    q->spec_text = r.specifier;
    q->req = r;
    q->display = r.str();
    return q;
  }
  const ResolverRequirement* make_explicit_req(const Candidate* c) {
    auto it = explicit_reqs_.find(c);
    if (it != explicit_reqs_.end()) return it->second;
    ResolverRequirement* q = new_req();
    q->kind = RequirementKind::explicit_candidate;
    q->id = q->name = c->id;
    q->candidate = c;
    q->display = c->name + "==" + c->version.str();
    explicit_reqs_[c] = q;
    return q;
  }
  const ResolverRequirement* make_requires_python_req(const std::string& text, const Candidate* parent) {
    SpecifierSet spec;
    try {
      spec = SpecifierSet(text);
    } catch (const Error& e) {
      log("Package '" + parent->name + "' has an invalid Requires-Python: " + e.what());
      return nullptr;
    }
    if (spec.str().empty()) return nullptr;
    ResolverRequirement* q = new_req();
    q->kind = RequirementKind::requires_python;
    q->id = q->name = kPythonId;
    q->spec = spec;
    q->spec_text = spec.str();
    q->display = "Python " + spec.str();
    return q;
  }
  const Candidate* extras_cand(const Candidate* base, const std::set<std::string>& extras) {
    if (extras.empty()) return base;
    std::string key =
        "E|" + identifier_for(base->name, extras) + "|" + std::to_string(reinterpret_cast<uintptr_t>(base));
    auto it = cand_cache_.find(key);
    if (it != cand_cache_.end()) return it->second;
    Candidate* c = new_cand();
    *c = *base;
    c->base = base;
    c->extras = extras;
    c->id = identifier_for(base->name, extras);
    cand_cache_[key] = c;
    return c;
  }
  const Candidate* base_cand(CandidateKind kind, const std::string& name, const Version& version,
                             const CandidateInfo* file, const ResolverRequirement* template_req,
                             const Candidate* template_parent) {
    std::string key = (kind == CandidateKind::installed ? "I|" : "L|") + name + "|" +
                      (file ? std::to_string(reinterpret_cast<uintptr_t>(file)) : version.str());
    auto it = cand_cache_.find(key);
    if (it != cand_cache_.end()) return it->second;
    Candidate* c = new_cand();
    c->kind = kind;
    c->id = c->name = name;
    c->version = version;
    c->file = file;
    if (kind == CandidateKind::installed) c->installed = installed_by_name_.at(name);
    c->template_req = template_req;
    c->template_parent = template_parent;
    cand_cache_[key] = c;
    return c;
  }
  const std::vector<CandidateInfo>& infos(const std::string& name) {
    auto it = infos_.find(name);
    if (it == infos_.end()) it = infos_.emplace(name, source_.candidates(name)).first;
    return it->second;
  }
  bool index_requires_python_ok(const CandidateInfo& info) const {
    if (info.requires_python.empty()) return true;
    try {
      return SpecifierSet(info.requires_python).contains(python_version_);
    } catch (const Error&) {
      return true;  // pip ignores an invalid data-requires-python
    }
  }
  const CandidateMetadata& metadata_of(const Candidate* base) {
    auto it = metadata_.find(base);
    if (it != metadata_.end()) return it->second;
    CandidateMetadata md;
    if (base->kind == CandidateKind::installed) {
      md.requires_dist = base->installed->requires_dist;
      md.provides_extra = base->installed->provides_extra;
    } else {
      check_hash_pinned(base);
      md = source_.metadata(base->name, *base->file);
    }
    return metadata_.emplace(base, std::move(md)).first->second;
  }
  void check_hash_pinned(const Candidate* c) const;

  // pip's Requirement.is_satisfied_by
  bool satisfied(const ResolverRequirement* r, const Candidate* c) const {
    switch (r->kind) {
      case RequirementKind::specifier: return r->spec.contains(c->version, true);
      case RequirementKind::explicit_candidate: return r->candidate == c;
      case RequirementKind::requires_python: return r->spec.contains(c->version, true);
    }
    return false;
  }

  std::vector<const ResolverRequirement*> requirements_of(const Criteria& criteria, const std::string& id) const {
    std::vector<const ResolverRequirement*> out;
    auto it = criteria.find(id);
    if (it != criteria.end())
      for (const auto& i : it->second->information) out.push_back(i.requirement);
    return out;
  }
  std::vector<const Candidate*> find_matches(const std::string& id, const std::vector<const ResolverRequirement*>& reqs,
                                             const Criteria& criteria, const std::vector<const Candidate*>& incompat);
  std::vector<const Candidate*> found_candidates(const std::string& id,
                                                 const std::vector<const ResolverRequirement*>& specifier_requirements,
                                                 const Constraint* constraint, const Candidate* template_parent,
                                                 const std::vector<const Candidate*>& incompat);
  std::vector<const CandidateInfo*> index_files(const std::string& name, const std::vector<Specifier>& specs);
  std::vector<const CandidateInfo*> allowed_versions(const std::vector<const CandidateInfo*>& usable,
                                                     const std::vector<Specifier>& specs) const;
  std::vector<const Candidate*> with_installed(const std::string& id, const Candidate* installed,
                                               const std::vector<const Candidate*>& index) const;
  const Constraint* constraint_for(const std::string& id) const {
    auto it = constraints_.find(id);
    if (it == constraints_.end()) it = constraints_.find(id.substr(0, id.find('[')));
    return it == constraints_.end() ? nullptr : &it->second;
  }
  bool eligible_for_upgrade(const std::string& id) const {
    if (opt_.upgrade_strategy == UpgradeStrategy::eager) return true;
    return upgrade_requested_.count(id) || upgrade_requested_.count(id.substr(0, id.find('[')));
  }
  const std::vector<const ResolverRequirement*>& dependencies(const Candidate* c);
  const ResolverRequirement* make_dependency(const std::string& text, const std::set<std::string>& extras,
                                             const Candidate* parent);

  // ---- resolvelib ----
  State& state() { return states_.back(); }
  void push_new_state() { states_.push_back(states_.back()); }
  void add_to_criteria(Criteria& criteria, const ResolverRequirement* req, const Candidate* parent);
  Preference preference(const std::string& id);
  bool pin_satisfying(const std::string& name, const Criterion& crit) {
    const Candidate* pin = state().pin(name);
    if (!pin) return false;
    for (const auto& i : crit.information)
      if (!satisfied(i.requirement, pin)) return false;
    return true;
  }
  std::vector<CritPtr> attempt_to_pin(const std::string& name);
  bool backjump(const std::vector<Info>& causes);
  bool patch_criteria(std::vector<std::pair<std::string, std::vector<const Candidate*>>>& incompat_from_broken);
  std::vector<std::string> narrow(const std::vector<std::string>& names) const;
  void collect_constraints();
  std::vector<const ResolverRequirement*> collect_root_requirements();
  void add_root_requirements(const std::vector<const ResolverRequirement*>& root_reqs);
  std::string choose_next(const std::vector<std::string>& unsatisfied);
  void backtrack(const std::vector<CritPtr>& failure);
  void drop_invalidated(const std::set<std::string>& satisfied_names);

  // ---- results and errors ----
  Resolution build_result();
  InstallGraph install_graph() const;
  std::map<std::string, ResolvedDist> dists_to_install(const std::set<std::string>& connected);
  [[noreturn]] void report(const std::vector<Info>& causes);
  [[noreturn]] void report_requires_python(const std::vector<Info>& python_causes) const;
  [[noreturn]] void report_no_match(const Info& cause);
  [[noreturn]] void report_conflict(const std::vector<Info>& causes) const;
  std::string describe_trigger(const Candidate* parent) const;

  const std::vector<RootRequirement>& roots_;
  const ResolveOptions& opt_;
  CandidateSource& source_;
  Version python_version_;
  Candidate* python_cand_ = nullptr;
  std::map<std::string, const InstalledDist*> installed_by_name_;
  std::map<std::string, Constraint> constraints_;
  std::map<std::string, int> user_requested_;
  std::map<std::string, int> upgrade_requested_;
  std::vector<std::unique_ptr<Candidate>> cands_;
  std::vector<std::unique_ptr<ResolverRequirement>> reqs_;
  std::unordered_map<std::string, const Candidate*> cand_cache_;
  std::unordered_map<const Candidate*, const ResolverRequirement*> explicit_reqs_;
  std::map<std::string, std::vector<CandidateInfo>> infos_;
  std::unordered_map<const Candidate*, CandidateMetadata> metadata_;
  std::unordered_map<const Candidate*, std::vector<const ResolverRequirement*>> deps_;
  std::vector<State> states_;
  // The requirement add_to_criteria is adding, and its parent (template lookup).
  const ResolverRequirement* adding_req_ = nullptr;
  const Candidate* adding_parent_ = nullptr;
};

void Resolver::check_hash_pinned(const Candidate* c) const {
  if (!opt_.require_hashes) return;
  const ResolverRequirement* t = c->template_req;
  if (!t || !t->req) return;
  const auto& items = t->req->specifier_items;
  if (items.size() == 1 && (items[0].first == "==" || items[0].first == "===")) return;
  std::string line = "    " + t->display;
  if (c->template_parent) line += " (from " + c->template_parent->id + "==" + c->template_parent->version.str() + ")";
  throw ResolutionError(ResolutionError::Kind::hash_unpinned,
                        "In --require-hashes mode, all requirements must have their versions pinned with ==. "
                        "These do not:",
                        line, "pin every requirement (also dependencies) with == and its --hash");
}

// pip's factory.find_candidates.
std::vector<const Candidate*> Resolver::find_matches(const std::string& id,
                                                     const std::vector<const ResolverRequirement*>& reqs,
                                                     const Criteria& criteria,
                                                     const std::vector<const Candidate*>& incompat) {
  auto is_incompat = [&](const Candidate* c) {
    return std::find(incompat.begin(), incompat.end(), c) != incompat.end();
  };
  auto all_satisfied = [&](const Candidate* c) {
    for (const ResolverRequirement* r : reqs)
      if (!satisfied(r, c)) return false;
    return true;
  };
  if (id == kPythonId) {
    if (!is_incompat(python_cand_) && all_satisfied(python_cand_)) return {python_cand_};
    return {};
  }
  std::vector<const Candidate*> explicit_cands;
  std::vector<const ResolverRequirement*> specifier_requirements;
  for (const ResolverRequirement* r : reqs) {
    if (r->kind == RequirementKind::explicit_candidate) {
      if (std::find(explicit_cands.begin(), explicit_cands.end(), r->candidate) == explicit_cands.end())
        explicit_cands.push_back(r->candidate);
    } else if (r->kind == RequirementKind::specifier) {
      specifier_requirements.push_back(r);
    }
  }
  // foo[x] also takes the exact base that some other requirement already fixed for foo.
  if (size_t bracket = id.find('['); bracket != std::string::npos) {
    std::string base = id.substr(0, bracket);
    std::set<std::string> extras;
    std::string list = id.substr(bracket + 1, id.size() - bracket - 2);
    for (size_t pos = 0; pos <= list.size();) {
      size_t comma = list.find(',', pos);
      if (comma == std::string::npos) comma = list.size();
      extras.insert(list.substr(pos, comma - pos));
      pos = comma + 1;
    }
    for (const ResolverRequirement* r : requirements_of(criteria, base)) {
      if (r->kind != RequirementKind::explicit_candidate) continue;
      const Candidate* c = extras_cand(r->candidate, extras);
      if (std::find(explicit_cands.begin(), explicit_cands.end(), c) == explicit_cands.end())
        explicit_cands.push_back(c);
    }
  }
  const Constraint* constraint = constraint_for(id);
  if (explicit_cands.empty()) {
    if (specifier_requirements.empty()) return {};
    // The parent of the template requirement: whoever added the first specifier requirement.
    const Candidate* template_parent = specifier_requirements.front() == adding_req_ ? adding_parent_ : nullptr;
    auto it = criteria.find(id);
    if (it != criteria.end())
      for (const auto& i : it->second->information)
        if (i.requirement == specifier_requirements.front()) {
          template_parent = i.parent;
          break;
        }
    return found_candidates(id, specifier_requirements, constraint, template_parent, incompat);
  }
  std::vector<const Candidate*> out;
  for (const Candidate* c : explicit_cands) {
    if (is_incompat(c) || !all_satisfied(c)) continue;
    if (constraint) {
      bool ok = std::all_of(constraint->specs.begin(), constraint->specs.end(),
                            [&](const Specifier& s) { return s.contains(c->version, true); });
      if (!ok) continue;
    }
    out.push_back(c);
  }
  return out;
}

// pip's factory._iter_found_candidates + PackageFinder's filtering + found_candidates.FoundCandidates.
std::vector<const Candidate*> Resolver::found_candidates(
    const std::string& id, const std::vector<const ResolverRequirement*>& specifier_requirements,
    const Constraint* constraint, const Candidate* template_parent, const std::vector<const Candidate*>& incompat) {
  const ResolverRequirement* template_requirement = specifier_requirements.front();
  const std::string& name = template_requirement->name;
  std::set<std::string> extras;
  std::vector<Specifier> specs;
  if (constraint) specs = constraint->specs;
  for (const ResolverRequirement* r : specifier_requirements) {
    extras.insert(r->extras.begin(), r->extras.end());
    specs.insert(specs.end(), r->spec.specifiers().begin(), r->spec.specifiers().end());
  }
  auto is_incompat = [&](const Candidate* c) {
    return std::find(incompat.begin(), incompat.end(), c) != incompat.end();
  };

  const Candidate* installed = nullptr;
  if (auto it = installed_by_name_.find(name); it != installed_by_name_.end() && matches_all(specs, it->second->version)) {
    const Candidate* c = extras_cand(
        base_cand(CandidateKind::installed, name, it->second->version, nullptr, template_requirement, template_parent),
        extras);
    if (!is_incompat(c)) installed = c;
  }
  std::vector<const Candidate*> index;
  for (const CandidateInfo* i : index_files(name, specs))
    index.push_back(extras_cand(
        base_cand(CandidateKind::index, name, i->version, i, template_requirement, template_parent), extras));
  std::vector<const Candidate*> out = installed ? with_installed(id, installed, index) : index;
  std::erase_if(out, is_incompat);
  return out;
}

// PackageFinder: the index's files of `name` that `specs` allow (Requires-Python from the index, then the specifier
// with pip's pre-release policy), best first, one per version, yanked ones as pip's version of PEP 592 keeps them.
std::vector<const CandidateInfo*> Resolver::index_files(const std::string& name, const std::vector<Specifier>& specs) {
  std::vector<const CandidateInfo*> usable;
  for (const auto& info : infos(name)) {
    if (!index_requires_python_ok(info)) {
      log("Link requires a different Python (" + python_version_.str() + " not in: '" + info.requires_python +
          "'): " + name + " " + info.version.str());
      continue;
    }
    usable.push_back(&info);
  }
  std::vector<const CandidateInfo*> applicable = allowed_versions(usable, specs);
  // pip 20.3.0-20.3.1 only ranked yanked files last (the finder's sort key puts yank_value before the version).
  const bool yanked_last = opt_.yanked_rule == YankedRule::ranked_last;
  std::stable_sort(applicable.begin(), applicable.end(), [yanked_last](const CandidateInfo* a, const CandidateInfo* b) {
    if (yanked_last && a->yanked != b->yanked) return b->yanked;
    return a->version > b->version;
  });

  // PEP 592 (resolution/resolvelib/factory.py _iter_found_candidates): yanked files only when every match is yanked
  // (pip 20.3.2-21.3.1) and, from pip 22.0, the specifier pins (== without wildcard, or ===).
  bool all_yanked = std::all_of(applicable.begin(), applicable.end(), [](const auto* i) { return i->yanked; });
  bool pinned = std::any_of(specs.begin(), specs.end(), [](const Specifier& s) {
    return s.op() == "===" || (s.op() == "==" && !s.is_wildcard());
  });
  auto skip_yanked = [&](const CandidateInfo* i) {
    switch (opt_.yanked_rule) {
      case YankedRule::ranked_last: return false;
      case YankedRule::unless_all_yanked: return i->yanked && !all_yanked;
      case YankedRule::unless_all_yanked_and_pinned: break;
    }
    return i->yanked && !(all_yanked && pinned);
  };
  std::vector<const CandidateInfo*> files;
  std::optional<Version> last;  // applicable is sorted: one file per version is the first one seen
  for (const auto* i : applicable) {
    if (skip_yanked(i)) continue;
    if (last && *last == i->version) continue;
    last = i->version;
    files.push_back(i);
  }
  return files;
}

// The files whose versions `specs` allow, with the pre-release policy of the pip being emulated.
std::vector<const CandidateInfo*> Resolver::allowed_versions(const std::vector<const CandidateInfo*>& usable,
                                                             const std::vector<Specifier>& specs) const {
  std::vector<const CandidateInfo*> applicable;
  if (opt_.prerelease_fallback) {
    std::vector<std::string> texts;
    for (const auto& s : specs) texts.push_back(s.str());
    SpecifierSet set(join(texts, ","));
    std::vector<Version> versions;
    for (const auto* i : usable) versions.push_back(i->version);
    std::vector<Version> filtered = set.filter(versions, opt_.pre ? std::optional<bool>(true) : std::nullopt);
    std::set<Version> kept(filtered.begin(), filtered.end());
    for (const auto* i : usable)
      if (kept.count(i->version)) applicable.push_back(i);
    return applicable;
  }
  bool allow_pre = opt_.pre || std::any_of(specs.begin(), specs.end(), spec_requests_prerelease_pip23);
  bool any_final = false;
  for (const auto* i : usable) {
    if (!matches_all(specs, i->version)) continue;
    if (i->version.is_prerelease() && !allow_pre) continue;
    any_final = any_final || !i->version.is_prerelease();
    applicable.push_back(i);
  }
  // packaging 21.3: only a bare name falls back to pre-releases when nothing final is there.
  if (specs.empty() && !allow_pre && !any_final)
    for (const auto* i : usable)
      if (i->version.is_prerelease()) applicable.push_back(i);
  return applicable;
}

// found_candidates.FoundCandidates: the installed distribution first when it cannot be upgraded (then the index's
// other versions), else in its place among the index's versions, newest first.
std::vector<const Candidate*> Resolver::with_installed(const std::string& id, const Candidate* installed,
                                                       const std::vector<const Candidate*>& index) const {
  std::vector<const Candidate*> out;
  if (!eligible_for_upgrade(id)) {
    out.push_back(installed);
    for (const Candidate* c : index)
      if (!(c->version == installed->version)) out.push_back(c);
    return out;
  }
  bool inserted = false;
  for (const Candidate* c : index) {
    if (inserted && c->version == installed->version) continue;
    if (!inserted && installed->version >= c->version) {
      out.push_back(installed);
      inserted = true;
      if (c->version == installed->version) continue;
    }
    out.push_back(c);
  }
  if (!inserted) out.push_back(installed);
  return out;
}

const ResolverRequirement* Resolver::make_dependency(const std::string& text, const std::set<std::string>& extras,
                                     const Candidate* parent) {
  std::optional<Requirement> r;
  try {
    r = Requirement::parse(text);
  } catch (const Error& e) {
    log(std::string("Ignoring an invalid requirement of ") + parent->name + " " + parent->version.str() + ": " +
        e.what());
    return nullptr;
  }
  if (!marker_matches(*r, extras)) return nullptr;  // dropped silently: pip logs "Ignoring" for its roots only
  return make_specifier_req(*r);
}

// pip's Candidate.iter_dependencies (LinkCandidate, AlreadyInstalledCandidate, ExtrasCandidate).
const std::vector<const ResolverRequirement*>& Resolver::dependencies(const Candidate* c) {
  auto it = deps_.find(c);
  if (it != deps_.end()) return it->second;
  std::vector<const ResolverRequirement*> out;
  if (c->kind != CandidateKind::python) {
    const Candidate* base = c->base ? c->base : c;
    const CandidateMetadata& md = metadata_of(base);
    std::set<std::string> valid_extras;
    if (c->base) {
      out.push_back(make_explicit_req(c->base));
      std::set<std::string> provided;
      for (const auto& e : md.provides_extra) provided.insert(canonicalize_name(e));
      for (const auto& e : c->extras) {
        if (provided.count(e))
          valid_extras.insert(e);
        else
          log(base->name + " " + base->version.str() + " does not provide the extra '" + e + "'");
      }
    }
    for (const auto& text : md.requires_dist)
      if (const ResolverRequirement* r = make_dependency(text, valid_extras, c)) out.push_back(r);
    if (!c->base && c->kind == CandidateKind::index)
      if (const ResolverRequirement* r = make_requires_python_req(md.requires_python, c)) out.push_back(r);
  }
  return deps_.emplace(c, std::move(out)).first->second;
}

void Resolver::add_to_criteria(Criteria& criteria, const ResolverRequirement* req, const Candidate* parent) {
  const std::string& id = req->id;
  auto it = criteria.find(id);
  std::vector<const Candidate*> incompat;
  std::vector<Info> information;
  if (it != criteria.end()) {
    incompat = it->second->incompatibilities;
    information = it->second->information;
  }
  std::vector<const ResolverRequirement*> reqs = requirements_of(criteria, id);
  reqs.push_back(req);
  adding_req_ = req;
  adding_parent_ = parent;
  auto crit = std::make_shared<Criterion>();
  crit->candidates = find_matches(id, reqs, criteria, incompat);
  information.push_back({req, parent});
  crit->information = std::move(information);
  crit->incompatibilities = std::move(incompat);
  if (crit->candidates.empty()) throw RequirementsConflicted{crit};
  criteria[id] = crit;
}

// pip's narrow_requirement_selection: Requires-Python alone, else the backtrack causes, else everything.
std::vector<std::string> Resolver::narrow(const std::vector<std::string>& names) const {
  std::set<std::string> backtrack_ids;
  for (const auto& info : states_.back().backtrack_causes) {
    backtrack_ids.insert(info.requirement->id);
    if (info.parent) backtrack_ids.insert(info.parent->id);
  }
  std::vector<std::string> causes;
  for (const auto& n : names) {
    if (n == kPythonId) return {n};
    if (backtrack_ids.count(n)) causes.push_back(n);
  }
  return causes.empty() ? names : causes;
}

Preference Resolver::preference(const std::string& id) {
  const Criterion& crit = *state().criteria.at(id);
  bool direct = false, pinned = false, upper = false, unfree = false;
  for (const auto& info : crit.information) {
    const ResolverRequirement* r = info.requirement;
    if (r->kind != RequirementKind::specifier) {
      direct = true;
      continue;
    }
    for (const auto& [op, ver] : r->req->specifier_items) {
      unfree = true;
      bool wildcard = ver.find('*') != std::string::npos;
      if (op.compare(0, 2, "==") == 0 && !wildcard) pinned = true;
      if (op == "<" || op == "<=" || op == "~=" || (op == "==" && wildcard)) upper = true;
    }
  }
  auto it = user_requested_.find(id);
  double order = it == user_requested_.end() ? std::numeric_limits<double>::infinity() : it->second;
  return {!direct, !pinned, !upper, order, !unfree, id};
}

std::vector<CritPtr> Resolver::attempt_to_pin(const std::string& name) {
  CritPtr crit = state().criteria.at(name);
  std::vector<CritPtr> causes;
  for (const Candidate* candidate : crit->candidates) {
    Criteria criteria = state().criteria;
    try {
      for (const ResolverRequirement* dep : dependencies(candidate)) add_to_criteria(criteria, dep, candidate);
    } catch (const RequirementsConflicted& e) {
      if (opt_.log && candidate->kind != CandidateKind::python) {
        std::string why;
        for (const auto& i : e.criterion->information)
          if (i.parent == candidate) why = i.requirement->display;
        log("Will try a different candidate, due to conflict: " + candidate->id + " " + candidate->version.str() +
            " depends on " + why);
      }
      causes.push_back(e.criterion);
      continue;
    }
    for (const auto& i : crit->information)
      if (!satisfied(i.requirement, candidate))
        throw Error("internal resolver error: candidate " + candidate->id + " " + candidate->version.str() +
                    " does not satisfy " + i.requirement->display);
    for (auto& [k, v] : criteria) state().criteria[k] = v;
    state().set_pin(name, candidate);
    return {};
  }
  return causes;
}

bool Resolver::patch_criteria(
    std::vector<std::pair<std::string, std::vector<const Candidate*>>>& incompat_from_broken) {
  for (auto& [k, incompat] : incompat_from_broken) {
    if (incompat.empty()) continue;
    auto it = state().criteria.find(k);
    if (it == state().criteria.end()) continue;
    CritPtr crit = it->second;
    std::vector<const Candidate*> all = crit->incompatibilities;
    all.insert(all.end(), incompat.begin(), incompat.end());
    auto candidates = find_matches(k, requirements_of(state().criteria, k), state().criteria, all);
    if (candidates.empty()) return false;
    incompat.insert(incompat.end(), crit->incompatibilities.begin(), crit->incompatibilities.end());
    auto patched = std::make_shared<Criterion>();
    patched->candidates = std::move(candidates);
    patched->information = crit->information;
    patched->incompatibilities = incompat;
    state().criteria[k] = patched;
  }
  return true;
}

// resolvelib >= 1.1 _backjump: drop pins back to the latest one whose dependencies touch the conflict.
bool Resolver::backjump(const std::vector<Info>& causes) {
  std::set<std::string> incompatible_deps;
  for (const auto& c : causes) {
    if (c.parent) incompatible_deps.insert(c.parent->id);
    incompatible_deps.insert(c.requirement->id);
  }
  while (states_.size() >= 3) {
    states_.pop_back();
    std::string name;
    const Candidate* candidate = nullptr;
    State broken;
    while (true) {
      if (states_.empty()) throw Impossible{causes};
      broken = std::move(states_.back());
      states_.pop_back();
      if (broken.mapping.empty()) throw Impossible{causes};
      name = broken.mapping.back().first;
      candidate = broken.mapping.back().second;
      broken.pop_last_pin();
      bool touches = false;
      for (const ResolverRequirement* d : dependencies(candidate))
        if (incompatible_deps.count(d->id)) touches = true;
      if (touches || broken.mapping.empty()) break;
    }
    std::vector<std::pair<std::string, std::vector<const Candidate*>>> incompat_from_broken;
    for (const auto& [k, v] : broken.criteria) incompat_from_broken.emplace_back(k, v->incompatibilities);
    incompat_from_broken.push_back({name, {candidate}});
    if (opt_.log) log("Backtracking: " + candidate->id + " " + candidate->version.str());
    push_new_state();
    if (patch_criteria(incompat_from_broken)) return true;
  }
  return false;
}

Resolution Resolver::run() {
  collect_constraints();
  std::vector<const ResolverRequirement*> root_reqs = collect_root_requirements();
  states_.push_back(State{});
  try {
    add_root_requirements(root_reqs);
    push_new_state();
    for (size_t round = 0; round < opt_.max_rounds; ++round) {
      std::vector<std::string> unsatisfied;
      std::set<std::string> satisfied_names;
      for (const auto& [k, crit] : state().criteria) {
        if (pin_satisfying(k, *crit))
          satisfied_names.insert(k);
        else
          unsatisfied.push_back(k);
      }
      if (unsatisfied.empty()) return build_result();
      std::vector<CritPtr> failure = attempt_to_pin(choose_next(unsatisfied));
      if (!failure.empty()) {
        backtrack(failure);
      } else {
        drop_invalidated(satisfied_names);
        push_new_state();
      }
    }
  } catch (const Impossible& e) {
    report(e.causes);
  }
  throw ResolutionError(ResolutionError::Kind::too_deep,
                        "resolution too deep: gave up after " + std::to_string(opt_.max_rounds) + " rounds",
                        "", "pin some versions to narrow the search");
}

// collect_root_requirements, constraints half.
void Resolver::collect_constraints() {
  for (const auto& c : opt_.constraints) {
    if (!c.url.empty() || !c.extras.empty())
      throw Error("invalid constraint '" + c.str() + "'", "constraints cannot have extras or URLs (pip)");
    if (!marker_matches(c, {})) continue;
    Constraint& k = constraints_[canonicalize_name(c.name)];
    SpecifierSet set(c.specifier);
    k.specs.insert(k.specs.end(), set.specifiers().begin(), set.specifiers().end());
    k.text = k.text.empty() ? c.specifier : k.text + "," + c.specifier;
  }
}

// collect_root_requirements, requirements half.
std::vector<const ResolverRequirement*> Resolver::collect_root_requirements() {
  std::vector<const ResolverRequirement*> root_reqs;
  for (size_t i = 0; i < roots_.size(); ++i) {
    const Requirement& r = roots_[i].requirement;
    if (!marker_matches(r, {})) {
      log("Ignoring " + r.name + ": markers '" + r.marker->str() + "' don't match your environment");
      continue;
    }
    const ResolverRequirement* q = make_specifier_req(r);
    if (roots_[i].user_requested) user_requested_.emplace(q->id, static_cast<int>(i));
    if (roots_[i].upgrade) upgrade_requested_.emplace(q->id, static_cast<int>(i));
    root_reqs.push_back(q);
  }
  return root_reqs;
}

void Resolver::add_root_requirements(const std::vector<const ResolverRequirement*>& root_reqs) {
  for (const ResolverRequirement* r : root_reqs) {
    try {
      add_to_criteria(state().criteria, r, nullptr);
    } catch (const RequirementsConflicted& e) {
      throw Impossible{e.criterion->information};
    }
  }
}

// The unsatisfied name to pin next: the most preferred of those narrow() keeps.
std::string Resolver::choose_next(const std::vector<std::string>& unsatisfied) {
  std::vector<std::string> narrowed = narrow(unsatisfied);
  std::string name = narrowed.front();
  if (narrowed.size() > 1) {
    Preference best = preference(name);
    for (size_t i = 1; i < narrowed.size(); ++i) {
      Preference p = preference(narrowed[i]);
      if (p < best) {
        best = p;
        name = narrowed[i];
      }
    }
  }
  return name;
}

void Resolver::backtrack(const std::vector<CritPtr>& failure) {
  std::vector<Info> causes;
  for (const auto& c : failure) causes.insert(causes.end(), c->information.begin(), c->information.end());
  bool success = backjump(causes);
  state().backtrack_causes = causes;
  if (!success) throw Impossible{causes};
}

// resolvelib 1.x: requirements contributed by pins that no longer satisfy are dropped.
void Resolver::drop_invalidated(const std::set<std::string>& satisfied_names) {
  std::set<std::string> invalidated;
  for (const auto& [k, crit] : state().criteria)
    if (satisfied_names.count(k) && !pin_satisfying(k, *crit)) invalidated.insert(k);
  if (invalidated.empty()) return;
  for (auto& [k, crit] : state().criteria) {
    auto patched = std::make_shared<Criterion>(*crit);
    std::erase_if(patched->information, [&](const Info& i) { return i.parent && invalidated.count(i.parent->id); });
    crit = patched;
  }
}

// get_topological_weights: prune leaves repeatedly (weight = remaining graph size - 1), then longest acyclic path.
std::map<std::string, int> topological_weights(std::map<std::string, std::set<std::string>> children,
                                               const std::map<std::string, ResolvedDist>& dists) {
  std::map<std::string, int> weights;
  while (true) {
    std::vector<std::string> leaves;
    for (const auto& [k, ch] : children)
      if (!k.empty() && ch.empty()) leaves.push_back(k);
    if (leaves.empty()) break;
    int weight = static_cast<int>(children.size()) - 1;
    for (const auto& leaf : leaves)
      if (dists.count(leaf)) weights[leaf] = weight;
    for (const auto& leaf : leaves) children.erase(leaf);
    for (auto& [k, ch] : children)
      for (const auto& leaf : leaves) ch.erase(leaf);
  }
  std::set<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& node) {
    if (path.count(node)) return;
    path.insert(node);
    for (const auto& child : children[node]) visit(child);
    path.erase(node);
    if (!dists.count(node)) return;
    weights[node] = std::max(weights[node], static_cast<int>(path.size()));
  };
  visit("");
  return weights;
}

// resolvelib's _build_result + pip's resolve() (what to install) + get_installation_order.
Resolution Resolver::build_result() {
  InstallGraph graph = install_graph();
  std::map<std::string, ResolvedDist> dists = dists_to_install(graph.connected);
  std::map<std::string, int> weights = topological_weights(std::move(graph.children), dists);

  std::vector<ResolvedDist> ordered;
  for (auto& [name, d] : dists) ordered.push_back(std::move(d));
  std::sort(ordered.begin(), ordered.end(), [&](const ResolvedDist& a, const ResolvedDist& b) {
    int wa = weights[a.name], wb = weights[b.name];
    if (wa != wb) return wa > wb;
    return a.name > b.name;
  });
  return Resolution{std::move(ordered)};
}

InstallGraph Resolver::install_graph() const {
  const State& st = states_.back();
  std::map<const Candidate*, std::string> key_of;
  for (const auto& [k, c] : st.mapping) key_of[c] = k;
  InstallGraph graph;
  std::set<std::string>& connected = graph.connected;
  std::function<bool(const std::string&, std::set<std::string>&)> route = [&](const std::string& key,
                                                                               std::set<std::string>& visiting) {
    if (connected.count(key)) return true;
    auto it = st.criteria.find(key);
    if (it == st.criteria.end() || visiting.count(key)) return false;
    visiting.insert(key);
    for (const auto& info : it->second->information) {
      if (!info.parent) {
        connected.insert(key);
        return true;
      }
      auto p = key_of.find(info.parent);
      if (p == key_of.end()) continue;
      if (route(p->second, visiting)) {
        connected.insert(key);
        return true;
      }
    }
    return false;
  };
  std::map<std::string, std::set<std::string>>& children = graph.children;
  children[""];
  for (const auto& [key, crit] : st.criteria) {
    std::set<std::string> visiting;
    if (!route(key, visiting)) continue;
    children[key];
    for (const auto& info : crit->information) {
      std::string pkey;
      if (info.parent) {
        auto p = key_of.find(info.parent);
        if (p == key_of.end()) continue;
        pkey = p->second;
      }
      children[pkey].insert(key);
      children[key];
    }
  }
  return graph;
}

// What pip installs: base candidates; the installed one of the same version stays.
std::map<std::string, ResolvedDist> Resolver::dists_to_install(const std::set<std::string>& connected) {
  std::map<std::string, ResolvedDist> dists;
  std::map<std::string, std::set<std::string>> extras_of;
  for (const auto& [k, c] : state().mapping) {
    if (!connected.count(k) || c->kind == CandidateKind::python) continue;
    if (c->base) {
      extras_of[c->name].insert(c->extras.begin(), c->extras.end());
      continue;
    }
    ResolvedDist d;
    d.name = c->name;
    d.version = c->version;
    auto inst = installed_by_name_.find(c->name);
    if (c->kind == CandidateKind::installed || (inst != installed_by_name_.end() && inst->second->version == c->version)) {
      d.already_installed = true;
    } else {
      d.file = *c->file;
      if (inst != installed_by_name_.end()) d.replaces_installed = inst->second->version;
      if (c->file->yanked)
        log("The candidate selected for download or install is a yanked version: '" + c->name +
            "' candidate (version " + c->version.str() + ")\nReason for being yanked: " +
            (c->file->yanked_reason.empty() ? "<none given>" : c->file->yanked_reason));
    }
    for (const auto& [uk, order] : user_requested_)
      if (uk == c->name || uk.rfind(c->name + "[", 0) == 0) d.user_requested = true;
    dists[c->name] = std::move(d);
  }
  for (auto& [name, e] : extras_of)
    if (auto it = dists.find(name); it != dists.end()) it->second.extras = e;
  return dists;
}

std::string Resolver::describe_trigger(const Candidate* parent) const {
  if (parent->base || parent->kind == CandidateKind::installed || !parent->template_parent)
    return parent->id + "==" + parent->version.str();
  const Candidate* from = parent->template_parent->base ? parent->template_parent->base : parent->template_parent;
  if (from->template_req && from->template_req->req) return from->template_req->req->name;
  return from->name;
}

// pip's factory.get_installation_error.
void Resolver::report(const std::vector<Info>& causes) {
  std::vector<Info> python_causes;
  for (const auto& c : causes)
    if (c.requirement->kind == RequirementKind::requires_python && !satisfied(c.requirement, python_cand_))
      python_causes.push_back(c);
  if (!python_causes.empty()) report_requires_python(python_causes);
  if (causes.size() == 1 && !constraints_.count(causes[0].requirement->name)) report_no_match(causes[0]);
  report_conflict(causes);
}

void Resolver::report_requires_python(const std::vector<Info>& python_causes) const {
  using Kind = ResolutionError::Kind;
  const std::string version = python_version_.str();
  if (python_causes.size() == 1)
    throw ResolutionError(Kind::requires_python,
                          "Package '" + python_causes[0].parent->id + "' requires a different Python: " + version +
                              " not in '" + python_causes[0].requirement->spec_text + "'",
                          "", "");
  std::string lines;
  for (const auto& c : python_causes) {
    if (!lines.empty()) lines += "\n";
    lines += "'" + c.requirement->spec_text + "' (required by " + c.parent->id + " " + c.parent->version.str() + ")";
  }
  throw ResolutionError(Kind::requires_python, "Packages require a different Python. " + version + " not in:",
                        lines, "");
}

void Resolver::report_no_match(const Info& cause) {
  using Kind = ResolutionError::Kind;
  const ResolverRequirement* req = cause.requirement;
  const Candidate* parent = cause.parent;
  std::string disp = parent ? req->display + " (from " + parent->id + ")" : req->display;
  std::vector<Version> versions;
  std::vector<std::string> skipped;
  std::vector<std::string> yanked_matches;
  bool unyanked_match = false;
  for (const auto& info : infos(req->name)) {
    if (!index_requires_python_ok(info)) {
      skipped.push_back(info.version.str() + " Requires-Python " + info.requires_python);
      continue;
    }
    if (std::find(versions.begin(), versions.end(), info.version) == versions.end()) versions.push_back(info.version);
    if (req->kind == RequirementKind::specifier && req->spec.contains(info.version, true)) {
      if (info.yanked)
        yanked_matches.push_back(info.version.str() +
                                 (info.yanked_reason.empty() ? "" : " (yanked: " + info.yanked_reason + ")"));
      else
        unyanked_match = true;
    }
  }
  std::sort(versions.begin(), versions.end());
  std::vector<std::string> vtext;
  for (const auto& v : versions) vtext.push_back(v.str());
  std::string explanation;
  if (!skipped.empty())
    explanation += "Ignored the following versions that require a different python version: " +
                   join(skipped, "; ") + "\n";
  explanation += "Could not find a version that satisfies the requirement " + disp + " (from versions: " +
                 (vtext.empty() ? std::string("none") : join(vtext, ", ")) + ")";
  if (!yanked_matches.empty() && !unyanked_match)
    throw ResolutionError(Kind::only_yanked, "No matching distribution found for " + req->display, explanation,
                          "only yanked releases match: " + join(yanked_matches, ", ") +
                              "; pip takes a yanked release only when it is pinned with == or ===");
  throw ResolutionError(Kind::no_matching_distribution, "No matching distribution found for " + req->display,
                        explanation, "");
}

void Resolver::report_conflict(const std::vector<Info>& causes) const {
  std::set<std::string> triggers;
  for (const auto& c : causes) triggers.insert(c.parent ? describe_trigger(c.parent) : c.requirement->display);
  std::vector<std::string> sorted(triggers.begin(), triggers.end());
  std::string info;
  if (sorted.empty())
    info = "the requested packages";
  else if (sorted.size() == 1)
    info = sorted[0];
  else
    info = join(std::vector<std::string>(sorted.begin(), sorted.end() - 1), ", ") + " and " + sorted.back();
  std::string explanation = "The conflict is caused by:";
  std::set<std::string> relevant_constraints;
  for (const auto& c : causes) {
    if (constraints_.count(c.requirement->name)) relevant_constraints.insert(c.requirement->name);
    explanation += "\n    ";
    if (c.parent)
      explanation += c.parent->id + " " + c.parent->version.str() + " depends on ";
    else
      explanation += "The user requested ";
    explanation += c.requirement->display;
  }
  for (const auto& key : relevant_constraints)
    explanation += "\n    The user requested (constraint) " + key + SpecifierSet(constraints_.at(key).text).str();
  throw ResolutionError(ResolutionError::Kind::conflict,
                        "Cannot install " + info + " because these package versions have conflicting dependencies.",
                        explanation,
                        "To fix this you could try to: 1. loosen the range of package versions you've specified; "
                        "2. remove package versions to allow pip to attempt to solve the dependency conflict");
}

}  // namespace

Resolution resolve(const std::vector<RootRequirement>& roots, const ResolveOptions& options, CandidateSource& source) {
  Resolver resolver(roots, options, source);
  return resolver.run();
}

}  // namespace trainpack::python
