#include "layers/unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <unordered_set>
#include <vector>

#include "layers/layer_tar_reader.h"
#include "layers/whiteouts.h"
#include "support/error.h"
#include "support/paths.h"

namespace trainpack::layers {
namespace fs = std::filesystem;

namespace {

// "./a//b/." -> "a/b"; "." and "./" -> "". A leading "/" is kept so absolute names can be refused.
std::string clean_name(std::string_view p) {
  std::string out;
  for (std::string_view comp : path_components(p)) out = join_path(out, comp);
  return p.starts_with('/') ? "/" + out : out;
}

// What a whiteout does: remove the lower layers' files from the rootfs being built up, or stay in the layer's own
// tree in overlayfs's form for a mount to apply (Documentation/filesystems/overlayfs.rst: a 0/0 character device
// hides a lower name, the xattr trusted.overlay.opaque="y" hides a lower directory's content).
enum class Whiteouts { kApply, kOverlayForm };

class Unpacker {
 public:
  Unpacker(const fs::path& rootfs, std::string_view what, Whiteouts whiteouts = Whiteouts::kApply,
           std::vector<fs::path> lowers = {})
      : rootfs_(rootfs), what_(what), whiteouts_(whiteouts), lowers_(std::move(lowers)) {
    root_fd_ = ::open(rootfs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root_fd_ < 0) throw Error(what_ + ": cannot open " + rootfs.string() + ": " + std::strerror(errno));
    cwd_fd_ = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd_fd_ < 0) {
      ::close(root_fd_);
      throw Error(what_ + ": cannot open the current directory: " + std::strerror(errno));
    }
    // libarchive's SECURE_* checks work on relative names: extract from inside the rootfs.
    if (::fchdir(root_fd_) != 0) {
      ::close(root_fd_);
      ::close(cwd_fd_);
      throw Error(what_ + ": cannot enter " + rootfs.string() + ": " + std::strerror(errno));
    }
  }
  ~Unpacker() {
    if (::fchdir(cwd_fd_) != 0) { /* nothing sensible to do */ }
    ::close(cwd_fd_);
    ::close(root_fd_);
  }
  Unpacker(const Unpacker&) = delete;
  Unpacker& operator=(const Unpacker&) = delete;

  void apply(const fs::path& blob, const std::optional<image::Digest>& diff_id) {
    LayerTarReader reader(blob, diff_id, what_);
    struct archive* in = reader.tar();

    std::unique_ptr<struct archive, int (*)(struct archive*)> out(archive_write_disk_new(), archive_write_free);
    const bool root = ::geteuid() == 0;
    int flags = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;
    if (root) flags |= ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_XATTR;
    archive_write_disk_set_options(out.get(), flags);
    // Numeric ids only: the host's user database says nothing about the image's.
    archive_write_disk_set_user_lookup(out.get(), nullptr, nullptr, nullptr);
    archive_write_disk_set_group_lookup(out.get(), nullptr, nullptr, nullptr);

    written_.clear();
    struct archive_entry* e;
    int rc;
    std::size_t count = 0;
    while ((rc = archive_read_next_header(in, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
      ++count;
      entry(in, out.get(), e, root);
    }
    const char* msg = archive_error_string(in);
    bool truncated_tail = rc == ARCHIVE_FATAL && count > 0 && msg && std::strstr(msg, "Truncated");
    if (rc != ARCHIVE_EOF && !truncated_tail)
      throw Error(what_ + ": layer is not a readable tar: " + err(in), "the image is corrupt");
    reader.finish();
    // Directory modes and times are fixed up here (libarchive defers them so children can be written first).
    if (archive_write_close(out.get()) < ARCHIVE_WARN)
      throw Error(what_ + ": cannot finish unpacking: " + err(out.get()));
  }

 private:
  static std::string err(struct archive* a) {
    const char* s = archive_error_string(a);
    return s ? s : "unknown error";
  }

  // lstat relative to the rootfs; false when missing.
  bool lstat_rel(const std::string& rel, struct stat& st) const {
    return ::fstatat(root_fd_, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }

  // Every proper ancestor of `rel` that exists must be a real directory (no symlink anywhere on the way).
  void check_parents(const std::string& rel, const std::string& name) const {
    std::size_t pos = 0;
    while ((pos = rel.find('/', pos)) != std::string::npos) {
      std::string prefix = rel.substr(0, pos);
      struct stat st;
      if (!lstat_rel(prefix, st)) return;
      if (S_ISLNK(st.st_mode))
        throw Error(what_ + ": entry '" + name + "' would be written through the symlink '/" + prefix + "'",
                    "the layer tries to write outside the image root; the image is refused");
      if (!S_ISDIR(st.st_mode))
        throw Error(what_ + ": entry '" + name + "' has a parent '/" + prefix + "' that is not a directory",
                    "the image is corrupt");
      ++pos;
    }
  }

  std::string checked(const char* raw, const char* kind) const {
    std::string name = raw ? raw : "";
    std::string rel = clean_name(name);
    if (rel.starts_with("/") || has_parent_reference(rel))
      throw Error(what_ + ": " + kind + " '" + name + "' escapes the image root",
                  "the layer is malicious or corrupt; the image is refused");
    return rel;
  }

  void mark_written(const std::string& rel) {
    std::string p = rel;
    while (!p.empty() && written_.insert(p).second) p = std::string(path_dir(p));
  }

  // Removes what lower layers left in `dir` (relative; "" is the root), keeping this layer's entries.
  void remove_lower_children(const std::string& dir) {
    fs::path abs = dir.empty() ? rootfs_ : rootfs_ / dir;
    std::error_code ec;
    std::vector<std::string> names;
    for (auto it = fs::directory_iterator(abs, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
      names.push_back(it->path().filename().string());
    for (const auto& n : names) {
      std::string child = dir.empty() ? n : dir + "/" + n;
      struct stat st;
      if (!lstat_rel(child, st)) continue;
      if (!written_.contains(child)) {
        fs::remove_all(rootfs_ / child, ec);
        if (ec) throw Error(what_ + ": cannot apply opaque whiteout of '/" + dir + "': " + ec.message());
      } else if (S_ISDIR(st.st_mode)) {
        remove_lower_children(child);
      }
    }
  }

  void entry(struct archive* in, struct archive* out, struct archive_entry* e, bool root) {
    const char* raw = archive_entry_pathname(e);
    std::string rel = checked(raw, "entry");
    if (rel.empty()) return;  // the root directory itself
    std::string base(path_base(rel)), dir(path_dir(rel));

    if (base.starts_with(kWhiteoutPrefix)) {
      check_parents(rel, raw);
      if (whiteouts_ == Whiteouts::kOverlayForm) return overlay_whiteout(rel, dir, base, raw);
      if (base == kOpaque) {
        struct stat st;
        if (dir.empty() || (lstat_rel(dir, st) && S_ISDIR(st.st_mode))) remove_lower_children(dir);
        return;
      }
      if (base.starts_with(kWhiteoutMeta)) return;  // aufs metadata, never content
      std::string target = dir.empty() ? base.substr(kWhiteoutPrefix.size())
                                       : dir + "/" + base.substr(kWhiteoutPrefix.size());
      if (target.empty() || path_base(target) == "." || path_base(target) == "..")
        throw Error(what_ + ": whiteout '" + std::string(raw) + "' names no file", "the image is corrupt");
      std::error_code ec;
      fs::remove_all(rootfs_ / target, ec);
      if (ec) throw Error(what_ + ": cannot apply whiteout '" + std::string(raw) + "': " + ec.message());
      return;
    }

    check_parents(rel, raw);
    const auto type = archive_entry_filetype(e);
    if (!root && (type == AE_IFCHR || type == AE_IFBLK)) return;  // cannot mknod without privilege
    const char* hardlink = archive_entry_hardlink(e);
    std::string link_rel;
    if (hardlink) {
      link_rel = checked(hardlink, "hardlink target");
      if (link_rel.empty()) throw Error(what_ + ": hardlink '" + std::string(raw) + "' points at the root");
      check_parents(link_rel, hardlink);
      struct stat lst;
      if (lstat_rel(link_rel, lst) && S_ISDIR(lst.st_mode))
        throw Error(what_ + ": hardlink '" + std::string(raw) + "' points at a directory", "the image is corrupt");
    }

    // A non-directory replaces whatever is there; a directory only replaces a non-directory.
    struct stat st;
    if (lstat_rel(rel, st)) {
      bool new_dir = !hardlink && type == AE_IFDIR;
      if (!(new_dir && S_ISDIR(st.st_mode)) && !(hardlink && link_rel == rel)) {
        std::error_code ec;
        fs::remove_all(rootfs_ / rel, ec);
        if (ec) throw Error(what_ + ": cannot replace '/" + rel + "': " + ec.message());
      }
    }

    if (whiteouts_ == Whiteouts::kOverlayForm) {
      make_parents(rel);
      drop_overlay_xattrs(e);
    }
    archive_entry_set_pathname(e, rel.c_str());
    if (hardlink) archive_entry_set_hardlink(e, link_rel.c_str());
    int rc = archive_write_header(out, e);
    if (rc < ARCHIVE_WARN) {
      if (type == AE_IFCHR || type == AE_IFBLK) return;  // not permitted here (e.g. in a user namespace)
      throw Error(what_ + ": cannot unpack '" + std::string(raw) + "': " + err(out));
    }
    mark_written(rel);
    if (archive_entry_size(e) > 0 && !hardlink) {
      const void* buf;
      size_t size;
      la_int64_t offset;
      int r;
      while ((r = archive_read_data_block(in, &buf, &size, &offset)) == ARCHIVE_OK) {
        if (archive_write_data_block(out, buf, size, offset) < ARCHIVE_WARN)
          throw Error(what_ + ": cannot write '" + std::string(raw) + "': " + err(out));
      }
      if (r != ARCHIVE_EOF) {
        const char* m = archive_error_string(in);
        // The unpadded-tail case: the data is all there, only the padding is missing.
        if (!(r == ARCHIVE_FATAL && m && std::strstr(m, "Truncated")))
          throw Error(what_ + ": cannot read '" + std::string(raw) + "': " + err(in), "the image is corrupt");
      }
    }
    if (archive_write_finish_entry(out) < ARCHIVE_WARN)
      throw Error(what_ + ": cannot finish '" + std::string(raw) + "': " + err(out));
  }

  // A whiteout of this layer kept in overlayfs's form in the layer's own tree. The opaque mark goes on a directory
  // this layer makes (libarchive keeps the xattrs it does not set); one on the layer's root has no overlayfs form.
  void overlay_whiteout(const std::string& rel, const std::string& dir, const std::string& base, const char* raw) {
    if (base.starts_with(kWhiteoutMeta) && base != kOpaque) return;  // aufs metadata, never content
    if (base == kOpaque) {
      if (dir.empty()) throw Error(what_ + ": an opaque whiteout of the root has no overlayfs form");
      make_parents(rel);
      if (::setxattr((rootfs_ / dir).c_str(), "trusted.overlay.opaque", "y", 1, 0) != 0)
        throw Error(what_ + ": cannot mark '/" + dir + "' opaque: " + std::strerror(errno));
      return;
    }
    std::string target = dir.empty() ? base.substr(kWhiteoutPrefix.size())
                                     : dir + "/" + base.substr(kWhiteoutPrefix.size());
    if (target.empty() || path_base(target) == "." || path_base(target) == "..")
      throw Error(what_ + ": whiteout '" + std::string(raw) + "' names no file", "the image is corrupt");
    make_parents(target);
    if (::mknodat(root_fd_, target.c_str(), S_IFCHR | 0, ::makedev(0, 0)) != 0 && errno != EEXIST)
      throw Error(what_ + ": cannot write the whiteout of '/" + target + "': " + std::strerror(errno));
  }

  // overlayfs reads its own trusted.overlay.* xattrs in a lower tree (opaque, redirect, origin): a layer's entry
  // never sets them, only this file's whiteouts do.
  static void drop_overlay_xattrs(struct archive_entry* e) {
    std::vector<std::pair<std::string, std::string>> kept;
    const char* name;
    const void* value;
    size_t size;
    bool dropped = false;
    archive_entry_xattr_reset(e);
    while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
      if (std::string_view(name).starts_with("trusted.overlay.")) dropped = true;
      else kept.emplace_back(name, std::string(static_cast<const char*>(value), size));
    }
    if (!dropped) return;
    archive_entry_xattr_clear(e);
    for (const auto& [n, v] : kept) archive_entry_xattr_add_entry(e, n.c_str(), v.data(), v.size());
  }

  // The directories above `rel` that this layer's tree lacks, made as the lower layers have them: in a stack of
  // trees the upper directory's owner, mode and times are what the root shows, and a tar may leave parents out.
  void make_parents(const std::string& rel) const {
    for (std::size_t pos = rel.find('/'); pos != std::string::npos; pos = rel.find('/', pos + 1)) {
      std::string dir = rel.substr(0, pos);
      struct stat st;
      if (lstat_rel(dir, st)) continue;
      struct stat lower{};
      bool found = lower_directory(dir, lower);
      if (::mkdirat(root_fd_, dir.c_str(), found ? (lower.st_mode & 07777) : 0755) != 0)
        throw Error(what_ + ": cannot make '/" + dir + "': " + std::strerror(errno));
      if (!found) continue;
      ::fchmodat(root_fd_, dir.c_str(), lower.st_mode & 07777, 0);  // past the umask
      if (::fchownat(root_fd_, dir.c_str(), lower.st_uid, lower.st_gid, AT_SYMLINK_NOFOLLOW) != 0 && errno != EPERM)
        throw Error(what_ + ": cannot set the owner of '/" + dir + "': " + std::strerror(errno));
      const struct timespec times[2] = {lower.st_atim, lower.st_mtim};
      ::utimensat(root_fd_, dir.c_str(), times, AT_SYMLINK_NOFOLLOW);
    }
  }

  // The directory `rel` as the lower trees show it (the nearest first); false when the nearest tree naming it holds
  // something else (a whiteout, a file) or none does.
  bool lower_directory(const std::string& rel, struct stat& st) const {
    for (const fs::path& lower : lowers_) {
      if (::lstat((lower / rel).c_str(), &st) != 0) continue;
      return S_ISDIR(st.st_mode);
    }
    return false;
  }

  fs::path rootfs_;
  std::string what_;
  Whiteouts whiteouts_;
  std::vector<fs::path> lowers_;
  int root_fd_ = -1;
  int cwd_fd_ = -1;
  std::unordered_set<std::string> written_;
};

}  // namespace

void apply_layer(const fs::path& blob, const std::optional<image::Digest>& diff_id, const fs::path& rootfs,
                 std::string_view what) {
  Unpacker u(fs::absolute(rootfs), what);
  u.apply(blob, diff_id);
}

void unpack_layer_tree(const fs::path& blob, const std::optional<image::Digest>& diff_id, const fs::path& dir,
                       const std::vector<fs::path>& lowers, std::string_view what) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec))
    throw Error("cannot unpack " + std::string(what) + " into " + dir.string() + ": not an empty directory");
  Unpacker u(fs::absolute(dir), what, Whiteouts::kOverlayForm, lowers);
  u.apply(blob, diff_id);
}

void unpack_image(const image::Image& image, const fs::path& rootfs, const UnpackProgress& progress) {
  std::error_code ec;
  if (fs::exists(rootfs, ec)) {
    if (!fs::is_directory(rootfs, ec) || !fs::is_empty(rootfs, ec))
      throw Error("cannot unpack " + image.describe() + " into " + rootfs.string() + ": not an empty directory");
  } else {
    fs::create_directories(rootfs, ec);
    if (ec) throw Error("cannot create " + rootfs.string() + ": " + ec.message());
  }
  ::chmod(rootfs.c_str(), 0755);
  image::Manifest m = image.manifest();
  const std::vector<image::Digest> diff_ids = layer_diff_ids(image);
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    std::string what = image.describe() + " layer " + std::to_string(i + 1) + "/" + std::to_string(m.layers.size()) +
                       " (" + m.layers[i].digest.str() + ")";
    if (progress) progress(i, m.layers.size(), m.layers[i].size);
    apply_layer(image.blob_path(m.layers[i].digest), diff_ids[i], rootfs, what);
  }
}

}  // namespace trainpack::layers
