#include "python/resolver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "python/marker_compare.h"
#include "python/names.h"

using nlohmann::json;
using trainpack::python::CandidateInfo;
using trainpack::python::CandidateMetadata;
using trainpack::python::CandidateSource;
using trainpack::python::InstalledDist;
using trainpack::python::MarkerEnvironment;
using trainpack::python::Requirement;
using trainpack::python::Resolution;
using trainpack::python::ResolutionError;
using trainpack::python::ResolveOptions;
using trainpack::python::RootRequirement;
using trainpack::python::UpgradeStrategy;
using trainpack::python::Version;
using Kind = trainpack::python::ResolutionError::Kind;

namespace {

const json& scenarios() {
  static const json data = [] {
    std::ifstream in(std::string(TRAINPACK_TESTDATA_DIR) + "/python/resolver/scenarios.json");
    EXPECT_TRUE(in.good());
    return json::parse(in);
  }();
  return data;
}

const json& scenario(const std::string& name) {
  for (const auto& s : scenarios().at("scenarios"))
    if (s.at("name") == name) return s;
  throw std::runtime_error("no scenario " + name);
}

// The same wheel METADATA the generator writes: an extra's requirement gets `extra == "x"` and-ed to its marker.
std::vector<std::string> requires_dist(const json& info) {
  std::vector<std::string> out = info.at("requires").get<std::vector<std::string>>();
  if (info.contains("extras"))
    for (const auto& [extra, reqs] : info.at("extras").items())
      for (const auto& r : reqs) {
        std::string s = r.get<std::string>();
        if (s.find("extra ==") != std::string::npos)
          out.push_back(s);
        else if (auto semi = s.find(';'); semi != std::string::npos)
          out.push_back(s.substr(0, semi) + " ; (" + s.substr(semi + 1) + ") and extra == \"" + extra + "\"");
        else
          out.push_back(s + " ; extra == \"" + extra + "\"");
      }
  return out;
}

// An index made of a scenario's package table; counts metadata fetches.
class TableSource : public CandidateSource {
 public:
  explicit TableSource(const json& packages) : packages_(packages) {}
  std::vector<CandidateInfo> candidates(const std::string& name) override {
    ++listings[name];
    std::vector<CandidateInfo> out;
    for (const auto& [project, versions] : packages_.items()) {
      if (trainpack::python::canonicalize_name(project) != name) continue;
      for (const auto& [version, info] : versions.items()) {
        CandidateInfo c;
        c.version = Version::parse(version);
        if (info.contains("yanked") && !info.at("yanked").is_null()) {
          c.yanked = true;
          c.yanked_reason = info.at("yanked");
        }
        if (info.contains("index_requires_python")) c.requires_python = info.at("index_requires_python");
        c.handle = handles_.size();
        handles_.push_back(&info);
        out.push_back(c);
      }
    }
    return out;
  }
  CandidateMetadata metadata(const std::string& name, const CandidateInfo& c) override {
    fetched.push_back(name + " " + c.version.str());
    const json& info = *handles_.at(c.handle);
    CandidateMetadata md;
    md.requires_dist = requires_dist(info);
    if (info.contains("requires_python")) md.requires_python = info.at("requires_python");
    if (info.contains("extras"))
      for (const auto& [extra, reqs] : info.at("extras").items()) md.provides_extra.push_back(extra);
    return md;
  }
  std::vector<std::string> fetched;
  std::map<std::string, int> listings;

 private:
  const json& packages_;
  std::vector<const json*> handles_;
};

struct Outcome {
  std::optional<Resolution> result;
  std::optional<ResolutionError> error;
  std::vector<std::string> fetched;
  std::vector<std::string> log;
};

ResolveOptions options_for(const json& sc) {
  const json& env = scenarios().at("environment");
  ResolveOptions opt;
  opt.python_version = env.at("python_full_version");
  opt.environment = MarkerEnvironment::cpython_linux(opt.python_version, env.at("platform_machine").get<std::string>());
  for (const auto& [name, d] : sc.at("installed").items())
    opt.installed.push_back(InstalledDist{name, Version::parse(d.at("version").get<std::string>()),
                                          d.at("requires").get<std::vector<std::string>>(), {}});
  for (const auto& c : sc.at("constraints")) opt.constraints.push_back(Requirement::parse(c.get<std::string>()));
  opt.pre = sc.at("pre");
  opt.require_hashes = sc.at("require_hashes");
  return opt;
}

Outcome run(const json& sc, ResolveOptions opt) {
  std::vector<RootRequirement> roots;
  for (const auto& r : sc.at("requirements"))
    roots.push_back({Requirement::parse(r.get<std::string>()), true, sc.at("upgrade").get<bool>()});
  TableSource source(sc.at("packages"));
  Outcome out;
  opt.log = [&](std::string_view line) { out.log.emplace_back(line); };
  try {
    out.result = trainpack::python::resolve(roots, opt, source);
  } catch (const ResolutionError& e) {
    out.error = e;
  }
  out.fetched = source.fetched;
  return out;
}

Outcome run(const std::string& name) { return run(scenario(name), options_for(scenario(name))); }

std::vector<std::string> to_install(const Resolution& r) {
  std::vector<std::string> out;
  for (const auto& d : r.dists)
    if (!d.already_installed) out.push_back(d.name + "==" + d.version.str());
  return out;
}

TEST(PythonResolver, ScenariosMatchPip) {
  const json& all = scenarios().at("scenarios");
  ASSERT_GE(all.size(), 45u);
  for (const auto& sc : all) {
    SCOPED_TRACE(sc.at("name").get<std::string>());
    Outcome r = run(sc, options_for(sc));
    const json& expected = sc.at("expected");
    if (expected.contains("install")) {
      ASSERT_TRUE(r.result.has_value()) << r.error->what() << "\n" << r.error->explanation();
      std::vector<std::string> want, got;
      std::vector<bool> want_requested, got_requested;
      for (const auto& item : expected.at("install")) {
        want.push_back(item[0].get<std::string>() + "==" + Version::parse(item[1].get<std::string>()).str());
        want_requested.push_back(item[2]);
      }
      for (const auto& d : r.result->dists)
        if (!d.already_installed) got_requested.push_back(d.user_requested);
      got = to_install(*r.result);
      EXPECT_EQ(got, want);  // same set, same installation order
      EXPECT_EQ(got_requested, want_requested);
      continue;
    }
    const json& err = expected.at("error");
    ASSERT_TRUE(r.error.has_value()) << "resolved but pip failed: " << err.dump();
    const std::string kind = err.at("kind");
    const ResolutionError& e = *r.error;
    if (kind == "no_matching_distribution") {
      EXPECT_TRUE(e.kind() == Kind::no_matching_distribution || e.kind() == Kind::only_yanked);
      EXPECT_EQ(std::string(e.what()), "No matching distribution found for " + err.at("requirement").get<std::string>());
      EXPECT_NE(e.explanation().find("(from versions: " + err.at("from_versions").get<std::string>() + ")"),
                std::string::npos)
          << e.explanation();
    } else if (kind == "requires_python") {
      EXPECT_EQ(e.kind(), Kind::requires_python);
      EXPECT_EQ(std::string(e.what()), err.at("message").get<std::string>());
    } else if (kind == "conflict") {
      EXPECT_EQ(e.kind(), Kind::conflict);
      std::vector<std::string> want = err.at("conflict_lines").get<std::vector<std::string>>();
      std::vector<std::string> got;
      std::string ex = e.explanation();
      ASSERT_EQ(ex.rfind("The conflict is caused by:\n", 0), 0u) << ex;
      for (size_t pos = ex.find('\n'); pos != std::string::npos;) {
        size_t next = ex.find('\n', pos + 1);
        std::string line = ex.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
        got.push_back(line.substr(line.find_first_not_of(' ')));
        pos = next;
      }
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want);
      std::string message = err.at("message");
      if (message.find("-r requirements.txt") == std::string::npos) {
        EXPECT_EQ(std::string(e.what()), message);
      }
    } else if (kind == "hash_unpinned") {
      EXPECT_EQ(e.kind(), Kind::hash_unpinned);
    } else {
      ADD_FAILURE() << "unclassified pip error: " << err.dump();
    }
  }
}

TEST(PythonResolver, MetadataIsFetchedOnlyForTriedCandidates) {
  // a 2.0 is taken at once: the older a's and b's older releases are never opened.
  json sc = scenario("transitive-simple");
  Outcome r = run(sc, options_for(sc));
  ASSERT_TRUE(r.result);
  EXPECT_EQ(r.fetched, (std::vector<std::string>{"a 1.0", "b 2.0", "c 1.1"}));
  // Backtracking opens exactly the candidates it tries.
  Outcome b = run("backtrack-depth");
  ASSERT_TRUE(b.result);
  EXPECT_EQ(std::count(b.fetched.begin(), b.fetched.end(), "a 3.0"), 1);
  EXPECT_EQ(std::count(b.fetched.begin(), b.fetched.end(), "c 3.0"), 0);  // c==1.0 is pinned by the user
}

TEST(PythonResolver, InstalledDistsKeptOrReplaced) {
  Outcome kept = run("installed-kept");
  ASSERT_TRUE(kept.result);
  ASSERT_EQ(kept.result->dists.size(), 2u);
  EXPECT_EQ(kept.result->dists[0].name, "b");  // dependencies first, kept ones included
  EXPECT_TRUE(kept.result->dists[0].already_installed);
  EXPECT_FALSE(kept.result->dists[0].file.has_value());
  EXPECT_EQ(kept.result->dists[0].version.str(), "1.0");

  Outcome up = run("installed-upgraded");
  ASSERT_TRUE(up.result);
  ASSERT_EQ(up.result->dists.size(), 1u);
  EXPECT_EQ(up.result->dists[0].version.str(), "2.0");
  ASSERT_TRUE(up.result->dists[0].replaces_installed);
  EXPECT_EQ(up.result->dists[0].replaces_installed->str(), "1.0");
  ASSERT_TRUE(up.result->dists[0].file);

  Outcome replaced = run("installed-unsatisfying");
  ASSERT_TRUE(replaced.result);
  EXPECT_EQ(replaced.result->dists[0].name, "b");
  EXPECT_EQ(replaced.result->dists[0].replaces_installed->str(), "1.0");

  // With the eager strategy the dependency b moves too.
  const json& sc = scenario("installed-upgrade-only-if-needed");
  ResolveOptions opt = options_for(sc);
  opt.upgrade_strategy = UpgradeStrategy::eager;
  Outcome eager = run(sc, opt);
  ASSERT_TRUE(eager.result);
  EXPECT_EQ(to_install(*eager.result), (std::vector<std::string>{"b==2.0", "a==2.0"}));
}

TEST(PythonResolver, ExtrasAreReportedOnTheBaseDist) {
  Outcome r = run("extras-two");
  ASSERT_TRUE(r.result);
  auto a = std::find_if(r.result->dists.begin(), r.result->dists.end(), [](const auto& d) { return d.name == "a"; });
  ASSERT_NE(a, r.result->dists.end());
  EXPECT_EQ(a->extras, (std::set<std::string>{"x", "y"}));
  Outcome missing = run("extras-missing");
  ASSERT_TRUE(missing.result);
  EXPECT_NE(std::find(missing.log.begin(), missing.log.end(), "a 1.0 does not provide the extra 'y'"),
            missing.log.end());
  Outcome norm = run("name-normalization");
  ASSERT_TRUE(norm.result);
  EXPECT_EQ(norm.result->dists.back().extras, (std::set<std::string>{"with-extra"}));
}

TEST(PythonResolver, ErrorsExplainThemselves) {
  Outcome conflict = run("conflict-two-parents");
  ASSERT_TRUE(conflict.error);
  EXPECT_EQ(std::string(conflict.error->what()),
            "Cannot install a==1.0 and b==1.0 because these package versions have conflicting dependencies.");
  EXPECT_EQ(conflict.error->explanation(),
            "The conflict is caused by:\n    a 1.0 depends on c<2\n    b 1.0 depends on c>=2");
  EXPECT_NE(conflict.error->hint().find("loosen the range"), std::string::npos);

  Outcome yanked = run("yanked-only-unpinned");
  ASSERT_TRUE(yanked.error);
  EXPECT_EQ(yanked.error->kind(), Kind::only_yanked);
  EXPECT_NE(yanked.error->hint().find("2.0 (yanked: bad)"), std::string::npos) << yanked.error->hint();

  Outcome missing = run("no-matching-version");
  ASSERT_TRUE(missing.error);
  EXPECT_EQ(missing.error->kind(), Kind::no_matching_distribution);
  EXPECT_EQ(missing.error->explanation(),
            "Could not find a version that satisfies the requirement a>=5 (from versions: 1.0, 2.0, 3.0a1)");

  Outcome unknown = run("unknown-project");
  ASSERT_TRUE(unknown.error);
  EXPECT_NE(unknown.error->explanation().find("requirement nothere>=1 (from a)"), std::string::npos);

  Outcome hashes = run("hash-unpinned");
  ASSERT_TRUE(hashes.error);
  EXPECT_EQ(hashes.error->explanation(), "    a>=1.0");

  Outcome constraint = run("constraints-conflict");
  ASSERT_TRUE(constraint.error);
  EXPECT_EQ(std::string(constraint.error->what()),
            "Cannot install a>=2 because these package versions have conflicting dependencies.");
}

TEST(PythonResolver, IndexRequiresPythonIsListedWhenNothingIsLeft) {
  json sc = scenario("requires-python-index");
  sc["requirements"] = json::array({"a>=2"});
  Outcome r = run(sc, options_for(sc));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind(), Kind::no_matching_distribution);
  EXPECT_NE(r.error->explanation().find(
                "Ignored the following versions that require a different python version: 2.0 Requires-Python >=3.99"),
            std::string::npos)
      << r.error->explanation();
  EXPECT_NE(r.error->explanation().find("(from versions: 1.0)"), std::string::npos);
}

TEST(PythonResolver, MultipleRequiresPythonCauses) {
  json sc = scenario("requires-python-impossible");
  sc["packages"]["b"] = {{"1.0", {{"requires", json::array({"a"})}, {"requires_python", ">=3.98"}}}};
  sc["requirements"] = json::array({"b"});
  Outcome r = run(sc, options_for(sc));
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind(), Kind::requires_python);
  EXPECT_EQ(std::string(r.error->what()), "Package 'b' requires a different Python: 3.11.2 not in '>=3.98'");
}

TEST(PythonResolver, Pip26PrereleaseFallbackIsAFlag) {
  const json& sc = scenario("prerelease-only-specifier");
  ResolveOptions opt = options_for(sc);
  opt.prerelease_fallback = true;
  Outcome r = run(sc, opt);
  ASSERT_TRUE(r.result) << r.error->what();
  EXPECT_EQ(to_install(*r.result), (std::vector<std::string>{"a==1.0a1"}));
}

TEST(PythonResolver, MaxRoundsBoundsTheSearch) {
  const json& sc = scenario("backtrack-depth");
  ResolveOptions opt = options_for(sc);
  opt.max_rounds = 3;
  Outcome r = run(sc, opt);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind(), Kind::too_deep);
}

TEST(PythonResolver, MarkerVersionCompare) {
  using trainpack::python::pep440_version_compare;
  EXPECT_EQ(pep440_version_compare(">=", "3.10", "3.9"), true);  // not a string comparison
  EXPECT_EQ(pep440_version_compare("<", "3.13.0rc1", "3.13"), false);  // <V excludes pre-releases of V
  EXPECT_EQ(pep440_version_compare(">=", "3.13.0rc1", "3.12"), true);
  EXPECT_EQ(pep440_version_compare("==", "3.10.12", "3.10.*"), true);
  EXPECT_EQ(pep440_version_compare("===", "Foo", "foo"), true);
  EXPECT_EQ(pep440_version_compare(">=", "not a version", "3.9"), std::nullopt);
  EXPECT_EQ(pep440_version_compare(">=", "3.9", "bogus"), std::nullopt);
}

}  // namespace

namespace {

// 200 projects in a chain, 40 releases each, plus a conflict at the end that forces backtracking over the last link.
class ChainSource : public CandidateSource {
 public:
  std::vector<CandidateInfo> candidates(const std::string& name) override {
    std::vector<CandidateInfo> out;
    for (int v = 1; v <= 40; ++v) {
      CandidateInfo c;
      c.version = Version::parse(std::to_string(v) + ".0");
      out.push_back(c);
    }
    return out;
  }
  CandidateMetadata metadata(const std::string& name, const CandidateInfo& c) override {
    ++fetches;
    int i = std::stoi(name.substr(1));
    CandidateMetadata md;
    if (i < 199) md.requires_dist.push_back("p" + std::to_string(i + 1) + ">=1");
    // p198's newest releases need p199<2, which the user's p199>=39 excludes.
    if (i == 198 && c.version.major() > 30) md.requires_dist.back() = "p199<2";
    return md;
  }
  int fetches = 0;
};

TEST(PythonResolver, LongChainWithBacktrackingStaysCheap) {
  ChainSource source;
  ResolveOptions opt;
  opt.python_version = "3.11.2";
  opt.environment = MarkerEnvironment::cpython_linux("3.11.2", "x86_64");
  std::vector<RootRequirement> roots = {{Requirement::parse("p0"), true, false},
                                        {Requirement::parse("p199>=39"), true, false}};
  Resolution r = trainpack::python::resolve(roots, opt, source);
  ASSERT_EQ(r.dists.size(), 200u);
  EXPECT_EQ(r.dists.front().name, "p199");  // the leaf installs first
  EXPECT_EQ(r.dists.front().version.str(), "40.0");
  EXPECT_EQ(r.dists.back().name, "p0");
  auto p198 = std::find_if(r.dists.begin(), r.dists.end(), [](const auto& d) { return d.name == "p198"; });
  EXPECT_EQ(p198->version.str(), "30.0");
  EXPECT_LT(source.fetches, 260);  // one per pin plus the rejected p198 releases
}

}  // namespace
