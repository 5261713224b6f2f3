#include "python/base_facts.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>

#include "image/config.h"
#include "python/image_root.h"
#include "python/names.h"
#include "python/requirements_file.h"
#include "python/text.h"
#include "python/version.h"
#include "support/elf.h"
#include "support/error.h"
#include "support/paths.h"
#include "support/text.h"

namespace trainpack::python {
namespace {

using layers::ImageFilesystem;
using layers::PathInfo;

constexpr std::string_view kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr std::size_t kSmallFile = 1u << 20;     // scripts, cfg, os-release, ini files
constexpr std::size_t kMediumFile = 16u << 20;   // sysconfigdata, sysconfig.py, dpkg status / apk db
constexpr std::size_t kLibcCap = 64u << 20;      // libc.so.6 is ~2 MB

// ---- small text helpers ----

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_py_space(s[i])) ++i;
    std::size_t j = i;
    while (j < s.size() && !is_py_space(s[j])) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "pythonX.Y" or "pythonX.Yt" -> ("X.Y", free-threaded).
std::optional<std::pair<std::string, bool>> python_xy_name(std::string_view name) {
  if (!name.starts_with("python")) return std::nullopt;
  std::string_view rest = name.substr(6);
  bool t = !rest.empty() && rest.back() == 't';
  if (t) rest.remove_suffix(1);
  std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || !all_digits(rest.substr(0, dot)) || !all_digits(rest.substr(dot + 1)))
    return std::nullopt;
  return std::make_pair(std::string(rest), t);
}

// RFC 822 header block (METADATA, PKG-INFO, dpkg stanza style) -> first value of each field (lower-cased key).
std::map<std::string, std::string> header_fields(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : split_lines(text)) {
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') continue;
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    out.emplace(ascii_lower(line.substr(0, colon)), std::string(py_strip(line.substr(colon + 1))));
  }
  return out;
}

// ---- configparser (RawConfigParser defaults: '=' or ':' delimiters, '#'/';' full-line comments, indented
// continuation lines, blank lines kept inside values, keys lower-cased) ----

struct IniFile {
  // section -> (key, value) in first-seen order; duplicate keys keep the first position and the last value.
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> sections;
};

IniFile parse_ini(std::string_view text) {
  IniFile ini;
  std::vector<std::pair<std::string, std::string>>* section = nullptr;
  std::vector<std::string> value_lines;
  std::string* value_target = nullptr;
  std::size_t key_indent = 0;
  auto flush = [&] {
    if (value_target) {
      std::string v;
      for (std::size_t i = 0; i < value_lines.size(); ++i) v += (i ? "\n" : "") + value_lines[i];
      while (!v.empty() && is_py_space(v.back())) v.pop_back();
      *value_target = v;
    }
    value_target = nullptr;
    value_lines.clear();
  };
  for (std::string_view raw : split_lines(text)) {
    std::string_view stripped = py_strip(raw);
    if (stripped.starts_with("#") || stripped.starts_with(";")) continue;
    if (stripped.empty()) {
      if (value_target) value_lines.emplace_back();
      continue;
    }
    std::size_t indent = raw.find_first_not_of(" \t");
    if (value_target && indent > key_indent) {
      value_lines.emplace_back(stripped);
      continue;
    }
    flush();
    if (stripped.front() == '[' && stripped.back() == ']') {
      std::string name(stripped.substr(1, stripped.size() - 2));
      auto it = std::find_if(ini.sections.begin(), ini.sections.end(), [&](auto& s) { return s.first == name; });
      if (it == ini.sections.end()) {
        ini.sections.push_back({name, {}});
        section = &ini.sections.back().second;
      } else {
        section = &it->second;
      }
      continue;
    }
    if (!section) continue;  // configparser raises MissingSectionHeaderError; nothing usable either way
    std::size_t d = stripped.find_first_of("=:");
    if (d == std::string_view::npos) continue;
    std::string key = ascii_lower(py_strip(stripped.substr(0, d)));
    auto it = std::find_if(section->begin(), section->end(), [&](auto& kv) { return kv.first == key; });
    if (it == section->end()) {
      section->emplace_back(key, "");
      it = section->end() - 1;
    }
    value_target = &it->second;
    key_indent = indent;
    value_lines.emplace_back(py_strip(stripped.substr(d + 1)));
  }
  flush();
  return ini;
}

const std::vector<std::pair<std::string, std::string>>* ini_section(const IniFile& ini, std::string_view name) {
  for (const auto& [n, items] : ini.sections)
    if (n == name) return &items;
  return nullptr;
}

// ---- pyvenv.cfg: "key = value" lines, no sections ----

std::map<std::string, std::string> parse_pyvenv_cfg(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : split_lines(text)) {
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    out[ascii_lower(py_strip(line.substr(0, eq)))] = std::string(py_strip(line.substr(eq + 1)));
  }
  return out;
}

// ---- os-release: KEY=value with shell quoting ----

std::map<std::string, std::string> parse_os_release(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : split_lines(text)) {
    line = py_strip(line);
    if (line.empty() || line.front() == '#') continue;
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view v = line.substr(eq + 1);
    std::string value;
    if (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
      char q = v.front();
      for (std::size_t i = 1; i < v.size() && v[i] != q; ++i) {
        if (q == '"' && v[i] == '\\' && i + 1 < v.size()) ++i;
        value += v[i];
      }
    } else {
      value = std::string(v);
    }
    out[std::string(line.substr(0, eq))] = value;
  }
  return out;
}

// ---- platform ----

std::string machine_from_config(std::string_view arch, std::string_view variant) {
  if (arch == "amd64") return "x86_64";
  if (arch == "arm64") return "aarch64";
  if (arch == "386") return "i686";
  if (arch == "arm") {
    if (variant.size() == 2 && variant[0] == 'v') return "armv" + std::string(1, variant[1]) + "l";
    return "armv7l";
  }
  if (arch == "loong64") return "loongarch64";
  return std::string(arch);  // ppc64le, s390x, riscv64 are spelled the same
}

// "release version 2.36" inside libc.so.6 -> "2.36". A plain scan: the file is megabytes.
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

// ---- package databases ----

// The Version of `package` in a dpkg status file (stanzas separated by blank lines; installed ones only).
std::string dpkg_version(std::string_view status, std::string_view package) {
  std::size_t pos = 0;
  while (pos < status.size()) {
    std::size_t end = status.find("\n\n", pos);
    std::string_view stanza = status.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? status.size() : end + 2;
    auto f = header_fields(stanza);
    if (f["package"] != package) continue;
    if (f.count("status") && f["status"].find(" installed") == std::string::npos) continue;
    return f["version"];
  }
  return {};
}

// The V: of package P: in an apk installed db.
std::string apk_version(std::string_view db, std::string_view package) {
  bool in_package = false;
  for (std::string_view line : split_lines(db)) {
    if (line.empty()) {
      in_package = false;
    } else if (line.starts_with("P:")) {
      in_package = line.substr(2) == package;
    } else if (in_package && line.starts_with("V:")) {
      return std::string(line.substr(2));
    }
  }
  return {};
}

// Distribution version -> upstream: drop the epoch, the Debian revision / apk "-rN", "~" before pre-releases.
std::string upstream_version(std::string_view v) {
  std::string s(v);
  if (auto colon = s.find(':'); colon != std::string::npos && all_digits(s.substr(0, colon))) s.erase(0, colon + 1);
  if (auto dash = s.rfind('-'); dash != std::string::npos) s.erase(dash);
  s.erase(std::remove(s.begin(), s.end(), '~'), s.end());
  return s;
}

// A micro version that belongs to X.Y, normalised the way platform.python_version() spells it.
std::string accept_version(std::string_view candidate, std::string_view xy) {
  std::string c(py_strip(candidate));
  while (!c.empty() && c.back() == '+') c.pop_back();  // "3.12.0+" dev builds
  auto v = Version::try_parse(c);
  if (!v || v->release().size() < 3 || v->epoch() != 0 || v->has_local() || v->post() || v->dev()) return {};
  if (std::to_string(v->major()) + "." + std::to_string(v->minor()) != xy) return {};
  std::string out = std::to_string(v->major()) + "." + std::to_string(v->minor()) + "." + std::to_string(v->micro());
  if (v->pre()) out += v->pre()->letter + std::to_string(v->pre()->number);
  return out;
}

bool strtobool(std::string_view value, bool& out) {
  std::string v = ascii_lower(value);
  if (v == "y" || v == "yes" || v == "t" || v == "true" || v == "on" || v == "1") {
    out = true;
    return true;
  }
  if (v == "n" || v == "no" || v == "f" || v == "false" || v == "off" || v == "0") {
    out = false;
    return true;
  }
  return false;
}

// ---- users ----

struct PasswdEntry {
  std::string name;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string home;
};

std::optional<PasswdEntry> lookup_passwd(const ImageRoot& root, std::string_view user) {
  auto text = root.read("/etc/passwd", kMediumFile);
  if (!text) return std::nullopt;
  for (std::string_view line : split_lines(*text)) {
    std::vector<std::string> f;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i)
      if (i == line.size() || line[i] == ':') {
        f.emplace_back(line.substr(start, i - start));
        start = i + 1;
      }
    if (f.size() < 6 || !all_digits(f[2]) || !all_digits(f[3])) continue;
    if (f[0] == user || f[2] == user)
      return PasswdEntry{f[0], static_cast<std::uint32_t>(std::stoul(f[2])),
                         static_cast<std::uint32_t>(std::stoul(f[3])), f[5]};
  }
  return std::nullopt;
}

std::optional<std::uint32_t> lookup_group(const ImageRoot& root, std::string_view group) {
  if (all_digits(group)) return static_cast<std::uint32_t>(std::stoul(std::string(group)));
  auto text = root.read("/etc/group", kMediumFile);
  if (!text) return std::nullopt;
  for (std::string_view line : split_lines(*text)) {
    std::size_t a = line.find(':');
    std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    std::size_t c = b == std::string_view::npos ? b : line.find(':', b + 1);
    if (c == std::string_view::npos || line.substr(0, a) != group) continue;
    std::string_view id = line.substr(b + 1, c - b - 1);
    if (all_digits(id)) return static_cast<std::uint32_t>(std::stoul(std::string(id)));
  }
  return std::nullopt;
}

bool is_root_user(std::string_view user) {
  std::string_view name = user.substr(0, user.find(':'));
  return name.empty() || name == "root" || name == "0";
}

// ---- sysconfigdata literal tokenizer ----

class PyLiteralReader {
 public:
  explicit PyLiteralReader(std::string_view s) : s_(s) {}

  void skip_space() {
    while (i_ < s_.size()) {
      if (is_py_space(s_[i_]) || s_[i_] == '\\') {
        ++i_;
      } else if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool at_string() {
    skip_space();
    std::size_t j = i_;
    while (j < s_.size() && j < i_ + 2 && std::string_view("rRbBuU").find(s_[j]) != std::string_view::npos) ++j;
    return j < s_.size() && (s_[j] == '\'' || s_[j] == '"');
  }
  std::string string_literal() {
    skip_space();
    bool raw = false;
    for (; s_[i_] != '\'' && s_[i_] != '"'; ++i_)
      if (s_[i_] == 'r' || s_[i_] == 'R') raw = true;
    char q = s_[i_];
    bool triple = s_.substr(i_, 3) == std::string(3, q);
    i_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (i_ >= s_.size()) throw Error("unterminated string literal in _sysconfigdata");
      char c = s_[i_];
      if (triple ? s_.substr(i_, 3) == std::string(3, q) : c == q) {
        i_ += triple ? 3 : 1;
        return out;
      }
      if (c == '\\' && !raw && i_ + 1 < s_.size()) {
        char e = s_[i_ + 1];
        i_ += 2;
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'a': out += '\a'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'v': out += '\v'; break;
          case '\n': break;
          case 'x': append_code(hex(2)); break;
          case 'u': append_code(hex(4)); break;
          case 'U': append_code(hex(8)); break;
          default:
            if (e >= '0' && e <= '7') {
              unsigned v = e - '0';
              for (int k = 0; k < 2 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++k) v = v * 8 + (s_[i_++] - '0');
              append_code(v);
            } else if (e == '\\' || e == '\'' || e == '"') {
              out += e;
            } else {
              out += '\\';
              out += e;
            }
        }
        if (pending_code_) {
          out += *pending_code_;
          pending_code_.reset();
        }
        continue;
      }
      out += c;
      ++i_;
    }
  }
  // A value: concatenated strings (optionally parenthesised, as pprint wraps them), an int, or anything else
  // (skipped, balanced). Returns nullopt for values that are not str/int.
  std::optional<std::string> value() {
    skip_space();
    if (i_ >= s_.size()) throw Error("truncated _sysconfigdata");
    if (s_[i_] == '(') {
      std::size_t save = i_;
      ++i_;
      if (at_string()) {
        std::string out;
        while (at_string()) out += string_literal();
        if (eat(')')) return out;
      }
      i_ = save;
      skip_balanced();
      return std::nullopt;
    }
    if (at_string()) {
      std::string out;
      while (at_string()) out += string_literal();
      return out;
    }
    if (s_[i_] == '-' || (s_[i_] >= '0' && s_[i_] <= '9')) {
      std::size_t j = i_ + 1;
      while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '.' || s_[j] == '_')) ++j;
      std::string num(s_.substr(i_, j - i_));
      i_ = j;
      return num;
    }
    skip_balanced();
    return std::nullopt;
  }
  std::size_t pos() const { return i_; }
  void seek(std::size_t p) { i_ = p; }

 private:
  unsigned hex(int n) {
    unsigned v = 0;
    for (int k = 0; k < n && i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_])); ++k, ++i_)
      v = v * 16 + (std::isdigit(static_cast<unsigned char>(s_[i_])) ? s_[i_] - '0' : (s_[i_] | 0x20) - 'a' + 10);
    return v;
  }
  void append_code(unsigned cp) {
    std::string u;
    if (cp < 0x80) {
      u += static_cast<char>(cp);
    } else if (cp < 0x800) {
      u += static_cast<char>(0xC0 | (cp >> 6));
      u += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      u += static_cast<char>(0xE0 | (cp >> 12));
      u += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      u += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      u += static_cast<char>(0xF0 | (cp >> 18));
      u += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      u += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      u += static_cast<char>(0x80 | (cp & 0x3F));
    }
    pending_code_ = u;
  }
  // Skips one token or one bracketed group, strings inside it included.
  void skip_balanced() {
    int depth = 0;
    do {
      skip_space();
      if (i_ >= s_.size()) return;
      if (at_string()) {
        string_literal();
        continue;
      }
      char c = s_[i_];
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) return;  // the caller's closer
        --depth;
      } else if ((c == ',' || c == ':') && depth == 0) {
        return;
      } else if (depth == 0) {
        while (i_ < s_.size() && !is_py_space(s_[i_]) && std::string_view(",:)]}#").find(s_[i_]) == std::string_view::npos) ++i_;
        return;
      }
      ++i_;
    } while (depth > 0);
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::optional<std::string> pending_code_;
};

// ---- pip configuration ----

enum class OptAction { kStoreTrue, kStoreFalse, kStore, kAppend, kOnlyBinary, kNoBinary };
struct OptSpec {
  std::string_view name;
  OptAction action;
};
// The `pip install` options trainpack models (long names; pip's config accepts long names only).
constexpr OptSpec kPipOptions[] = {
    {"index-url", OptAction::kStore},          {"extra-index-url", OptAction::kAppend},
    {"no-index", OptAction::kStoreTrue},       {"find-links", OptAction::kAppend},
    {"trusted-host", OptAction::kAppend},      {"pre", OptAction::kStoreTrue},
    {"compile", OptAction::kStoreTrue},        {"no-compile", OptAction::kStoreFalse},
    {"break-system-packages", OptAction::kStoreTrue}, {"prefer-binary", OptAction::kStoreTrue},
    {"require-hashes", OptAction::kStoreTrue}, {"user", OptAction::kStoreTrue},
    {"no-deps", OptAction::kStoreTrue},        {"no-dependencies", OptAction::kStoreTrue},
    {"ignore-installed", OptAction::kStoreTrue}, {"upgrade", OptAction::kStoreTrue},
    {"upgrade-strategy", OptAction::kStore},   {"only-binary", OptAction::kOnlyBinary},
    {"no-binary", OptAction::kNoBinary},       {"target", OptAction::kStore},
    {"prefix", OptAction::kStore},             {"root", OptAction::kStore},
    {"no-build-isolation", OptAction::kStoreFalse}, {"use-pep517", OptAction::kStoreTrue},
    {"no-use-pep517", OptAction::kStoreFalse},
};

// pip's configuration._normalize_name.
std::string normalize_option(std::string_view name) {
  std::string n = ascii_lower(name);
  std::replace(n.begin(), n.end(), '_', '-');
  if (n.starts_with("--")) n.erase(0, 2);
  return n;
}

void apply_pip_option(PipConfig& c, FormatControl& formats, const std::string& key,
                      const std::string& value) {
  const OptSpec* spec = nullptr;
  for (const auto& o : kPipOptions)
    if (o.name == key) spec = &o;
  c.items.emplace_back(key, value);
  if (!spec) return;  // options trainpack does not model stay in `items`
  bool flag = false;
  switch (spec->action) {
    case OptAction::kStoreTrue:
    case OptAction::kStoreFalse:
      if (!strtobool(value, flag))
        throw Error("pip configuration in the base image: " + value + " is not a valid value for " + key +
                        " option",
                    "pip would refuse to run: use a boolean like yes/no, true/false or 1/0");
      // pip stores strtobool(value) in the option's dest for store_false options too (no-compile -> compile).
      if (key == "pre") c.pre = flag;
      else if (key == "no-index") c.no_index = flag;
      else if (key == "compile" || key == "no-compile") c.compile = flag;
      else if (key == "break-system-packages") c.break_system_packages = flag;
      else if (key == "prefer-binary") c.prefer_binary = flag;
      else if (key == "require-hashes") c.require_hashes = flag;
      else if (key == "user") c.user = flag;
      else if (key == "no-deps" || key == "no-dependencies") c.no_deps = flag;
      else if (key == "ignore-installed") c.ignore_installed = flag;
      else if (key == "upgrade") c.upgrade = flag;
      else if (key == "no-build-isolation") c.build_isolation = flag;
      else if (key == "use-pep517" || key == "no-use-pep517") c.use_pep517 = flag;
      break;
    case OptAction::kStore:
      if (key == "index-url") c.index_url = value;
      else if (key == "upgrade-strategy") c.upgrade_strategy = value;
      else if (key == "target") c.target = value;
      else if (key == "prefix") c.prefix = value;
      else if (key == "root") c.root = value;
      break;
    case OptAction::kAppend: {
      auto parts = split_ws(value);
      if (key == "extra-index-url") c.extra_index_urls = parts;
      else if (key == "find-links") c.find_links = parts;
      else if (key == "trusted-host") c.trusted_hosts = parts;
      break;
    }
    case OptAction::kOnlyBinary:
    case OptAction::kNoBinary:
      if (value.starts_with("-")) throw Error("pip configuration: --" + key + " requires 1 argument");
      if (spec->action == OptAction::kOnlyBinary) formats.add_only_binary(value);
      else formats.add_no_binary(value);
      break;
  }
}

std::string env_or(const std::map<std::string, std::string>& env, const std::string& key, std::string_view fallback) {
  auto it = env.find(key);
  return it == env.end() ? std::string(fallback) : it->second;
}

constexpr std::string_view kDefaultExternallyManaged =
    "The Python environment under {prefix} is managed externally, and may not be\n"
    "manipulated by the user. Please use specific tooling from the distributor of\n"
    "the Python installation to interact with the packages installed in this\n"
    "environment.";

}  // namespace

// ---------------------------------------------------------------------------------------------------------------

std::map<std::string, std::string> parse_sysconfigdata(std::string_view text) {
  std::size_t at = text.find("build_time_vars");
  if (at == std::string_view::npos) throw Error("_sysconfigdata has no build_time_vars");
  PyLiteralReader r(text);
  r.seek(at + std::string_view("build_time_vars").size());
  if (!r.eat('=') || !r.eat('{')) throw Error("_sysconfigdata: build_time_vars is not a dict literal");
  std::map<std::string, std::string> out;
  while (!r.eat('}')) {
    if (!r.at_string()) throw Error("_sysconfigdata: expected a string key in build_time_vars");
    std::string key = r.string_literal();
    if (!r.eat(':')) throw Error("_sysconfigdata: expected ':' after '" + key + "'");
    if (auto v = r.value()) out[key] = *v;
    if (!r.eat(',')) {
      if (r.eat('}')) break;
      throw Error("_sysconfigdata: expected ',' or '}' after '" + key + "'");
    }
  }
  return out;
}

PipConfig read_pip_config(const ImageFilesystem& fs, const std::vector<std::pair<std::string, std::string>>& env_list,
                          std::string_view sys_prefix, std::string_view home) {
  ImageRoot root{fs};
  std::map<std::string, std::string> env(env_list.begin(), env_list.end());
  PipConfig c;
  // configuration.py: variants merged in OVERRIDE_ORDER (global, user, site, env file, env vars); a later
  // variant's "section.key" overrides, keeping the key's first position (a Python dict update).
  std::vector<std::pair<std::string, std::string>> merged;
  auto set = [&merged](const std::string& k, const std::string& v) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](auto& kv) { return kv.first == k; });
    if (it == merged.end()) merged.emplace_back(k, v);
    else it->second = v;
  };
  auto env_file = env.find("PIP_CONFIG_FILE");
  bool skip_files = env_file != env.end() && env_file->second == "/dev/null";
  if (!skip_files) {
    std::vector<std::string> files;
    std::string xdg_dirs(py_strip(env_or(env, "XDG_CONFIG_DIRS", "")));
    if (xdg_dirs.empty()) xdg_dirs = "/etc/xdg";
    std::size_t start = 0;
    for (std::size_t i = 0; i <= xdg_dirs.size(); ++i)
      if (i == xdg_dirs.size() || xdg_dirs[i] == ':') {
        std::string d = xdg_dirs.substr(start, i - start);
        if (!d.empty()) files.push_back(join(d, "pip/pip.conf"));
        start = i + 1;
      }
    files.push_back("/etc/pip.conf");
    bool env_file_exists = env_file != env.end() && root.is_file(env_file->second);
    if (!env_file_exists) {
      files.push_back(join(home, ".pip/pip.conf"));
      std::string xdg_home = env_or(env, "XDG_CONFIG_HOME", "");
      files.push_back(join(xdg_home.empty() ? join(home, ".config") : xdg_home, "pip/pip.conf"));
    }
    files.push_back(join(sys_prefix, "pip.conf"));
    if (env_file_exists) files.push_back(abs_path(env_file->second));
    for (const std::string& f : files) {
      auto text = root.read(f, kSmallFile);
      if (!text) continue;
      c.files.push_back(f);
      IniFile ini = parse_ini(*text);
      for (const auto& [section, items] : ini.sections)
        for (const auto& [k, v] : items) set(section + "." + normalize_option(k), v);
    }
  }
  for (const auto& [k, v] : env_list) {
    if (!k.starts_with("PIP_")) continue;
    std::string name = ascii_lower(std::string_view(k).substr(4));
    if (name == "version" || name == "help") continue;
    set(":env:." + normalize_option(name), v);
  }
  FormatControl formats;
  for (std::string_view section : {"global", "install", ":env:"}) {
    for (const auto& [sk, v] : merged) {
      std::size_t dot = sk.find('.');
      if (sk.substr(0, dot) != section || v.empty()) continue;
      apply_pip_option(c, formats, sk.substr(dot + 1), v);
    }
  }
  c.only_binary.assign(formats.only_binary.begin(), formats.only_binary.end());
  c.no_binary.assign(formats.no_binary.begin(), formats.no_binary.end());
  return c;
}

InstallScheme PythonFacts::scheme_for(std::string_view project_name) const {
  return InstallScheme{purelib, platlib, include + "/" + std::string(project_name), scripts, data};
}

std::string PythonFacts::cache_tag() const {
  std::string nodot = python_version;
  nodot.erase(std::remove(nodot.begin(), nodot.end(), '.'), nodot.end());
  return "cpython-" + nodot;
}

const SiteDistribution* PythonFacts::find_installed(std::string_view name) const {
  std::string want = canonicalize_name(name);
  for (const auto& d : installed)
    if (canonicalize_name(d.name) == want) return &d;
  return nullptr;
}

PythonFacts read_python_facts(const ImageFilesystem& fs, const ImageConfigFacts& cfg, bool use_python3_names) {
  ImageRoot root{fs};
  PythonFacts f;
  f.env = image::EnvList(cfg.env).pairs();
  std::map<std::string, std::string> env(f.env.begin(), f.env.end());
  f.user = cfg.user;
  std::string path_var = env_or(env, "PATH", kDefaultPath);
  {
    std::size_t start = 0;
    for (std::size_t i = 0; i <= path_var.size(); ++i)
      if (i == path_var.size() || path_var[i] == ':') {
        std::string d = path_var.substr(start, i - start);
        if (!d.empty() && d.front() == '/') f.path.push_back(abs_path(d));
        start = i + 1;
      }
  }
  auto which = [&](std::string_view name) -> std::string {
    for (const std::string& d : f.path) {
      std::string candidate = join(d, name);
      const PathInfo* info = root.info(candidate);
      if (info && (info->type == PathInfo::Type::kRegular || info->type == PathInfo::Type::kHardlink) &&
          (info->mode & 0111))
        return candidate;
    }
    return {};
  };
  f.pip_command = use_python3_names ? "pip3" : "pip";
  f.python_command = use_python3_names ? "python3" : "python";
  f.pip_path = which(f.pip_command);
  if (f.pip_path.empty())
    throw Error("the base image has no `" + f.pip_command + "` on its PATH (" + path_var + ")",
                "use a base image with pip installed, or add its directory to ENV PATH");
  f.python_path = which(f.python_command);

  // sys.executable: the interpreter named by pip's shebang (distlib's long form: /bin/sh + '''exec' <exe>).
  {
    auto script = root.head(f.pip_path, 4096);
    std::vector<std::string_view> lines = split_lines(script ? std::string_view(*script) : std::string_view());
    if (lines.empty() || !lines[0].starts_with("#!"))
      throw Error(f.pip_path + " in the base image does not start with a #! line",
                  "trainpack reads the interpreter pip runs under from that line; a pip wrapper or binary is not "
                  "supported");
    auto words = split_ws(lines[0].substr(2));
    std::string exe = words.empty() ? "" : words[0];
    if (exe == "/bin/sh" && lines.size() > 1 && lines[1].starts_with("'''exec' ")) {
      std::string_view rest = py_strip(lines[1].substr(9));
      if (!rest.empty() && rest.front() == '"') exe = std::string(rest.substr(1, rest.find('"', 1) - 1));
      else exe = split_ws(rest).empty() ? "" : split_ws(rest)[0];
    } else if (base_of(exe) == "env") {
      std::string name;
      for (std::size_t i = 1; i < words.size() && name.empty(); ++i)
        if (!words[i].starts_with("-")) name = words[i];
      exe = name.empty() ? "" : which(name);
      if (exe.empty())
        throw Error(f.pip_path + " runs `" + std::string(lines[0].substr(2)) + "` but PATH has no " + name,
                    "fix the base image's PATH");
    }
    if (exe.empty() || exe.front() != '/')
      throw Error(f.pip_path + " has no absolute interpreter on its #! line: " + std::string(lines[0]),
                  "reinstall pip in the base image so its script names the interpreter");
    f.executable = abs_path(exe);
  }
  f.interpreter = root.resolve(f.executable);
  if (!root.is_file(f.interpreter))
    throw Error("pip's interpreter " + f.executable + " (first line of " + f.pip_path + ") is not in the image",
                "the base image's pip script points at a missing Python");

  // venv: pyvenv.cfg beside the (unresolved) executable or one directory up, like getpath.
  std::map<std::string, std::string> pyvenv;
  std::string venv_dir;
  for (const std::string& dir : {parent_of(f.executable), parent_of(parent_of(f.executable))}) {
    if (auto text = root.read(join(dir, "pyvenv.cfg"), kSmallFile)) {
      pyvenv = parse_pyvenv_cfg(*text);
      venv_dir = dir;
      break;
    }
  }
  f.venv = !venv_dir.empty();
  if (f.venv) {
    f.venv_home = pyvenv["home"];
    f.include_system_site_packages = ascii_lower(pyvenv["include-system-site-packages"]) == "true";
  }

  // X.Y: the interpreter's file name, else pyvenv.cfg, else the one pythonX.Y under the base prefix.
  std::string interp_dir = parent_of(f.interpreter);
  f.base_prefix = parent_of(interp_dir);
  if (f.venv && !f.venv_home.empty() && f.interpreter.starts_with(venv_dir + "/"))
    f.base_prefix = parent_of(root.resolve(f.venv_home));  // a --copies venv: the base is found through `home`
  f.prefix = f.venv ? venv_dir : f.base_prefix;
  if (auto xy = python_xy_name(base_of(f.interpreter))) {
    f.python_version = xy->first;
    f.free_threaded = xy->second;
  } else {
    std::string cfg_version = pyvenv.count("version_info") ? pyvenv["version_info"] : pyvenv["version"];
    auto v = Version::try_parse(cfg_version);
    if (v && v->release().size() >= 2) {
      f.python_version = std::to_string(v->major()) + "." + std::to_string(v->minor());
    } else {
      std::set<std::pair<std::string, bool>> found;
      for (const char* lib : {"lib", "lib64"})
        for (const std::string& name : root.children(join(f.base_prefix, lib)))
          if (auto xy = python_xy_name(name); xy && xy->first.starts_with("3.")) found.insert(*xy);
      if (found.size() != 1)
        throw Error("cannot tell which Python version " + f.interpreter + " is (" + std::to_string(found.size()) +
                        " candidates under " + f.base_prefix + "/lib)",
                    "make pip's #! line name a versioned interpreter such as python3.11");
      f.python_version = found.begin()->first;
      f.free_threaded = found.begin()->second;
    }
  }
  std::string pydir = "python" + f.python_version + (f.free_threaded ? "t" : "");

  // stdlib and _sysconfigdata.
  for (const char* lib : {"lib", "lib64"}) {
    std::string dir = join(join(f.base_prefix, lib), pydir);
    auto names = root.children(dir);
    bool landmark = std::any_of(names.begin(), names.end(), [](const std::string& n) {
      return n == "os.py" || n == "os.pyc" || n.starts_with("_sysconfigdata_");
    });
    if (landmark || (f.stdlib.empty() && std::string(lib) == "lib" && root.is_dir(dir))) f.stdlib = dir;
    if (landmark) break;
  }
  if (!f.stdlib.empty()) {
    std::vector<std::string> candidates;
    for (const std::string& n : root.children(f.stdlib))
      if (n.starts_with("_sysconfigdata_") && n.ends_with(".py")) candidates.push_back(n);
    // Debug builds (_sysconfigdata_d_*) only when nothing else is there.
    std::stable_partition(candidates.begin(), candidates.end(),
                          [](const std::string& n) { return !n.starts_with("_sysconfigdata_d"); });
    if (!candidates.empty()) {
      f.sysconfigdata = join(f.stdlib, candidates.front());
      auto text = root.read(f.sysconfigdata, kMediumFile);
      auto vars = parse_sysconfigdata(text ? *text : "");
      auto get = [&vars](const char* k) { return vars.count(k) ? vars[k] : std::string(); };
      if (!get("VERSION").empty() && get("VERSION") != f.python_version)
        throw Error(f.sysconfigdata + " is for Python " + get("VERSION") + ", not " + f.python_version,
                    "the base image's Python installation is inconsistent");
      f.soabi = get("SOABI");
      f.ext_suffix = get("EXT_SUFFIX");
      f.abiflags = get("ABIFLAGS");
      f.multiarch = get("MULTIARCH");
      f.sysconfig_prefix = get("prefix");
      f.libdir = get("LIBDIR");
      if (!get("PLATLIBDIR").empty()) f.platlibdir = get("PLATLIBDIR");
      f.py_debug = get("Py_DEBUG") == "1";
      if (get("Py_GIL_DISABLED") == "1") f.free_threaded = true;
    }
  }
  f.conda = root.is_dir(join(f.base_prefix, "conda-meta"));

  // The micro version, best record first.
  std::string include_dir = join(join(f.base_prefix, "include"), "python" + f.python_version + f.abiflags);
  auto try_source = [&](const std::string& candidate, const char* source) {
    if (!f.python_full_version.empty()) return;
    std::string v = accept_version(candidate, f.python_version);
    if (!v.empty()) {
      f.python_full_version = v;
      f.version_source = source;
    }
  };
  if (!f.stdlib.empty()) {
    if (auto text = root.read(join(f.stdlib, "build-details.json"), kSmallFile)) {
      auto j = nlohmann::json::parse(*text, nullptr, false);
      if (j.is_object() && j.contains("implementation") && j["implementation"].contains("version")) {
        const auto& v = j["implementation"]["version"];
        if (v.value("major", -1) >= 0 && v.value("minor", -1) >= 0 && v.value("micro", -1) >= 0) {
          std::string s = std::to_string(v["major"].get<int>()) + "." + std::to_string(v["minor"].get<int>()) + "." +
                          std::to_string(v["micro"].get<int>());
          std::string level = v.value("releaselevel", "final");
          if (level != "final") {
            s += level == "alpha" ? "a" : level == "beta" ? "b" : "rc";
            s += std::to_string(v.value("serial", 0));
          }
          try_source(s, "build-details.json");
        }
      }
    }
  }
  if (f.venv) try_source(pyvenv.count("version_info") ? pyvenv["version_info"] : pyvenv["version"], "pyvenv.cfg");
  // Official images set it for their /usr/local build; a distro Python under /usr is not what it describes.
  if (env.count("PYTHON_VERSION") && f.base_prefix != "/usr") try_source(env["PYTHON_VERSION"], "ENV PYTHON_VERSION");
  if (auto text = root.read(join(include_dir, "patchlevel.h"), kSmallFile)) {
    for (std::string_view line : split_lines(*text)) {
      auto words = split_ws(line);
      if (words.size() >= 3 && words[0] == "#define" && words[1] == "PY_VERSION" && words[2].size() > 2 &&
          words[2].front() == '"')
        try_source(words[2].substr(1, words[2].size() - 2), "patchlevel.h");
    }
  }
  std::optional<std::string> dpkg_status;
  if (f.base_prefix == "/usr") {
    dpkg_status = root.read("/var/lib/dpkg/status", kMediumFile * 4);
    for (const char* suffix : {"", "-minimal"}) {
      std::string pkg = "python" + f.python_version + suffix;
      if (dpkg_status) try_source(upstream_version(dpkg_version(*dpkg_status, pkg)), "dpkg");
      // distroless: one stanza per file under status.d
      for (const std::string& n : root.children("/var/lib/dpkg/status.d"))
        if (n == pkg || n.starts_with(pkg + "_"))
          if (auto t = root.read(join("/var/lib/dpkg/status.d", n), kSmallFile))
            try_source(upstream_version(dpkg_version(*t, pkg)), "dpkg");
    }
  }
  std::optional<std::string> apk_db = root.read("/lib/apk/db/installed", kMediumFile * 4);
  if (apk_db && f.base_prefix == "/usr") try_source(upstream_version(apk_version(*apk_db, "python3")), "apk");
  if (f.conda) {
    for (const std::string& n : root.children(join(f.base_prefix, "conda-meta"))) {
      if (!n.starts_with("python-") || !n.ends_with(".json")) continue;
      std::string rest = n.substr(7);
      try_source(rest.substr(0, rest.find('-')), "conda-meta");
    }
  }
  if (f.python_full_version.empty() && !f.interpreter.empty()) {
    // Last resort (no package records, e.g. an image assembled without dpkg): PY_VERSION is a NUL-terminated
    // literal in the interpreter (or its libpython); accepted only when exactly one such string is there.
    std::set<std::string> found;
    std::vector<std::string> binaries{f.interpreter};
    if (!f.libdir.empty()) binaries.push_back(join(f.libdir, "libpython" + f.python_version + f.abiflags + ".so.1.0"));
    for (const std::string& bin : binaries) {
      std::optional<std::string> bytes = root.read(bin, kLibcCap);
      if (!bytes) continue;
      const std::string needle = '\0' + f.python_version + ".";
      for (std::size_t at = bytes->find(needle); at != std::string::npos; at = bytes->find(needle, at + 1)) {
        std::size_t end = bytes->find('\0', at + 1);
        if (end == std::string::npos || end - at > 16) continue;
        std::string literal = bytes->substr(at + 1, end - at - 1);
        std::string v = accept_version(literal, f.python_version);
        if (!v.empty() && v == literal) found.insert(v);
      }
      if (!found.empty()) break;
    }
    if (found.size() == 1) try_source(*found.begin(), "interpreter binary");
  }
  if (f.python_full_version.empty())
    throw Error("cannot tell the micro version of Python " + f.python_version + " in the base image",
                "trainpack looks at build-details.json, pyvenv.cfg, ENV PYTHON_VERSION, patchlevel.h and the "
                "dpkg/apk/conda records; set ENV PYTHON_VERSION=" + f.python_version + ".N in the base image");

  // Distro.
  for (const char* p : {"/etc/os-release", "/usr/lib/os-release"}) {
    if (auto text = root.read(p, kSmallFile)) {
      auto osr = parse_os_release(*text);
      f.distro_id = osr["ID"];
      f.distro_version_id = osr["VERSION_ID"];
      f.distro_id_like = osr["ID_LIKE"];
      break;
    }
  }

  // Install scheme and site dirs.
  std::string sysconfig_py, site_py;
  if (!f.stdlib.empty()) {
    if (auto text = root.read(join(f.stdlib, "sysconfig.py"), kMediumFile)) sysconfig_py = *text;
    if (auto text = root.read(join(f.stdlib, "site.py"), kMediumFile)) site_py = *text;
  }
  // Debian's Python: its sysconfig schemes (3.10 and later), or, before them (Debian 11's 3.9 keeps deb_system in
  // distutils), its site.py putting dist-packages on sys.path.
  bool debian = (sysconfig_py.find("'posix_local'") != std::string::npos &&
                 sysconfig_py.find("'deb_system'") != std::string::npos) ||
                site_py.find("\"dist-packages\"") != std::string::npos;
  auto id_words = split_ws(f.distro_id + " " + f.distro_id_like);
  bool rpm_distro = std::any_of(id_words.begin(), id_words.end(), [](const std::string& w) {
    return w == "fedora" || w == "rhel" || w == "centos";
  });
  bool rpm = !f.venv && !f.conda && f.base_prefix == "/usr" && rpm_distro && f.platlibdir == "lib64";
  std::string abi_include = "python" + f.python_version + f.abiflags;
  std::vector<std::string> base_sites;
  if (debian) {
    base_sites = {join(f.base_prefix, "local/lib/python" + f.python_version + "/dist-packages"),
                  join(f.base_prefix, "lib/python3/dist-packages"),
                  join(f.base_prefix, "lib/python" + f.python_version + "/dist-packages")};
  } else if (rpm) {
    for (const char* p : {"/usr/local", "/usr"})
      for (const char* lib : {"lib64", "lib"}) base_sites.push_back(join(join(p, lib), pydir + "/site-packages"));
  } else {
    base_sites.push_back(join(join(f.base_prefix, f.platlibdir), pydir + "/site-packages"));
    if (f.platlibdir != "lib") base_sites.push_back(join(join(f.base_prefix, "lib"), pydir + "/site-packages"));
  }
  if (f.venv) {
    f.scheme_name = "venv";
    f.purelib = join(venv_dir, "lib/" + pydir + "/site-packages");
    f.platlib = join(join(venv_dir, f.platlibdir), pydir + "/site-packages");
    f.scripts = join(venv_dir, "bin");
    f.data = venv_dir;
    f.include = join(venv_dir, "include/site/python" + f.python_version);  // pip's venv headers rule
  } else if (debian) {
    std::string layout = env_or(env, "DEB_PYTHON_INSTALL_LAYOUT", "posix_local");
    bool deb_system = layout == "deb" || layout == "deb_system";
    f.scheme_name = deb_system ? "deb_system" : "deb_posix_local";
    std::string base = deb_system ? f.base_prefix : join(f.base_prefix, "local");
    f.purelib = deb_system ? join(base, "lib/python3/dist-packages")
                           : join(base, "lib/python" + f.python_version + "/dist-packages");
    f.platlib = f.purelib;
    f.scripts = join(base, "bin");
    f.data = base;
    f.include = join(join(f.base_prefix, "include"), abi_include);
  } else if (rpm) {
    f.scheme_name = "rpm_posix_local";
    f.purelib = join("/usr/local/lib", pydir + "/site-packages");
    f.platlib = join("/usr/local/lib64", pydir + "/site-packages");
    f.scripts = "/usr/local/bin";
    f.data = "/usr/local";
    f.include = join("/usr/include", abi_include);
  } else {
    f.scheme_name = f.conda ? "conda" : "posix_prefix";
    f.purelib = join(f.base_prefix, "lib/" + pydir + "/site-packages");
    f.platlib = join(join(f.base_prefix, f.platlibdir), pydir + "/site-packages");
    f.scripts = join(f.base_prefix, "bin");
    f.data = f.base_prefix;
    f.include = join(join(f.base_prefix, "include"), abi_include);
  }
  for (std::string* p : {&f.purelib, &f.platlib, &f.scripts, &f.data, &f.include}) *p = root.resolve(*p);

  // HOME and the user.
  std::optional<PasswdEntry> pw;
  std::string user_name = cfg.user.substr(0, cfg.user.find(':'));
  pw = lookup_passwd(root, user_name.empty() ? "root" : user_name);
  if (env.count("HOME")) f.home = env["HOME"];
  else if (pw && !pw->home.empty()) f.home = pw->home;
  else f.home = is_root_user(cfg.user) ? "/root" : "/";

  std::vector<std::string> sites;
  if (f.venv) sites.push_back(join(venv_dir, "lib/" + pydir + "/site-packages"));
  if (f.venv && f.platlibdir != "lib") sites.push_back(join(join(venv_dir, f.platlibdir), pydir + "/site-packages"));
  if (!f.venv || f.include_system_site_packages) {
    std::string user_site = join(f.home, ".local/lib/" + pydir + "/site-packages");
    if (root.is_dir(user_site)) sites.push_back(user_site);
    sites.insert(sites.end(), base_sites.begin(), base_sites.end());
  }
  for (const std::string& s : sites) {
    std::string r = root.resolve(s);
    if (std::find(f.site_dirs.begin(), f.site_dirs.end(), r) == f.site_dirs.end()) f.site_dirs.push_back(r);
  }

  // PEP 668, ignored in a venv (pip's check_externally_managed).
  if (!f.venv && !f.stdlib.empty()) {
    std::string marker = join(f.stdlib, "EXTERNALLY-MANAGED");
    if (auto text = root.read(marker, kSmallFile)) {
      f.externally_managed = marker;
      IniFile ini = parse_ini(*text);
      if (auto* section = ini_section(ini, "externally-managed"))
        for (const auto& [k, v] : *section)
          if (k == "error") f.externally_managed_error = v;
      if (f.externally_managed_error.empty()) {
        f.externally_managed_error = kDefaultExternallyManaged;
        f.externally_managed_error.replace(f.externally_managed_error.find("{prefix}"), 8, f.prefix);
      }
    }
  }

  // Installed distributions: first per canonical name along sys.path.
  f.sys_path = site_sys_path(fs, f.site_dirs);
  f.installed = find_installed_distributions(fs, f.sys_path);
  const SiteDistribution* pip = f.find_installed("pip");
  if (!pip)
    throw Error(f.pip_path + " is there but no pip distribution is on " + f.executable + "'s sys.path",
                "the base image's pip installation is broken; reinstall pip in the base image");
  f.pip_version = pip->version;

  // libc and architecture from the interpreter's ELF.
  std::optional<ElfFile> elf;
  if (auto head = root.head(f.interpreter, 64u << 10)) elf = parse_elf(*head);
  if (elf) {
    f.elf_interpreter = elf->interpreter;
    f.machine = elf->machine;
  }
  std::string config_machine =
      cfg.architecture.empty() ? std::string() : machine_from_config(cfg.architecture, cfg.variant);
  if (!f.machine.empty() && !config_machine.empty()) {
    bool arm32 = f.machine.starts_with("armv") && config_machine.starts_with("armv");
    if (f.machine != config_machine && !arm32)
      throw Error(f.interpreter + " is a " + f.machine + " binary but the image config says " + cfg.architecture,
                  "the base image is inconsistent; pick the platform variant that matches its binaries");
    if (arm32) f.machine = config_machine;  // the ELF header does not say v6 or v7
  }
  if (f.machine.empty()) f.machine = config_machine;
  if (f.machine.empty())
    throw Error("cannot tell the architecture of " + f.interpreter,
                "the image config has no architecture and the interpreter is not a readable ELF file");
  if (f.elf_interpreter.find("ld-musl") != std::string::npos) {
    f.libc = "musl";
    if (apk_db) f.libc_version = upstream_version(apk_version(*apk_db, "musl"));
  } else if (f.elf_interpreter.find("ld-linux") != std::string::npos ||
             f.elf_interpreter.find("ld64.so") != std::string::npos ||
             f.elf_interpreter.find("ld.so") != std::string::npos) {
    f.libc = "glibc";
    std::vector<std::string> libc_paths = {join(parent_of(root.resolve(f.elf_interpreter)), "libc.so.6")};
    for (const char* d : {"/lib", "/usr/lib"})
      if (!f.multiarch.empty()) libc_paths.push_back(join(join(d, f.multiarch), "libc.so.6"));
    for (const char* p : {"/lib64/libc.so.6", "/usr/lib64/libc.so.6", "/lib/libc.so.6", "/usr/lib/libc.so.6"})
      libc_paths.push_back(p);
    for (const std::string& p : libc_paths) {
      if (!root.is_file(p)) continue;
      if (auto bytes = root.read(p, kLibcCap)) f.libc_version = glibc_banner_version(*bytes);
      if (f.libc_version.empty()) {  // older glibc: libc.so.6 -> libc-2.31.so
        std::string target = base_of(root.resolve(p));
        if (target.starts_with("libc-") && target.ends_with(".so")) f.libc_version = target.substr(5, target.size() - 8);
      }
      break;
    }
    if (f.libc_version.empty() && dpkg_status) {
      std::string v = upstream_version(dpkg_version(*dpkg_status, "libc6"));
      if (!v.empty()) f.libc_version = v;
    }
  }

  // A non-root user who cannot write the install dirs makes pip choose --user.
  if (!is_root_user(cfg.user)) {
    std::optional<std::uint32_t> uid, gid;
    std::string group = cfg.user.find(':') == std::string::npos ? "" : cfg.user.substr(cfg.user.find(':') + 1);
    if (pw) {
      uid = pw->uid;
      gid = pw->gid;
    } else if (all_digits(user_name)) {
      uid = static_cast<std::uint32_t>(std::stoul(user_name));
    }
    if (!group.empty()) gid = lookup_group(root, group);
    if (!uid)
      throw Error("the base image's User " + cfg.user + " is not in its /etc/passwd",
                  "set USER to a known user or a numeric uid");
    std::string dir = f.purelib;
    const PathInfo* info = nullptr;
    while (true) {
      info = root.info(dir);
      if (info || dir == "/") break;
      dir = parent_of(dir);
    }
    bool writable = info && ((info->uid == *uid && (info->mode & 0200)) ||
                             (gid && info->gid == *gid && (info->mode & 0020)) || (info->mode & 0002));
    if (!writable)
      throw Error("the base image runs as user " + cfg.user + ", who cannot write " + dir +
                      ", so pip would install with --user",
                  "user installs are not supported: build from a base whose USER can write " + f.purelib +
                      " (a venv owned by that user), or USER root");
  }

  f.pip_config = read_pip_config(fs, f.env, f.prefix, f.home);
  return f;
}

// ---- JSON ----

}  // namespace trainpack::python

// std::optional<bool> as null or a boolean (PipConfig::use_pep517).
template <>
struct nlohmann::adl_serializer<std::optional<bool>> {
  static void to_json(nlohmann::json& j, const std::optional<bool>& v) {
    if (v) j = *v;
    else j = nullptr;
  }
  static void from_json(const nlohmann::json& j, std::optional<bool>& v) {
    if (j.is_null()) v.reset();
    else v = j.get<bool>();
  }
};

namespace trainpack::python {

NLOHMANN_JSON_SERIALIZE_ENUM(DistributionForm, {{DistributionForm::kDistInfo, "dist-info"},
                                                {DistributionForm::kEggInfo, "egg-info"},
                                                {DistributionForm::kDistutilsEggInfo, "distutils-egg-info"},
                                                {DistributionForm::kEgg, "egg"},
                                                {DistributionForm::kDevelop, "develop"}})
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SiteDistribution, name, version, metadata_dir, record, site_dir, form, installer,
                                   egg_link, pth_file)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SysPathEntry, path, pth_file)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PipConfig, files, index_url, extra_index_urls, find_links, trusted_hosts,
                                   no_index, pre, compile, break_system_packages, prefer_binary, require_hashes,
                                   user, no_deps, ignore_installed, upgrade, upgrade_strategy, build_isolation,
                                   use_pep517, only_binary, no_binary, target, prefix, root, items)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PythonFacts, path, pip_command, pip_path, python_command, python_path,
                                   executable, interpreter, python_version, python_full_version, version_source,
                                   free_threaded, sysconfigdata, soabi, ext_suffix, abiflags, multiarch, platlibdir,
                                   py_debug, sysconfig_prefix, libdir, stdlib, prefix, base_prefix, venv, venv_home,
                                   include_system_site_packages, conda, distro_id, distro_version_id, distro_id_like,
                                   scheme_name, purelib, platlib, include, scripts, data, site_dirs, sys_path,
                                   externally_managed, externally_managed_error, installed, pip_version,
                                   elf_interpreter, libc, libc_version, machine, user, home, pip_config, env)

namespace {
constexpr int kJsonFormat = 2;
}

nlohmann::json to_json(const PythonFacts& facts) {
  nlohmann::json j;
  to_json(j, facts);
  return nlohmann::json{{"format", kJsonFormat}, {"facts", j}};
}

PythonFacts python_facts_from_json(const nlohmann::json& j) {
  try {
    if (j.at("format").get<int>() != kJsonFormat) throw Error("cached Python facts have another format version");
    PythonFacts f;
    from_json(j.at("facts"), f);
    return f;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("cached Python facts are malformed: ") + e.what(), "delete the cache entry");
  }
}

}  // namespace trainpack::python
