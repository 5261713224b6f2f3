#pragma once
// One entry of a layer to be written: what lands at `path` inside the image. Producers (COPY of the build
// context, the mkdir step, the wheel installer) emit these; the layer writer turns them into tar.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainpack::layers {

struct FileEntry {
  enum class Type { kRegular, kDirectory, kSymlink };

  std::string path;  // in-image, relative to "/", no leading "/" or "./", no trailing "/": "usr/app/trainer/task.py"
  Type type = Type::kRegular;
  std::uint32_t mode = 0644;  // permission bits plus setuid/setgid/sticky; never file-type bits
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  // A string, not a std::filesystem::path, which keeps a list of its components: ~10x the bytes, per entry.
  std::string source;            // kRegular: host file whose bytes are read when the tar is written...
  std::string data;              // ...or, when `source` is empty, these inline bytes
  std::uint64_t size = 0;        // kRegular: byte count (of `source` when it was stat()ed, else data.size())
  std::string link_target;       // kSymlink: verbatim target

  // When `zip_member` is set, `source` is a zip archive (a wheel) and the bytes are that member's, decompressed
  // while the tar is written: a 1 GB wheel is never extracted to disk nor held in memory. The member is opened
  // by `zip_index` (stable while the archive is unchanged); its name must match, and `size` is the
  // uncompressed size from the central directory, checked while streaming.
  std::string zip_member;
  std::uint64_t zip_index = 0;

  // What identifies the source for caching (e.g. "size:mtime_ns:ino"; for a zip member, the archive's stamp),
  // empty for inline data.
  std::string source_stamp;

  static FileEntry directory(std::string path, std::uint32_t mode, std::uint32_t uid = 0, std::uint32_t gid = 0) {
    FileEntry e;
    e.path = std::move(path);
    e.type = Type::kDirectory;
    e.mode = mode;
    e.uid = uid;
    e.gid = gid;
    return e;
  }
  static FileEntry inline_file(std::string path, std::string bytes, std::uint32_t mode = 0644) {
    FileEntry e;
    e.path = std::move(path);
    e.mode = mode;
    e.size = bytes.size();
    e.data = std::move(bytes);
    return e;
  }
  static FileEntry zip_file(std::string path, std::filesystem::path archive, std::string member, std::uint64_t index,
                            std::uint64_t size, std::uint32_t mode = 0644) {
    FileEntry e;
    e.path = std::move(path);
    e.mode = mode;
    e.source = std::move(archive);
    e.zip_member = std::move(member);
    e.zip_index = index;
    e.size = size;
    return e;
  }
  // An OCI whiteout hiding `path` of lower layers: an empty regular file "<dir>/.wh.<name>".
  static FileEntry whiteout(const std::string& path) {
    auto slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    return inline_file(dir + ".wh." + name, "", 0644);
  }
};

using FileEntries = std::vector<FileEntry>;

}  // namespace trainpack::layers
