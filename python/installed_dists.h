#pragma once
// The distributions installed in an image, found the way the image's pip finds them (pip/_internal/metadata/):
// along sys.path — each site directory, followed by the directories its .pth files add (site.addsitedir) — a
// directory holds `.dist-info` directories, `.egg-info` directories (setuptools) or files (distutils) and `.egg`
// directories (easy_install); an entry may itself be an `.egg` directory or a develop install's project directory
// (named by an `.egg-link` in a site directory). The first of each canonical name along sys.path is the installed
// one, as pip's environment reports it.
#include <string>
#include <string_view>
#include <vector>

#include "layers/image_filesystem.h"

namespace trainpack::python {

enum class DistributionForm {
  kDistInfo,        // name-1.0.dist-info/ (wheel installs: RECORD)
  kEggInfo,         // name-1.0-py3.9.egg-info/ (setuptools: installed-files.txt when pip ran setup.py install)
  kDistutilsEggInfo,  // name-1.0.egg-info as a single file (distutils): pip cannot uninstall it
  kEgg,             // name-1.0-py3.9.egg/ with EGG-INFO/ (easy_install), listed in easy-install.pth
  kDevelop,         // a project directory on sys.path (setup.py develop), named by name.egg-link
};

struct SiteDistribution {
  std::string name;          // Name as written in METADATA / PKG-INFO
  std::string version;       // Version as written
  std::string metadata_dir;  // the .dist-info / .egg-info directory (or file), or the egg's EGG-INFO
  std::string record;        // RECORD (dist-info) or installed-files.txt (egg-info); "" when absent
  std::string site_dir;      // dist.location: the sys.path entry it was found in (the .egg itself for an egg)
  DistributionForm form = DistributionForm::kDistInfo;
  std::string installer;     // first line of INSTALLER ("pip", "conda", ...), "" when absent
  std::string egg_link;      // kDevelop: the .egg-link naming site_dir
  std::string pth_file;      // kEgg, kDevelop: the .pth file that puts site_dir on sys.path ("" if none)
  bool egg_info() const { return form != DistributionForm::kDistInfo; }
  bool operator==(const SiteDistribution&) const = default;
};

// One sys.path entry: a site directory, or a directory one of its .pth files adds.
struct SysPathEntry {
  std::string path;      // absolute, as site.py computes it (site dir joined with the .pth line, normalised)
  std::string pth_file;  // the .pth file that added it; "" for a site directory
  bool operator==(const SysPathEntry&) const = default;
};

// sys.path's site part as site.addsitedir builds it: each site dir (those that exist), then, for its .pth files in
// name order, every line that is not a comment, blank or an `import` line and names an existing directory not
// already on the path. Lines of a .pth that also uses setuptools' `sys.__egginsert` idiom go to the front, as that
// idiom moves them there.
std::vector<SysPathEntry> site_sys_path(const layers::ImageFilesystem& fs, const std::vector<std::string>& site_dirs);

// Every distribution on `sys_path`, first per canonical name, in path order (within a directory: by name, then
// the highest version first, as pkg_resources orders them). Unreadable metadata or one without a Name is skipped.
std::vector<SiteDistribution> find_installed_distributions(const layers::ImageFilesystem& fs,
                                                           const std::vector<SysPathEntry>& sys_path);

// What the resolver needs of an installed distribution (pip's BaseDistribution.metadata): Requires-Dist and
// Provides-Extra of its METADATA / PKG-INFO, or, for an .egg-info without them, its requires.txt turned into PEP 508
// requirements (metadata/base.py _iter_egg_info_dependencies).
struct InstalledMetadata {
  std::vector<std::string> requires_dist;
  std::vector<std::string> provides_extra;
};
InstalledMetadata read_installed_metadata(const layers::ImageFilesystem& fs, const SiteDistribution& dist);
// The same from the texts of an .egg-info's PKG-INFO and requires.txt ("" when absent).
InstalledMetadata egg_info_metadata(std::string_view pkg_info, std::string_view requires_txt);

}  // namespace trainpack::python
