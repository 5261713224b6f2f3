#include "layers/layer_writer.h"

#include <fstream>

#include <archive.h>
#include <archive_entry.h>

#include <locale.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "image/media_types.h"
#include "layers/deflate_splice.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/human.h"
#include "support/utf8.h"
#include "support/zip_archive.h"

namespace trainpack::layers {

namespace {

constexpr std::size_t kChunk = 1 << 20;

// Receives the tar stream from libarchive: hashes it (diff_id), compresses it (gzip, or zstd when asked for), and the
// store hashes and keeps the output. While a member is spliced (gzip only), the tar bytes that libarchive passes on
// are only hashed: their compressed form comes from the wheel through write_deflated().
class TarSink {
 public:
  TarSink(store::BlobStore::Writer& out, const LayerOptions& options) {
    ByteSink to_store = [&out](const char* data, std::size_t size) { out.write(data, size); };
    if (options.compression == LayerCompression::kZstd) zstd_.emplace(options.zstd, to_store);
    else gzip_.emplace(options.gzip, to_store);
  }

  bool can_splice() const { return gzip_.has_value(); }

  void write(const void* data, std::size_t size) {
    tar_hash_.update(data, size);
    if (splicing_) return;
    if (gzip_) gzip_->write(data, size);
    else zstd_->write(data, size);
  }

  void begin_splice() {
    gzip_->begin_deflated();
    splicing_ = true;
  }
  void write_deflated(const char* data, std::size_t size) { gzip_->write_deflated(data, size); }
  void end_splice(std::uint64_t plain_size, std::uint32_t plain_crc, std::string_view plain_tail) {
    gzip_->end_deflated(plain_size, plain_crc, plain_tail);
    splicing_ = false;
  }

  image::Digest finish() {
    if (gzip_) gzip_->finish();
    else zstd_->finish();
    return tar_hash_.finish();
  }

 private:
  std::optional<GzipEncoder> gzip_;
  std::optional<ZstdEncoder> zstd_;
  image::Sha256 tar_hash_;
  bool splicing_ = false;
};

la_ssize_t sink_write(struct archive* a, void* client, const void* buf, size_t size) {
  auto* sink = static_cast<TarSink*>(client);
  try {
    sink->write(buf, size);
  } catch (const std::exception& e) {
    archive_set_error(a, EIO, "%s", e.what());
    return -1;
  }
  return static_cast<la_ssize_t>(size);
}

struct ArchiveDeleter {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(struct archive_entry* e) const { archive_entry_free(e); }
};

void check(struct archive* a, int rc, const std::string& what) {
  if (rc < ARCHIVE_OK) {
    const char* msg = archive_error_string(a);
    throw Error("cannot write layer entry " + what + ": " + (msg ? msg : "libarchive error"));
  }
}


// A file name on Linux is any bytes. One that is not UTF-8 cannot be a pax "path" record in UTF-8: libarchive writes
// its bytes as they are, marked hdrcharset=BINARY (POSIX.1-2001 pax), and warns. Docker's tar writer (Go's
// archive/tar) writes the same bytes, and readers name the file by them.
void write_header(struct archive* a, struct archive_entry* header, const FileEntry& e) {
  const int rc = archive_write_header(a, header);
  if (rc == ARCHIVE_WARN && !(is_utf8(e.path) && is_utf8(e.link_target))) return;
  check(a, rc, e.path);
}

// Paths are UTF-8 (wheel member names are) and libarchive converts them through the thread's locale for the pax
// header, which fails for non-ASCII names under "C". C.UTF-8 makes that conversion the identity; ASCII paths are
// written exactly as before, and a layer of ASCII names only does without it (loading a locale is not free).
class Utf8ThreadLocale {
 public:
  Utf8ThreadLocale() : utf8_(newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0))) {
    if (utf8_) previous_ = uselocale(utf8_);
  }
  ~Utf8ThreadLocale() {
    if (!utf8_) return;
    uselocale(previous_);
    freelocale(utf8_);
  }
  Utf8ThreadLocale(const Utf8ThreadLocale&) = delete;
  Utf8ThreadLocale& operator=(const Utf8ThreadLocale&) = delete;

 private:
  locale_t utf8_;
  locale_t previous_ = static_cast<locale_t>(0);
};

bool is_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

Error member_size_error(const FileEntry& e) {
  return Error(e.zip_member + " in " + e.source + " is not the size its zip directory declares (" +
                   std::to_string(e.size) + " bytes)",
               "the archive is corrupt or malicious; download it again");
}

}  // namespace

// Zip archives (wheels) whose members the layer streams. Entries are sorted by path, so members of several wheels
// interleave: archives stay open across entries (reopening parses the central directory again, which for a
// large wheel costs more than the member), up to a bound so a layer of hundreds of wheels does not run out of
// file descriptors; the least recently used one is closed first.
class ZipArchives {
 public:
  // Streams member `e.zip_member` of archive `e.source` through `write`, checking its name and size.
  template <typename Write>
  void stream(const FileEntry& e, std::vector<char>& buf, Write&& write) {
    const ZipArchive& za = checked_archive(e);
    ZipArchive::Member file = za.open_member(e.zip_index);
    // Declared size vs actual bytes (zip bombs, lying headers): never write more than declared.
    copy_member(e, za, file.get(), e.size, buf, write);
  }

  // The zip directory's CRC-32 of `e`'s member when it is deflated, unencrypted and at least kSpliceMinimum bytes
  // long, so that its compressed bytes can be spliced; nullopt otherwise.
  std::optional<std::uint32_t> spliceable_crc(const FileEntry& e) {
    if (e.size < kSpliceMinimum) return std::nullopt;
    zip_stat_t st;
    if (zip_stat_index(checked_archive(e).get(), e.zip_index, 0, &st) != 0) return std::nullopt;
    constexpr zip_uint64_t kNeeded = ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD | ZIP_STAT_CRC;
    if ((st.valid & kNeeded) != kNeeded || st.comp_method != ZIP_CM_DEFLATE || st.encryption_method != ZIP_EM_NONE)
      return std::nullopt;
    return st.crc;
  }

  // Streams the member's compressed bytes, as stored, through `write` (at most its declared compressed size).
  template <typename Write>
  void stream_compressed(const FileEntry& e, std::vector<char>& buf, Write&& write) {
    const ZipArchive& za = checked_archive(e);
    zip_stat_t st;
    if (zip_stat_index(za.get(), e.zip_index, 0, &st) != 0 || !(st.valid & ZIP_STAT_COMP_SIZE))
      throw Error("cannot read " + e.zip_member + " from " + e.source + ": " + za.error());
    ZipArchive::Member file = za.open_compressed(e.zip_index);
    copy_member(e, za, file.get(), st.comp_size, buf, write);
  }

 private:
  static constexpr std::size_t kMaxOpen = 32;

  const ZipArchive& get(const std::filesystem::path& path) {
    for (auto it = open_.begin(); it != open_.end(); ++it) {
      if (it->first != path) continue;
      open_.splice(open_.begin(), open_, it);
      return open_.front().second;
    }
    ZipArchive za(path, path.string());
    if (open_.size() >= kMaxOpen) open_.pop_back();
    open_.emplace_front(path, std::move(za));
    return open_.front().second;
  }

  // The open archive of `e`, after checking that member `e.zip_index` is still the one named `e.zip_member`.
  const ZipArchive& checked_archive(const FileEntry& e) {
    const ZipArchive& za = get(e.source);
    const char* name = zip_get_name(za.get(), e.zip_index, ZIP_FL_ENC_STRICT);
    if (!name || e.zip_member != name)
      throw Error(e.source + " changed while the layer was being written: member " +
                      std::to_string(e.zip_index) + " is not " + e.zip_member,
                  "run the build again");
    return za;
  }

  // Copies exactly `declared` bytes from `file` through `write`; more or fewer is an error naming the member.
  template <typename Write>
  static void copy_member(const FileEntry& e, const ZipArchive& za, zip_file_t* file, std::uint64_t declared,
                          std::vector<char>& buf, Write& write) {
    if (!file) throw Error("cannot read " + e.zip_member + " from " + e.source + ": " + za.error());
    std::uint64_t done = 0;
    zip_int64_t n;
    while ((n = zip_fread(file, buf.data(), buf.size())) > 0) {
      if (done + static_cast<std::uint64_t>(n) > declared) break;
      write(buf.data(), static_cast<std::size_t>(n));
      done += static_cast<std::uint64_t>(n);
    }
    if (n < 0) throw Error("cannot read " + e.zip_member + " from " + e.source + ": " + zip_file_strerror(file));
    if (n > 0 || done != declared) throw member_size_error(e);
  }

  std::list<std::pair<std::filesystem::path, ZipArchive>> open_;  // most recently used first
};

EntryContentReader::EntryContentReader() : zips_(std::make_unique<ZipArchives>()) {}
EntryContentReader::~EntryContentReader() = default;

void EntryContentReader::copy_to(const FileEntry& e, const std::filesystem::path& destination) {
  if (e.type != FileEntry::Type::kRegular) throw Error("layer entry " + e.path + " is not a regular file");
  std::ofstream out(destination, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write " + destination.string());
  if (!e.zip_member.empty()) {
    std::vector<char> buf(kChunk);
    zips_->stream(e, buf, [&](const char* p, std::size_t n) { out.write(p, static_cast<std::streamsize>(n)); });
  } else if (!e.source.empty()) {
    std::ifstream in(e.source, std::ios::binary);
    if (!in) throw Error("cannot read " + e.source);
    out << in.rdbuf();
  } else {
    out.write(e.data.data(), static_cast<std::streamsize>(e.data.size()));
  }
  out.close();
  if (!out) throw Error("cannot write " + destination.string());
}

std::string EntryContentReader::read(const FileEntry& e, std::uint64_t max_bytes) {
  if (e.type != FileEntry::Type::kRegular) throw Error("layer entry " + e.path + " is not a regular file");
  if (e.size > max_bytes)
    throw Error("layer entry " + e.path + " is too large to read (" + human_bytes(e.size) + ")");
  if (!e.zip_member.empty()) {
    std::string out;
    out.reserve(e.size);
    // Sized to the member (one byte more shows a member longer than declared): bytecode reads thousands of small
    // modules, and a zeroed 1 MiB buffer for each costs more than inflating them.
    std::vector<char> buf(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, e.size + 1)));
    zips_->stream(e, buf, [&](const char* p, std::size_t n) { out.append(p, n); });
    return out;
  }
  if (!e.source.empty()) return read_file(e.source, max_bytes);
  return e.data;
}

std::int64_t default_layer_mtime() {
  const char* sde = std::getenv("SOURCE_DATE_EPOCH");
  if (!sde || !*sde) return 0;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(sde, &end, 10);
  if (errno || *end || v < 0)
    throw Error("SOURCE_DATE_EPOCH=\"" + std::string(sde) + "\" is not a non-negative integer",
                "set it to seconds since 1970-01-01 UTC, e.g. $(git log -1 --format=%ct)");
  return v;
}

void sort_and_check_entries(FileEntries& entries) {
  std::sort(entries.begin(), entries.end(), [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  std::set<std::string> dirs;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const FileEntry& e = entries[i];
    if (e.path.empty() || e.path.front() == '/' || e.path.back() == '/' || e.path.starts_with("./") ||
        e.path.find("//") != std::string::npos || e.path == ".." || e.path.starts_with("../") ||
        e.path.find("/../") != std::string::npos || e.path.ends_with("/.."))
      throw Error("invalid path in layer: \"" + e.path + "\"");
    if (i > 0 && entries[i - 1].path == e.path) throw Error("duplicate path in layer: " + e.path);
    std::string parent = parent_of(e.path);
    if (!parent.empty() && !dirs.count(parent))
      throw Error("layer entry " + e.path + " has no parent directory entry " + parent);
    if (e.type == FileEntry::Type::kDirectory) dirs.insert(e.path);
    if ((e.mode & ~07777u) != 0) throw Error("layer entry " + e.path + " has file-type bits in its mode");
  }
}

namespace {

// Bytes of file content written so far, told to LayerOptions::on_progress.
struct ContentProgress {
  const LayerOptions& options;
  std::uint64_t total = 0;
  std::uint64_t done = 0;
  void add(std::size_t n) {
    done += n;
    if (options.on_progress) options.on_progress(done, total);
  }
};

// The tar header of one entry. Directories carry a trailing slash; only regular files have a size.
std::unique_ptr<struct archive_entry, EntryDeleter> tar_header(const FileEntry& e, std::int64_t mtime) {
  std::unique_ptr<struct archive_entry, EntryDeleter> ae(archive_entry_new());
  archive_entry_set_uid(ae.get(), e.uid);
  archive_entry_set_gid(ae.get(), e.gid);
  archive_entry_set_mtime(ae.get(), mtime, 0);
  std::string pathname = e.path;
  la_int64_t size = 0;
  switch (e.type) {
    case FileEntry::Type::kDirectory:
      pathname += "/";
      archive_entry_set_filetype(ae.get(), AE_IFDIR);
      break;
    case FileEntry::Type::kSymlink:
      archive_entry_set_filetype(ae.get(), AE_IFLNK);
      archive_entry_set_symlink(ae.get(), e.link_target.c_str());
      break;
    case FileEntry::Type::kRegular:
      archive_entry_set_filetype(ae.get(), AE_IFREG);
      size = static_cast<la_int64_t>(e.size);
      break;
  }
  archive_entry_set_pathname(ae.get(), pathname.c_str());
  archive_entry_set_perm(ae.get(), e.mode);
  archive_entry_set_size(ae.get(), size);
  return ae;
}

// Copies host file `e.source` into the archive, refusing a file whose size changed since it was listed.
void write_host_file(struct archive* a, const FileEntry& e, std::vector<char>& buf, ContentProgress& progress) {
  std::FILE* in = std::fopen(e.source.c_str(), "rb");
  if (!in)
    throw Error("cannot read " + e.source + ": " + std::strerror(errno),
                "check the file's permissions, or exclude it with .dockerignore");
  std::uint64_t done = 0;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), in)) > 0) {
    if (done + n > e.size) break;
    if (archive_write_data(a, buf.data(), n) < 0) {
      std::fclose(in);
      check(a, ARCHIVE_FATAL, e.path);
    }
    done += n;
    progress.add(n);
  }
  bool read_error = std::ferror(in);
  std::fclose(in);
  if (read_error) throw Error("cannot read " + e.source + ": " + std::strerror(errno));
  if (done != e.size || n > 0)
    throw Error(e.source + " changed while the layer was being written",
                "run the build again once nothing is writing to the package directory");
}

// At least the last 32 KiB of a member's bytes: the dictionary the block after a spliced member is compressed with.
class PlainTail {
 public:
  void append(const char* data, std::size_t size) {
    tail_.append(data, size);
    if (tail_.size() > 2 * kDeflateWindow) tail_.erase(0, tail_.size() - kDeflateWindow);
  }
  std::string_view bytes() const { return tail_; }

 private:
  std::string tail_;
};

// Writes a deflated wheel member without compressing it again: libarchive gets the inflated bytes (for the tar
// stream's hash), the encoder gets the member's own deflate stream, re-aligned by DeflateSplicer.
void splice_member(struct archive* a, const FileEntry& e, std::uint32_t crc, std::vector<char>& buf, ZipArchives& zips,
                   TarSink& sink, ContentProgress& progress) {
  PlainTail tail;
  std::uint64_t plain_total = 0;
  DeflateSplicer splicer(
      [&](const char* data, std::size_t n) {
        plain_total += n;
        if (plain_total > e.size) throw member_size_error(e);  // a zip bomb stops here, not at its end
        tail.append(data, n);
        if (archive_write_data(a, data, n) < 0) check(a, ARCHIVE_FATAL, e.path);
        progress.add(n);
      },
      [&](const char* data, std::size_t n) { sink.write_deflated(data, n); });
  sink.begin_splice();
  zips.stream_compressed(e, buf, [&](const char* data, std::size_t n) { splicer.write(data, n); });
  splicer.finish();
  if (splicer.plain_size() != e.size) throw member_size_error(e);
  if (splicer.plain_crc32() != crc)
    throw Error(e.zip_member + " in " + e.source + " does not match the CRC-32 its zip directory declares",
                "the archive is corrupt; download it again");
  sink.end_splice(splicer.plain_size(), crc, tail.bytes());
}

// Writes a regular entry's content, from inline data, a zip member or a host file.
void write_content(struct archive* a, const FileEntry& e, std::vector<char>& buf, ZipArchives& zips, TarSink& sink,
                   ContentProgress& progress) {
  if (e.source.empty()) {
    if (e.data.size() != e.size) throw Error("layer entry " + e.path + ": inline data size mismatch");
    if (!e.data.empty() && archive_write_data(a, e.data.data(), e.data.size()) < 0) check(a, ARCHIVE_FATAL, e.path);
    progress.add(e.data.size());
    return;
  }
  if (!e.zip_member.empty()) {
    if (std::optional<std::uint32_t> crc = sink.can_splice() ? zips.spliceable_crc(e) : std::nullopt)
      return splice_member(a, e, *crc, buf, zips, sink, progress);
    zips.stream(e, buf, [&](const char* data, std::size_t n) {
      if (archive_write_data(a, data, n) < 0) check(a, ARCHIVE_FATAL, e.path);
      progress.add(n);
    });
    return;
  }
  write_host_file(a, e, buf, progress);
}

}  // namespace

std::string_view layer_media_type(LayerCompression compression) {
  return compression == LayerCompression::kZstd ? image::media::kOciLayerZstd : image::media::kOciLayerGzip;
}

void add_compression_to_key(image::Sha256& key, const LayerOptions& options) {
  if (options.compression == LayerCompression::kZstd) {
    key.update_field("zstd");
    key.update_field(std::to_string(options.zstd.level));
    return;
  }
  key.update_field(engine_name(options.gzip.engine));
  key.update_field(std::to_string(options.gzip.level));
  key.update_field(std::to_string(options.gzip.block_size));
}

LayerBlob write_layer(const store::BlobStore& store, FileEntries entries, const LayerOptions& options) {
  sort_and_check_entries(entries);
  return write_sorted_layer(store, entries, options);
}

LayerBlob write_sorted_layer(const store::BlobStore& store, const FileEntries& entries, const LayerOptions& options) {
  std::optional<Utf8ThreadLocale> utf8_paths;
  if (!std::all_of(entries.begin(), entries.end(),
                   [](const FileEntry& e) { return is_ascii(e.path) && is_ascii(e.link_target); }))
    utf8_paths.emplace();

  store::BlobStore::Writer out = store.begin_write();
  TarSink sink(out, options);
  std::unique_ptr<struct archive, ArchiveDeleter> a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  // Unblocked: every header and data write reaches the sink at once (splicing switches the sink between entries),
  // and nothing pads the stream beyond the end-of-archive blocks.
  archive_write_set_bytes_per_block(a.get(), 0);
  check(a.get(), archive_write_open2(a.get(), &sink, nullptr, sink_write, nullptr, nullptr), "(open)");

  // Sized to the largest content read through it: a code layer's few hundred bytes need no zeroed MiB.
  std::uint64_t largest = 0;
  for (const FileEntry& e : entries)
    if (e.type == FileEntry::Type::kRegular && !e.source.empty()) largest = std::max(largest, e.size);
  std::uint64_t buffer_bytes = std::min<std::uint64_t>(kChunk, std::max<std::uint64_t>(largest, 4096));
  std::vector<char> buf(static_cast<std::size_t>(buffer_bytes));
  ZipArchives zips;
  ContentProgress progress{options};
  for (const FileEntry& e : entries) progress.total += e.type == FileEntry::Type::kRegular ? e.size : 0;
  for (const FileEntry& e : entries) {
    auto header = tar_header(e, options.mtime);
    write_header(a.get(), header.get(), e);
    if (e.type == FileEntry::Type::kRegular) write_content(a.get(), e, buf, zips, sink, progress);
  }
  check(a.get(), archive_write_close(a.get()), "(close)");

  LayerBlob result;
  result.diff_id = sink.finish();
  store::StoredBlob blob = out.commit();
  result.digest = blob.digest;
  result.size = blob.size;
  return result;
}

}  // namespace trainpack::layers
