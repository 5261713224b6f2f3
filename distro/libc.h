#pragma once
// Which C library an image's programs load, and its version: the program interpreter (ELF PT_INTERP) names it
// (ld-musl-* is musl; ld-linux-*, ld64.so.*, ld.so.* glibc), the version comes from libc.so.6's banner, its
// libc-X.Y.so file name, or the package database (apk's musl, dpkg's libc6).
#include <optional>
#include <string>
#include <string_view>

#include "layers/image_filesystem.h"

namespace trainpack::distro {

struct Libc {
  std::string name;     // "glibc", "musl", or "" (static / unknown)
  std::string version;  // "2.36", "1.2.4", or "" when unknown
};

// `elf_interpreter` and `multiarch` ("x86_64-linux-gnu", may be "") as the interpreter's ELF and sysconfig say;
// the package databases as read_dpkg_status / read_apk_installed returned them (nullopt: not consulted).
Libc read_libc(const layers::ImageFilesystem& fs, std::string_view elf_interpreter, std::string_view multiarch,
               const std::optional<std::string>& dpkg_status, const std::optional<std::string>& apk_installed);

// "release version 2.36" inside libc.so.6 → "2.36"; "" when there is none. A plain scan: the file is megabytes.
std::string glibc_banner_version(std::string_view bytes);

}  // namespace trainpack::distro
