// pip's uninstall set (req_uninstall.py UninstallPathSet.from_dist) for every installed form: a .dist-info's
// RECORD with the legacy .pyc/.pyo and __pycache__ twins, an .egg-info's installed-files.txt or top_level.txt, an
// .egg and a develop install with their easy-install.pth lines, the scripts of entry points; the distutils
// refusal; compress_for_rename's rule that a directory goes whole only when every file under it goes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layers/memory_filesystem.h"
#include "python/installed_dists.h"
#include "python/uninstall.h"
#include "support/error.h"

using trainpack::layers::MemoryFilesystem;
using namespace trainpack::python;

namespace {

const std::string kDistSite = "/usr/local/lib/python3.11/dist-packages";
const std::string kRel = "usr/local/lib/python3.11/dist-packages/";

UninstallContext context() {
  UninstallContext c;
  c.bin_dir = "/usr/local/bin";
  c.cache_tag = "cpython-311";
  return c;
}

SiteDistribution only_dist(const MemoryFilesystem& fs) {
  std::vector<SiteDistribution> found = find_installed_distributions(fs, site_sys_path(fs, {kDistSite}));
  EXPECT_EQ(found.size(), 1u);
  return found.empty() ? SiteDistribution{} : found.front();
}

}  // namespace

TEST(Uninstall, DistInfoRecordWithPycTwinsAndEntryPointScripts) {
  MemoryFilesystem fs;
  fs.add_file(kRel + "foo/__init__.py", "");
  fs.add_file(kRel + "foo/__pycache__/__init__.cpython-311.pyc", "");  // written by an import, not in RECORD
  fs.add_file(kRel + "foo-1.0.dist-info/METADATA", "Name: foo\nVersion: 1.0\n");
  fs.add_file(kRel + "foo-1.0.dist-info/RECORD",
              "foo/__init__.py,sha256=x,1\r\nfoo-1.0.dist-info/METADATA,,\r\nfoo-1.0.dist-info/RECORD,,\r\n"
              "foo-1.0.dist-info/entry_points.txt,,\r\n\"shared/a.py\",sha256=q,3\r\n../../../../../etc/escape,,\r\n");
  fs.add_file(kRel + "foo-1.0.dist-info/entry_points.txt", "[console_scripts]\nfoo-cli = foo:main\n");
  fs.add_file(kRel + "shared/a.py", "");
  fs.add_file(kRel + "shared/a.pyc", "");  // the legacy twin beside a.py
  fs.add_file(kRel + "shared/other.py", "");
  fs.add_file("usr/local/bin/foo-cli", "", 0755);  // not in RECORD: found through entry_points.txt
  fs.add_file("usr/local/bin/other", "", 0755);
  SiteDistribution dist = only_dist(fs);
  EXPECT_EQ(dist.form, DistributionForm::kDistInfo);
  UninstallSet set = uninstall_set(fs, dist, context());
  UninstallPaths got = compress_for_rename(fs, set.paths);
  EXPECT_EQ(got.directories, (std::vector<std::string>{kRel + "foo", kRel + "foo-1.0.dist-info"}));
  // shared/ keeps other.py and bin/ keeps other: a.py, a.pyc and bin/foo-cli go alone; the escaping path is
  // clamped to the root, where it does not exist.
  EXPECT_EQ(got.files, (std::vector<std::string>{"usr/local/bin/foo-cli", kRel + "shared/a.py", kRel + "shared/a.pyc"}));
}

TEST(Uninstall, EggInfoWithInstalledFilesListsPathsRelativeToItself) {
  MemoryFilesystem fs;
  fs.add_file(kRel + "legacy/__init__.py", "");
  fs.add_file(kRel + "legacy/__pycache__/__init__.cpython-311.pyc", "");
  fs.add_file(kRel + "legacy-0.1-py3.11.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: legacy\nVersion: 0.1\n");
  fs.add_file(kRel + "legacy-0.1-py3.11.egg-info/installed-files.txt",
              "../legacy/__init__.py\n../legacy/__pycache__/__init__.cpython-311.pyc\nPKG-INFO\ninstalled-files.txt\n"
              "../../../../bin/legacy-tool\n");
  fs.add_file(kRel + "other.py", "");
  fs.add_file("usr/local/bin/legacy-tool", "", 0755);
  fs.add_file("usr/local/bin/keep", "", 0755);
  SiteDistribution dist = only_dist(fs);
  EXPECT_EQ(dist.form, DistributionForm::kEggInfo);
  EXPECT_EQ(dist.record, kDistSite + "/legacy-0.1-py3.11.egg-info/installed-files.txt");
  UninstallPaths got = compress_for_rename(fs, uninstall_set(fs, dist, context()).paths);
  EXPECT_EQ(got.directories, (std::vector<std::string>{kRel + "legacy", kRel + "legacy-0.1-py3.11.egg-info"}));
  EXPECT_EQ(got.files, (std::vector<std::string>{"usr/local/bin/legacy-tool"}));
}

TEST(Uninstall, EggInfoWithoutInstalledFilesRemovesItsTopLevelPackagesButNotNamespaces) {
  MemoryFilesystem fs;
  fs.add_file(kRel + "six.py", "");
  fs.add_file(kRel + "ns/inner/__init__.py", "");
  fs.add_file(kRel + "six-1.16.0.egg-info/PKG-INFO", "Name: six\nVersion: 1.16.0\n");
  fs.add_file(kRel + "six-1.16.0.egg-info/top_level.txt", "six\nns\n");
  fs.add_file(kRel + "six-1.16.0.egg-info/namespace_packages.txt", "ns\n");
  fs.add_file(kRel + "keep.py", "");
  UninstallPaths got = compress_for_rename(fs, uninstall_set(fs, only_dist(fs), context()).paths);
  EXPECT_EQ(got.directories, (std::vector<std::string>{kRel + "six-1.16.0.egg-info"}));
  EXPECT_EQ(got.files, (std::vector<std::string>{kRel + "six.py"}));
}

TEST(Uninstall, ADistutilsEggInfoFileIsRefusedWithPipsMessage) {
  MemoryFilesystem fs;
  fs.add_file(kRel + "old.py", "");
  fs.add_file(kRel + "old-1.0.egg-info", "Metadata-Version: 1.0\nName: old\nVersion: 1.0\n");
  SiteDistribution dist = only_dist(fs);
  EXPECT_EQ(dist.form, DistributionForm::kDistutilsEggInfo);
  try {
    uninstall_set(fs, dist, context());
    FAIL() << "no error";
  } catch (const trainpack::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Cannot uninstall 'old'. It is a distutils installed project"),
              std::string::npos);
  }
}

TEST(Uninstall, AnEggGoesWholeAndLeavesEasyInstallPth) {
  MemoryFilesystem fs;
  fs.add_file(kRel + "easy-install.pth", "./egged-2.0-py3.11.egg\n./other-1.0-py3.11.egg\n");
  fs.add_file(kRel + "egged-2.0-py3.11.egg/EGG-INFO/PKG-INFO", "Name: egged\nVersion: 2.0\n");
  fs.add_file(kRel + "egged-2.0-py3.11.egg/egged/__init__.py", "");
  fs.add_file(kRel + "other-1.0-py3.11.egg/EGG-INFO/PKG-INFO", "Name: other\nVersion: 1.0\n");
  std::vector<SysPathEntry> path = site_sys_path(fs, {kDistSite});
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[1], (SysPathEntry{kDistSite + "/egged-2.0-py3.11.egg", kDistSite + "/easy-install.pth"}));
  std::vector<SiteDistribution> found = find_installed_distributions(fs, path);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].form, DistributionForm::kEgg);
  EXPECT_EQ(found[0].site_dir, kDistSite + "/egged-2.0-py3.11.egg");
  UninstallSet set = uninstall_set(fs, found[0], context());
  EXPECT_EQ(set.paths, (std::vector<std::string>{kDistSite + "/egged-2.0-py3.11.egg"}));
  ASSERT_EQ(set.pth_entries.size(), 1u);
  EXPECT_EQ(remove_pth_entries(*fs.read(kRel + "easy-install.pth", 1000), set.pth_entries.begin()->second),
            "./other-1.0-py3.11.egg\n");
}

TEST(Uninstall, ADevelopInstallLosesItsEggLinkAndPthLine) {
  MemoryFilesystem fs;
  fs.add_file("src/proj/proj.egg-info/PKG-INFO", "Name: proj\nVersion: 0.3\n");
  fs.add_file("src/proj/proj/__init__.py", "");
  fs.add_file(kRel + "proj.egg-link", "/src/proj\n.");
  fs.add_file(kRel + "easy-install.pth", "/src/proj\r\n");
  std::vector<SiteDistribution> found = find_installed_distributions(fs, site_sys_path(fs, {kDistSite}));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].form, DistributionForm::kDevelop);
  EXPECT_EQ(found[0].site_dir, "/src/proj");
  EXPECT_EQ(found[0].egg_link, kDistSite + "/proj.egg-link");
  UninstallSet set = uninstall_set(fs, found[0], context());
  EXPECT_EQ(set.paths, (std::vector<std::string>{kDistSite + "/proj.egg-link"}));
  EXPECT_EQ(remove_pth_entries("/src/proj\r\n", set.pth_entries.at(kDistSite + "/easy-install.pth")), "");
}

TEST(Uninstall, InAVenvPathsOutsideItStay) {
  MemoryFilesystem fs;
  const std::string venv = "opt/venv/lib/python3.11/site-packages/";
  fs.add_file(venv + "tool-1.0.dist-info/METADATA", "Name: tool\nVersion: 1.0\n");
  fs.add_file(venv + "tool-1.0.dist-info/RECORD", "tool-1.0.dist-info/METADATA,,\n../../../../../usr/bin/tool,,\n");
  fs.add_file("usr/bin/tool", "", 0755);
  std::vector<SiteDistribution> found = find_installed_distributions(fs, site_sys_path(fs, {"/" + venv}));
  ASSERT_EQ(found.size(), 1u);
  UninstallContext c = context();
  c.bin_dir = "/opt/venv/bin";
  c.permitted = [](const std::string& p) { return p.starts_with("/opt/venv/"); };
  UninstallSet set = uninstall_set(fs, found[0], c);
  EXPECT_EQ(set.paths, (std::vector<std::string>{"/" + venv + "tool-1.0.dist-info/METADATA"}));
}

TEST(Uninstall, ASymlinkedDirectoryIsNotFollowedWhenDecidingAWholeDirectory) {
  MemoryFilesystem fs;
  fs.add_file(kRel + "pkg/mod.py", "");
  fs.add_file("data/keep.txt", "");
  fs.add_symlink(kRel + "pkg/data", "/data");
  UninstallPaths got = compress_for_rename(fs, {"/" + kRel + "pkg/mod.py"});
  EXPECT_EQ(got.directories, (std::vector<std::string>{kRel + "pkg"}));
  EXPECT_TRUE(got.files.empty());
}

TEST(Uninstall, PthEntriesKeepTheFilesLineEndings) {
  EXPECT_EQ(remove_pth_entries("a\nb", {"b"}), "a\n");
  EXPECT_EQ(remove_pth_entries("a\r\nb\r\na\r\n", {"a"}), "b\r\na\r\n");  // list.remove: the first only
  EXPECT_EQ(remove_pth_entries("a\n", {"zz"}), "a\n");
}
