#include "distro/libc.h"

#include <vector>

#include "distro/package_db.h"
#include "support/paths.h"

namespace trainpack::distro {
namespace {

constexpr std::size_t kMaxLibc = 64u << 20;  // libc.so.6 is ~2 MB

// An image path as the filesystem view takes it: relative to the root, empty and "." components dropped.
std::string relative(std::string_view path) {
  std::string out;
  for (std::string_view c : path_components(path)) {
    if (!out.empty()) out += '/';
    out += c;
  }
  return out;
}

std::string glibc_version(const layers::ImageFilesystem& fs, std::string_view elf_interpreter,
                          std::string_view multiarch, const std::optional<std::string>& dpkg_status) {
  std::string loader_dir(path_dir(fs.resolve(relative(elf_interpreter))));
  std::vector<std::string> candidates = {relative(join_path(loader_dir, "libc.so.6"))};
  for (const char* d : {"lib", "usr/lib"})
    if (!multiarch.empty()) candidates.push_back(relative(std::string(d) + "/" + std::string(multiarch) + "/libc.so.6"));
  for (const char* p : {"lib64/libc.so.6", "usr/lib64/libc.so.6", "lib/libc.so.6", "usr/lib/libc.so.6"})
    candidates.push_back(p);
  std::string version;
  for (const std::string& p : candidates) {
    if (!fs.is_file(p)) continue;
    if (auto bytes = fs.read(p, kMaxLibc)) version = glibc_banner_version(*bytes);
    if (version.empty()) {  // older glibc: libc.so.6 -> libc-2.31.so
      std::string target(path_base(fs.resolve(p)));
      if (target.starts_with("libc-") && target.ends_with(".so")) version = target.substr(5, target.size() - 8);
    }
    break;
  }
  if (version.empty() && dpkg_status) {
    std::string v = upstream_version(dpkg_version(*dpkg_status, "libc6"));
    if (!v.empty()) version = v;
  }
  return version;
}

}  // namespace

std::string glibc_banner_version(std::string_view bytes) {
  constexpr std::string_view kNeedle = "release version ";
  for (std::size_t at = bytes.find(kNeedle); at != std::string_view::npos; at = bytes.find(kNeedle, at + 1)) {
    std::size_t i = at + kNeedle.size();
    std::size_t j = i;
    while (j < bytes.size() && bytes[j] >= '0' && bytes[j] <= '9') ++j;
    if (j == i || j >= bytes.size() || bytes[j] != '.') continue;
    std::size_t k = j + 1;
    while (k < bytes.size() && bytes[k] >= '0' && bytes[k] <= '9') ++k;
    if (k == j + 1) continue;
    return std::string(bytes.substr(i, k - i));
  }
  return {};
}

Libc read_libc(const layers::ImageFilesystem& fs, std::string_view elf_interpreter, std::string_view multiarch,
               const std::optional<std::string>& dpkg_status, const std::optional<std::string>& apk_installed) {
  Libc out;
  if (elf_interpreter.find("ld-musl") != std::string_view::npos) {
    out.name = "musl";
    if (apk_installed) out.version = upstream_version(apk_version(*apk_installed, "musl"));
  } else if (elf_interpreter.find("ld-linux") != std::string_view::npos ||
             elf_interpreter.find("ld64.so") != std::string_view::npos ||
             elf_interpreter.find("ld.so") != std::string_view::npos) {
    out.name = "glibc";
    out.version = glibc_version(fs, elf_interpreter, multiarch, dpkg_status);
  }
  return out;
}

}  // namespace trainpack::distro
