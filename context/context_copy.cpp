#include "context/context_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>

#include "support/error.h"
#include "support/paths.h"
#include "support/text.h"

namespace trainpack::context {
namespace {

namespace fs = std::filesystem;
using layers::FileEntries;
using layers::FileEntry;

constexpr int kMaxSymlinkHops = 40;  // like Linux's ELOOP limit

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::vector<std::string> split_path(std::string_view p) { return split_nonempty(p, "/"); }

std::string relative_path(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out = join_path(out, p);
  return out;
}

// The mode rule (see the header): reproducible, independent of the umask of the checkout.
std::uint32_t normalized_mode(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return 0755;
  if (S_ISLNK(st.st_mode)) return 0777;
  return (st.st_mode & S_IXUSR) ? 0755 : 0644;
}

std::string source_stamp(const struct stat& st) {
  std::uint64_t mtime_ns = static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                           static_cast<std::uint64_t>(st.st_mtim.tv_nsec);
  return std::to_string(static_cast<std::uint64_t>(st.st_size)) + ":" + std::to_string(mtime_ns) + ":" +
         std::to_string(static_cast<std::uint64_t>(st.st_ino));
}

class Copier {
 public:
  Copier(fs::path root, const DockerIgnore& ignore) : root_(std::move(root)), ignore_(ignore) {}

  fs::path host(std::string_view rel) const { return rel.empty() ? root_ : root_ / std::string(rel); }

  // The walk state of directory `rel` (context-relative, no symlinks): its own exclusion, its per-pattern
  // results for its children, and whether BuildKit's walk reaches it at all.
  struct DirState {
    bool excluded = false;
    bool reachable = true;
    DockerIgnore::MatchState state;
    bool root = true;
  };
  DirState dir_state(std::string_view rel) const {
    DirState ds;
    if (rel.empty()) return ds;
    ds.root = false;
    DockerIgnore::MatchState parent;
    const DockerIgnore::MatchState* parent_ptr = nullptr;
    std::string prefix;
    for (const std::string& comp : split_path(rel)) {
      prefix = join_path(prefix, comp);
      if (!ds.reachable) break;
      DockerIgnore::MatchState self;
      bool ex = ignore_.match(prefix, parent_ptr, &self);
      if (prefix.size() == rel.size()) {
        ds.excluded = ex;
        ds.state = std::move(self);
        break;
      }
      if (ex && !ignore_.may_include_below(prefix)) ds.reachable = false;
      parent = std::move(self);
      parent_ptr = &parent;
    }
    return ds;
  }

  // Emits the entries below directory `ctx_rel` into `out`, at `img_rel` in the image. `state` is the
  // directory's walk state (null at the context root); `dir_excluded` whether the directory itself is excluded
  // (then read errors are ignored, as BuildKit ignores permission errors on excluded paths). Its children are
  // looked up relative to the open directory: a path walk per directory, not per file.
  void walk(const std::string& ctx_rel, const std::string& img_rel, const DockerIgnore::MatchState* state,
            bool dir_excluded, FileEntries& out) const {
    fs::path dir_host = host(ctx_rel);
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(dir_host.c_str()), ::closedir);
    if (!dir) {
      if (dir_excluded) return;
      int err = errno;
      throw Error("cannot read directory " + dir_host.string() + ": " + std::strerror(err),
                  "check its permissions, or exclude it with .dockerignore");
    }
    std::vector<std::string> names = entry_names(dir.get());
    if (errno != 0 && !dir_excluded)
      throw Error("cannot read directory " + dir_host.string() + ": " + std::strerror(errno));
    const int dir_fd = ::dirfd(dir.get());
    const std::string dir_path = dir_host.string();

    for (const std::string& name : names) {
      std::string child_ctx = join_path(ctx_rel, name);
      std::string child_img = join_path(img_rel, name);
      DockerIgnore::MatchState child_state;
      bool ex = ignore_.match(child_ctx, state, &child_state);
      struct stat st;
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int err = errno;
        if (ex || err == ENOENT) continue;  // excluded, or removed while we walk
        throw Error("cannot read " + (dir_host / name).string() + ": " + std::strerror(err),
                    "check its permissions, or exclude it with .dockerignore");
      }
      if (S_ISDIR(st.st_mode)) {
        if (ex && !ignore_.may_include_below(child_ctx)) continue;
        // The directory's entry goes before what is below it; an excluded directory that the walk entered
        // appears only as the parent of something re-included.
        const std::size_t at = out.size();
        out.push_back(FileEntry::directory(child_img, 0755));
        walk(child_ctx, child_img, &child_state, ex, out);
        if (ex && out.size() == at + 1) out.pop_back();
        continue;
      }
      if (ex) continue;
      add_non_directory({dir_fd, name.c_str(), &dir_path}, st, child_img, out);
    }
  }

  // The names in `dir` but "." and "..", sorted; errno is readdir's error, 0 when all were read.
  static std::vector<std::string> entry_names(DIR* dir) {
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* de = ::readdir(dir)) {
      std::string_view n = de->d_name;
      if (n != "." && n != "..") names.emplace_back(n);
      errno = 0;
    }
    const int err = errno;
    std::sort(names.begin(), names.end());
    errno = err;
    return names;
  }

  // Where a non-directory is: `name` relative to the directory open as `dir_fd` (AT_FDCWD: `name` is the path),
  // which is `dir` on the host (null with AT_FDCWD), for messages and for the layer writer to read it by.
  struct HostFile {
    int dir_fd;
    const char* name;
    const std::string* dir;
    // As fs::path's operator/ joins them, without splitting the path into components for each file.
    std::string path() const {
      if (!dir) return name;
      std::string p = *dir;
      if (!p.empty() && p.back() != '/') p += '/';
      return p += name;
    }
  };

  // A regular file or symlink (or a refused/skipped special file) found at `at`.
  void add_non_directory(const HostFile& at, const struct stat& st, const std::string& img_path,
                         FileEntries& out) const {
    if (S_ISREG(st.st_mode)) {
      // Make sure we may read it now, rather than failing half-way through writing the layer: asked of the
      // permissions (with the effective IDs, as open() would), one call per file without opening it.
      if (::faccessat(at.dir_fd, at.name, R_OK, AT_EACCESS) != 0) {
        int err = errno;
        throw Error("cannot read " + at.path() + ": " + std::strerror(err),
                    "check the file's permissions, or exclude it with .dockerignore");
      }
      FileEntry e;
      e.path = img_path;
      e.type = FileEntry::Type::kRegular;
      e.mode = normalized_mode(st);
      e.source = at.path();
      e.size = static_cast<std::uint64_t>(st.st_size);
      e.source_stamp = source_stamp(st);
      out.push_back(std::move(e));
      return;
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 256), '\0');
      for (;;) {
        ssize_t n = ::readlinkat(at.dir_fd, at.name, target.data(), target.size());
        if (n < 0) {
          int err = errno;
          throw Error("cannot read symlink " + at.path() + ": " + std::strerror(err));
        }
        if (static_cast<std::size_t>(n) < target.size()) {
          target.resize(static_cast<std::size_t>(n));
          break;
        }
        target.resize(target.size() * 2);
      }
      FileEntry e;
      e.path = img_path;
      e.type = FileEntry::Type::kSymlink;
      e.mode = 0777;
      e.link_target = std::move(target);
      out.push_back(std::move(e));
      return;
    }
    if (S_ISSOCK(st.st_mode)) return;  // sockets are skipped, as Docker's archiver does
    const char* what = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device" : "a special file";
    throw Error("cannot copy " + at.path() + ": it is " + what,
                "trainpack copies only regular files, directories and symlinks; exclude it with .dockerignore");
  }

  fs::path root_;
  const DockerIgnore& ignore_;
};

[[noreturn]] void throw_not_found(const fs::path& root, std::string_view source, std::string_view what,
                                  const DockerIgnore& ignore, const std::string& excluded_path) {
  std::string cause = "COPY source " + quote(source) + " not found in the build context " + root.string();
  if (!what.empty()) cause += " (" + std::string(what) + ")";
  if (excluded_path.empty()) throw Error(cause);
  std::string pattern = ignore.deciding_pattern(excluded_path);
  std::string hint = ".dockerignore excludes " + quote(excluded_path);
  if (!pattern.empty()) hint += " (pattern " + quote(pattern) + ")";
  hint += "; Docker fails the same way. Remove the pattern or add an exception such as " +
          quote("!" + excluded_path);
  throw Error(cause, hint);
}

struct Resolved {
  std::string rel;                  // context-relative, no symlinks, "" for the root
  std::vector<std::string> links;   // context-relative paths of the symlinks passed through
};

// Follows `rel` component by component inside the context. Absolute link targets start again at the context
// root (BuildKit resolves symlinks scoped to the context); a ".." that would leave the context is refused.
Resolved resolve_source(const fs::path& root, const std::string& rel, std::string_view source,
                        const DockerIgnore& ignore) {
  Resolved r;
  std::vector<std::string> done;
  std::deque<std::string> todo;
  for (auto& c : split_path(rel)) todo.push_back(c);
  int hops = 0;
  while (!todo.empty()) {
    std::string comp = std::move(todo.front());
    todo.pop_front();
    if (comp == ".") continue;
    if (comp == "..") {
      if (done.empty())
        throw Error("COPY source " + quote(source) + " is outside the package directory " + root.string() +
                        " (a symlink on the way points above it)",
                    "Docker can only copy files from inside the build context; copy the files into it, or use "
                    "a symlink that stays inside it");
      done.pop_back();
      continue;
    }
    done.push_back(comp);
    std::string cur = relative_path(done);
    fs::path host = root / cur;
    struct stat st;
    if (::lstat(host.c_str(), &st) != 0) {
      int err = errno;
      if (err == ENOENT || err == ENOTDIR) {
        std::string what = cur == rel ? "" : "resolved to " + quote(cur) + ", which does not exist";
        throw_not_found(root, source, what, ignore, "");
      }
      throw Error("cannot read " + host.string() + ": " + std::strerror(err),
                  "check its permissions");
    }
    if (S_ISLNK(st.st_mode)) {
      if (++hops > kMaxSymlinkHops)
        throw Error("COPY source " + quote(source) + ": too many levels of symbolic links at " + host.string());
      r.links.push_back(cur);
      std::string target(4096, '\0');
      ssize_t n = ::readlink(host.c_str(), target.data(), target.size());
      if (n < 0) {
        int err = errno;
        throw Error("cannot read symlink " + host.string() + ": " + std::strerror(err));
      }
      target.resize(static_cast<std::size_t>(n));
      done.pop_back();
      if (!target.empty() && target[0] == '/') done.clear();
      auto parts = split_path(target);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_front(*it);
      continue;
    }
    if (!todo.empty() && !S_ISDIR(st.st_mode)) {
      throw_not_found(root, source, quote(cur) + " is not a directory", ignore, "");
    }
  }
  r.rel = relative_path(done);
  return r;
}

// Lexically normalizes the COPY source to a context-relative path ("" for the context itself).
std::string normalize_source(const fs::path& root, const fs::path& context_dir, std::string_view source) {
  if (source.empty()) throw Error("empty COPY source");
  if (source.find_first_of("*?[") != std::string_view::npos)
    throw Error("COPY source " + quote(source) + " has wildcard characters, which trainpack does not expand",
                "Docker would treat it as a pattern; name the file or directory exactly");
  std::string clean = go_clean_path(source);
  if (clean[0] == '/') {
    for (const fs::path& base : {root, fs::absolute(context_dir).lexically_normal()}) {
      std::string b = go_clean_path(base.string());
      if (clean == b) return "";
      if (b == "/") return clean.substr(1);
      if (clean.size() > b.size() && clean.compare(0, b.size(), b) == 0 && clean[b.size()] == '/')
        return clean.substr(b.size() + 1);
    }
    throw Error("COPY source " + quote(source) + " is outside the package directory " + root.string(),
                "Docker can only copy files from inside the build context");
  }
  if (clean == ".." || clean.starts_with("../"))
    throw Error("COPY source " + quote(source) + " is outside the package directory " + root.string(),
                "Docker can only copy files from inside the build context");
  return clean == "." ? "" : clean;
}

std::vector<std::string> normalize_dest(std::string_view dest) {
  std::string clean = go_clean_path(dest);
  std::vector<std::string> parts = split_path(clean);
  if (parts.size() == 1 && parts[0] == ".") parts.clear();
  if (!parts.empty() && parts[0] == "..")
    throw Error("COPY destination " + quote(dest) + " is outside the image root");
  return parts;
}

FileEntry dir_entry_for(const std::string& path, const CopyOptions& opts) {
  std::optional<ExistingDir> existing;
  if (opts.existing_dir) existing = opts.existing_dir(path);
  if (existing) return FileEntry::directory(path, existing->mode, existing->uid, existing->gid);
  return FileEntry::directory(path, 0755);
}

fs::path canonical_context(const fs::path& context_dir) {
  std::error_code ec;
  fs::path root = fs::canonical(context_dir, ec);
  if (ec) throw Error("cannot open the package directory " + context_dir.string() + ": " + ec.message());
  if (!fs::is_directory(root, ec)) throw Error("the package directory " + context_dir.string() + " is not a directory");
  return root;
}

// list_excluded's walk; returns whether something below `ctx_rel` is kept.
bool list_walk(const fs::path& root, const DockerIgnore& ignore, const std::string& ctx_rel,
               const DockerIgnore::MatchState* state, std::vector<std::string>& out) {
  fs::path dir_host = ctx_rel.empty() ? root : root / ctx_rel;
  std::vector<std::string> names;
  DIR* d = ::opendir(dir_host.c_str());
  if (!d) return false;
  while (struct dirent* de = ::readdir(d)) {
    std::string_view n = de->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  bool kept_any = false;
  for (const std::string& name : names) {
    std::string child = join_path(ctx_rel, name);
    DockerIgnore::MatchState child_state;
    bool ex = ignore.match(child, state, &child_state);
    struct stat st;
    bool is_dir = ::lstat((dir_host / name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    if (!is_dir) {
      if (ex) out.push_back(child);
      else kept_any = true;
      continue;
    }
    if (ex && !ignore.may_include_below(child)) {
      out.push_back(child + "/");
      continue;
    }
    std::vector<std::string> below;
    bool kept_below = list_walk(root, ignore, child, &child_state, below);
    if (ex && !kept_below) {
      out.push_back(child + "/");
      continue;
    }
    kept_any = true;
    for (auto& b : below) out.push_back(std::move(b));
  }
  return kept_any;
}

}  // namespace

CopySource read_copy_source(const fs::path& context_dir, std::string_view source_rel, const DockerIgnore& ignore) {
  fs::path root = canonical_context(context_dir);
  std::string rel = normalize_source(root, context_dir, source_rel);
  Resolved res = resolve_source(root, rel, source_rel, ignore);
  for (const std::string& link : res.links)
    if (ignore.excluded(link)) throw_not_found(root, source_rel, "", ignore, link);

  Copier copier(root, ignore);
  fs::path src_host = copier.host(res.rel);
  struct stat st;
  if (::lstat(src_host.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) throw_not_found(root, source_rel, "", ignore, "");
    throw Error("cannot read " + src_host.string() + ": " + std::strerror(err), "check its permissions");
  }
  CopySource source;
  source.directory = S_ISDIR(st.st_mode);
  if (source.directory) {
    Copier::DirState ds = copier.dir_state(res.rel);
    if (!ds.reachable) throw_not_found(root, source_rel, "", ignore, res.rel);
    copier.walk(res.rel, "", ds.root ? nullptr : &ds.state, ds.excluded, source.entries);
    if (ds.excluded && source.entries.empty()) throw_not_found(root, source_rel, "", ignore, res.rel);
    return source;
  }
  if (ignore.excluded(res.rel)) throw_not_found(root, source_rel, "", ignore, res.rel);
  std::vector<std::string> parts = split_path(rel);
  source.name = parts.empty() ? std::string() : parts.back();
  copier.add_non_directory({AT_FDCWD, src_host.c_str(), nullptr}, st, source.name, source.entries);
  if (source.entries.empty()) throw Error("cannot copy " + src_host.string() + ": it is a socket");
  return source;
}

FileEntries place_copy(CopySource source, std::string_view dest_in_image, const CopyOptions& opts) {
  std::vector<std::string> dest_parts = normalize_dest(dest_in_image);
  FileEntries out;
  auto add_ancestors = [&](const std::vector<std::string>& parts, std::size_t count) {
    std::string p;
    for (std::size_t i = 0; i < count; ++i) {
      p = join_path(p, parts[i]);
      out.push_back(dir_entry_for(p, opts));
    }
  };
  if (source.directory) {
    const std::string dest = relative_path(dest_parts);
    add_ancestors(dest_parts, dest_parts.size());  // the destination itself included
    out.reserve(out.size() + source.entries.size());
    for (FileEntry& e : source.entries) {
      e.path = join_path(dest, e.path);
      out.push_back(std::move(e));
    }
  } else {
    bool into_dir = (!dest_in_image.empty() && dest_in_image.back() == '/') || dest_parts.empty();
    if (!into_dir && opts.existing_dir && opts.existing_dir(relative_path(dest_parts))) into_dir = true;
    if (into_dir) dest_parts.push_back(source.name);
    add_ancestors(dest_parts, dest_parts.size() - 1);
    out.push_back(std::move(source.entries.front()));
    out.back().path = relative_path(dest_parts);
  }
  std::sort(out.begin(), out.end(), [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  return out;
}

std::vector<std::string> list_excluded(const fs::path& context_dir, const DockerIgnore& ignore) {
  fs::path root = canonical_context(context_dir);
  std::vector<std::string> out;
  if (ignore.empty()) return out;
  list_walk(root, ignore, "", nullptr, out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainpack::context
