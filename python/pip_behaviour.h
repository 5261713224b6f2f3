#pragma once
// What the image's own pip does differently from one release to the next (pip 20.3 to 26.x), and what Debian's
// patches to the pip it packages change (python-pip 20.3.4 in bullseye, 23.0.1 in bookworm; the hands-off patch was
// dropped in 24.0+dfsg-1): one place that answers "what would this pip do", each rule with the pip source that
// decides it. The README's table of pip versions mirrors this file.
#include <optional>
#include <string>
#include <vector>

#include "python/base_facts.h"
#include "python/resolver.h"
#include "python/version.h"

namespace trainpack::python {

// How pip turns a project directory or an sdist into installed files.
enum class BuildPath {
  kLegacyInstall,  // `setup.py install --single-version-externally-managed --record ...` (an .egg-info install)
  kLegacyWheel,    // `setup.py bdist_wheel`, not isolated: the environment's own setuptools and wheel
  kPep517,         // PEP 517 hooks in an isolated environment whose build requirements come from the index
};

// What decides the build path of one source tree.
struct SourceTree {
  bool has_pyproject = false;  // pyproject.toml exists
  bool has_setup_py = true;
  bool has_build_backend = false;  // [build-system] build-backend is set
  std::optional<bool> use_pep517;  // the image's pip configuration: --use-pep517 / --no-use-pep517
};

class PipBehaviour {
 public:
  PipBehaviour(Version pip_version, bool debian_patched) : version_(std::move(pip_version)), debian_(debian_patched) {}
  // The pip of `facts`: its version, and whether it is Debian's patched pip (the pip distribution lives in Debian's
  // /usr/lib/python3/dist-packages).
  static PipBehaviour of(const PythonFacts& facts);

  const Version& version() const { return version_; }

  // operations/install/wheel.py: a `#!python` script rewritten on install gets its own hash in RECORD (22.2+).
  bool rehashes_rewritten_scripts() const;
  // direct_url.json of a local wheel or sdist carries its sha256 (23.1+; before: "archive_info": {}).
  bool hashes_local_archives() const;
  // HTML index pages: a bare `data-yanked` attribute means yanked (html5lib, <= 21.3.1) or not (html.parser, 22.0+).
  bool bare_yanked_attribute_is_yanked() const;
  YankedRule yanked_rule() const;
  // packaging >= 26 in pip 26.0: a specifier only pre-releases match selects them.
  bool prereleases_when_only_prereleases_match() const;

  // Where a local project is built: in place (21.3+, what setuptools writes stays beside setup.py), or in a copy
  // under /tmp that is thrown away (<= 21.2).
  bool builds_in_place() const;
  // pyproject.py load_pyproject_toml, wheel_builder.py _should_build, req_install.py install. `setuptools` and
  // `wheel`: whether the image's Python can import them. Throws Error where that pip would fail (no setuptools for a
  // legacy build, pip < 22.1).
  BuildPath build_path(const SourceTree& tree, bool setuptools, bool wheel, const std::string& display) const;
  // [build-system] requires when pyproject.toml gives none: setuptools>=40.8.0, plus wheel before 24.0.
  std::vector<std::string> default_build_requires() const;

  // utils/misc.py is_local, as uninstall applies it to a distribution and each of its paths: in a venv only what
  // is under sys.prefix; outside one everything, except with Debian's hands-off patch, which keeps its hands off
  // /usr except pip's own scheme directories (/usr/local/...).
  bool is_local(const std::string& path, const PythonFacts& facts) const;
  // Where uninstall looks for the scripts of entry points: sys.prefix/bin in 20.3.x (locations.bin_py), the
  // install scheme's scripts directory from 21.0.
  std::string uninstall_bin_dir(const PythonFacts& facts) const;

 private:
  bool at_least(const char* v) const { return !(version_ < Version::parse(v)); }
  Version version_;
  bool debian_;
};

}  // namespace trainpack::python
