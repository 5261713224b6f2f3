#include "support/fs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
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

// The owner tag inside a name ("p<digits>.<8 hex>"): its pid when the host part is ours, else nullopt.
std::optional<pid_t> own_pid_in(std::string_view name) {
  for (std::size_t at = name.find('p'); at != std::string_view::npos; at = name.find('p', at + 1)) {
    std::size_t i = at + 1, digits = 0;
    long long pid = 0;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 10) {
      pid = pid * 10 + (name[i++] - '0');
      ++digits;
    }
    if (digits == 0 || i + 9 > name.size() || name[i] != '.') continue;
    if (name.substr(i + 1, 8) == host_tag()) return static_cast<pid_t>(pid);
  }
  return std::nullopt;
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

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

}  // namespace

std::string read_file(const fs::path& path, std::uintmax_t limit) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below refuses it anyway.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    throw Error("cannot read " + path.string() + ": " + std::strerror(err));
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
    throw Error(path.string() + " is too large (" + std::to_string(st.st_size) + " bytes)");
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
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
      throw Error(path.string() + " is too large (more than " + std::to_string(limit) + " bytes)");
    }
  }
  ::close(fd);
  return out;
}

void stream_file(const fs::path& path, const std::function<void(const char* data, std::size_t size)>& sink) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!in) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  std::vector<char> buf(1 << 20);
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), in.get())) > 0) sink(buf.data(), n);
  if (std::ferror(in.get())) throw Error("cannot read " + path.string());
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
