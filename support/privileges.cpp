#include "support/privileges.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/error.h"

namespace trainpack {
namespace fs = std::filesystem;

namespace {

std::optional<UserIds> user_named(const std::string& name) {
  std::size_t colon = name.find(':');
  if (colon != std::string::npos) {
    char* end = nullptr;
    unsigned long uid = std::strtoul(name.c_str(), &end, 10);
    if (end != name.c_str() + colon) return std::nullopt;
    unsigned long gid = std::strtoul(name.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || colon + 1 == name.size()) return std::nullopt;
    return UserIds{static_cast<uid_t>(uid), static_cast<gid_t>(gid)};
  }
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwnam_r(name.c_str(), &pw, buffer, sizeof buffer, &found) != 0 || !found) return std::nullopt;
  return UserIds{pw.pw_uid, pw.pw_gid};
}

// Whether a child can switch to `user`: a fork that tries, as run_process's child will.
bool can_become(const UserIds& user) {
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) ::_exit(become(user) ? 0 : 1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

// Raw system calls: this runs in a child forked from a threaded process, where only async-signal-safe calls may
// be made (glibc's setuid would try to signal threads the child does not have).
bool become(const UserIds& user) {
  return ::syscall(SYS_setgroups, 0, nullptr) == 0 && ::syscall(SYS_setresgid, user.gid, user.gid, user.gid) == 0 &&
         ::syscall(SYS_setresuid, user.uid, user.uid, user.uid) == 0;
}

std::optional<UserIds> unprivileged_build_user() {
  static const std::optional<UserIds> user = []() -> std::optional<UserIds> {
    if (::geteuid() != 0) return std::nullopt;
    const char* wanted = std::getenv("TRAINPACK_BUILD_USER");
    std::string name = wanted && *wanted ? wanted : "nobody";
    if (name == "root") return std::nullopt;
    std::optional<UserIds> ids = user_named(name);
    if (!ids && wanted && *wanted)
      throw Error("TRAINPACK_BUILD_USER=" + name + " is neither UID:GID nor a user of this host",
                  "set it to a user name, UID:GID, or root");
    if (!ids) ids = UserIds{65534, 65534};
    if (ids->uid == 0) return std::nullopt;
    if (!can_become(*ids)) return std::nullopt;
    return ids;
  }();
  return user;
}

bool reachable_by(const fs::path& path, const UserIds& user) {
  fs::path p = fs::absolute(path).lexically_normal();
  for (fs::path dir = p;; dir = dir.parent_path()) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return false;
    mode_t search = st.st_uid == user.uid ? S_IXUSR : st.st_gid == user.gid ? S_IXGRP : S_IXOTH;
    if (S_ISDIR(st.st_mode) && !(st.st_mode & search)) return false;
    if (dir == dir.root_path() || dir.empty()) return true;
  }
}

void give_tree(const fs::path& dir, const UserIds& user) {
  auto give = [&user](const fs::path& p) {
    if (::lchown(p.c_str(), user.uid, user.gid) != 0)
      throw Error("cannot hand " + p.string() + " to the build's user: " + std::strerror(errno));
  };
  give(dir);
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
    give(it->path());
}

void mirror_tree(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  fs::permissions(to, fs::perms(0755));
  for (auto it = fs::recursive_directory_iterator(from); it != fs::recursive_directory_iterator(); ++it) {
    fs::path target = to / it->path().lexically_relative(from);
    if (it->is_symlink()) {
      fs::create_symlink(fs::read_symlink(it->path()), target);
    } else if (it->is_directory()) {
      fs::create_directory(target);
      fs::permissions(target, fs::perms(0755));
    } else {
      std::error_code ec;
      fs::create_hard_link(it->path(), target, ec);
      if (ec) fs::copy_file(it->path(), target);
    }
  }
}

}  // namespace trainpack
