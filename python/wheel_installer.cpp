#include "python/wheel_installer.h"

#include <zip.h>

#include <algorithm>
#include <map>
#include <memory>
#include <sys/stat.h>

#include "image/digest.h"
#include "python/metadata.h"
#include "python/names.h"
#include "python/text.h"
#include "registry/auth_encoding.h"
#include "support/error.h"
#include "support/paths.h"
#include "support/text.h"

namespace trainpack::python {
namespace {

constexpr std::uint64_t kMaxMetadataFile = 64u << 20;  // WHEEL, entry_points.txt, RECORD are read into memory
constexpr std::uint64_t kMaxRewrittenScript = 64u << 20;  // a #!python script is rewritten in memory
// Deflate cannot exceed ~1032:1; a larger declared ratio on a member of some size is a bomb (or bzip2/lzma
// abuse) that pip would happily expand.
constexpr std::uint64_t kRatioCheckFrom = 1u << 20;
constexpr std::uint64_t kMaxRatio = 2000;

// ---------------------------------------------------------------------------------------------------------------
// Paths. Scheme paths are absolute in-image paths; entries are relative to "/".

std::string normalize_abs(std::string_view path) {
  std::vector<std::string_view> parts;
  for (std::string_view c : path_components(path)) {
    if (c == "..") {
      if (!parts.empty()) parts.pop_back();
    } else {
      parts.push_back(c);
    }
  }
  std::string out;
  for (std::string_view c : parts) (out += '/') += c;
  return out.empty() ? "/" : out;
}

// os.path.relpath(target, base) for normalized absolute paths, with "/".
std::string relpath(std::string_view target, std::string_view base) {
  auto t = path_components(target);
  auto b = path_components(base);
  std::size_t common = 0;
  while (common < t.size() && common < b.size() && t[common] == b[common]) ++common;
  std::string out;
  for (std::size_t i = common; i < b.size(); ++i) out += out.empty() ? ".." : "/..";
  for (std::size_t i = common; i < t.size(); ++i) {
    if (!out.empty()) out += '/';
    out += t[i];
  }
  return out.empty() ? "." : out;
}

std::string entry_path(std::string_view abs) { return std::string(abs.substr(abs.find_first_not_of('/'))); }

// ---------------------------------------------------------------------------------------------------------------
// The zip.

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;

struct Member {
  std::string name;  // decoded like Python's zipfile (UTF-8 when flagged, else CP437)
  zip_uint64_t index = 0;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  // external_attr >> 16
};

std::string wheel_error_prefix(const WheelInstallRequest& r) { return r.wheel.filename().string() + ": "; }

std::string read_member(zip_t* za, const Member& m, std::uint64_t limit, const std::string& wheel) {
  if (m.size > limit) throw Error(wheel + ": " + m.name + " is too large (" + std::to_string(m.size) + " bytes)");
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(za, m.index, 0), &zip_fclose);
  if (!f) throw Error("cannot read " + m.name + " from " + wheel + ": " + zip_strerror(za));
  std::string out(m.size, '\0');
  std::uint64_t done = 0;
  while (done < m.size) {
    zip_int64_t n = zip_fread(f.get(), out.data() + done, m.size - done);
    if (n < 0) throw Error("cannot read " + m.name + " from " + wheel + ": " + zip_file_strerror(f.get()));
    if (n == 0) break;
    done += static_cast<std::uint64_t>(n);
  }
  char extra;
  if (done != m.size || zip_fread(f.get(), &extra, 1) != 0)
    throw Error(wheel + ": " + m.name + " is not the size its zip directory declares",
                "the wheel is corrupt; download it again");
  return out;
}

// The first `n` bytes (fewer if the member is shorter).
std::string read_prefix(zip_t* za, const Member& m, std::size_t n, const std::string& wheel) {
  std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(za, m.index, 0), &zip_fclose);
  if (!f) throw Error("cannot read " + m.name + " from " + wheel + ": " + zip_strerror(za));
  std::string out(n, '\0');
  std::size_t done = 0;
  while (done < n) {
    zip_int64_t got = zip_fread(f.get(), out.data() + done, n - done);
    if (got < 0) throw Error("cannot read " + m.name + " from " + wheel + ": " + zip_file_strerror(f.get()));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  out.resize(done);
  return out;
}

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

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 99;
    if (n == 99 || i + n >= s.size() + (n ? 0 : 1)) return false;
    for (std::size_t k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n + 1;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Small parsers (private: a general METADATA parser lives elsewhere; these follow exactly what pip reads).

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

// Python's str.splitlines() for the ASCII line boundaries.

struct EntryPoints {
  // name → value, later definitions win (pip builds a dict); vector keeps the file order for generation.
  std::vector<std::pair<std::string, std::string>> console, gui;
};

void upsert(std::vector<std::pair<std::string, std::string>>& v, std::string key, std::string value) {
  for (auto& [k, val] : v)
    if (k == key) {
      val = std::move(value);
      return;
    }
  v.emplace_back(std::move(key), std::move(value));
}

bool contains_key(const std::vector<std::pair<std::string, std::string>>& v, std::string_view key) {
  return std::any_of(v.begin(), v.end(), [&](const auto& kv) { return kv.first == key; });
}

// console_scripts and gui_scripts from entry_points.txt (python/metadata.h reads it as importlib.metadata does);
// a name given twice keeps its first place and its last value, as pip's dict does.
EntryPoints read_entry_points(std::string_view text, const std::string& wheel) {
  EntryPoints eps;
  std::vector<EntryPoint> all;
  try {
    all = parse_entry_points(text);
  } catch (const Error& e) {
    throw Error(wheel + ": entry_points.txt: " + e.what());
  }
  for (EntryPoint& ep : all) {
    if (ep.group == "console_scripts") upsert(eps.console, std::move(ep.name), std::move(ep.value));
    else if (ep.group == "gui_scripts") upsert(eps.gui, std::move(ep.name), std::move(ep.value));
  }
  return eps;
}

bool is_word_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || u >= 0x80;
}

// distlib's export entry: the value must start with `module(:attr)?` where both are \w+ joined by '.'; pip
// requires the ":attr" part. Returns {module, attr}.
std::pair<std::string, std::string> parse_callable(const std::string& name, const std::string& value,
                                                   const std::string& wheel) {
  std::size_t i = 0;
  auto word = [&] {
    std::size_t s = i;
    while (i < value.size() && is_word_char(value[i])) ++i;
    return i > s;
  };
  std::string callable;
  if (word()) {
    while (i + 1 < value.size() && (value[i] == ':' || value[i] == '.') && is_word_char(value[i + 1])) {
      ++i;
      word();
    }
    callable = value.substr(0, i);
  }
  if (callable.empty())
    throw Error(wheel + ": invalid script entry point: " + name + " = " + value);
  auto colon = callable.find(':');
  if (colon == std::string::npos)
    throw Error(wheel + ": invalid script entry point: " + name + " = " + value + " - a callable suffix is required",
                "entry points should be module:callable, e.g. mypkg.cli:main");
  if (callable.find(':', colon + 1) != std::string::npos)
    throw Error(wheel + ": invalid script entry point: " + name + " = " + value);
  return {callable.substr(0, colon), callable.substr(colon + 1)};
}

// A launcher name must stay a single file in the scripts dir (distlib's name pattern is [\w.+-]+).
void check_script_name(const std::string& name, const std::string& wheel) {
  bool ok = !name.empty() && name != "." && name != ".." &&
            std::all_of(name.begin(), name.end(),
                        [](char c) { return is_word_char(c) || c == '-' || c == '.' || c == '+'; });
  if (!ok) throw Error(wheel + ": invalid script entry point name \"" + name + "\"");
}

// One RECORD line: csv.reader (excel dialect) over a line from str.splitlines().

std::string json_string(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  auto u16 = [&](unsigned v) {
    out += "\\u";
    for (int sh = 12; sh >= 0; sh -= 4) out += hex[(v >> sh) & 0xF];
  };
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7f) u16(c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // nlohmann::json holds valid UTF-8; decode one code point.
    std::size_t n = (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : 3;
    unsigned cp = c & (n == 1 ? 0x1F : n == 2 ? 0x0F : 0x07);
    for (std::size_t k = 1; k <= n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += n + 1;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      u16(0xD800 + (cp >> 10));
      u16(0xDC00 + (cp & 0x3FF));
    } else {
      u16(cp);
    }
  }
  return out + "\"";
}

void dump_json(const nlohmann::json& v, std::string& out) {
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {  // nlohmann's object is a std::map: keys sorted
        if (!first) out += ", ";
        first = false;
        out += json_string(it.key());
        out += ": ";
        dump_json(it.value(), out);
      }
      out += '}';
      break;
    }
    case nlohmann::json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        dump_json(v[i], out);
      }
      out += ']';
      break;
    }
    case nlohmann::json::value_t::string: out += json_string(v.get_ref<const std::string&>()); break;
    case nlohmann::json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; break;
    case nlohmann::json::value_t::null: out += "null"; break;
    default: out += v.dump(); break;  // numbers
  }
}

std::string hex_to_bytes(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

// pip's templates (pip/_internal/operations/install/wheel.py, get_console_script_specs and the
// script template of its vendored distlib). `import_name` is the first component of the attribute path.
std::string launcher_body(std::string_view module, std::string_view attr, const Version& pip_version) {
  std::string m(module), f(attr), i(attr.substr(0, attr.find('.')));
  if (pip_version < Version::parse("25.2"))
    return "# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom " + m + " import " + i +
           "\nif __name__ == '__main__':\n"
           "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
           "    sys.exit(" + f + "())\n";
  if (pip_version < Version::parse("26.0"))
    return "import sys\nfrom " + m + " import " + i +
           "\nif __name__ == '__main__':\n"
           "    if sys.argv[0].endswith('.exe'):\n"
           "        sys.argv[0] = sys.argv[0][:-4]\n"
           "    sys.exit(" + f + "())\n";
  return "import sys\nfrom " + m + " import " + i +
         "\nif __name__ == '__main__':\n"
         "    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n"
         "    sys.exit(" + f + "())\n";
}

}  // namespace

RecordRow parse_record_line(std::string_view line, std::size_t& fields) {
  std::vector<std::string> out(1);
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          out.back() += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        out.back() += c;
      }
    } else if (c == ',') {
      out.emplace_back();
      was_quoted = false;
    } else if (c == '"' && out.back().empty() && !was_quoted) {
      quoted = was_quoted = true;
    } else {
      out.back() += c;
    }
  }
  fields = out.size();
  RecordRow row;
  for (std::size_t k = 0; k < 3 && k < out.size(); ++k) row[k] = std::move(out[k]);
  return row;
}

// ---------------------------------------------------------------------------------------------------------------

std::string launcher_shebang(std::string_view sys_executable) {
  // distlib enquote_executable: quote an executable with spaces (only the part after "/usr/bin/env ").
  std::string exe(sys_executable);
  if (exe.find(' ') != std::string::npos) {
    if (exe.starts_with("/usr/bin/env ")) {
      std::string rest = exe.substr(13);
      if (rest.find(' ') != std::string::npos && !rest.starts_with("\"")) exe = "/usr/bin/env \"" + rest + "\"";
    } else if (!exe.starts_with("\"")) {
      exe = "\"" + exe + "\"";
    }
  }
  if (exe.find(' ') == std::string::npos && exe.size() + 3 <= 127) return "#!" + exe + "\n";
  return "#!/bin/sh\n'''exec' " + exe + " \"$0\" \"$@\"\n' '''\n";
}

std::string launcher_script(std::string_view sys_executable, std::string_view module, std::string_view attr,
                            const Version& pip_version) {
  return launcher_shebang(sys_executable) + launcher_body(module, attr, pip_version);
}

std::string record_relative_path(std::string_view absolute_path, std::string_view lib_dir) {
  return relpath(normalize_abs(absolute_path), normalize_abs(lib_dir));
}

std::string python_json_dumps(const nlohmann::json& value) {
  std::string out;
  dump_json(value, out);
  return out;
}

std::string record_hash(std::string_view bytes) {
  return "sha256=" + registry::base64url_encode(hex_to_bytes(image::sha256_of(bytes).hex()));
}

std::string format_record(const std::vector<RecordRow>& rows) {
  std::string out;
  for (const RecordRow& row : rows) {
    for (std::size_t k = 0; k < row.size(); ++k) {
      if (k) out += ',';
      const std::string& f = row[k];
      if (f.find_first_of(",\"\r\n") == std::string::npos) {
        out += f;
        continue;
      }
      out += '"';
      for (char c : f) {
        if (c == '"') out += '"';
        out += c;
      }
      out += '"';
    }
    out += "\r\n";
  }
  return out;
}

void InstalledWheel::add_unhashed_record_paths(const std::vector<std::string>& lib_relative_paths) {
  for (const std::string& p : lib_relative_paths) record_rows.push_back({p, "", ""});
  std::sort(record_rows.begin(), record_rows.end());
  std::string record = entry_path(normalize_abs(lib_dir + "/" + dist_info_dir + "/RECORD"));
  for (layers::FileEntry& e : files) {
    if (e.path != record) continue;
    e.data = format_record(record_rows);
    e.size = e.data.size();
  }
}

InstalledWheel install_wheel(const WheelInstallRequest& req) {
  const std::string wheel = req.wheel.filename().string();
  const std::string where = wheel_error_prefix(req);

  int zerr = 0;
  ZipPtr za(zip_open(req.wheel.c_str(), ZIP_RDONLY, &zerr));
  if (!za) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, zerr);
    std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw Error("cannot open wheel " + req.wheel.string() + ": " + msg, "the file is not a valid zip archive");
  }

  // 1. Members, in central-directory order (= Python's namelist()), checked for safety.
  std::vector<Member> members;
  std::map<std::string, std::size_t> by_name;
  std::set<std::string> top_level;
  zip_int64_t count = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_STRICT, &st) != 0 || !st.name)
      throw Error("cannot read the zip directory of " + req.wheel.string() + ": " + zip_strerror(za.get()));
    Member m;
    m.name = st.name;
    m.index = static_cast<zip_uint64_t>(i);
    m.size = st.size;
    check_member_name(m.name, wheel);
    if (!by_name.emplace(m.name, members.size()).second)
      throw Error(where + "duplicate file name \"" + m.name + "\" in the wheel",
                  "the wheel is malformed; which copy an installer picks is undefined");
    if (st.encryption_method != ZIP_EM_NONE) throw Error(where + m.name + " is encrypted");
    if (!zip_compression_method_supported(st.comp_method, 0))
      throw Error(where + m.name + " uses an unsupported compression method (" + std::to_string(st.comp_method) + ")");
    if (m.size > 0 && st.comp_size == 0) throw Error(where + m.name + " declares data but no compressed bytes");
    if (m.size >= kRatioCheckFrom && m.size / st.comp_size > kMaxRatio)
      throw Error(where + m.name + " expands " + std::to_string(m.size / st.comp_size) +
                      ":1 (" + std::to_string(m.size) + " bytes), which looks like a zip bomb",
                  "refusing to install it; check where the wheel came from");
    zip_uint8_t opsys;
    zip_uint32_t attr = 0;
    if (zip_file_get_external_attributes(za.get(), m.index, 0, &opsys, &attr) == 0) m.mode = attr >> 16;
    top_level.insert(m.name.substr(0, m.name.find('/')));
    members.push_back(std::move(m));
  }

  // 2. The .dist-info dir (pip's wheel_dist_info_dir) and WHEEL.
  std::vector<std::string> info_dirs;
  for (const std::string& t : top_level)
    if (t.ends_with(".dist-info")) info_dirs.push_back(t);
  if (info_dirs.empty()) throw Error(where + "invalid wheel: .dist-info directory not found");
  if (info_dirs.size() > 1) {
    std::string all;
    for (const auto& d : info_dirs) all += (all.empty() ? "" : ", ") + d;
    throw Error(where + "invalid wheel: multiple .dist-info directories found: " + all);
  }
  InstalledWheel out;
  out.dist_info_dir = info_dirs.front();
  if (!canonicalize_name(out.dist_info_dir).starts_with(canonicalize_name(req.name)))
    throw Error(where + "invalid wheel: .dist-info directory '" + out.dist_info_dir + "' does not start with '" +
                canonicalize_name(req.name) + "'");
  auto member = [&](const std::string& name) -> const Member* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : &members[it->second];
  };
  const Member* wheel_file = member(out.dist_info_dir + "/WHEEL");
  if (!wheel_file) throw Error(where + "invalid wheel: " + out.dist_info_dir + "/WHEEL is missing");
  std::string wheel_text = read_member(za.get(), *wheel_file, kMaxMetadataFile, wheel);
  if (!valid_utf8(wheel_text)) throw Error(where + "invalid wheel: WHEEL is not UTF-8");
  auto wheel_headers = parse_wheel_file(wheel_text);
  auto wv = wheel_headers.find("wheel-version");
  if (wv == wheel_headers.end()) throw Error(where + "invalid wheel: WHEEL is missing Wheel-Version");
  std::vector<long> version_parts;
  {
    std::string_view text = py_strip(wv->second);
    std::size_t start = 0;
    while (true) {
      std::size_t dot = text.find('.', start);
      std::string_view part = py_strip(text.substr(start, dot == std::string_view::npos ? text.npos : dot - start));
      if (part.empty() || part.size() > 9 || !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw Error(where + "invalid wheel: invalid Wheel-Version: '" + std::string(text) + "'");
      version_parts.push_back(std::stol(std::string(part)));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
  }
  if (version_parts[0] > 1)
    throw Error(where + "Wheel-Version " + std::string(py_strip(wv->second)) +
                    " is not compatible with this installer (pip supports 1.x)",
                "use an older release of the package built as a 1.x wheel");
  // pip: tuple(version) > (1, 0), so "1.0.0" warns too.
  if (version_parts[0] == 1 && version_parts.size() >= 2 && (version_parts[1] > 0 || version_parts.size() > 2))
    out.warnings.push_back(where + "installing from a newer Wheel-Version (" + std::string(py_strip(wv->second)) + ")");
  auto purelib = wheel_headers.find("root-is-purelib");
  bool root_is_purelib = purelib != wheel_headers.end() && ascii_lower(purelib->second) == "true";
  out.lib_dir = normalize_abs(root_is_purelib ? req.scheme.purelib : req.scheme.platlib);
  const std::string& lib_dir = out.lib_dir;

  // 3. Entry points and the wheel's RECORD.
  EntryPoints eps;
  if (const Member* m = member(out.dist_info_dir + "/entry_points.txt")) {
    std::string text = read_member(za.get(), *m, kMaxMetadataFile, wheel);
    if (!valid_utf8(text)) throw Error(where + "entry_points.txt is not UTF-8");
    eps = read_entry_points(text, wheel);
  }
  const Member* record_member = member(out.dist_info_dir + "/RECORD");
  if (!record_member) throw Error(where + "invalid wheel: " + out.dist_info_dir + "/RECORD is missing");
  std::vector<RecordRow> old_rows;
  {
    std::string text = read_member(za.get(), *record_member, kMaxMetadataFile, wheel);
    if (!valid_utf8(text)) throw Error(where + "RECORD is not UTF-8");
    for (std::string_view line : py_splitlines(text)) {
      if (line.empty()) continue;  // csv gives [] and pip would crash on row[0]
      std::size_t fields = 0;
      old_rows.push_back(parse_record_line(line, fields));
      if (fields > 3) out.warnings.push_back(where + "RECORD line has more than three elements: " + std::string(line));
    }
  }

  // 4. Where each member goes (pip: root files, then other .data files, then .data/scripts).
  std::map<std::string, std::size_t> entry_index;  // entry path → index in out.files (later writes win)
  auto put = [&](layers::FileEntry e) {
    e.uid = req.uid;
    e.gid = req.gid;
    auto [it, fresh] = entry_index.try_emplace(e.path, out.files.size());
    if (fresh) out.files.push_back(std::move(e));
    else out.files[it->second] = std::move(e);
  };
  std::map<std::string, std::string> installed;           // wheel RECORD path → installed RECORD path
  std::map<std::string, std::pair<std::string, std::string>> changed;  // installed RECORD path → hash, size
  std::vector<RecordRow> generated;

  const std::map<std::string, std::string> scheme_dirs{
      {"purelib", req.scheme.purelib}, {"platlib", req.scheme.platlib}, {"headers", req.scheme.headers},
      {"scripts", req.scheme.scripts}, {"data", req.scheme.data}};
  const std::string jws = out.dist_info_dir + "/RECORD.jws", p7s = out.dist_info_dir + "/RECORD.p7s";

  auto dest_for = [&](const Member& m, std::string* scheme_key) -> std::string {
    auto slash = m.name.find('/');
    std::string top = m.name.substr(0, slash);
    if (slash == std::string::npos || !top.ends_with(".data")) return normalize_abs(lib_dir + "/" + m.name);
    std::string rest = m.name.substr(slash + 1);
    auto slash2 = rest.find('/');
    if (slash2 == std::string::npos)
      throw Error(where + "unexpected file " + m.name +
                  ": .data directory contents should be named like '<scheme key>/<path>'");
    std::string key = rest.substr(0, slash2);
    auto dir = scheme_dirs.find(key);
    if (dir == scheme_dirs.end())
      throw Error(where + "unknown scheme key used in the wheel: " + key + " (for file " + m.name +
                  "); .data directory contents should be in subdirectories named purelib, platlib, headers, "
                  "scripts or data");
    if (scheme_key) *scheme_key = key;
    std::string base = normalize_abs(dir->second);
    std::string dest = normalize_abs(base + "/" + rest.substr(slash2 + 1));
    if (!dest.starts_with(base == "/" ? "/" : base + "/"))  // cannot happen after check_member_name; kept as a second guard
      throw Error(where + m.name + " would be installed outside " + base);
    return dest;
  };
  auto zip_entry = [&](const Member& m, const std::string& dest) {
    bool executable = m.mode != 0 && S_ISREG(m.mode) && (m.mode & 0111) != 0;  // pip's zip_item_is_executable
    layers::FileEntry e = layers::FileEntry::zip_file(entry_path(dest), req.wheel, m.name, m.index, m.size,
                                                      executable ? 0755 : 0644);
    return e;
  };

  std::vector<const Member*> root_files, data_files, script_files;
  for (const Member& m : members) {
    if (m.name.ends_with("/") || m.name == jws || m.name == p7s) continue;
    auto slash = m.name.find('/');
    bool data = slash != std::string::npos && m.name.substr(0, slash).ends_with(".data");
    if (!data) root_files.push_back(&m);
    else if (m.name.compare(slash + 1, 8, "scripts/") == 0 && m.name.size() > slash + 9) script_files.push_back(&m);
    else data_files.push_back(&m);
  }
  for (const Member* m : root_files) {
    std::string dest = dest_for(*m, nullptr);
    put(zip_entry(*m, dest));
    installed[m->name] = relpath(dest, lib_dir);
  }
  for (const Member* m : data_files) {
    std::string key;
    std::string dest = dest_for(*m, &key);
    put(zip_entry(*m, dest));
    installed[m->name] = relpath(dest, lib_dir);
  }
  for (const Member* m : script_files) {
    std::string dest = dest_for(*m, nullptr);
    // Skip setuptools' wrappers for entry points (EP, EP.exe, EP-script.py, EP.pya): pip writes its own.
    std::string base(path_base(dest));
    std::string lower = ascii_lower(base);
    std::string match = lower.ends_with(".exe") || lower.ends_with(".pya") ? base.substr(0, base.size() - 4)
                        : lower.ends_with("-script.py")                    ? base.substr(0, base.size() - 10)
                                                                           : base;
    if (contains_key(eps.console, match) || contains_key(eps.gui, match)) continue;
    layers::FileEntry e = zip_entry(*m, dest);
    std::string record_path = relpath(dest, lib_dir);
    if (read_prefix(za.get(), *m, 8, wheel) == "#!python") {
      // pip's fix_script: the whole first line becomes "#!<sys.executable>\n" (arguments dropped).
      std::string text = read_member(za.get(), *m, kMaxRewrittenScript, wheel);
      auto nl = text.find('\n');
      std::string rest = nl == std::string::npos ? "" : text.substr(nl + 1);
      e.data = "#!" + req.sys_executable + "\n" + rest;
      e.size = e.data.size();
      e.source.clear();
      e.zip_member.clear();
      e.zip_index = 0;
      // pip < 22.2 meant to rehash it but compared an absolute path with RECORD's relative ones, so RECORD kept the
      // wheel's hash and size for the rewritten script (pypa/pip#10744, fixed by e4cd6da6e in 22.2).
      if (req.pip_version >= Version::parse("22.2"))
        changed[record_path] = {record_hash(e.data), std::to_string(e.size)};
    }
    put(std::move(e));
    installed[m->name] = record_path;
  }

  // 5. Launchers for entry points (pip's get_console_script_specs: pip and easy_install get versioned names).
  std::vector<std::pair<std::string, std::string>> console = eps.console;
  std::vector<std::pair<std::string, std::string>> specs;
  auto take = [&](const std::string& key) -> std::optional<std::string> {
    for (auto it = console.begin(); it != console.end(); ++it)
      if (it->first == key) {
        std::string v = it->second;
        console.erase(it);
        return v;
      }
    return std::nullopt;
  };
  auto drop_matching = [&](auto pred) {
    console.erase(std::remove_if(console.begin(), console.end(), [&](const auto& kv) { return pred(kv.first); }),
                  console.end());
  };
  auto is_digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string py_major = req.python_version.substr(0, req.python_version.find('.'));
  if (auto pip = take("pip")) {
    specs.emplace_back("pip", *pip);
    specs.emplace_back("pip" + py_major, *pip);
    specs.emplace_back("pip" + req.python_version, *pip);
    drop_matching([&](const std::string& k) {  // re.match(r"pip(\d+(\.\d+)?)?$", k)
      if (!k.starts_with("pip")) return false;
      std::string_view v = std::string_view(k).substr(3);
      if (v.empty()) return true;
      auto dot = v.find('.');
      return dot == std::string_view::npos ? is_digits(v) : is_digits(v.substr(0, dot)) && is_digits(v.substr(dot + 1));
    });
  }
  if (auto ei = take("easy_install")) {
    specs.emplace_back("easy_install", *ei);
    specs.emplace_back("easy_install-" + req.python_version, *ei);
    drop_matching([&](const std::string& k) {  // re.match(r"easy_install(-\d+\.\d+)?$", k)
      if (!k.starts_with("easy_install")) return false;
      std::string_view v = std::string_view(k).substr(12);
      if (v.empty()) return true;
      auto dot = v.find('.');
      return v.front() == '-' && dot != std::string_view::npos && is_digits(v.substr(1, dot - 1)) &&
             is_digits(v.substr(dot + 1));
    });
  }
  specs.insert(specs.end(), console.begin(), console.end());
  specs.insert(specs.end(), eps.gui.begin(), eps.gui.end());  // same launcher on POSIX
  const std::string scripts_dir = normalize_abs(req.scheme.scripts);
  for (const auto& [name, value] : specs) {
    check_script_name(name, wheel);
    auto [module, attr] = parse_callable(name, value, wheel);
    std::string dest = normalize_abs(scripts_dir + "/" + name);
    std::string text = launcher_script(req.sys_executable, module, attr, req.pip_version);
    generated.push_back({relpath(dest, lib_dir), record_hash(text), std::to_string(text.size())});
    put(layers::FileEntry::inline_file(entry_path(dest), std::move(text), 0755));
  }

  // 6. dist-info files pip writes.
  const std::string info_abs = normalize_abs(lib_dir + "/" + out.dist_info_dir);
  auto generate = [&](const std::string& file, std::string text) {
    std::string dest = info_abs + "/" + file;
    generated.push_back({relpath(dest, lib_dir), record_hash(text), std::to_string(text.size())});
    put(layers::FileEntry::inline_file(entry_path(dest), std::move(text), 0644));
  };
  generate("INSTALLER", "pip\n");
  if (req.requested) generate("REQUESTED", "");
  if (req.direct_url) generate("direct_url.json", python_json_dumps(*req.direct_url));

  // 7. RECORD (pip's get_csv_rows_for_installed): wheel rows mapped to install paths, hashes copied unless the
  // file was rewritten; then generated files; then installed files the wheel's RECORD did not list.
  for (const RecordRow& row : old_rows) {
    auto it = installed.find(row[0]);
    std::string path = it == installed.end() ? row[0] : it->second;
    if (it != installed.end()) installed.erase(it);
    auto ch = changed.find(path);
    if (ch != changed.end()) out.record_rows.push_back({path, ch->second.first, ch->second.second});
    else out.record_rows.push_back({path, row[1], row[2]});
  }
  out.record_rows.insert(out.record_rows.end(), generated.begin(), generated.end());
  for (const auto& [src, path] : installed) out.record_rows.push_back({path, "", ""});
  std::sort(out.record_rows.begin(), out.record_rows.end());
  put(layers::FileEntry::inline_file(entry_path(info_abs + "/RECORD"), format_record(out.record_rows), 0644));

  std::sort(out.files.begin(), out.files.end(),
            [](const layers::FileEntry& a, const layers::FileEntry& b) { return a.path < b.path; });
  for (const layers::FileEntry& e : out.files) {
    out.installed_paths.push_back(e.path);
    for (std::string_view dir = path_dir(e.path); !dir.empty(); dir = path_dir(dir))
      if (!out.directories.emplace(dir).second) break;  // its ancestors are already there
  }
  return out;
}

}  // namespace trainpack::python
