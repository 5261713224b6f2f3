#include "layers/image_extract.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "support/error.h"
#include "support/fs.h"
#include "support/paths.h"

namespace trainpack::layers {
namespace fs = std::filesystem;

namespace {

using Reader = std::function<std::size_t(char*, std::size_t)>;

bool is_file(const PathInfo* info) {
  return info && (info->type == PathInfo::Type::kRegular || info->type == PathInfo::Type::kHardlink);
}

// Permission bits only, never writable by others; readable (and, for directories, writable) by us.
mode_t file_mode(std::uint32_t mode) { return static_cast<mode_t>((mode & 0755) | 0400); }
mode_t dir_mode(std::uint32_t mode) { return static_cast<mode_t>((mode & 0755) | 0700); }

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw Error("cannot extract /" + path + " from the base image: " + why);
}

// Streams `read` into a new file (never an existing one, never through a symlink).
void write_new_file(const fs::path& to, mode_t mode, const Reader& read, const std::string& path) {
  int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) refuse(path, std::strerror(errno));
  char buffer[64 * 1024];
  bool ok = true;
  for (std::size_t n; ok && (n = read(buffer, sizeof buffer)) > 0;)
    ok = ::write(fd, buffer, n) == static_cast<ssize_t>(n);
  ok = ::fchmod(fd, mode) == 0 && ok;
  if (::close(fd) != 0 || !ok) refuse(path, "cannot write " + to.string());
}

void copy_host_file(const fs::path& from, const fs::path& to, mode_t mode, const std::string& path) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) refuse(path, "cannot read the file it links to");
  Reader read = [in](char* buffer, std::size_t max) -> std::size_t {
    ssize_t n = ::read(in, buffer, max);
    return n < 0 ? 0 : static_cast<std::size_t>(n);
  };
  try {
    write_new_file(to, mode, read, path);
  } catch (...) {
    ::close(in);
    throw;
  }
  ::close(in);
}

std::size_t depth(std::string_view dir) { return path_components(dir).size(); }

}  // namespace

ImageExtraction::ImageExtraction(const ScannedImage& image, fs::path destination)
    : image_(image), destination_(std::move(destination)) {
  fs::create_directories(destination_);
}

bool ImageExtraction::add(std::string_view path, const std::function<bool(std::string_view)>& skip_under) {
  std::vector<std::string> symlinks;
  std::string resolved = image_.index().resolve(path, &symlinks);
  for (const std::string& link : symlinks) add_entry(link);
  const PathInfo* info = image_.index().find(resolved);
  if (!info) return false;
  if (info->type == PathInfo::Type::kDirectory) add_directory(resolved, skip_under);
  else add_entry(resolved);
  return true;
}

void ImageExtraction::add_entry(const std::string& path) {
  const PathInfo* info = image_.index().find(path);
  if (!info || written_.count(path)) return;
  if (path.empty() || has_parent_reference(path)) refuse(path, "the name climbs out of the root");
  if (info->type == PathInfo::Type::kSymlink) pending_symlinks_[path] = info->link_target;
  else if (is_file(info)) pending_files_.insert(path);
}

void ImageExtraction::add_directory(const std::string& dir, const std::function<bool(std::string_view)>& skip_under) {
  std::vector<std::string> todo{dir};
  while (!todo.empty()) {
    std::string d = todo.back();
    todo.pop_back();
    host_parent(join_path(d, "x"));  // the directory itself, even when empty
    for (const std::string& child : image_.index().children(d)) {
      std::string p = join_path(d, child);
      if (skip_under && skip_under(p)) continue;
      const PathInfo* info = image_.index().find(p);
      if (info && info->type == PathInfo::Type::kDirectory) todo.push_back(p);
      else if (info && info->type == PathInfo::Type::kSymlink && names_file(p))
        add(p);  // the link and the file it names (sitecustomize.py -> /etc/python3.X/sitecustomize.py)
      else add_entry(p);
    }
  }
}

// Whether a symlink leads to a regular file (a loop leads nowhere).
bool ImageExtraction::names_file(const std::string& link) const {
  try {
    return is_file(image_.index().find(image_.index().resolve(link)));
  } catch (const Error&) {
    return false;
  }
}

// The directory `path` goes into, made of real directories (with the image's modes where it has them).
fs::path ImageExtraction::host_parent(const std::string& path) {
  fs::path host = destination_;
  std::string sofar;
  for (std::string_view c : path_components(path_dir(path))) {
    if (c == "..") refuse(path, "the name climbs out of the root");
    sofar = join_path(sofar, c);
    host /= std::string(c);
    struct stat st {};
    if (::lstat(host.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) refuse(path, "/" + sofar + " is not a directory in the copy");
      continue;
    }
    const PathInfo* info = image_.index().find(sofar);
    mode_t mode = dir_mode(info && info->type == PathInfo::Type::kDirectory ? info->mode : 0755);
    if (::mkdir(host.c_str(), mode) != 0 || ::chmod(host.c_str(), mode) != 0) refuse(path, std::strerror(errno));
    written_.insert(sofar);
  }
  return host;
}

void ImageExtraction::copy(const Opportunistic& also) {
  std::map<std::size_t, std::set<std::string>> by_layer;
  for (const std::string& path : pending_files_) {
    std::optional<std::size_t> layer = image_.provider(path);
    if (!layer) refuse(path, "no layer provides it");
    by_layer[*layer].insert(path);
  }
  for (const auto& [layer, files] : by_layer) copy_layer(layer, files, also);
  for (const auto& [path, target] : pending_symlinks_) write_symlink(path, target);
  pending_files_.clear();
  pending_symlinks_.clear();
}

// One pass over a layer: its pending files, the files its pending hardlinks name (a tar hardlink names an entry
// written earlier in the same archive), and what `also` picks among the files it is the topmost provider of.
void ImageExtraction::copy_layer(std::size_t layer, const std::set<std::string>& files, const Opportunistic& also) {
  const RootfsIndex& index = image_.index();
  std::map<std::string, std::vector<std::string>> hardlinks_to;
  for (const std::string& f : files)
    if (const PathInfo* info = index.find(f); info->type == PathInfo::Type::kHardlink)
      hardlinks_to[info->link_target].push_back(f);
  ScopedDir scratch(make_temp_dir(destination_.parent_path(), ".hardlinks-"));
  std::set<std::string> done;
  std::size_t scratch_files = 0;
  auto visit = [&](const std::string& path, const PathInfo& entry, std::uint64_t size, const Reader& read) {
    if (entry.type != PathInfo::Type::kRegular || has_parent_reference(path)) return;
    bool wanted = files.count(path) && index.find(path)->type == PathInfo::Type::kRegular;
    bool extra = !wanted && also && !files.count(path) && !written_.count(path) && image_.provider(path) == layer &&
                 index.resolve(path) == path && also(path, size);
    auto links = hardlinks_to.find(path);
    if (!wanted && !extra && links == hardlinks_to.end()) return;
    fs::path host = wanted || extra ? host_parent(path) / std::string(path_base(path))
                                    : scratch.path() / std::to_string(scratch_files++);
    if (done.count(path) && (wanted || extra)) fs::remove(host);  // the layer lists it twice: the last one counts
    write_new_file(host, file_mode(wanted || extra ? index.find(path)->mode : 0600), read, path);
    if (wanted || extra) done.insert(path);
    if (extra) opportunistic_.insert(path);
    if (links == hardlinks_to.end()) return;
    for (const std::string& link : links->second) {
      fs::path to = host_parent(link) / std::string(path_base(link));
      if (done.count(link)) fs::remove(to);
      copy_host_file(host, to, file_mode(index.find(link)->mode), link);
      done.insert(link);
    }
  };
  image_.read_layer(layer, visit);
  for (const std::string& f : files)
    if (!done.count(f)) refuse(f, "its layer " + image_.layer_digest(layer).str() + " does not hold it");
  written_.insert(done.begin(), done.end());
}

void ImageExtraction::write_symlink(const std::string& path, const std::string& target) {
  if (target.empty()) return;  // not a valid symlink on Linux (symlink(2): ENOENT)
  fs::path host = host_parent(path) / std::string(path_base(path));
  std::string relative = relative_target(path, target);
  std::error_code ec;
  if (fs::is_symlink(host, ec) && fs::read_symlink(host, ec).string() == relative) return;
  if (::symlink(relative.c_str(), host.c_str()) != 0) refuse(path, std::strerror(errno));
  written_.insert(path);
}

// A target as a path relative to the link that stays inside the copy: kept when it is relative and never climbs;
// else the same place inside the image (the parent resolved there, the last name kept), reached from the link's
// directory by climbing to the copy's root first.
std::string ImageExtraction::relative_target(const std::string& link, const std::string& target) const {
  if (target.front() != '/' && !has_parent_reference(target)) return target;
  std::string joined = target.front() == '/' ? target : "/" + std::string(path_dir(link)) + "/" + target;
  std::string_view last = path_base(joined);
  std::string inside;
  try {
    inside = last == ".." || last == "." || last.empty() ? image_.index().resolve(joined)
                                                          : join_path(image_.index().resolve(path_dir(joined)), last);
  } catch (const Error&) {
    inside = normalize_path(joined);  // a loop on the way: the lexical place, which stays inside all the same
  }
  std::string out;
  for (std::size_t i = 0; i < depth(path_dir(link)); ++i) out += "../";
  out += inside;
  if (out.empty()) return ".";
  if (out.back() == '/') out.pop_back();
  return out;
}

void ImageExtraction::drop_opportunistic(const std::string& path) {
  if (!opportunistic_.erase(path)) return;
  fs::remove(destination_ / path);
  written_.erase(path);
}

}  // namespace trainpack::layers
