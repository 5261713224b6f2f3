#pragma once
// Writes a layer in one streaming pass: entries → tar (libarchive, PAX restricted) → sha256 (diff_id) →
// gzip (layers/gzip_encoder: parallel blocks, ISA-L or zlib; or, asked for, zstd: layers/zstd_encoder) → sha256 +
// byte count (digest, size) → blob store (atomic rename). In a gzip layer, a wheel member that is already deflated
// and large enough is not compressed again: its deflate stream is spliced into the layer's (layers/deflate_splice)
// and only inflated for the diff_id. Memory stays bounded
// by the copy buffers and the encoder's blocks in flight, whatever the layer's size.
//
// Reproducibility rules (changing any of them changes every diff_id, so they are fixed):
//  - entries sorted bytewise by path, every parent directory present before its children;
//  - directories end in "/", paths are relative with no "./";
//  - uid/gid numeric, user and group names empty, one mtime for every entry (0 or SOURCE_DATE_EPOCH),
//    no atime/ctime;
//  - mode = permission bits plus setuid/setgid/sticky (file-type bits only in the typeflag);
//  - gzip without a timestamp or file name; method, engine, level and block size are part of the layer cache key,
//    the number of threads is not (neither encoder's output depends on it);
//  - wheel members deflated in the wheel and at least kSpliceMinimum bytes long are spliced, the rest compressed.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "image/digest.h"
#include "image/manifest.h"
#include "layers/file_entry.h"
#include "layers/gzip_encoder.h"
#include "layers/zstd_encoder.h"
#include "store/blob_store.h"

namespace trainpack::layers {

using image::LayerBlob;

// How new layers are compressed: gzip (the default, which every client reads) or zstd (OCI image-spec 1.1; docker
// 23+, containerd 1.5+, podman read it).
enum class LayerCompression { kGzip, kZstd };

struct LayerOptions {
  std::int64_t mtime = 0;
  GzipOptions gzip = {};
  LayerCompression compression = LayerCompression::kGzip;
  ZstdOptions zstd = {};
  // Called as file contents go into the layer (about once per copy buffer): bytes of content written so far, of
  // the sum of the entries' sizes. For a progress display; not part of the layer's cache key.
  std::function<void(std::uint64_t done, std::uint64_t total)> on_progress = nullptr;
};

// The layer media type for a compression (application/vnd.oci.image.layer.v1.tar+gzip, ...+zstd).
std::string_view layer_media_type(LayerCompression compression);

// Adds what decides a layer's compressed bytes (method, engine, level, block size) to a cache key.
void add_compression_to_key(image::Sha256& key, const LayerOptions& options);

// Deflated wheel members smaller than this are inflated and compressed with their neighbours: splicing ends the
// encoder's block, which costs more than it saves for small files.
constexpr std::uint64_t kSpliceMinimum = 16 * 1024;

// Validates and sorts `entries`, then writes the layer. Throws Error on duplicate or malformed paths, on a
// regular file missing a parent directory entry, or when a source file (or zip member) cannot be read or is not
// the declared size.
LayerBlob write_layer(const store::BlobStore& store, FileEntries entries, const LayerOptions& options);
// The same for entries sort_and_check_entries has sorted and checked, which stay the caller's.
LayerBlob write_sorted_layer(const store::BlobStore& store, const FileEntries& entries, const LayerOptions& options);

// Sorts entries bytewise by path and checks the invariants write_layer relies on.
void sort_and_check_entries(FileEntries& entries);

class ZipArchives;

// The bytes of regular-file entries (inline, host file or wheel member), copied to host files for tools that need
// them on disk (the host Python compiling bytecode) or read into memory. Keeps wheels open between calls.
class EntryContentReader {
 public:
  EntryContentReader();
  ~EntryContentReader();
  void copy_to(const FileEntry& entry, const std::filesystem::path& destination);
  // The bytes themselves; throws Error when the entry holds more than `max_bytes`.
  std::string read(const FileEntry& entry, std::uint64_t max_bytes);

 private:
  std::unique_ptr<ZipArchives> zips_;
};

// The mtime every entry gets: SOURCE_DATE_EPOCH when set and valid, else 0.
std::int64_t default_layer_mtime();

}  // namespace trainpack::layers
