#pragma once
// The layer a Dockerfile `COPY <src> <dest>` adds, computed from the build context on disk (BuildKit semantics,
// the default builder since Docker Engine 23):
//  - a directory source copies its *contents* into dest; a file source lands at dest (or at dest/<basename>
//    when dest ends in "/" or is an existing directory); "." copies the whole context;
//  - the context is filtered by .dockerignore first, like the context BuildKit transfers: excluded paths are
//    absent, an excluded directory still appears when something below it is re-included by an exception
//    ("!dir/keep"), and `.dockerignore` itself is copied unless a pattern excludes it;
//  - symlinks inside the copied tree are copied as symlinks, target verbatim; a source that is itself a
//    symlink (or runs through one) is followed, within the context: an absolute target is read from the
//    context root, as BuildKit does, and a relative target that climbs out of the context is refused;
//  - a source outside the context ("..", or an absolute path not under it) is refused; a source absent from
//    the filtered context fails like Docker's "not found", naming .dockerignore when that is why;
//  - every entry is owned by 0:0;
//  - missing directories on the way to dest are created 0755 root:root; ones that already exist in the image
//    (CopyOptions::existing_dir) keep their attributes, as does dest itself (Docker does not chmod an
//    existing destination directory).
//
// Mode rule (a deliberate choice for reproducibility, NOT Docker's behaviour - Docker keeps the host's bits):
//    regular file -> 0755 if the owner-execute bit is set, else 0644;  directory -> 0755;  symlink -> 0777;
//    setuid, setgid and sticky bits are dropped.
// So the image does not depend on the checkout's umask (002 vs 022) or on stray group/other bits.
//
// Special files in the copied tree: sockets are skipped silently (Docker's tar code skips them too); FIFOs and
// device nodes are refused with an Error naming the path (hint: exclude them with .dockerignore), because
// Docker would copy them as nodes, which no FileEntry can describe. Hard links are copied as independent
// regular files (Docker keeps them linked; the content is the same). Unreadable files and directories fail
// with an Error naming the path, unless .dockerignore excludes them (Docker skips those too).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "context/dockerignore.h"
#include "layers/file_entry.h"

namespace trainpack::context {

// Attributes of a directory that already exists in the image below the layer being built.
struct ExistingDir {
  std::uint32_t mode = 0755;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

struct CopyOptions {
  // Asked for each directory on the way to the destination ("usr", "usr/app", ...) and for the destination
  // itself. Return the directory's attributes when it exists in the image (e.g. from RootfsIndex), nullopt when
  // it does not (then COPY creates it: 0755, 0:0). Unset: every one is treated as missing.
  std::function<std::optional<ExistingDir>(std::string_view in_image_path)> existing_dir;
};

// What a COPY takes from the context, read once, before it is placed in the image (place_copy): the entries below a
// directory source (paths relative to it), or the one entry of a file source (path ""; `name` is its file name).
struct CopySource {
  bool directory = false;
  std::string name;
  layers::FileEntries entries;
};

// The source of `COPY <source_rel> <dest>`, read from the context: the walk, with every check of the source.
// `source_rel` is relative to `context_dir` (slash-separated; "." for the whole context); an absolute path is
// accepted only when it lies inside `context_dir`. Regular-file entries carry `source` (absolute host path), `size`
// and `source_stamp` ("<size>:<mtime_ns>:<ino>").
CopySource read_copy_source(const std::filesystem::path& context_dir, std::string_view source_rel,
                            const DockerIgnore& ignore);
// The entries `source` makes at `dest_in_image`, sorted bytewise by path, with every directory from the image root
// down present exactly once; reads nothing from the context. `dest_in_image` is relative to "/"
// ("usr/app/trainer"; a leading "/" or "./" is tolerated; "" or "." is the root).
layers::FileEntries place_copy(CopySource source, std::string_view dest_in_image, const CopyOptions& opts = {});

// Paths .dockerignore keeps out of the build context, relative to it, sorted bytewise, for a --dry-run listing.
// A directory left out as a whole is listed once, with a trailing "/", and nothing below it is listed; a
// directory that is excluded but kept because something below it is re-included is not listed itself (its
// excluded children are). Unreadable directories are not descended into.
std::vector<std::string> list_excluded(const std::filesystem::path& context_dir, const DockerIgnore& ignore);

}  // namespace trainpack::context
