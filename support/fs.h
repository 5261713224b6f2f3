#pragma once
// Filesystem helpers whose point is atomicity: nothing half-written is ever visible under its final name.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace trainpack {

// Writes bytes to a temporary file beside `path`, fsyncs nothing (caches are re-derivable), renames over `path`.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Reads a whole file; throws Error naming the path on failure. Anything but a regular file (a FIFO, a device like
// /dev/zero, a directory) is refused without blocking on it, and so is a file over `limit`; `kind` names what the
// file is for the too-large message ("a CA file"), which says the limit.
std::string read_file(const std::filesystem::path& path, std::uintmax_t limit = 64u << 20,
                      std::string_view kind = "a file trainpack reads");
// read_file's checks without reading: for a file another library reads later.
void check_readable_file(const std::filesystem::path& path, std::uintmax_t limit, std::string_view kind);

// A file the user names as an output (--digest-file, docker-archive:FILE), written as a shell's `> FILE` would be,
// except that a regular file is never seen half-written: a missing or regular file is written to a temporary file
// beside it, fsynced and renamed over it; an existing character device, FIFO or socket is opened and written (a FIFO
// nobody reads is an Error, never a wait); a symbolic link is followed and its target gets the same rules; a link
// in /proc (/dev/stdout → /proc/self/fd/1) is an open file and is written in place. Nothing that is not a regular
// file is replaced or removed. The constructor resolves the path and opens a special file, so that a path that
// cannot be written fails before any work.
class OutputFile {
 public:
  explicit OutputFile(std::filesystem::path path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // The descriptor to write to: the special file, or the temporary file (made on first use).
  int fd();
  void write(std::string_view bytes);
  // Makes the output final: the temporary file is fsynced and renamed over the target; a special file is closed.
  void commit();
  // Written where it is (a FIFO, a device): what was written is out, and cannot be taken back.
  bool in_place() const { return in_place_; }

 private:
  std::filesystem::path named_;   // as the user gave it, for messages
  std::filesystem::path target_;  // after symbolic links
  std::filesystem::path temp_;
  int fd_ = -1;
  bool in_place_ = false;  // written where it is (special file, /proc link), not renamed over
};

// Throws unless a new entry can be made beside `path` (after its links, follow_output_links): the directory that holds
// it exists and is writable. `what` names the output in the message ("--digest-file=x", "oci:out/t:v1"). Outputs
// check this before any work, since they are written (and staged beside) only at the end.
void check_output_parent(const std::filesystem::path& path, const std::string& what);

// Where a user-named output path leads: its symbolic links followed one at a time (a dangling one leads to where its
// target would be), except a link in /proc, which is an open file. For outputs that are not one file (oci:DIR).
std::filesystem::path follow_output_links(const std::filesystem::path& path);

// Writes `bytes` to a user-named output with OutputFile's rules.
void write_output_file(const std::filesystem::path& path, std::string_view bytes);

// Makes the directory `dir` and those above it that are missing. Throws Error naming the first of them that is there
// but is no directory ("X is a file, not a directory"), else with the cause mkdir(2) gave.
void make_directories(const std::filesystem::path& dir);
// Throws make_directories' Error when `path` is there (its links followed) but is no directory.
void check_directory_if_present(const std::filesystem::path& path);

// Copies the file `from` into a new file `to` (0644). Throws Error with the cause of a failure, taken right after the
// failing call ("No space left on device"); a partial `to` is removed.
void copy_to_new_file(const std::filesystem::path& from, const std::filesystem::path& to);

// Streams a file of any size to `sink`, a chunk at a time; throws Error naming the path when it cannot be read.
void stream_file(const std::filesystem::path& path,
                 const std::function<void(const char* data, std::size_t size)>& sink);

// Who owns a temporary name: "p<pid>.<host>", <host> 8 hex digits of this boot and PID namespace, so that a cache
// shared between machines or containers never takes another one's live process for a dead one.
std::string temp_owner_tag();
// Whether `name` carries an owner tag (of this host or another): a temporary name, not a lasting one.
bool has_owner_tag(std::string_view name);

// A uniquely named sibling of `path` for staging output (".<name>.tmp-<owner tag>-<n>").
std::filesystem::path staging_path_for(const std::filesystem::path& path);

// Removes the entries of `dir` whose names carry an owner tag of this host whose process is gone (a build killed
// with SIGKILL leaves them behind); entries of live processes and of other hosts stay. Returns how many went.
// Errors are ignored: sweeping is best effort.
int sweep_orphaned_temps(const std::filesystem::path& dir);

// A new directory "<prefix><owner tag>-XXXXXX" in `parent` (the system's temp directory when empty).
std::filesystem::path make_temp_dir(const std::filesystem::path& parent, std::string_view prefix);

// `path` removed on destruction unless release()d, by `remove` (errors ignored: cleanup is best effort).
template <void (*remove)(const std::filesystem::path&) noexcept>
class ScopedPath {
 public:
  explicit ScopedPath(std::filesystem::path path) : path_(std::move(path)) {}
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;
  ~ScopedPath() {
    if (!path_.empty()) remove(path_);
  }
  const std::filesystem::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

void remove_tree_quietly(const std::filesystem::path& path) noexcept;
void remove_file_quietly(const std::filesystem::path& path) noexcept;

// A directory removed recursively on destruction unless release()d.
using ScopedDir = ScopedPath<remove_tree_quietly>;
// A file removed on destruction unless release()d.
using ScopedFile = ScopedPath<remove_file_quietly>;

}  // namespace trainpack
