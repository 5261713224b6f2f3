#include "python/pip_behaviour.h"

#include "support/error.h"

namespace trainpack::python {

PipBehaviour PipBehaviour::of(const PythonFacts& facts) {
  const SiteDistribution* pip = facts.find_installed("pip");
  bool debian = pip && !facts.venv && pip->site_dir == "/usr/lib/python3/dist-packages";
  std::optional<Version> v = Version::try_parse(facts.pip_version);
  return PipBehaviour(v ? *v : Version::parse("26.2"), debian);
}

bool PipBehaviour::rehashes_rewritten_scripts() const { return at_least("22.2"); }

bool PipBehaviour::hashes_local_archives() const { return at_least("23.1"); }

bool PipBehaviour::bare_yanked_attribute_is_yanked() const { return !at_least("22.0"); }

YankedRule PipBehaviour::yanked_rule() const {
  if (at_least("22.0")) return YankedRule::unless_all_yanked_and_pinned;
  if (at_least("20.3.2")) return YankedRule::unless_all_yanked;
  return YankedRule::ranked_last;
}

bool PipBehaviour::prereleases_when_only_prereleases_match() const { return at_least("26.0"); }

bool PipBehaviour::builds_in_place() const { return at_least("21.3"); }

BuildPath PipBehaviour::build_path(const SourceTree& tree, bool setuptools, bool wheel,
                                   const std::string& display) const {
  // pip >= 25.3 knows nothing else; before, no setup.py or a build-backend forces PEP 517, then the
  // configuration's --use-pep517/--no-use-pep517 decides, else pip's default for that version: a pyproject.toml
  // means PEP 517 (use_pep517 = has_pyproject), and so does, from 22.1, no setuptools, and from 23.1, no wheel.
  bool pep517 = at_least("25.3") || !tree.has_setup_py || tree.has_build_backend;
  if (!pep517 && tree.use_pep517) pep517 = *tree.use_pep517;
  else if (!pep517) pep517 = tree.has_pyproject || (at_least("22.1") && !setuptools) || (at_least("23.1") && !wheel);
  if (pep517) return BuildPath::kPep517;
  if (!setuptools)
    throw Error("pip " + version_.str() + " in the image cannot build " + display +
                    ": it runs setup.py with the image's setuptools, which is not installed",
                "install setuptools in the base image, or publish a wheel");
  // wheel_builder.py _should_build: without `wheel`, pip < 23.1 falls back to `setup.py install`.
  return wheel ? BuildPath::kLegacyWheel : BuildPath::kLegacyInstall;
}

std::vector<std::string> PipBehaviour::default_build_requires() const {
  if (at_least("24.0")) return {"setuptools>=40.8.0"};
  return {"setuptools>=40.8.0", "wheel"};
}

bool PipBehaviour::is_local(const std::string& path, const PythonFacts& facts) const {
  auto under = [&path](const std::string& dir) { return !dir.empty() && (path == dir || path.starts_with(dir + "/")); };
  if (facts.venv) return under(facts.prefix);
  if (!debian_ || at_least("24.0")) return true;
  // Debian's hands-off-system-packages.patch: under /usr only pip's own scheme directories are local.
  if (!under("/usr")) return true;
  for (const std::string& dir : {facts.purelib, facts.platlib, facts.scripts, facts.data, facts.include})
    if (under(dir)) return true;
  return false;
}

std::string PipBehaviour::uninstall_bin_dir(const PythonFacts& facts) const {
  if (!at_least("21.0")) return facts.prefix + "/bin";
  return facts.scripts;
}

}  // namespace trainpack::python
