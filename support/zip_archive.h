#pragma once
// A zip archive opened read-only with libzip (APPNOTE.TXT, PKWARE's .ZIP File Format Specification): the one place
// that opens zips, for wheels (PEP 427) read by the installer and streamed into layers. Member names are decoded
// like Python's zipfile (ZIP_FL_ENC_STRICT: UTF-8 when flagged, else CP437).
#include <zip.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace trainpack {

class ZipArchive {
 public:
  // Opens `path`; throws Error("cannot open <what>: <libzip's reason>", hint).
  ZipArchive(const std::filesystem::path& path, std::string_view what, std::string hint = {});
  // nullopt with libzip's reason in `reason` when `path` cannot be opened as a zip.
  static std::optional<ZipArchive> try_open(const std::filesystem::path& path, std::string& reason);

  zip_t* get() const { return zip_.get(); }
  std::uint64_t entry_count() const;

  // One member opened for reading (closed when the pointer goes); null when libzip refuses, see error().
  struct MemberCloser {
    void operator()(zip_file_t* f) const { zip_fclose(f); }
  };
  using Member = std::unique_ptr<zip_file_t, MemberCloser>;
  Member open_member(zip_uint64_t index) const;
  // The member's stored bytes as they are in the archive (e.g. a raw deflate stream), not decompressed.
  Member open_compressed(zip_uint64_t index) const;
  // libzip's last error on the archive.
  std::string error() const;

 private:
  struct Closer {
    void operator()(zip_t* z) const { zip_discard(z); }
  };
  explicit ZipArchive(zip_t* zip) : zip_(zip) {}
  std::unique_ptr<zip_t, Closer> zip_;
};

}  // namespace trainpack
