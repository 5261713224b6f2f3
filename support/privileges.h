#pragma once
// Who runs code from the build context or an index (setup.py, PEP 517 backends): never root. A build started as
// root runs that code as an unprivileged user, so that it can read neither this process (its memory and
// environment hold registry tokens) nor root's files (docker's config.json, gcloud's credentials).
#include <sys/types.h>

#include <filesystem>
#include <optional>

namespace trainpack {

struct UserIds {
  uid_t uid = 0;
  gid_t gid = 0;
};

// The user builds run as: nullopt when this process is not root (it has nothing to give up) or cannot become
// another user (a user namespace that maps no other id). Otherwise $TRAINPACK_BUILD_USER ("UID:GID", a host user's
// name, or "root" to keep root), by default the host's "nobody" (65534:65534 when it has none). Probed once.
std::optional<UserIds> unprivileged_build_user();

// Becomes `user` (supplementary groups dropped): for a child between fork and exec. False when the kernel refuses.
bool become(const UserIds& user);

// Whether `user` may reach `path`: search permission on every directory from / down to it (itself included).
bool reachable_by(const std::filesystem::path& path, const UserIds& user);

// lchown -R: `dir` and everything under it (symlinks themselves, never what they point at) become `user`'s.
void give_tree(const std::filesystem::path& dir, const UserIds& user);

// A copy of the directory `from` at `to` (which must not exist) made of hard links where one filesystem holds both,
// else of copies; symlinks recreated, directories 0755. For read-only trees in a place `user` cannot reach.
void mirror_tree(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace trainpack
