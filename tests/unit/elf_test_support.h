#pragma once
// Synthetic ELF files for tests: the parts trainpack reads (header, PT_INTERP, the dynamic section), laid out as the
// System V gABI describes them; and the loader of a Debian root around them.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "layers/memory_filesystem.h"

namespace trainpack::test_support {

// Little- or big-endian integers appended to a byte string.
struct ElfBytes {
  std::string data;
  bool big = false;
  void put(std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t shift = 8 * (big ? n - 1 - i : i);
      data += static_cast<char>((v >> shift) & 0xff);
    }
  }
  void pad_to(std::size_t size) { data.resize(size, '\0'); }
};

struct DynamicSpec {
  std::string interp;
  std::vector<std::string> needed;
  std::string runpath, rpath, soname;
};

// An ELFCLASS64 file: header, three program headers (PT_LOAD over the whole file at vaddr 0x400000, PT_INTERP,
// PT_DYNAMIC), the interpreter string, the string table, then the dynamic array.
inline std::string make_elf64(const DynamicSpec& spec, bool big = false, std::uint16_t machine = 62) {
  constexpr std::uint64_t kBase = 0x400000, kPhoff = 64, kPhnum = 3, kInterpAt = kPhoff + 56 * kPhnum;
  std::string strtab(1, '\0');
  auto add_string = [&strtab](const std::string& s) {
    std::uint64_t at = strtab.size();
    strtab += s + '\0';
    return at;
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> dyn;
  for (const auto& n : spec.needed) dyn.emplace_back(1, add_string(n));
  if (!spec.soname.empty()) dyn.emplace_back(14, add_string(spec.soname));
  if (!spec.rpath.empty()) dyn.emplace_back(15, add_string(spec.rpath));
  if (!spec.runpath.empty()) dyn.emplace_back(29, add_string(spec.runpath));
  const std::uint64_t strtab_at = kInterpAt + spec.interp.size() + 1;
  const std::uint64_t dyn_at = (strtab_at + strtab.size() + 7) / 8 * 8;
  dyn.emplace_back(5, kBase + strtab_at);
  dyn.emplace_back(10, strtab.size());
  dyn.emplace_back(0, 0);
  const std::uint64_t size = dyn_at + 16 * dyn.size();

  ElfBytes b;
  b.big = big;
  b.data = std::string("\x7f" "ELF", 4) + char(2) + char(big ? 2 : 1) + char(1);
  b.pad_to(16);
  b.put(3, 2);  // e_type ET_DYN
  b.put(machine, 2);
  b.put(1, 4);
  b.put(0, 8);  // e_entry
  b.put(kPhoff, 8);
  b.put(0, 8);  // e_shoff
  b.put(0, 4);
  b.put(64, 2);
  b.put(56, 2);
  b.put(kPhnum, 2);
  b.put(0, 6);
  auto phdr = [&b](std::uint32_t type, std::uint64_t offset, std::uint64_t vaddr, std::uint64_t filesz) {
    b.put(type, 4);
    b.put(0, 4);
    b.put(offset, 8);
    b.put(vaddr, 8);
    b.put(vaddr, 8);
    b.put(filesz, 8);
    b.put(filesz, 8);
    b.put(8, 8);
  };
  phdr(1, 0, kBase, size);
  phdr(3, kInterpAt, kBase + kInterpAt, spec.interp.size() + 1);
  phdr(2, dyn_at, kBase + dyn_at, 16 * dyn.size());
  b.data += spec.interp + '\0';
  b.data += strtab;
  b.pad_to(dyn_at);
  for (const auto& [tag, value] : dyn) {
    b.put(tag, 8);
    b.put(value, 8);
  }
  return b.data;
}


// Debian 11's loader in a merged /usr: /lib -> usr/lib, /lib64 -> usr/lib64, and PT_INTERP's
// /lib64/ld-linux-x86-64.so.2 an absolute symlink to /lib/x86_64-linux-gnu/ld-2.31.so.
inline void add_debian11_loader(layers::MemoryFilesystem& fs) {
  fs.add_symlink("lib", "usr/lib");
  fs.add_symlink("lib64", "usr/lib64");
  fs.add_file("usr/lib/x86_64-linux-gnu/ld-2.31.so", "loader", 0755);
  fs.add_symlink("usr/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-2.31.so");
}

}  // namespace trainpack::test_support
