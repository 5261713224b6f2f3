#pragma once
// A wheel file (PEP 427 "File Format"; the "Binary distribution format" specification), opened as pip's
// wheel_zip and wheel_dist_info_dir open it: every member checked (safe relative names, no duplicates, no
// encryption, no zip bomb), the one .dist-info directory found, its files read as UTF-8, and WHEEL understood.
// Nothing is extracted: members are read on demand, and the layer writer streams them straight from the zip.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/zip_archive.h"

namespace trainpack::python {

struct WheelMember {
  std::string name;  // decoded like Python's zipfile (UTF-8 when flagged, else CP437)
  std::uint64_t index = 0;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  // external_attr >> 16
  // pip's zip_item_is_executable.
  bool executable() const;
};

class WheelFile {
 public:
  // Opens `path` and checks its members; `project_name` (from the file name) must prefix the .dist-info dir.
  // Throws Error for wheels pip rejects and for unsafe ones.
  WheelFile(const std::filesystem::path& path, const std::string& project_name);

  const std::filesystem::path& path() const { return path_; }
  const std::string& file_name() const { return name_; }
  // "<file name>: ", how messages about this wheel start.
  const std::string& where() const { return where_; }
  const std::string& dist_info_dir() const { return dist_info_dir_; }  // as spelled: "Demo_Pkg-1.0.dist-info"
  // Members in central-directory order (Python's namelist()).
  const std::vector<WheelMember>& members() const { return members_; }
  const WheelMember* member(const std::string& name) const;

  // A file of the .dist-info dir ("WHEEL", "RECORD"), which must be UTF-8; nullopt when the wheel has none.
  std::optional<std::string> read_dist_info(std::string_view file) const;
  // A member's bytes; throws when it is larger than `limit` or not the size the zip directory declares.
  std::string read(const WheelMember& m, std::uint64_t limit) const;
  // The first `n` bytes (fewer if the member is shorter).
  std::string read_prefix(const WheelMember& m, std::size_t n) const;

 private:
  void add_member(std::uint64_t index);
  void find_dist_info_dir(const std::string& project_name);

  std::filesystem::path path_;
  std::string name_;   // the file name
  std::string where_;  // name_ + ": "
  ZipArchive zip_;
  std::vector<WheelMember> members_;
  std::map<std::string, std::size_t> by_name_;
  std::string dist_info_dir_;
};

// What WHEEL says (PEP 427 "The .dist-info directory"): Wheel-Version must be 1.x (a newer 1.x warns, as pip does),
// Root-Is-Purelib picks purelib or platlib for the root.
struct WheelMetadata {
  bool root_is_purelib = false;
  std::vector<std::string> warnings;
};
WheelMetadata read_wheel_metadata_file(const WheelFile& wheel);

// METADATA of a wheel on disk (<name>-<version>.dist-info/METADATA), unchecked otherwise: what the resolver reads
// of a downloaded or built wheel. Throws Error naming `display`.
std::string read_wheel_metadata(const std::filesystem::path& wheel, const std::string& display);
// The same of an open archive (one read over HTTP ranges: IndexClient::read_metadata_by_range).
std::string read_wheel_metadata(const ZipArchive& zip, const std::string& display);

}  // namespace trainpack::python
