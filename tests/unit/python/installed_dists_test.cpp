// Installed distributions as the image's pip finds them: sys.path with what .pth files add, every metadata form,
// the first of a name along the path winning, and egg-info requires.txt as Requires-Dist.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layers/memory_filesystem.h"
#include "python/installed_dists.h"

using trainpack::layers::MemoryFilesystem;
using namespace trainpack::python;

namespace {
const std::string kLocal = "/usr/local/lib/python3.9/dist-packages";
const std::string kDist = "/usr/lib/python3/dist-packages";
}  // namespace

TEST(InstalledDists, EveryFormIsFoundAndTheFirstOnSysPathWins) {
  MemoryFilesystem fs;
  fs.add_file(kLocal.substr(1) + "/six-1.17.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: six\nVersion: 1.17.0\n");
  fs.add_file(kLocal.substr(1) + "/six-1.17.0.dist-info/RECORD", "");
  fs.add_file(kLocal.substr(1) + "/six-1.17.0.dist-info/INSTALLER", "pip\n");
  fs.add_file(kDist.substr(1) + "/six-1.16.0.egg-info/PKG-INFO", "Metadata-Version: 1.2\nName: six\nVersion: 1.16.0\n");
  fs.add_file(kDist.substr(1) + "/chardet-4.0.0.egg-info/PKG-INFO", "Name: chardet\nVersion: 4.0.0\n");
  fs.add_file(kDist.substr(1) + "/distro_info-1.0.egg-info", "Metadata-Version: 1.1\nName: distro-info\nVersion: 1.0\n");
  fs.add_file(kDist.substr(1) + "/broken-1.0.dist-info/METADATA", "Summary: no name\n");
  std::vector<SiteDistribution> found =
      find_installed_distributions(fs, site_sys_path(fs, {kLocal, kDist, "/usr/lib/python3.9/dist-packages"}));
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].name, "six");
  EXPECT_EQ(found[0].version, "1.17.0");
  EXPECT_EQ(found[0].installer, "pip");
  EXPECT_EQ(found[0].site_dir, kLocal);
  EXPECT_EQ(found[1].name, "chardet");
  EXPECT_EQ(found[1].form, DistributionForm::kEggInfo);
  EXPECT_EQ(found[1].record, "");
  EXPECT_EQ(found[2].name, "distro-info");
  EXPECT_EQ(found[2].form, DistributionForm::kDistutilsEggInfo);
  EXPECT_EQ(found[2].metadata_dir, kDist + "/distro_info-1.0.egg-info");
}

TEST(InstalledDists, PthFilesAddExistingDirectoriesInNameOrderAndEgginsertGoesFirst) {
  MemoryFilesystem fs;
  fs.add_file(kLocal.substr(1) + "/b.pth", "# comment\n\nimport os\nextra\n/abs/dir\n/missing\n");
  fs.add_file(kLocal.substr(1) + "/a.pth", "extra\n");
  fs.add_file(kLocal.substr(1) + "/easy-install.pth",
              "import sys; sys.__plen = len(sys.path)\n./e-1.0.egg\nimport sys; new = sys.path[sys.__plen:]; "
              "del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; "
              "sys.__egginsert = p + len(new)\n");
  fs.add_dir(kLocal.substr(1) + "/extra");
  fs.add_dir(kLocal.substr(1) + "/e-1.0.egg");
  fs.add_dir("abs/dir");
  std::vector<SysPathEntry> path = site_sys_path(fs, {kLocal, "/not/there"});
  std::vector<std::string> dirs;
  for (const auto& e : path) dirs.push_back(e.path);
  EXPECT_EQ(dirs, (std::vector<std::string>{kLocal + "/e-1.0.egg", kLocal, kLocal + "/extra", "/abs/dir"}));
  EXPECT_EQ(path[2].pth_file, kLocal + "/a.pth");
}

TEST(InstalledDists, EggInfoRequiresTxtBecomesRequiresDist) {
  MemoryFilesystem fs;
  fs.add_file(kDist.substr(1) + "/requests-2.25.1.egg-info/PKG-INFO", "Name: requests\nVersion: 2.25.1\n");
  fs.add_file(kDist.substr(1) + "/requests-2.25.1.egg-info/requires.txt",
              "chardet<5,>=3.0.2\nidna<3,>=2.5\n\n[security]\npyOpenSSL>=0.14\n\n[socks:sys_platform == \"win32\"]\n"
              "win_inet_pton\n\n[:python_version < \"3\"]\nipaddress\n");
  std::vector<SiteDistribution> found = find_installed_distributions(fs, site_sys_path(fs, {kDist}));
  ASSERT_EQ(found.size(), 1u);
  InstalledMetadata md = read_installed_metadata(fs, found[0]);
  EXPECT_EQ(md.requires_dist, (std::vector<std::string>{
                                  "chardet<5,>=3.0.2", "idna<3,>=2.5", "pyOpenSSL>=0.14 ; extra == \"security\"",
                                  "win_inet_pton ; (sys_platform == \"win32\") and extra == \"socks\"",
                                  "ipaddress ; python_version < \"3\""}));
  EXPECT_EQ(md.provides_extra, (std::vector<std::string>{"security", "socks"}));
}
