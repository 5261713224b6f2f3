#pragma once
// The image's accounts: passwd(5) and group(5) lines, and the lookup of a config User ("name", "uid",
// "name:group", "uid:gid") as docker and runc do it (moby/sys/user GetExecUser: a numeric user is a uid, anything
// else a name).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack::distro {

struct PasswdEntry {
  std::string name;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string home;  // "" when the line has no home field
};

struct GroupEntry {
  std::string name;
  std::uint32_t gid = 0;
  std::vector<std::string> members;
};

// A uid or gid: decimal digits up to 4294967294 (the top value is (uid_t)-1).
std::optional<std::uint32_t> parse_id(std::string_view text);

// Lines with a numeric uid and gid (at least four fields); comments and other lines skipped.
std::vector<PasswdEntry> parse_passwd(std::string_view text);
// Lines with a numeric gid (at least three fields); members from the fourth, comma-separated.
std::vector<GroupEntry> parse_group(std::string_view text);

// The account a config user names (the part before ':'), by uid when numeric, else by name.
const PasswdEntry* find_user(const std::vector<PasswdEntry>& passwd, std::string_view user);
// The group, by gid when numeric, else by name.
const GroupEntry* find_group(const std::vector<GroupEntry>& groups, std::string_view group);

}  // namespace trainpack::distro
