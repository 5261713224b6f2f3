#include "support/zip_archive.h"

#include "support/error.h"

namespace trainpack {

std::optional<ZipArchive> ZipArchive::try_open(const std::filesystem::path& path, std::string& reason) {
  int err = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (zip) return ZipArchive(zip);
  zip_error_t ze;
  zip_error_init_with_code(&ze, err);
  reason = zip_error_strerror(&ze);
  zip_error_fini(&ze);
  return std::nullopt;
}

ZipArchive::ZipArchive(const std::filesystem::path& path, std::string_view what, std::string hint) {
  std::string reason;
  std::optional<ZipArchive> opened = try_open(path, reason);
  if (!opened) throw Error("cannot open " + std::string(what) + ": " + reason, std::move(hint));
  zip_ = std::move(opened->zip_);
}

std::uint64_t ZipArchive::entry_count() const {
  zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
  return n < 0 ? 0 : static_cast<std::uint64_t>(n);
}

ZipArchive::Member ZipArchive::open_member(zip_uint64_t index) const { return Member(zip_fopen_index(zip_.get(), index, 0)); }

ZipArchive::Member ZipArchive::open_compressed(zip_uint64_t index) const {
  return Member(zip_fopen_index(zip_.get(), index, ZIP_FL_COMPRESSED));
}

std::string ZipArchive::error() const { return zip_strerror(zip_.get()); }

}  // namespace trainpack
