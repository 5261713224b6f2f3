#include "python/sdist.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <fcntl.h>

#include <fstream>
#include <memory>
#include <optional>

#include "support/error.h"
#include "support/paths.h"

namespace trainpack::python {
namespace fs = std::filesystem;

namespace {

using ArchivePtr = std::unique_ptr<struct archive, decltype(&archive_read_free)>;

ArchivePtr open_archive(const fs::path& file) {
  ArchivePtr a(archive_read_new(), &archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_zip(a.get());
  if (archive_read_open_filename(a.get(), file.c_str(), 1 << 16) != ARCHIVE_OK)
    throw Error("cannot read " + file.filename().string() + ": " + archive_error_string(a.get()),
                "the sdist is corrupt; download it again");
  return a;
}

// Calls visit(entry) for every member; throws at a read error.
template <typename Visit>
void for_each_member(const fs::path& file, Visit visit) {
  ArchivePtr a = open_archive(file);
  struct archive_entry* e;
  int r;
  while ((r = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) visit(a.get(), e);
  if (r != ARCHIVE_EOF)
    throw Error("cannot read " + file.filename().string() + ": " + archive_error_string(a.get()),
                "the sdist is corrupt; download it again");
}

std::string member_name(struct archive_entry* e) {
  const char* p = archive_entry_pathname(e);
  return p ? std::string(p) : std::string();
}

// utils/unpacking.py has_leading_dir: every member below one shared first component.
std::optional<std::string> leading_dir(const fs::path& file) {
  std::optional<std::string> common;
  bool shared = true;
  for_each_member(file, [&](struct archive*, struct archive_entry* e) {
    std::string name = member_name(e);
    while (name.starts_with("./")) name.erase(0, 2);
    auto slash = name.find('/');
    std::string prefix = slash == std::string::npos ? "" : name.substr(0, slash);
    if (slash == std::string::npos && archive_entry_filetype(e) == AE_IFDIR) prefix = name;
    if (prefix.empty() || (common && *common != prefix)) shared = false;
    if (!common) common = prefix;
  });
  return shared ? common : std::nullopt;
}

bool is_native_source(std::string_view path) {
  for (std::string_view ext : {".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".pyx", ".pxd", ".f", ".f90", ".rs"})
    if (path.ends_with(ext)) return true;
  return path.ends_with("/Cargo.toml") || path == "Cargo.toml";
}

void write_member(struct archive* a, const fs::path& to, const std::string& display) {
  fs::create_directories(to.parent_path());
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write " + to.string());
  char buffer[64 * 1024];
  for (la_ssize_t n; (n = archive_read_data(a, buffer, sizeof buffer)) != 0;) {
    if (n < 0) throw Error("cannot read " + display + ": " + archive_error_string(a), "the sdist is corrupt");
    out.write(buffer, n);
  }
  if (!out.flush()) throw Error("cannot write " + to.string());
}

// utils/unpacking.py is_within_directory: the path, taken relative to the destination, never climbs above it.
bool stays_inside(std::string_view relative) {
  if (relative.starts_with('/')) return false;
  int depth = 0;
  for (std::string_view c : path_components(relative))
    if ((depth += c == ".." ? -1 : 1) < 0) return false;
  return true;
}

void set_mtime(const fs::path& path, std::int64_t mtime) {
  struct timespec times[2] = {{static_cast<time_t>(mtime), 0}, {static_cast<time_t>(mtime), 0}};
  ::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW);
}

}  // namespace

fs::path unpack_sdist(const fs::path& archive, const fs::path& destination, std::int64_t mtime) {
  fs::create_directories(destination);
  const std::string display = archive.filename().string();
  std::optional<std::string> leading = leading_dir(archive);
  std::vector<fs::path> written;
  for_each_member(archive, [&](struct archive* a, struct archive_entry* e) {
    std::string name = member_name(e);
    while (name.starts_with("./")) name.erase(0, 2);
    if (leading) name = name.size() > leading->size() ? name.substr(leading->size() + 1) : "";
    if (name.empty()) return;
    if (!stays_inside(name))
      throw Error("the sdist " + display + " has a file (" + member_name(e) + ") trying to install outside the target "
                  "directory", "the archive is unsafe; do not use it");
    fs::path to = destination / normalize_path(name);
    switch (archive_entry_filetype(e)) {
      case AE_IFDIR:
        fs::create_directories(to);
        break;
      case AE_IFREG:
        write_member(a, to, display);
        fs::permissions(to, (archive_entry_perm(e) & 0111) ? fs::perms(0755) : fs::perms(0644));
        written.push_back(to);
        break;
      case AE_IFLNK: {
        const char* target = archive_entry_symlink(e);
        if (!target || !stays_inside(std::string(path_dir(normalize_path(name))) + "/" + target)) return;  // escapes
        fs::create_directories(to.parent_path());
        fs::create_symlink(target, to);
        break;
      }
      default:
        break;  // devices, fifos, hardlinks: not in sdists that matter; pip warns and skips odd members
    }
  });
  for (const fs::path& p : written) set_mtime(p, mtime);
  return destination;
}

std::vector<std::string> native_sources_in_sdist(const fs::path& archive) {
  std::vector<std::string> out;
  for_each_member(archive, [&](struct archive* a, struct archive_entry* e) {
    std::string path = member_name(e);
    auto slash = path.find('/');
    std::string rel = slash == std::string::npos ? path : path.substr(slash + 1);
    if (archive_entry_filetype(e) == AE_IFREG && is_native_source(rel)) out.push_back(rel);
    archive_read_data_skip(a);
  });
  return out;
}

}  // namespace trainpack::python
