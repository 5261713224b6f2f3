#include "python/installed_dists.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "python/image_root.h"
#include "python/metadata.h"
#include "python/names.h"
#include "python/text.h"
#include "python/version.h"
#include "support/text.h"

namespace trainpack::python {
namespace {

constexpr std::size_t kPthCap = 1u << 20;
constexpr std::size_t kMetadataHead = 256u << 10;
constexpr std::size_t kMetadataCap = 16u << 20;

bool is_import_line(std::string_view line) { return line.starts_with("import ") || line.starts_with("import\t"); }

// site.addpackage over one .pth file: the directories it adds, and whether it moves them to the front.
struct PthLines {
  std::vector<std::string> dirs;
  bool egginsert = false;
};

PthLines read_pth(const ImageRoot& root, const std::string& site_dir, const std::string& pth) {
  PthLines out;
  std::optional<std::string> text = root.read(pth, kPthCap);
  if (!text) return out;
  for (std::string_view line : py_splitlines(*text)) {
    if (line.starts_with('#') || py_strip(line).empty()) continue;
    if (is_import_line(line)) {
      // setuptools' easy-install.pth of old: `import sys; ... sys.__egginsert = p + len(new)` moves what the file
      // added to the front of sys.path.
      if (line.find("sys.__egginsert") != std::string_view::npos) out.egginsert = true;
      continue;
    }
    while (!line.empty() && is_py_space(line.back())) line.remove_suffix(1);  // line.rstrip()
    std::string dir = line.starts_with('/') ? abs_path(line) : abs_join(site_dir, line);
    if (root.exists(dir)) out.dirs.push_back(dir);
  }
  return out;
}

std::map<std::string, std::string> header_fields(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : EmailMessage::parse(text).headers) out.emplace(ascii_lower(k), std::string(py_strip(v)));
  return out;
}

std::string first_line(const ImageRoot& root, const std::string& path) {
  std::optional<std::string> text = root.head(path, 4096);
  if (!text) return {};
  std::vector<std::string_view> lines = py_splitlines(*text);
  return lines.empty() ? std::string() : std::string(py_strip(lines.front()));
}

// The distribution whose metadata is at `metadata_dir` (or the distutils file), if it names itself.
std::optional<SiteDistribution> read_distribution(const ImageRoot& root, const std::string& metadata_dir,
                                                  DistributionForm form, const std::string& location) {
  std::string metadata = form == DistributionForm::kDistInfo           ? abs_join(metadata_dir, "METADATA")
                         : form == DistributionForm::kDistutilsEggInfo ? metadata_dir
                                                                       : abs_join(metadata_dir, "PKG-INFO");
  std::optional<std::string> text = root.head(metadata, kMetadataHead);
  if (!text) return std::nullopt;
  std::map<std::string, std::string> fields = header_fields(*text);
  if (fields["name"].empty()) return std::nullopt;
  SiteDistribution d;
  d.name = fields["name"];
  d.version = fields["version"];
  d.metadata_dir = metadata_dir;
  d.site_dir = location;
  d.form = form;
  std::string record = form == DistributionForm::kDistInfo ? abs_join(metadata_dir, "RECORD")
                       : form == DistributionForm::kDistutilsEggInfo ? std::string()
                                                                      : abs_join(metadata_dir, "installed-files.txt");
  if (!record.empty() && root.is_file(record)) d.record = record;
  if (form == DistributionForm::kDistInfo) d.installer = first_line(root, abs_join(metadata_dir, "INSTALLER"));
  return d;
}

// The version part of "name-1.0-py3.9.egg-info" for ordering, or nullopt.
std::optional<Version> filename_version(std::string_view name) {
  std::size_t dash = name.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view rest = name.substr(dash + 1);
  rest = rest.substr(0, rest.find_first_of("-"));
  for (std::string_view ext : {".dist-info", ".egg-info", ".egg"})
    if (rest.ends_with(ext)) rest.remove_suffix(ext.size());
  return Version::try_parse(rest);
}

// The metadata entries of a directory in the order pkg_resources reads them: by name, the highest version first.
std::vector<std::string> metadata_children(const ImageRoot& root, const std::string& dir) {
  std::vector<std::string> names;
  for (const std::string& n : root.children(dir))
    if (n.ends_with(".dist-info") || n.ends_with(".egg-info") || n.ends_with(".egg-link")) names.push_back(n);
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    std::string ka = canonicalize_name(a.substr(0, a.find('-')));
    std::string kb = canonicalize_name(b.substr(0, b.find('-')));
    if (ka != kb) return ka < kb;
    std::optional<Version> va = filename_version(a), vb = filename_version(b);
    return va && vb && *vb < *va;
  });
  return names;
}

// pip's egg_link_path_from_location: `<raw name>.egg-link` (and its dash-for-non-alphanumerics spelling) in a
// site directory.
std::string find_egg_link(const ImageRoot& root, const std::vector<std::string>& site_dirs, const std::string& name) {
  std::string dashed;
  for (char c : name) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.';
    if (keep) dashed += c;
    else if (dashed.empty() || dashed.back() != '-') dashed += '-';
  }
  for (const std::string& site : site_dirs)
    for (const std::string& file : {name + ".egg-link", dashed + ".egg-link"})
      if (root.is_file(abs_join(site, file))) return abs_join(site, file);
  return {};
}

// The develop-install project directory an .egg-link names (its first line, relative to the link's directory).
std::string egg_link_target(const ImageRoot& root, const std::string& link) {
  std::string line = first_line(root, link);
  if (line.empty()) return {};
  return line.starts_with('/') ? abs_path(line) : abs_join(parent_of(link), line);
}

class Finder {
 public:
  Finder(const ImageRoot& root, const std::vector<SysPathEntry>& sys_path) : root_(root), sys_path_(sys_path) {
    for (const SysPathEntry& e : sys_path)
      if (e.pth_file.empty()) site_dirs_.push_back(e.path);
  }

  std::vector<SiteDistribution> run() {
    for (const SysPathEntry& entry : sys_path_) {
      if (entry.path.ends_with(".egg") && root_.is_dir(entry.path)) {
        add(read_distribution(root_, abs_join(entry.path, "EGG-INFO"), DistributionForm::kEgg, entry.path), entry);
        continue;
      }
      for (const std::string& n : metadata_children(root_, entry.path)) visit(entry, n);
    }
    return std::move(found_);
  }

 private:
  void visit(const SysPathEntry& entry, const std::string& name) {
    std::string path = abs_join(entry.path, name);
    if (name.ends_with(".dist-info")) {
      if (root_.is_dir(path)) add(read_distribution(root_, path, DistributionForm::kDistInfo, entry.path), entry);
    } else if (name.ends_with(".egg-info")) {
      DistributionForm form = root_.is_dir(path) ? DistributionForm::kEggInfo : DistributionForm::kDistutilsEggInfo;
      add(read_distribution(root_, path, form, entry.path), entry);
    } else if (name.ends_with(".egg-link")) {
      // pip's importlib backend (find_linked) reads develop installs through their link, at the link's place.
      std::string target = egg_link_target(root_, path);
      if (target.empty() || !root_.is_dir(target)) return;
      SysPathEntry linked{target, pth_file_for(target)};
      for (const std::string& n : metadata_children(root_, target))
        if (n.ends_with(".egg-info") && root_.is_dir(abs_join(target, n)))
          add(read_distribution(root_, abs_join(target, n), DistributionForm::kEggInfo, target), linked);
    }
  }

  std::string pth_file_for(const std::string& dir) const {
    for (const SysPathEntry& e : sys_path_)
      if (e.path == dir) return e.pth_file;
    return {};
  }

  void add(std::optional<SiteDistribution> dist, const SysPathEntry& entry) {
    if (!dist || !seen_.insert(canonicalize_name(dist->name)).second) return;
    dist->pth_file = entry.pth_file;
    if (dist->form == DistributionForm::kEggInfo && !entry.pth_file.empty()) {
      // A project directory on sys.path with an .egg-link naming it: `setup.py develop`.
      std::string link = find_egg_link(root_, site_dirs_, dist->name);
      if (!link.empty() && egg_link_target(root_, link) == dist->site_dir) {
        dist->form = DistributionForm::kDevelop;
        dist->egg_link = link;
      }
    }
    found_.push_back(std::move(*dist));
  }

  const ImageRoot& root_;
  const std::vector<SysPathEntry>& sys_path_;
  std::vector<std::string> site_dirs_;
  std::set<std::string> seen_;
  std::vector<SiteDistribution> found_;
};

// requires.txt: "[extra:marker]" sections of bare requirements (metadata/base.py _iter_requires_txt_entries).
void add_requires_txt(std::string_view text, InstalledMetadata& out) {
  std::string extra, marker;
  std::set<std::string> extras;
  for (std::string_view raw : py_splitlines(text)) {
    std::string_view line = py_strip(raw);
    if (line.empty() || line.starts_with('#')) continue;
    if (line.starts_with('[') && line.ends_with(']')) {
      std::string_view section = line.substr(1, line.size() - 2);
      std::size_t colon = section.find(':');
      extra = canonicalize_name(section.substr(0, colon));
      marker = colon == std::string_view::npos ? "" : std::string(section.substr(colon + 1));
      if (!extra.empty() && extras.insert(extra).second) out.provides_extra.push_back(extra);
      continue;
    }
    std::string m = !extra.empty() && !marker.empty() ? "(" + marker + ") and extra == \"" + extra + "\""
                    : !extra.empty()                   ? "extra == \"" + extra + "\""
                                                       : marker;
    out.requires_dist.push_back(m.empty() ? std::string(line) : std::string(line) + " ; " + m);
  }
}

}  // namespace

std::vector<SysPathEntry> site_sys_path(const layers::ImageFilesystem& fs, const std::vector<std::string>& site_dirs) {
  ImageRoot root{fs};
  std::vector<SysPathEntry> out;
  std::size_t egginsert = 0;
  auto known = [&out](const std::string& p) {
    return std::any_of(out.begin(), out.end(), [&](const SysPathEntry& e) { return e.path == p; });
  };
  for (const std::string& site : site_dirs) {
    if (!root.is_dir(site) || known(site)) continue;
    out.push_back({site, ""});
    for (const std::string& name : root.children(site)) {
      if (!name.ends_with(".pth") || name.starts_with('.')) continue;
      std::string pth = abs_join(site, name);
      PthLines lines = read_pth(root, site, pth);
      for (const std::string& dir : lines.dirs) {
        if (known(dir)) continue;
        if (lines.egginsert) out.insert(out.begin() + static_cast<std::ptrdiff_t>(egginsert++), {dir, pth});
        else out.push_back({dir, pth});
      }
    }
  }
  return out;
}

InstalledMetadata egg_info_metadata(std::string_view pkg_info, std::string_view requires_txt) {
  InstalledMetadata out;
  EmailMessage message = EmailMessage::parse(pkg_info);
  out.requires_dist = message.get_all("Requires-Dist");
  out.provides_extra = message.get_all("Provides-Extra");
  InstalledMetadata from_txt;
  add_requires_txt(requires_txt, from_txt);
  if (out.requires_dist.empty()) out.requires_dist = std::move(from_txt.requires_dist);
  if (out.provides_extra.empty()) out.provides_extra = std::move(from_txt.provides_extra);
  return out;
}

InstalledMetadata read_installed_metadata(const layers::ImageFilesystem& fs, const SiteDistribution& dist) {
  ImageRoot root{fs};
  std::string metadata = dist.form == DistributionForm::kDistInfo           ? abs_join(dist.metadata_dir, "METADATA")
                         : dist.form == DistributionForm::kDistutilsEggInfo ? dist.metadata_dir
                                                                            : abs_join(dist.metadata_dir, "PKG-INFO");
  std::string text = root.read(metadata, kMetadataCap).value_or("");
  if (dist.form == DistributionForm::kDistInfo || dist.form == DistributionForm::kDistutilsEggInfo)
    return egg_info_metadata(text, "");
  return egg_info_metadata(text, root.read(abs_join(dist.metadata_dir, "requires.txt"), kMetadataCap).value_or(""));
}

std::vector<SiteDistribution> find_installed_distributions(const layers::ImageFilesystem& fs,
                                                           const std::vector<SysPathEntry>& sys_path) {
  ImageRoot root{fs};
  return Finder(root, sys_path).run();
}

}  // namespace trainpack::python
