#include "distro/users.h"

#include "support/text.h"

namespace trainpack::distro {
namespace {

// The ':'-separated fields of each line that is not empty or a comment.
std::vector<std::vector<std::string_view>> colon_rows(std::string_view text) {
  std::vector<std::vector<std::string_view>> rows;
  for (std::string_view line : split_lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string_view> fields;
    std::size_t start = 0;
    while (true) {
      std::size_t colon = line.find(':', start);
      fields.push_back(line.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    rows.push_back(std::move(fields));
  }
  return rows;
}

}  // namespace

std::optional<std::uint32_t> parse_id(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  unsigned long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 0xFFFFFFFEul) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

std::vector<PasswdEntry> parse_passwd(std::string_view text) {
  std::vector<PasswdEntry> out;
  for (const auto& r : colon_rows(text)) {
    if (r.size() < 4) continue;
    auto uid = parse_id(r[2]), gid = parse_id(r[3]);
    if (!uid || !gid) continue;
    out.push_back({std::string(r[0]), *uid, *gid, r.size() >= 6 ? std::string(r[5]) : std::string()});
  }
  return out;
}

std::vector<GroupEntry> parse_group(std::string_view text) {
  std::vector<GroupEntry> out;
  for (const auto& r : colon_rows(text)) {
    if (r.size() < 3) continue;
    auto gid = parse_id(r[2]);
    if (!gid) continue;
    GroupEntry g{std::string(r[0]), *gid, {}};
    if (r.size() >= 4)
      for (std::string& m : split_nonempty(r[3], ",")) g.members.push_back(std::move(m));
    out.push_back(std::move(g));
  }
  return out;
}

const PasswdEntry* find_user(const std::vector<PasswdEntry>& passwd, std::string_view user) {
  std::optional<std::uint32_t> uid = parse_id(user);
  for (const PasswdEntry& e : passwd)
    if (uid ? e.uid == *uid : e.name == user) return &e;
  return nullptr;
}

const GroupEntry* find_group(const std::vector<GroupEntry>& groups, std::string_view group) {
  std::optional<std::uint32_t> gid = parse_id(group);
  for (const GroupEntry& g : groups)
    if (gid ? g.gid == *gid : g.name == group) return &g;
  return nullptr;
}

}  // namespace trainpack::distro
