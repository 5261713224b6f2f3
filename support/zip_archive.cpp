#include "support/zip_archive.h"

#include <algorithm>

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

// libzip's callback source (zip_source_function(3)) over a ZipByteSource: seekable, read-only.
struct ZipArchive::SourceState {
  ZipByteSource& bytes;
  std::uint64_t offset = 0;
  zip_error_t error;
  std::exception_ptr failure;

  explicit SourceState(ZipByteSource& b) : bytes(b) { zip_error_init(&error); }
  ~SourceState() { zip_error_fini(&error); }

  static zip_int64_t callback(void* state, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
    return static_cast<SourceState*>(state)->command(data, len, cmd);
  }
  zip_int64_t command(void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
    switch (cmd) {
      case ZIP_SOURCE_OPEN:
        offset = 0;
        return 0;
      case ZIP_SOURCE_READ: {
        std::uint64_t n = std::min<std::uint64_t>(len, bytes.size() - std::min(offset, bytes.size()));
        try {
          if (n > 0) bytes.read_at(offset, static_cast<char*>(data), n);
        } catch (...) {
          failure = std::current_exception();
          zip_error_set(&error, ZIP_ER_READ, 0);
          return -1;
        }
        offset += n;
        return static_cast<zip_int64_t>(n);
      }
      case ZIP_SOURCE_SEEK: {
        zip_int64_t to = zip_source_seek_compute_offset(offset, bytes.size(), data, len, &error);
        if (to < 0) return -1;
        offset = static_cast<std::uint64_t>(to);
        return 0;
      }
      case ZIP_SOURCE_TELL:
        return static_cast<zip_int64_t>(offset);
      case ZIP_SOURCE_STAT: {
        auto* st = static_cast<zip_stat_t*>(data);
        zip_stat_init(st);
        st->size = bytes.size();
        st->valid |= ZIP_STAT_SIZE;
        return sizeof(zip_stat_t);
      }
      case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&error, data, len);
      case ZIP_SOURCE_SUPPORTS:
        return ZIP_SOURCE_SUPPORTS_SEEKABLE;
      case ZIP_SOURCE_CLOSE:
      case ZIP_SOURCE_FREE:
        return 0;
      default:
        zip_error_set(&error, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
  }
};

ZipArchive::ZipArchive(ZipByteSource& bytes, std::string_view what) : source_(std::make_shared<SourceState>(bytes)) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_function_create(&SourceState::callback, source_.get(), &err);
  zip_t* zip = src ? zip_open_from_source(src, ZIP_RDONLY, &err) : nullptr;
  if (!zip) {
    if (src) zip_source_free(src);
    std::string reason = zip_error_strerror(&err);
    zip_error_fini(&err);
    rethrow_source_failure();
    throw Error("cannot open " + std::string(what) + ": " + reason);
  }
  zip_error_fini(&err);
  zip_.reset(zip);
}

void ZipArchive::rethrow_source_failure() const {
  if (source_ && source_->failure) std::rethrow_exception(source_->failure);
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
