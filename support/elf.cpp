#include "support/elf.h"

#include "support/text.h"

namespace trainpack {
namespace {

// gABI constants (figure "Segment Types" and "Dynamic Array Tags").
constexpr std::uint32_t kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3;
constexpr std::uint64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10, kDtSoname = 14, kDtRpath = 15,
                        kDtRunpath = 29;

// Reads fixed-size fields of one ELF file's class and byte order; out-of-range reads give 0 and mark it bad.
class Reader {
 public:
  Reader(std::string_view bytes, bool is64, bool big) : b_(bytes), is64_(is64), big_(big) {}
  std::uint64_t uint(std::uint64_t at, std::size_t n) {
    if (at > b_.size() || n > b_.size() - at) {
      bad_ = true;
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(b_[at + (big_ ? i : n - 1 - i)]);
    return v;
  }
  // An Elf32_Addr/Off/Word-or-Xword field: 4 bytes in ELFCLASS32, 8 in ELFCLASS64.
  std::uint64_t word(std::uint64_t at) { return uint(at, is64_ ? 8 : 4); }
  bool bad() const { return bad_; }
  bool is64() const { return is64_; }
  std::string_view bytes() const { return b_; }

 private:
  std::string_view b_;
  bool is64_, big_;
  bool bad_ = false;
};

struct ProgramHeader {
  std::uint32_t type;
  std::uint64_t offset, vaddr, filesz;
};

std::vector<ProgramHeader> program_headers(Reader& r) {
  std::uint64_t phoff = r.is64() ? r.uint(0x20, 8) : r.uint(0x1C, 4);
  std::uint64_t phentsize = r.uint(r.is64() ? 0x36 : 0x2A, 2);
  std::uint64_t phnum = r.uint(r.is64() ? 0x38 : 0x2C, 2);
  std::vector<ProgramHeader> out;
  if (phentsize < (r.is64() ? 56u : 32u)) return out;
  for (std::uint64_t i = 0; i < phnum; ++i) {
    std::uint64_t at = phoff + i * phentsize;
    ProgramHeader ph{};
    ph.type = static_cast<std::uint32_t>(r.uint(at, 4));
    // Elf64_Phdr: type, flags, offset, vaddr, paddr, filesz; Elf32_Phdr: type, offset, vaddr, paddr, filesz.
    ph.offset = r.is64() ? r.uint(at + 8, 8) : r.uint(at + 4, 4);
    ph.vaddr = r.is64() ? r.uint(at + 16, 8) : r.uint(at + 8, 4);
    ph.filesz = r.is64() ? r.uint(at + 32, 8) : r.uint(at + 16, 4);
    if (r.bad()) break;
    out.push_back(ph);
  }
  return out;
}

std::string machine_name(std::uint16_t code, bool is64, bool big) {
  switch (code) {
    case 62: return "x86_64";
    case 183: return "aarch64";
    case 3: return "i686";
    case 40: return "armv7l";
    case 21: return big ? "ppc64" : "ppc64le";
    case 22: return is64 ? "s390x" : "s390";
    case 243: return is64 ? "riscv64" : "riscv32";
    case 258: return "loongarch64";
    default: return {};
  }
}

// The NUL-terminated string at file offset `at`, or nullopt past the end.
std::optional<std::string> c_string(std::string_view b, std::uint64_t at, std::uint64_t limit) {
  if (at >= b.size() || at >= limit) return std::nullopt;
  std::size_t end = b.find('\0', at);
  if (end == std::string_view::npos || end > limit) return std::nullopt;
  return std::string(b.substr(at, end - at));
}

// A virtual address inside a PT_LOAD segment's file image, as a file offset (gABI "Program Header").
std::optional<std::uint64_t> file_offset(const std::vector<ProgramHeader>& phs, std::uint64_t vaddr) {
  for (const ProgramHeader& ph : phs)
    if (ph.type == kPtLoad && vaddr >= ph.vaddr && vaddr - ph.vaddr < ph.filesz) return vaddr - ph.vaddr + ph.offset;
  return std::nullopt;
}

// Whether [offset, offset + size) lies inside the bytes (without overflowing).
bool within(std::string_view b, std::uint64_t offset, std::uint64_t size) {
  return offset <= b.size() && size <= b.size() - offset;
}

// The dynamic array of PT_DYNAMIC: (tag, value) pairs up to DT_NULL.
std::vector<std::pair<std::uint64_t, std::uint64_t>> dynamic_entries(Reader& r, const ProgramHeader& dyn) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  const std::uint64_t entry = r.is64() ? 16 : 8;
  for (std::uint64_t at = dyn.offset; at + entry <= dyn.offset + dyn.filesz; at += entry) {
    std::uint64_t tag = r.word(at);
    std::uint64_t value = r.word(at + entry / 2);
    if (r.bad() || tag == kDtNull) break;
    out.emplace_back(tag, value);
  }
  return out;
}

void read_dynamic(Reader& r, const std::vector<ProgramHeader>& phs, ElfFile& out) {
  const ProgramHeader* dyn = nullptr;
  for (const ProgramHeader& ph : phs)
    if (ph.type == kPtDynamic) dyn = &ph;
  if (!dyn || !within(r.bytes(), dyn->offset, dyn->filesz)) return;
  auto entries = dynamic_entries(r, *dyn);
  std::uint64_t strtab = 0, strsz = 0;
  for (const auto& [tag, value] : entries) {
    if (tag == kDtStrtab) strtab = value;
    if (tag == kDtStrsz) strsz = value;
  }
  std::optional<std::uint64_t> table = file_offset(phs, strtab);
  if (!table || !within(r.bytes(), *table, strsz)) return;
  for (const auto& [tag, value] : entries) {
    if (tag != kDtNeeded && tag != kDtSoname && tag != kDtRpath && tag != kDtRunpath) continue;
    std::optional<std::string> s = c_string(r.bytes(), *table + value, *table + strsz);
    if (!s) return;
    if (tag == kDtNeeded) out.needed.push_back(*s);
    else if (tag == kDtSoname) out.soname = *s;
    else if (tag == kDtRpath) out.rpath = split_nonempty(*s, ":");
    else out.runpath = split_nonempty(*s, ":");
  }
  out.has_dynamic = true;
}

}  // namespace

std::optional<ElfFile> parse_elf(std::string_view b) {
  if (b.size() < 52 || b.substr(0, 4) != "\x7f" "ELF") return std::nullopt;
  if ((b[4] != 1 && b[4] != 2) || (b[5] != 1 && b[5] != 2) || (b[4] == 2 && b.size() < 64)) return std::nullopt;
  ElfFile out;
  out.is64 = b[4] == 2;  // EI_CLASS: ELFCLASS64
  out.big_endian = b[5] == 2;  // EI_DATA: ELFDATA2MSB
  Reader r(b, out.is64, out.big_endian);
  out.machine_code = static_cast<std::uint16_t>(r.uint(0x12, 2));
  out.machine = machine_name(out.machine_code, out.is64, out.big_endian);
  std::vector<ProgramHeader> phs = program_headers(r);
  for (const ProgramHeader& ph : phs) {
    if (ph.type != kPtInterp || !within(b, ph.offset, ph.filesz)) continue;
    std::string s(b.substr(ph.offset, ph.filesz));
    while (!s.empty() && s.back() == '\0') s.pop_back();
    out.interpreter = s;
    break;
  }
  read_dynamic(r, phs, out);
  return out;
}

}  // namespace trainpack
