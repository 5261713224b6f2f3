#pragma once
// Writes a layer in one streaming pass: entries → tar (libarchive, PAX restricted) → sha256 (diff_id) →
// gzip (zlib) → sha256 + byte count (digest, size) → blob store (atomic rename). Memory stays bounded by the
// copy buffers, whatever the layer's size.
//
// Reproducibility rules (changing any of them changes every diff_id, so they are fixed):
//  - entries sorted bytewise by path, every parent directory present before its children;
//  - directories end in "/", paths are relative with no "./";
//  - uid/gid numeric, user and group names empty, one mtime for every entry (0 or SOURCE_DATE_EPOCH),
//    no atime/ctime;
//  - mode = permission bits plus setuid/setgid/sticky (file-type bits only in the typeflag);
//  - gzip without a timestamp or file name, zlib at a pinned level.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "layers/blob_store.h"
#include "image/digest.h"
#include "layers/file_entry.h"

namespace trainpack::layers {

struct LayerBlob {
  image::Digest diff_id;     // sha256 of the uncompressed tar
  image::Digest digest;      // sha256 of the gzip stream (the blob)
  std::uint64_t size = 0;  // gzip byte count
};

struct LayerOptions {
  std::int64_t mtime = 0;
  int gzip_level = 6;
  // Called as file contents go into the layer (about once per copy buffer): bytes of content written so far, of
  // the sum of the entries' sizes. For a progress display; not part of the layer's cache key.
  std::function<void(std::uint64_t done, std::uint64_t total)> on_progress;
};

// Validates and sorts `entries`, then writes the layer. Throws Error on duplicate or malformed paths, on a
// regular file missing a parent directory entry, or when a source file (or zip member) cannot be read or is not
// the declared size.
LayerBlob write_layer(const BlobStore& store, FileEntries entries, const LayerOptions& options);

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
