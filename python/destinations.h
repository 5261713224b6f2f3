#pragma once
// Where a wheel's files go and how they become layer entries (pypa/installer's SchemeDictionaryDestination, with
// pip's rules): the root goes to purelib or platlib, "<name>.data/<key>/..." to the scheme's `key` (PEP 427 "The
// .data directory"; sysconfig's purelib, platlib, headers, scripts, data). Members stay in the zip (the layer
// writer streams them); rewritten scripts, launchers and dist-info files are inline. Paths are absolute in-image
// paths; entries are relative to "/"; what a write returns is the path as RECORD names it.
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "layers/file_entry.h"
#include "python/scheme.h"
#include "python/wheel_file.h"

namespace trainpack::python {

class LayerDestination {
 public:
  // `lib_dir`: purelib or platlib, as Root-Is-Purelib chose. Entries are owned by uid:gid.
  LayerDestination(const InstallScheme& scheme, std::string lib_dir, std::uint32_t uid, std::uint32_t gid);

  const std::string& lib_dir() const { return lib_dir_; }

  // Where a member installs. Throws for a .data member outside a known scheme key.
  std::string path_for(const WheelMember& m, const std::string& where) const;
  // The member itself, streamed from the wheel at install time.
  std::string write_member(const WheelFile& wheel, const WheelMember& m, const std::string& path);
  // Bytes the installer wrote (a rewritten script, a launcher, a dist-info file).
  std::string write_file(const std::string& path, std::string bytes, std::uint32_t mode);
  // A launcher in the scripts dir, and a file in the lib dir's `dist_info_dir`.
  std::string write_script(const std::string& name, std::string text);
  std::string write_dist_info(const std::string& dist_info_dir, const std::string& file, std::string text);

  // The entries, one per path (a later write of a path replaced the earlier one), sorted by path.
  layers::FileEntries take_entries();

 private:
  void put(layers::FileEntry e);

  std::map<std::string, std::string> scheme_dirs_;  // scheme key → absolute dir
  std::string lib_dir_;
  std::uint32_t uid_, gid_;
  layers::FileEntries entries_;
  std::map<std::string, std::size_t> entry_index_;  // entry path → index in entries_
};

// An absolute in-image path with "." and ".." resolved ("/usr/lib/../bin" → "/usr/bin").
std::string absolute_path(std::string_view path);

// The layer entry path ("usr/bin/x") of an absolute one.
std::string entry_path(std::string_view absolute);

}  // namespace trainpack::python
