#include "python/tags.h"

#include <utility>

namespace trainpack::python {

namespace {

std::string nodot(int major, int minor) { return std::to_string(major) + std::to_string(minor); }

// packaging's _is_threaded_cpython: the first abi is cp<digits><flags> with a "t" among the flags.
bool is_threaded_cpython(const std::vector<std::string>& abis) {
  if (abis.empty()) return false;
  std::string_view abi = abis.front();
  if (abi.size() < 3 || abi.substr(0, 2) != "cp" || !(abi[2] >= '0' && abi[2] <= '9')) return false;
  std::size_t i = 2;
  while (i < abi.size() && abi[i] >= '0' && abi[i] <= '9') ++i;
  return abi.substr(i).find('t') != std::string_view::npos;
}

void append_for_platforms(std::vector<Tag>& out, const std::string& interpreter, const std::string& abi,
                          const std::vector<std::string>& platforms) {
  for (const auto& p : platforms) out.push_back(Tag{interpreter, abi, p});
}

struct GlibcVersion {
  int major;
  int minor;
};

// _manylinux.platform_tags(archs)
void manylinux_platforms(const CPythonTarget& t, const std::vector<std::string>& archs,
                         std::vector<std::string>& out) {
  if (t.libc != Libc::glibc) return;  // _get_glibc_version() == (-1, -1): every version is "too new"
  auto has = [&](std::string_view a) {
    for (const auto& x : archs)
      if (x == a) return true;
    return false;
  };
  // _have_compatible_abi: armv7l and i686 depend on the interpreter's ELF header, others on a fixed list.
  if (has("armv7l") || has("i686")) {
    if (!t.elf_abi_compatible) return;
  } else {
    static const char* const allowed[] = {"x86_64", "aarch64", "ppc64", "ppc64le", "s390x", "loongarch64", "riscv64"};
    bool any = false;
    for (const char* a : allowed) any = any || has(a);
    if (!any) return;
  }
  // The oldest glibc manylinux covers: 2.17 everywhere, 2.5 on x86.
  GlibcVersion too_old{2, 16};
  if (has("x86_64") || has("i686")) too_old = {2, 4};
  const GlibcVersion current{t.libc_major, t.libc_minor};
  // Compatibility is assumed across glibc majors; packaging guesses 50 as the last minor of an older major.
  std::vector<GlibcVersion> max_list{current};
  for (int major = current.major - 1; major > 1; --major) max_list.push_back({major, 50});
  auto compatible = [&](GlibcVersion v) {
    return current.major != v.major ? current.major > v.major : current.minor >= v.minor;
  };
  for (const auto& arch : archs) {
    for (const auto& max : max_list) {
      const int min_minor = max.major == too_old.major ? too_old.minor : -1;
      for (int minor = max.minor; minor > min_minor; --minor) {
        const GlibcVersion v{max.major, minor};
        if (!compatible(v)) continue;
        out.push_back("manylinux_" + std::to_string(v.major) + "_" + std::to_string(v.minor) + "_" + arch);
        if (v.major == 2 && v.minor == 17) out.push_back("manylinux2014_" + arch);
        if (v.major == 2 && v.minor == 12) out.push_back("manylinux2010_" + arch);
        if (v.major == 2 && v.minor == 5) out.push_back("manylinux1_" + arch);
      }
    }
  }
}

// _musllinux.platform_tags(archs)
void musllinux_platforms(const CPythonTarget& t, const std::vector<std::string>& archs,
                         std::vector<std::string>& out) {
  if (t.libc != Libc::musl) return;
  for (const auto& arch : archs)
    for (int minor = t.libc_minor; minor >= 0; --minor)
      out.push_back("musllinux_" + std::to_string(t.libc_major) + "_" + std::to_string(minor) + "_" + arch);
}

}  // namespace

std::size_t TagHash::operator()(const Tag& t) const noexcept {
  std::hash<std::string> h;
  std::size_t seed = h(t.interpreter);
  seed ^= h(t.abi) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  seed ^= h(t.platform) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

std::vector<std::string> cpython_abis(const CPythonTarget& t) {
  const std::string version = nodot(t.major, t.minor);
  const bool before_3_8 = t.major < 3 || (t.major == 3 && t.minor < 8);
  const bool before_3_3 = t.major < 3 || (t.major == 3 && t.minor < 3);
  const bool after_3_13 = t.major > 3 || (t.major == 3 && t.minor >= 13);
  const std::string threading = after_3_13 && t.free_threaded ? "t" : "";
  const std::string debug = t.debug ? "d" : "";
  std::string pymalloc, ucs4;
  if (before_3_8) {
    if (t.pymalloc) pymalloc = "m";
    if (before_3_3 && t.wide_unicode) ucs4 = "u";
  }
  std::vector<std::string> abis{"cp" + version + threading + debug + pymalloc + ucs4};
  // Debug builds can also load ordinary extension modules.
  if (!before_3_8 && t.debug) abis.push_back("cp" + version + threading);
  return abis;
}

std::vector<std::string> linux_platforms(const CPythonTarget& t, const TagBehaviour& behaviour) {
  std::string arch = t.arch;
  if (t.is_32bit) {
    if (arch == "x86_64") arch = "i686";
    if (arch == "aarch64") arch = "armv8l";
  }
  // A 32-bit ARM interpreter on an ARMv8 kernel also runs armv7l binaries.
  std::vector<std::string> archs{arch};
  if (arch == "armv8l") archs.push_back("armv7l");

  std::vector<std::string> out;
  if (behaviour.linux_platform_first)
    for (const auto& a : archs) out.push_back("linux_" + a);
  manylinux_platforms(t, archs, out);
  musllinux_platforms(t, archs, out);
  if (!behaviour.linux_platform_first)
    for (const auto& a : archs) out.push_back("linux_" + a);
  return out;
}

std::vector<Tag> cpython_tags(int major, int minor, const std::vector<std::string>& abis_in,
                              const std::vector<std::string>& platforms, const TagBehaviour& behaviour) {
  const std::string interpreter = "cp" + nodot(major, minor);
  const bool threading = is_threaded_cpython(abis_in);
  // Stable ABIs and "none" are placed explicitly below (packaging removes only their first occurrence).
  std::vector<std::string> abis = abis_in;
  std::vector<std::string> explicit_abis{"abi3", "none"};
  if (threading && behaviour.free_threaded_abi3t) explicit_abis.insert(explicit_abis.begin() + 1, "abi3t");
  for (const auto& e : explicit_abis) {
    for (auto it = abis.begin(); it != abis.end(); ++it) {
      if (*it == e) {
        abis.erase(it);
        break;
      }
    }
  }

  std::vector<Tag> out;
  for (const auto& abi : abis) append_for_platforms(out, interpreter, abi, platforms);
  const bool stable_version = major > 3 || (major == 3 && minor >= 2);
  const bool use_abi3 = stable_version && !threading;
  const bool use_abi3t = stable_version && threading && behaviour.free_threaded_abi3t;
  if (use_abi3) append_for_platforms(out, interpreter, "abi3", platforms);
  if (use_abi3t) append_for_platforms(out, interpreter, "abi3t", platforms);
  append_for_platforms(out, interpreter, "none", platforms);
  if (use_abi3 || use_abi3t) {
    for (int m = minor - 1; m > 1; --m) {
      const std::string older = "cp" + nodot(major, m);
      for (const auto& p : platforms) {
        if (use_abi3) out.push_back(Tag{older, "abi3", p});
        if (use_abi3t) out.push_back(Tag{older, "abi3t", p});
      }
    }
  }
  return out;
}

std::vector<Tag> compatible_tags(int major, int minor, std::string_view interpreter,
                                 const std::vector<std::string>& platforms) {
  // _py_interpreter_range: py3XY, py3, py3(XY-1) ... py30.
  std::vector<std::string> versions{"py" + nodot(major, minor), "py" + std::to_string(major)};
  for (int m = minor - 1; m >= 0; --m) versions.push_back("py" + nodot(major, m));

  std::vector<Tag> out;
  out.reserve(versions.size() * (platforms.size() + 1) + 1);
  for (const auto& v : versions) append_for_platforms(out, v, "none", platforms);
  if (!interpreter.empty()) out.push_back(Tag{std::string(interpreter), "none", "any"});
  for (const auto& v : versions) out.push_back(Tag{v, "none", "any"});
  return out;
}

std::vector<Tag> sys_tags(const CPythonTarget& t, const TagBehaviour& behaviour) {
  const std::vector<std::string> platforms = linux_platforms(t, behaviour);
  std::vector<Tag> out = cpython_tags(t.major, t.minor, cpython_abis(t), platforms, behaviour);
  std::vector<Tag> compat = compatible_tags(t.major, t.minor, "cp" + nodot(t.major, t.minor), platforms);
  out.insert(out.end(), std::make_move_iterator(compat.begin()), std::make_move_iterator(compat.end()));
  return out;
}

TagPriority::TagPriority(std::vector<Tag> tags) : tags_(std::move(tags)) {
  index_.reserve(tags_.size());
  for (std::size_t i = 0; i < tags_.size(); ++i) index_.emplace(tags_[i], i);  // emplace keeps the first
}

std::optional<std::size_t> TagPriority::index(const Tag& tag) const {
  auto it = index_.find(tag);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> TagPriority::wheel_priority(const std::vector<Tag>& wheel_tags) const {
  std::optional<std::size_t> best;
  for (const auto& t : wheel_tags) {
    auto i = index(t);
    if (i && (!best || *i < *best)) best = i;
  }
  return best;
}

}  // namespace trainpack::python
