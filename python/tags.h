#pragma once
// Wheel compatibility tags (PEP 425/600/656) for a Linux CPython target described by data, never by the host:
// the ordered list pip's bundled packaging (`tags.py` cpython_tags + compatible_tags, `_manylinux.py`,
// `_musllinux.py`) would compute inside the target image, and the tag -> priority lookup pip sorts wheels with.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trainpack::python {

struct Tag {
  std::string interpreter;  // "cp311", "py3"
  std::string abi;          // "cp311", "abi3", "none"
  std::string platform;     // "manylinux_2_17_x86_64", "any"

  std::string str() const { return interpreter + "-" + abi + "-" + platform; }
  bool operator==(const Tag&) const = default;
};

struct TagHash {
  std::size_t operator()(const Tag& t) const noexcept;
};

enum class Libc { none, glibc, musl };

// What packaging reads from the running interpreter, as data.
struct CPythonTarget {
  int major = 3;
  int minor = 0;
  bool debug = false;          // Py_DEBUG: abi "cp3XYd" (3.8+: then plain "cp3XY" too)
  bool free_threaded = false;  // Py_GIL_DISABLED (3.13+): abi "cp3XYt"
  bool pymalloc = true;        // WITH_PYMALLOC, only meaningful before 3.8 ("cp37m")
  bool wide_unicode = true;    // Py_UNICODE_SIZE == 4, only meaningful before 3.3 ("cp32mu")

  Libc libc = Libc::glibc;
  int libc_major = 0;  // glibc 2.31 -> 2, 31; musl 1.2 -> 1, 2
  int libc_minor = 0;

  // sysconfig.get_platform() without "linux-": x86_64, aarch64, i686, armv7l, ppc64le, s390x, riscv64, loongarch64...
  std::string arch;
  // A 32-bit interpreter on a 64-bit platform (x86_64 -> i686, aarch64 -> armv8l + armv7l).
  bool is_32bit = false;
  // packaging reads the interpreter's ELF header for i686 (EM_386) and armv7l (hard-float EABI5); without a match
  // it offers no manylinux tags. Data here: true for ordinary i386 / armhf images.
  bool elf_abi_compatible = true;
};

// Where pip's bundled packaging differs between releases.
struct TagBehaviour {
  // packaging >= 26.3 puts linux_<arch> before manylinux/musllinux; <= 26.2 (pip <= 26.2, uv) puts it last.
  bool linux_platform_first = false;
  // packaging >= 26.1 (PEP 803) offers cp3XY-abi3t-* to free-threaded builds; before, they get no stable ABI.
  bool free_threaded_abi3t = true;
};

// The abi list packaging's _cpython_abis() yields ("cp311"; debug "cp311d", "cp311"; "cp37m"; "cp313t").
std::vector<std::string> cpython_abis(const CPythonTarget& target);

// packaging.tags._linux_platforms(): manylinux ladder (manylinux_2_y down to 2_5 on x86_64/i686, 2_17 elsewhere,
// with manylinux2014/2010/1 right after 2_17/2_12/2_5), musllinux_1_y down to 1_0, and linux_<arch>.
std::vector<std::string> linux_platforms(const CPythonTarget& target, const TagBehaviour& behaviour = {});

// packaging.tags.cpython_tags(python_version=(major, minor), abis, platforms). "abi3"/"none" in `abis` are
// dropped (they are placed where packaging places them; also "abi3t" for a free-threaded first abi).
std::vector<Tag> cpython_tags(int major, int minor, const std::vector<std::string>& abis,
                              const std::vector<std::string>& platforms, const TagBehaviour& behaviour = {});

// packaging.tags.compatible_tags(python_version=(major, minor), interpreter, platforms).
std::vector<Tag> compatible_tags(int major, int minor, std::string_view interpreter,
                                 const std::vector<std::string>& platforms);

// sys_tags() inside the target: cpython_tags then compatible_tags(interpreter="cp3XY"). Best first.
std::vector<Tag> sys_tags(const CPythonTarget& target, const TagBehaviour& behaviour = {});

// A tag list with O(1) lookup of a tag's position (lower = better), as pip's Wheel.support_index_min.
class TagPriority {
 public:
  explicit TagPriority(std::vector<Tag> tags);

  const std::vector<Tag>& tags() const { return tags_; }
  // Index of the tag; nullopt when the target does not support it. Duplicates keep their first index.
  std::optional<std::size_t> index(const Tag& tag) const;
  // Min index over a wheel's expanded tags; nullopt when none is supported (the wheel is not compatible).
  std::optional<std::size_t> wheel_priority(const std::vector<Tag>& wheel_tags) const;

 private:
  std::vector<Tag> tags_;
  std::unordered_map<Tag, std::size_t, TagHash> index_;
};

}  // namespace trainpack::python
