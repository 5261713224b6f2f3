#pragma once
// A zip archive opened read-only with libzip (APPNOTE.TXT, PKWARE's .ZIP File Format Specification): the one place
// that opens zips, for wheels (PEP 427) read by the installer and streamed into layers. Member names are decoded
// like Python's zipfile (ZIP_FL_ENC_STRICT: UTF-8 when flagged, else CP437).
#include <zip.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace trainpack {

// Bytes of a zip read at offsets: a file elsewhere (an HTTP resource read with Range requests) that libzip reads
// through without the whole of it at hand. read_at() fills exactly `size` bytes or throws.
class ZipByteSource {
 public:
  virtual ~ZipByteSource() = default;
  virtual std::uint64_t size() const = 0;
  virtual void read_at(std::uint64_t offset, char* out, std::size_t size) = 0;
};

class ZipArchive {
 public:
  // Opens `path`; throws Error("cannot open <what>: <libzip's reason>", hint).
  ZipArchive(const std::filesystem::path& path, std::string_view what, std::string hint = {});
  // nullopt with libzip's reason in `reason` when `path` cannot be opened as a zip.
  static std::optional<ZipArchive> try_open(const std::filesystem::path& path, std::string& reason);
  // Opens the zip `bytes` hold (which must outlive the archive); an exception from read_at() propagates, else
  // throws Error("cannot open <what>: <libzip's reason>").
  ZipArchive(ZipByteSource& bytes, std::string_view what);

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
  // For an archive on a ZipByteSource: throws what its read_at() threw, if it did (libzip reports only a read error).
  void rethrow_source_failure() const;

 private:
  struct Closer {
    void operator()(zip_t* z) const { zip_discard(z); }
  };
  explicit ZipArchive(zip_t* zip) : zip_(zip) {}
  struct SourceState;
  std::shared_ptr<SourceState> source_;  // before zip_: libzip reads through it until zip_ goes
  std::unique_ptr<zip_t, Closer> zip_;
};

}  // namespace trainpack
