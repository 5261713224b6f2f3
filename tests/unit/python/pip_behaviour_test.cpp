// python/pip_behaviour: what each pip release does differently, at the versions where pip's source changed it.
#include "python/pip_behaviour.h"

#include <gtest/gtest.h>

#include "support/error.h"

using namespace trainpack::python;

namespace {

PipBehaviour pip(const char* version, bool debian = false) { return PipBehaviour(Version::parse(version), debian); }

SourceTree setup_py_only() { return SourceTree{false, true, false, std::nullopt}; }

}  // namespace

TEST(PipBehaviour, VersionThresholdsFromPipsSource) {
  EXPECT_FALSE(pip("22.1.2").rehashes_rewritten_scripts());
  EXPECT_TRUE(pip("22.2").rehashes_rewritten_scripts());
  EXPECT_FALSE(pip("23.0.1").hashes_local_archives());
  EXPECT_TRUE(pip("23.1").hashes_local_archives());
  EXPECT_TRUE(pip("21.3.1").bare_yanked_attribute_is_yanked());
  EXPECT_FALSE(pip("22.0").bare_yanked_attribute_is_yanked());
  EXPECT_EQ(pip("20.3.1").yanked_rule(), YankedRule::ranked_last);
  EXPECT_EQ(pip("20.3.4").yanked_rule(), YankedRule::unless_all_yanked);
  EXPECT_EQ(pip("22.0").yanked_rule(), YankedRule::unless_all_yanked_and_pinned);
  EXPECT_FALSE(pip("25.3").prereleases_when_only_prereleases_match());
  EXPECT_TRUE(pip("26.0").prereleases_when_only_prereleases_match());
  EXPECT_FALSE(pip("21.2.4").builds_in_place());
  EXPECT_TRUE(pip("21.3").builds_in_place());
  EXPECT_EQ(pip("23.3.2").default_build_requires(), (std::vector<std::string>{"setuptools>=40.8.0", "wheel"}));
  EXPECT_EQ(pip("24.0").default_build_requires(), std::vector<std::string>{"setuptools>=40.8.0"});
}

TEST(PipBehaviour, BuildPathOfASetupPyProject) {
  const SourceTree tree = setup_py_only();
  // setup.py install when wheel is missing, up to 23.0.x; bdist_wheel with both.
  EXPECT_EQ(pip("20.3.4").build_path(tree, true, false, "x"), BuildPath::kLegacyInstall);
  EXPECT_EQ(pip("23.0.1").build_path(tree, true, false, "x"), BuildPath::kLegacyInstall);
  EXPECT_EQ(pip("23.0.1").build_path(tree, true, true, "x"), BuildPath::kLegacyWheel);
  EXPECT_EQ(pip("25.2").build_path(tree, true, true, "x"), BuildPath::kLegacyWheel);
  // PEP 517 without setuptools from 22.1, without wheel from 23.1, always from 25.3.
  EXPECT_THROW(pip("22.0.4").build_path(tree, false, true, "x"), trainpack::Error);
  EXPECT_EQ(pip("22.1").build_path(tree, false, true, "x"), BuildPath::kPep517);
  EXPECT_EQ(pip("23.1").build_path(tree, true, false, "x"), BuildPath::kPep517);
  EXPECT_EQ(pip("25.3").build_path(tree, true, true, "x"), BuildPath::kPep517);
  // A pyproject.toml means PEP 517; the image's --no-use-pep517 says otherwise where a setup.py allows it.
  EXPECT_EQ(pip("20.3.4").build_path(SourceTree{true, true, false, std::nullopt}, true, true, "x"), BuildPath::kPep517);
  EXPECT_EQ(pip("23.0.1").build_path(SourceTree{true, true, false, false}, true, true, "x"), BuildPath::kLegacyWheel);
  EXPECT_EQ(pip("23.0.1").build_path(SourceTree{true, true, true, false}, true, true, "x"), BuildPath::kPep517);
  EXPECT_EQ(pip("23.0.1").build_path(SourceTree{false, true, false, true}, true, true, "x"), BuildPath::kPep517);
}

TEST(PipBehaviour, WhatUninstallMayTouch) {
  PythonFacts debian;
  debian.prefix = "/usr";
  debian.purelib = debian.platlib = "/usr/local/lib/python3.9/dist-packages";
  debian.scripts = "/usr/local/bin";
  debian.data = "/usr/local";
  debian.include = "/usr/include/python3.9";
  // Debian's hands-off patch (bullseye, bookworm): /usr is the distro's, except pip's own scheme.
  EXPECT_FALSE(pip("20.3.4", true).is_local("/usr/lib/python3/dist-packages", debian));
  EXPECT_TRUE(pip("20.3.4", true).is_local("/usr/local/lib/python3.9/dist-packages/six.py", debian));
  EXPECT_TRUE(pip("20.3.4", true).is_local("/opt/elsewhere", debian));
  // Dropped in 24.0+dfsg; upstream pip outside a venv may remove anything.
  EXPECT_TRUE(pip("25.1.1", true).is_local("/usr/lib/python3/dist-packages", debian));
  EXPECT_TRUE(pip("23.0.1").is_local("/usr/lib/python3/dist-packages", debian));
  PythonFacts venv = debian;
  venv.venv = true;
  venv.prefix = "/opt/venv";
  EXPECT_TRUE(pip("23.0.1").is_local("/opt/venv/lib/python3.9/site-packages/x.py", venv));
  EXPECT_FALSE(pip("23.0.1").is_local("/usr/lib/python3/dist-packages/x.py", venv));
  EXPECT_EQ(pip("20.3.4").uninstall_bin_dir(debian), "/usr/bin");
  EXPECT_EQ(pip("21.0").uninstall_bin_dir(debian), "/usr/local/bin");
}
