#include "python/wheel_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "python/names.h"
#include "python/text.h"
#include "support/error.h"
#include "support/human.h"
#include "support/text.h"
#include "support/utf8.h"

namespace trainpack::python {
namespace {

constexpr std::uint64_t kMaxMetadataFile = 64u << 20;  // WHEEL, entry_points.txt, RECORD are read into memory
constexpr std::uint64_t kMaxCoreMetadata = 16u << 20;  // METADATA the resolver reads
// Deflate cannot exceed ~1032:1; a larger declared ratio on a member of some size is a bomb (or bzip2/lzma
// abuse) that pip would happily expand.
constexpr std::uint64_t kRatioCheckFrom = 1u << 20;
constexpr std::uint64_t kMaxRatio = 2000;

// Names that could escape the install dirs or mean different files on different systems.
void check_member_name(const std::string& name, const std::string& wheel) {
  auto bad = [&](const char* why) {
    throw Error(wheel + ": unsafe file name \"" + name + "\" in the wheel (" + why + ")",
                "the wheel is malformed or malicious; pip-compatible wheels use relative '/'-separated names");
  };
  if (name.empty()) bad("empty");
  if (name.front() == '/') bad("absolute path");
  if (name.find('\\') != std::string::npos) bad("backslash");
  if (name.size() >= 2 && name[1] == ':' &&
      ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')))
    bad("drive letter");
  std::string_view rest(name);
  if (rest.back() == '/') rest.remove_suffix(1);  // a directory entry
  std::size_t start = 0;
  while (start <= rest.size()) {
    std::size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view c = rest.substr(start, end - start);
    if (c == "..") bad("'..' component");
    if (c.empty() || c == ".") bad("empty or '.' component");
    start = end + 1;
  }
}

// WHEEL through email.parser.Parser (compat32): "Name: value" headers up to the first blank line, continuation
// lines start with space or tab; the value is left-stripped of spaces/tabs and right-stripped of CR/LF only.
// First occurrence wins, names are case-insensitive.
std::map<std::string, std::string> parse_wheel_file(std::string_view text) {
  std::map<std::string, std::string> headers;
  std::string name, value;
  bool have = false;
  auto flush = [&] {
    if (!have) return;
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    headers.try_emplace(ascii_lower(name), value);
    have = false;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos + 1);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view bare = line;
    while (!bare.empty() && (bare.back() == '\n' || bare.back() == '\r')) bare.remove_suffix(1);
    if (bare.empty()) break;  // end of headers
    if (bare.front() == ' ' || bare.front() == '\t') {
      if (have) value += line;
      continue;
    }
    auto colon = bare.find(':');
    if (colon == std::string_view::npos || colon == 0) break;  // not a header: the body starts
    flush();
    name = std::string(bare.substr(0, colon));
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    value = std::string(v);
    have = true;
  }
  flush();
  return headers;
}

// Wheel-Version's numbers, as pip's wheel_version reads them (tuple(map(int, version.split(".")))).
std::vector<long> wheel_version_parts(std::string_view text, const std::string& where) {
  std::vector<long> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = text.find('.', start);
    std::string_view part = py_strip(text.substr(start, dot == std::string_view::npos ? text.npos : dot - start));
    if (part.empty() || part.size() > 9 || !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw Error(where + "invalid wheel: invalid Wheel-Version: '" + std::string(text) + "'");
    parts.push_back(std::stol(std::string(part)));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

}  // namespace

bool WheelMember::executable() const { return mode != 0 && S_ISREG(mode) && (mode & 0111) != 0; }

WheelFile::WheelFile(const std::filesystem::path& path, const std::string& project_name)
    : path_(path),
      name_(path.filename().string()),
      where_(name_ + ": "),
      zip_(path, "wheel " + path.string(), "the file is not a valid zip archive") {
  for (std::uint64_t i = 0, count = zip_.entry_count(); i < count; ++i) add_member(i);
  find_dist_info_dir(project_name);
}

// One member, in central-directory order, checked for safety.
void WheelFile::add_member(std::uint64_t index) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(zip_.get(), index, ZIP_FL_ENC_STRICT, &st) != 0 || !st.name)
    throw Error("cannot read the zip directory of " + path_.string() + ": " + zip_.error());
  WheelMember m;
  m.name = st.name;
  m.index = index;
  m.size = st.size;
  check_member_name(m.name, name_);
  if (!by_name_.emplace(m.name, members_.size()).second)
    throw Error(where_ + "duplicate file name \"" + m.name + "\" in the wheel",
                "the wheel is malformed; which copy an installer picks is undefined");
  if (st.encryption_method != ZIP_EM_NONE) throw Error(where_ + m.name + " is encrypted");
  if (!zip_compression_method_supported(st.comp_method, 0))
    throw Error(where_ + m.name + " uses an unsupported compression method (" + std::to_string(st.comp_method) + ")");
  if (m.size > 0 && st.comp_size == 0) throw Error(where_ + m.name + " declares data but no compressed bytes");
  if (m.size >= kRatioCheckFrom && m.size / st.comp_size > kMaxRatio)
    throw Error(where_ + m.name + " expands " + std::to_string(m.size / st.comp_size) +
                    ":1 (" + human_bytes(m.size) + "), which looks like a zip bomb",
                "refusing to install it; check where the wheel came from");
  zip_uint8_t opsys;
  zip_uint32_t attr = 0;
  if (zip_file_get_external_attributes(zip_.get(), m.index, 0, &opsys, &attr) == 0) m.mode = attr >> 16;
  members_.push_back(std::move(m));
}

// pip's wheel_dist_info_dir: exactly one top-level *.dist-info, starting with the project's canonical name.
void WheelFile::find_dist_info_dir(const std::string& project_name) {
  std::set<std::string> top_level;
  for (const WheelMember& m : members_) top_level.insert(m.name.substr(0, m.name.find('/')));
  std::vector<std::string> info_dirs;
  for (const std::string& t : top_level)
    if (t.ends_with(".dist-info")) info_dirs.push_back(t);
  if (info_dirs.empty()) throw Error(where_ + "invalid wheel: .dist-info directory not found");
  if (info_dirs.size() > 1) {
    std::string all;
    for (const auto& d : info_dirs) all += (all.empty() ? "" : ", ") + d;
    throw Error(where_ + "invalid wheel: multiple .dist-info directories found: " + all);
  }
  dist_info_dir_ = info_dirs.front();
  if (!canonicalize_name(dist_info_dir_).starts_with(canonicalize_name(project_name)))
    throw Error(where_ + "invalid wheel: .dist-info directory '" + dist_info_dir_ + "' does not start with '" +
                canonicalize_name(project_name) + "'");
}

const WheelMember* WheelFile::member(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &members_[it->second];
}

std::optional<std::string> WheelFile::read_dist_info(std::string_view file) const {
  const WheelMember* m = member(dist_info_dir_ + "/" + std::string(file));
  if (!m) return std::nullopt;
  return read(*m, kMaxMetadataFile);
}

std::string WheelFile::read(const WheelMember& m, std::uint64_t limit) const {
  if (m.size > limit) throw Error(name_ + ": " + m.name + " is too large (" + human_bytes(m.size) + ")");
  ZipArchive::Member f = zip_.open_member(m.index);
  if (!f) throw Error("cannot read " + m.name + " from " + name_ + ": " + zip_.error());
  std::string out(m.size, '\0');
  std::uint64_t done = 0;
  while (done < m.size) {
    zip_int64_t n = zip_fread(f.get(), out.data() + done, m.size - done);
    if (n < 0) throw Error("cannot read " + m.name + " from " + name_ + ": " + zip_file_strerror(f.get()));
    if (n == 0) break;
    done += static_cast<std::uint64_t>(n);
  }
  char extra;
  if (done != m.size || zip_fread(f.get(), &extra, 1) != 0)
    throw Error(name_ + ": " + m.name + " is not the size its zip directory declares",
                "the wheel is corrupt; download it again");
  return out;
}

std::string WheelFile::read_prefix(const WheelMember& m, std::size_t n) const {
  ZipArchive::Member f = zip_.open_member(m.index);
  if (!f) throw Error("cannot read " + m.name + " from " + name_ + ": " + zip_.error());
  std::string out(n, '\0');
  std::size_t done = 0;
  while (done < n) {
    zip_int64_t got = zip_fread(f.get(), out.data() + done, n - done);
    if (got < 0) throw Error("cannot read " + m.name + " from " + name_ + ": " + zip_file_strerror(f.get()));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  out.resize(done);
  return out;
}

WheelMetadata read_wheel_metadata_file(const WheelFile& wheel) {
  const std::string& where = wheel.where();
  std::optional<std::string> text = wheel.read_dist_info("WHEEL");
  if (!text) throw Error(where + "invalid wheel: " + wheel.dist_info_dir() + "/WHEEL is missing");
  if (!is_utf8(*text)) throw Error(where + "invalid wheel: WHEEL is not UTF-8");
  auto headers = parse_wheel_file(*text);
  auto wv = headers.find("wheel-version");
  if (wv == headers.end()) throw Error(where + "invalid wheel: WHEEL is missing Wheel-Version");
  std::string version(py_strip(wv->second));
  std::vector<long> parts = wheel_version_parts(version, where);
  if (parts[0] > 1)
    throw Error(where + "Wheel-Version " + version + " is not compatible with this installer (pip supports 1.x)",
                "use an older release of the package built as a 1.x wheel");
  WheelMetadata out;
  // pip: tuple(version) > (1, 0), so "1.0.0" warns too.
  if (parts[0] == 1 && parts.size() >= 2 && (parts[1] > 0 || parts.size() > 2))
    out.warnings.push_back(where + "installing from a newer Wheel-Version (" + version + ")");
  auto purelib = headers.find("root-is-purelib");
  out.root_is_purelib = purelib != headers.end() && ascii_lower(purelib->second) == "true";
  return out;
}

std::string read_wheel_metadata(const std::filesystem::path& wheel, const std::string& display) {
  std::string reason;
  std::optional<ZipArchive> zip = ZipArchive::try_open(wheel, reason);
  if (!zip) throw Error("cannot open the wheel " + display, "the download is not a zip archive");
  return read_wheel_metadata(*zip, display);
}

std::string read_wheel_metadata(const ZipArchive& zip, const std::string& display) {
  for (std::uint64_t i = 0, n = zip.entry_count(); i < n; ++i) {
    const char* name = zip_get_name(zip.get(), i, ZIP_FL_ENC_STRICT);
    if (!name) continue;
    std::string_view s(name);
    auto slash = s.find('/');
    if (slash == std::string_view::npos || !s.substr(0, slash).ends_with(".dist-info") ||
        s.substr(slash + 1) != "METADATA")
      continue;
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip.get(), i, 0, &st) != 0 || st.size > kMaxCoreMetadata)
      throw Error(display + ": METADATA is unreadable or too large");
    ZipArchive::Member f = zip.open_member(i);
    std::string out(st.size, '\0');
    zip_int64_t got = f ? zip_fread(f.get(), out.data(), st.size) : -1;
    if (got != static_cast<zip_int64_t>(st.size)) {
      zip.rethrow_source_failure();
      throw Error(display + ": cannot read METADATA");
    }
    return out;
  }
  throw Error(display + " has no .dist-info/METADATA", "the wheel is malformed");
}

}  // namespace trainpack::python
