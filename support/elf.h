#pragma once
// What trainpack reads from ELF files (System V ABI, "gABI" chapters 4 "Object Files" and 5 "Program Loading and
// Dynamic Linking"): the machine, the program interpreter (PT_INTERP) and the dynamic section's DT_NEEDED,
// DT_RPATH, DT_RUNPATH and DT_SONAME strings. Only the file's bytes are read; nothing is loaded or run.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainpack {

struct ElfFile {
  bool is64 = false;
  bool big_endian = false;
  std::uint16_t machine_code = 0;  // e_machine (EM_X86_64 = 62, EM_AARCH64 = 183, ...)
  std::string machine;             // platform.machine() spelling: "x86_64", "aarch64", "armv7l"; "" when unknown
  std::string interpreter;         // PT_INTERP: "/lib64/ld-linux-x86-64.so.2"; "" for a static file or a library
  // The dynamic section; has_dynamic is false when there is none or when `bytes` stopped before it.
  bool has_dynamic = false;
  std::vector<std::string> needed;   // DT_NEEDED, in order
  std::vector<std::string> rpath;    // DT_RPATH split at ':' (used only when there is no DT_RUNPATH)
  std::vector<std::string> runpath;  // DT_RUNPATH split at ':'
  std::string soname;                // DT_SONAME
};

// Parses an ELF file from its first bytes (the header and PT_INTERP sit near the start; the dynamic section needs
// the whole file). nullopt when the bytes are not ELF.
std::optional<ElfFile> parse_elf(std::string_view bytes);

}  // namespace trainpack
