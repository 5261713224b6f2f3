#include "support/fs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "support/error.h"
#include "support/human.h"
#include "support/process.h"

namespace trainpack {
namespace fs = std::filesystem;

namespace {

// This boot and PID namespace, as 8 hex digits: the same PID means the same process only within them.
const std::string& host_tag() {
  static const std::string tag = [] {
    std::string id;
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::getline(boot, id);
    std::error_code ec;
    id += "|" + fs::read_symlink("/proc/self/ns/pid", ec).string();
    std::uint32_t h = 2166136261u;  // FNV-1a: stable across builds of trainpack, unlike std::hash
    for (unsigned char c : id) h = (h ^ c) * 16777619u;
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", h);
    return std::string(hex);
  }();
  return tag;
}

struct OwnerTag {
  pid_t pid;
  std::string_view host;
};

// The owner tag inside a name ("p<digits>.<8 hex>"), of any host.
std::optional<OwnerTag> owner_tag_in(std::string_view name) {
  for (std::size_t at = name.find('p'); at != std::string_view::npos; at = name.find('p', at + 1)) {
    std::size_t i = at + 1, digits = 0;
    long long pid = 0;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 10) {
      pid = pid * 10 + (name[i++] - '0');
      ++digits;
    }
    if (digits == 0 || i + 9 > name.size() || name[i] != '.') continue;
    std::string_view host = name.substr(i + 1, 8);
    if (host.find_first_not_of("0123456789abcdef") == std::string_view::npos)
      return OwnerTag{static_cast<pid_t>(pid), host};
  }
  return std::nullopt;
}

// The pid in a name's owner tag when the tag is of this host, else nullopt.
std::optional<pid_t> own_pid_in(std::string_view name) {
  std::optional<OwnerTag> tag = owner_tag_in(name);
  if (!tag || tag->host != host_tag()) return std::nullopt;
  return tag->pid;
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

bool has_owner_tag(std::string_view name) { return owner_tag_in(name).has_value(); }

std::string temp_owner_tag() { return "p" + std::to_string(::getpid()) + "." + host_tag(); }

fs::path staging_path_for(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  std::string name = "." + path.filename().string() + ".tmp-" + temp_owner_tag() + "-" + std::to_string(counter++);
  return path.parent_path() / name;
}

int sweep_orphaned_temps(const fs::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::optional<pid_t> pid = own_pid_in(it->path().filename().string());
    if (!pid || *pid == ::getpid() || process_alive(*pid)) continue;
    std::error_code rm;
    if (fs::remove_all(it->path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  fs::path tmp = staging_path_for(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp.string() + ": " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      int err = errno;  // the clean-up below must not replace the cause
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw Error("cannot write " + tmp.string() + ": " + std::strerror(err));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::string cause = ec.message();
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error("cannot rename into " + path.string() + ": " + cause);
  }
}

namespace {

// What a non-regular file is, for messages.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

Error not_a_directory(const fs::path& path, mode_t mode) {
  return Error(path.string() + " is " + (S_ISREG(mode) ? std::string("a file") : file_kind(mode)) +
                   ", not a directory",
               "move it away: trainpack keeps a directory there");
}

}  // namespace

void check_directory_if_present(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) throw not_a_directory(path, st.st_mode);
}

void make_directories(const fs::path& dir) {
  fs::path at;
  for (const fs::path& part : dir) {
    if (part.empty()) continue;
    at /= part;
    if (::mkdir(at.c_str(), 0777) == 0) continue;
    int err = errno;  // the stat below must not replace the cause
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0)
      throw Error("cannot create the directory " + at.string() + ": " + std::strerror(err),
                  err == EACCES ? "check its permissions and those of its directories" : "");
    if (!S_ISDIR(st.st_mode)) throw not_a_directory(at, st.st_mode);
  }
}

namespace {

Error too_large(const fs::path& path, std::string_view size, std::uintmax_t limit, std::string_view kind) {
  return Error(path.string() + " is too large (" + std::string(size) + "): the limit for " + std::string(kind) +
                   " is " + human_bytes(limit),
               "check that it names the right file");
}

}  // namespace

namespace {

// An open descriptor of a regular file of at most `limit` bytes (read_file's checks); `size` is its size.
int open_regular_file(const fs::path& path, std::uintmax_t limit, std::string_view kind, std::uintmax_t& size) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below refuses it anyway.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    throw Error("cannot read " + path.string() + ": " + std::strerror(err),
                err == EACCES ? "check its permissions and those of its directories" : "");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = errno;
    bool regular = S_ISREG(st.st_mode);
    ::close(fd);
    if (!regular && st.st_mode != 0)
      throw Error("cannot read " + path.string() + ": it is " + file_kind(st.st_mode) + ", not a regular file",
                  "replace it with a regular file");
    throw Error("cannot read " + path.string() + ": " + std::strerror(err));
  }
  if (static_cast<std::uintmax_t>(st.st_size) > limit) {
    ::close(fd);
    throw too_large(path, human_bytes(static_cast<std::uint64_t>(st.st_size)), limit, kind);
  }
  size = static_cast<std::uintmax_t>(st.st_size);
  return fd;
}

}  // namespace

void check_readable_file(const fs::path& path, std::uintmax_t limit, std::string_view kind) {
  std::uintmax_t size = 0;
  ::close(open_regular_file(path, limit, kind, size));
}

std::string read_file(const fs::path& path, std::uintmax_t limit, std::string_view kind) {
  std::uintmax_t size = 0;
  int fd = open_regular_file(path, limit, kind, size);
  std::string out;
  out.reserve(static_cast<std::size_t>(size));
  char buffer[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error("cannot read " + path.string() + ": " + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > limit) {
      ::close(fd);
      throw too_large(path, "more than " + human_bytes(limit), limit, kind);
    }
  }
  ::close(fd);
  return out;
}

namespace {

bool in_proc(const fs::path& p) {
  std::error_code ec;
  std::string dir = fs::weakly_canonical(fs::absolute(p, ec).parent_path(), ec).generic_string();
  return !ec && (dir == "/proc" || dir.starts_with("/proc/"));
}

}  // namespace

// Stops at a link in /proc: that is an open file, whose link text ("pipe:[…]", a deleted file) is no path.
fs::path follow_output_links(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {  // Linux's MAXSYMLINKS
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode) || in_proc(p)) return p;
    std::error_code ec;
    fs::path to = fs::read_symlink(p, ec);
    if (ec) throw Error("cannot write " + path.string() + ": cannot read the link " + p.string() + ": " + ec.message());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  throw Error("cannot write " + path.string() + ": " + std::strerror(ELOOP), "check where its links point");
}

namespace {

// This process's descriptor N when `p` is /proc/self/fd/N (or /proc/<our pid>/fd/N): writing through it keeps the
// file offset the shell gave us, as `> /dev/stdout` in a script does.
std::optional<int> own_fd(const fs::path& p) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::absolute(p, ec).parent_path(), ec);
  if (ec || dir != fs::path("/proc") / std::to_string(::getpid()) / "fd") return std::nullopt;
  const std::string name = p.filename().string();
  if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || name.size() > 9) return std::nullopt;
  return std::stoi(name);
}

int connect_unix_socket(const fs::path& p) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (p.native().size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, p.c_str(), p.native().size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

// Opens an existing non-regular file (or /proc link) for writing, as `>` would, without waiting on a FIFO.
int open_in_place(const fs::path& p, const struct stat& st) {
  if (auto n = own_fd(p)) return ::fcntl(*n, F_DUPFD_CLOEXEC, 0);
  if (S_ISSOCK(st.st_mode)) return connect_unix_socket(p);
  int fd = ::open(p.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a reader is there: writes may wait
  return fd;
}

}  // namespace

OutputFile::OutputFile(fs::path path) : named_(std::move(path)), target_(follow_output_links(named_)) {
  const std::string what = named_.string();
  struct stat st {};
  bool exists = ::stat(target_.c_str(), &st) == 0;
  if (int err = errno; !exists && err != ENOENT) throw Error("cannot write " + what + ": " + std::strerror(err));
  if (exists && S_ISDIR(st.st_mode)) throw Error(what + " is a directory", "name a file");
  if (exists && S_ISBLK(st.st_mode))
    throw Error(what + " is a block device", "trainpack writes no disk; name a file, a FIFO or a character device");
  in_place_ = exists && (!S_ISREG(st.st_mode) || in_proc(target_));
  if (in_place_) {
    fd_ = open_in_place(target_, st);
    int err = errno;
    if (fd_ < 0 && err == ENXIO && S_ISFIFO(st.st_mode))
      throw Error("cannot write " + what + ": it is a FIFO and nothing reads it", "start its reader first");
    if (fd_ < 0) throw Error("cannot write " + what + ": " + std::strerror(err));
    return;
  }
  check_output_parent(target_, what);
}

void check_output_parent(const fs::path& path, const std::string& what) {
  fs::path target = path;
  if (!target.has_filename() && target.has_parent_path()) target = target.parent_path();  // "out/" is "out"
  target = follow_output_links(target);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error("cannot write " + what + ": the directory " + dir.string() + " does not exist",
                "create it first, or choose another path");
  if (::access(dir.c_str(), W_OK) != 0) {
    int err = errno;
    throw Error("cannot write " + what + ": cannot write in " + dir.string() + ": " + std::strerror(err),
                "choose a directory you can write");
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

int OutputFile::fd() {
  if (fd_ >= 0) return fd_;
  temp_ = staging_path_for(target_);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    int err = errno;
    temp_.clear();
    throw Error("cannot write " + named_.string() + ": cannot create a file beside it: " + std::strerror(err));
  }
  return fd_;
}

void OutputFile::write(std::string_view bytes) {
  int out = fd();
  SigpipeGuard guard;  // a FIFO or socket whose reader went away is an error, not a silent death
  while (!bytes.empty()) {
    ssize_t n = ::write(out, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      throw Error("cannot write " + named_.string() + ": " + std::strerror(err));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void OutputFile::commit() {
  int out = fd();
  auto fail = [this](const std::string& doing) {
    int err = errno;
    throw Error("cannot write " + named_.string() + ": " + doing + std::strerror(err));
  };
  if (!in_place_ && ::fsync(out) != 0) fail("");
  fd_ = -1;
  if (::close(out) != 0 && in_place_) fail("");
  if (in_place_) return;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot rename into it: ");
  temp_.clear();
}

void write_output_file(const fs::path& path, std::string_view bytes) {
  OutputFile out(path);
  out.write(bytes);
  out.commit();
}

void stream_file(const fs::path& path, const std::function<void(const char* data, std::size_t size)>& sink) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!in) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  std::vector<char> buf(1 << 20);
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), in.get())) > 0) sink(buf.data(), n);
  if (std::ferror(in.get())) throw Error("cannot read " + path.string());
}

void copy_to_new_file(const fs::path& from, const fs::path& to) {
  int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    throw Error("cannot create " + to.string() + ": " + std::strerror(err));
  }
  ScopedFile partial(to);
  auto cannot_write = [&to](int err) { return Error("cannot write " + to.string() + ": " + std::strerror(err)); };
  try {
    stream_file(from, [&](const char* data, std::size_t size) {
      while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw cannot_write(errno);
        data += n;
        size -= static_cast<std::size_t>(n);
      }
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw cannot_write(errno);
  partial.release();
}

void remove_tree_quietly(const fs::path& path) noexcept {
  std::error_code ec;
  fs::remove_all(path, ec);
}

void remove_file_quietly(const fs::path& path) noexcept {
  std::error_code ec;
  fs::remove(path, ec);
}

fs::path make_temp_dir(const fs::path& parent, std::string_view prefix) {
  fs::path base = parent.empty() ? fs::temp_directory_path() : parent;
  std::error_code ec;
  fs::create_directories(base, ec);
  std::string tmpl = (base / (std::string(prefix) + temp_owner_tag() + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw Error("cannot create a temporary directory in " + base.string() + ": " + std::strerror(errno));
  return fs::path(tmpl);
}

}  // namespace trainpack
