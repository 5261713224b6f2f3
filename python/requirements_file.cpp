#include "python/requirements_file.h"

#include <algorithm>
#include <cctype>

#include "net/encoding.h"
#include "net/url.h"
#include "python/names.h"
#include "python/urllib.h"
#include "support/byte_regex.h"
#include "support/error.h"
#include "support/fs.h"
#include "support/text.h"
#include "support/utf8.h"

namespace trainpack::python {

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Decoding (pip utils/encoding.py auto_decode)

[[noreturn]] void decode_error(const std::string& name, const std::string& what) {
  throw Error("cannot decode requirements file '" + name + "': " + what,
              "save it as UTF-8 (or declare its encoding with a '# -*- coding: ... -*-' first line)");
}

// Strict UTF-8 as Python decodes it: no overlongs, no surrogates, nothing above U+10FFFF.
void validate_utf8(std::string_view s, const std::string& name) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) decode_error(name, "invalid UTF-8 sequence at offset " + std::to_string(i));
    i += n;
  }
}

std::string decode_utf16_32(std::string_view s, int width, bool big_endian, const std::string& name) {
  if (s.size() % width != 0) decode_error(name, "truncated UTF-" + std::to_string(width * 8) + " data");
  std::string out;
  auto unit = [&](size_t i) {
    char32_t v = 0;
    for (int k = 0; k < width; ++k) {
      char32_t b = static_cast<unsigned char>(s[i + (big_endian ? k : width - 1 - k)]);
      v = (v << 8) | b;
    }
    return v;
  };
  for (size_t i = 0; i < s.size(); i += width) {
    char32_t cp = unit(i);
    if (width == 2 && cp >= 0xD800 && cp <= 0xDBFF) {
      if (i + 2 >= s.size()) decode_error(name, "unpaired UTF-16 surrogate");
      char32_t lo = unit(i + 2);
      if (lo < 0xDC00 || lo > 0xDFFF) decode_error(name, "unpaired UTF-16 surrogate");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      i += 2;
    } else if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      decode_error(name, "invalid code point");
    }
    append_utf8(out, cp);
  }
  return out;
}

// Python codec name normalisation (encodings.normalize_encoding + lower) for the codecs we know.
std::string codec_key(std::string_view name) {
  std::string out;
  bool pending = false;
  for (char c : name) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.') {
      if (pending && !out.empty()) out += '_';
      pending = false;
      out += ascii_lower(c);
    } else {
      pending = true;
    }
  }
  return out;
}

}  // namespace

std::string decode_requirements_bytes(std::string_view bytes, const std::string& name) {
  struct Bom {
    std::string_view bytes;
    int width;
    bool big_endian;
  };
  // UTF-32 before UTF-16: FF FE 00 00 starts with the UTF-16-LE BOM.
  static const Bom boms[] = {{std::string_view("\x00\x00\xFE\xFF", 4), 4, true},
                             {std::string_view("\xFF\xFE\x00\x00", 4), 4, false},
                             {std::string_view("\xFE\xFF", 2), 2, true},
                             {std::string_view("\xFF\xFE", 2), 2, false}};
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") {
    validate_utf8(bytes.substr(3), name);
    return std::string(bytes.substr(3));
  }
  for (const Bom& bom : boms)
    if (bytes.substr(0, bom.bytes.size()) == bom.bytes)
      return decode_utf16_32(bytes.substr(bom.bytes.size()), bom.width, bom.big_endian, name);
  // PEP 263: the first two b"\n"-separated lines, starting with '#', containing coding[:=]\s*([-\w.]+).
  std::string encoding;
  size_t start = 0;
  for (int n = 0; n < 2 && start <= bytes.size() && encoding.empty(); ++n) {
    size_t end = bytes.find('\n', start);
    std::string_view line = bytes.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!line.empty() && line[0] == '#') {
      for (size_t at = line.find("coding"); at != std::string_view::npos; at = line.find("coding", at + 1)) {
        size_t i = at + 6;
        if (i >= line.size() || (line[i] != ':' && line[i] != '=')) continue;
        ++i;
        while (i < line.size() && (line[i] == ' ' || (line[i] >= '\t' && line[i] <= '\r'))) ++i;
        size_t j = i;
        while (j < line.size() && (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '_' ||
                                   line[j] == '-' || line[j] == '.'))
          ++j;
        if (j > i) {
          encoding = std::string(line.substr(i, j - i));
          break;
        }
      }
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (encoding.empty()) {
    validate_utf8(bytes, name);
    return std::string(bytes);
  }
  std::string key = codec_key(encoding);
  static const std::set<std::string> utf8 = {"utf_8", "utf8", "u8", "utf", "utf8_ucs2", "utf8_ucs4", "cp65001",
                                             "utf_8_sig"};
  static const std::set<std::string> latin1 = {"latin_1", "latin1", "latin", "l1", "iso8859_1", "iso_8859_1",
                                               "8859", "cp819", "iso_ir_100", "csisolatin1", "iso_8859_1_1987",
                                               "ibm819"};
  static const std::set<std::string> ascii = {"ascii", "us_ascii", "646", "us", "cp367", "csascii", "ibm367",
                                              "iso646_us", "iso_ir_6", "ansi_x3.4_1968", "ansi_x3_4_1968",
                                              "iso_646.irv_1991"};
  if (utf8.count(key)) {
    validate_utf8(bytes, name);
    return std::string(bytes);
  }
  if (latin1.count(key)) {
    std::string out;
    out.reserve(bytes.size());
    for (char c : bytes) append_utf8(out, static_cast<unsigned char>(c));
    return out;
  }
  if (ascii.count(key)) {
    for (size_t i = 0; i < bytes.size(); ++i)
      if (static_cast<unsigned char>(bytes[i]) >= 0x80)
        decode_error(name, "non-ASCII byte at offset " + std::to_string(i) + " (declared coding: " + encoding + ")");
    return std::string(bytes);
  }
  throw Error("requirements file '" + name + "' declares the unsupported encoding '" + encoding + "'",
              "supported coding declarations: utf-8, latin-1, ascii; or save the file as UTF-8");
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Python str semantics on valid UTF-8

// The code point at s[i] of valid UTF-8 (the file was checked when decoded), its length in *len.
char32_t code_point_at(std::string_view s, size_t i, size_t* len) {
  auto [code_point, length] = decode_utf8(s, i);
  *len = length == 0 ? 1 : length;
  return code_point;
}

// str.isspace / re's \s for str patterns.
bool is_unicode_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// str.splitlines boundaries.
bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
         c == 0x2028 || c == 0x2029;
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0, i = 0;
  while (i < s.size()) {
    size_t len;
    char32_t c = code_point_at(s, i, &len);
    if (is_line_break(c)) {
      out.push_back(s.substr(start, i - start));
      i += len;
      if (c == '\r' && i < s.size() && s[i] == '\n') ++i;
      start = i;
    } else {
      i += len;
    }
  }
  if (start < s.size()) out.push_back(s.substr(start));
  return out;
}

std::string_view unicode_strip(std::string_view s) {
  size_t b = 0;
  while (b < s.size()) {
    size_t len;
    if (!is_unicode_space(code_point_at(s, b, &len))) break;
    b += len;
  }
  size_t e = s.size();
  while (e > b) {
    size_t p = e - 1;
    while (p > b && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
    size_t len;
    if (!is_unicode_space(code_point_at(s, p, &len))) break;
    e = p;
  }
  return s.substr(b, e - b);
}

// COMMENT_RE.match: optional whitespace, then '#'.
bool starts_as_comment(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t len;
    if (!is_unicode_space(code_point_at(s, i, &len))) break;
    i += len;
  }
  return i < s.size() && s[i] == '#';
}

// COMMENT_RE.sub("", s): cut at the first '#' that starts the line or follows whitespace, with that whitespace.
std::string_view strip_comment(std::string_view s) {
  size_t run_start = std::string_view::npos;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    char32_t c = code_point_at(s, i, &len);
    if (c == '#' && (i == 0 || run_start != std::string_view::npos))
      return s.substr(0, i == 0 ? 0 : run_start);
    if (is_unicode_space(c)) {
      if (run_start == std::string_view::npos) run_start = i;
    } else {
      run_start = std::string_view::npos;
    }
    i += len;
  }
  return s;
}

std::string_view strip_chars(std::string_view s, char c) {
  while (!s.empty() && s.front() == c) s.remove_prefix(1);
  while (!s.empty() && s.back() == c) s.remove_suffix(1);
  return s;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  size_t start = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
    out.append(s, start, at - start);
    out.append(to);
    start = at + from.size();
  }
  out.append(s, start, std::string::npos);
  s = std::move(out);
}

std::string expand_env(std::string line, const std::map<std::string, std::string>& vars) {
  // ENV_VAR_RE.findall on the line as read, then str.replace one variable after the other (as pip does).
  std::vector<std::pair<std::string, std::string>> found;  // ("${NAME}", NAME)
  for (size_t i = line.find("${"); i != std::string::npos;) {
    size_t j = i + 2;
    while (j < line.size() && ((line[j] >= 'A' && line[j] <= 'Z') || (line[j] >= '0' && line[j] <= '9') ||
                               line[j] == '_'))
      ++j;
    if (j > i + 2 && j < line.size() && line[j] == '}') {
      found.emplace_back(line.substr(i, j + 1 - i), line.substr(i + 2, j - i - 2));
      i = line.find("${", j + 1);
    } else {
      i = line.find("${", i + 1);
    }
  }
  for (const auto& [var, name] : found) {
    auto it = vars.find(name);
    if (it == vars.end() || it->second.empty()) continue;
    replace_all(line, var, it->second);
  }
  return line;
}

}  // namespace

std::vector<std::pair<int, std::string>> preprocess_requirements(std::string_view text,
                                                                 const std::map<std::string, std::string>& vars) {
  // join_lines
  std::vector<std::pair<int, std::string>> joined;
  std::string pending;
  bool continuing = false;
  int primary = 0, number = 0;
  for (std::string_view line : split_lines(text)) {
    ++number;
    bool comment = starts_as_comment(line);
    if (line.empty() || line.back() != '\\' || comment) {
      std::string l = comment ? " " + std::string(line) : std::string(line);
      if (continuing) {
        pending += l;
        joined.emplace_back(primary, std::move(pending));
        pending.clear();
        continuing = false;
      } else {
        joined.emplace_back(number, std::move(l));
      }
    } else {
      if (!continuing) primary = number;
      continuing = true;
      pending += strip_chars(line, '\\');
    }
  }
  if (continuing) joined.emplace_back(primary, std::move(pending));
  // ignore_comments, expand_env_variables
  std::vector<std::pair<int, std::string>> out;
  for (auto& [n, line] : joined) {
    std::string_view l = unicode_strip(strip_comment(line));
    if (l.empty()) continue;
    out.emplace_back(n, expand_env(std::string(l), vars));
  }
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Option splitting (break_args_options, shlex.split, optparse)

std::pair<std::string, std::string> break_args_options(std::string_view line) {
  std::vector<std::string_view> tokens = split_at(line, ' ');
  size_t k = 0;
  while (k < tokens.size() && !(!tokens[k].empty() && tokens[k][0] == '-')) ++k;
  auto joined = [&](size_t from, size_t to) {
    return join(std::vector<std::string>(tokens.begin() + from, tokens.begin() + to), " ");
  };
  return {joined(0, k), joined(k, tokens.size())};
}

// shlex.split(s) (posix, no comments); nullopt where Python raises ValueError.
std::optional<std::vector<std::string>> shlex_split(std::string_view s) {
  std::vector<std::string> out;
  std::string token;
  bool have = false;
  auto is_ws = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (is_ws(c)) {
      if (have) out.push_back(std::move(token));
      token.clear();
      have = false;
    } else if (c == '\\') {
      if (++i >= s.size()) return std::nullopt;  // "No escaped character"
      token += s[i];
      have = true;
    } else if (c == '\'' || c == '"') {
      have = true;
      for (++i;; ++i) {
        if (i >= s.size()) return std::nullopt;  // "No closing quotation"
        if (s[i] == c) break;
        if (c == '"' && s[i] == '\\') {
          if (i + 1 >= s.size()) return std::nullopt;
          if (s[i + 1] == '"' || s[i + 1] == '\\') ++i;
        }
        token += s[i];
      }
    } else {
      token += c;
      have = true;
    }
  }
  if (have) out.push_back(std::move(token));
  return out;
}

enum class Opt {
  index_url, extra_index_url, no_index, constraint, requirement, editable, find_links, no_binary, only_binary,
  prefer_binary, require_hashes, pre, trusted_host, use_feature, install_option, global_option, hash, config_settings
};

struct OptSpec {
  Opt id;
  std::vector<std::string_view> names;
  bool takes_value;
};

const std::vector<OptSpec>& option_specs() {
  static const std::vector<OptSpec> specs = {
      {Opt::index_url, {"-i", "--index-url", "--pypi-url"}, true},
      {Opt::extra_index_url, {"--extra-index-url"}, true},
      {Opt::no_index, {"--no-index"}, false},
      {Opt::constraint, {"-c", "--constraint"}, true},
      {Opt::requirement, {"-r", "--requirement"}, true},
      {Opt::editable, {"-e", "--editable"}, true},
      {Opt::find_links, {"-f", "--find-links"}, true},
      {Opt::no_binary, {"--no-binary"}, true},
      {Opt::only_binary, {"--only-binary"}, true},
      {Opt::prefer_binary, {"--prefer-binary"}, false},
      {Opt::require_hashes, {"--require-hashes"}, false},
      {Opt::pre, {"--pre"}, false},
      {Opt::trusted_host, {"--trusted-host"}, true},
      {Opt::use_feature, {"--use-feature"}, true},
      {Opt::install_option, {"--install-option"}, true},
      {Opt::global_option, {"--global-option"}, true},
      {Opt::hash, {"--hash"}, true},
      {Opt::config_settings, {"-C", "--config-settings"}, true},
  };
  return specs;
}

struct OptionError {
  std::string message;
};

// The options of one line (pip builds a fresh optparse parser per line; only the FormatControl is shared).
struct LineOptions {
  std::optional<std::string> index_url;
  std::vector<std::string> extra_index_urls, constraints, requirements, editables, find_links, trusted_hosts,
      install_options, global_options;
  bool no_index = false, prefer_binary = false, require_hashes = false, pre = false;
  std::vector<std::pair<std::string, std::string>> hashes, config_settings;
};

void apply_option(LineOptions& o, Opt id, const std::string& opt_str, const std::string& value, FormatControl& fc) {
  switch (id) {
    case Opt::index_url: o.index_url = value; break;
    case Opt::extra_index_url: o.extra_index_urls.push_back(value); break;
    case Opt::no_index: o.no_index = true; break;
    case Opt::constraint: o.constraints.push_back(value); break;
    case Opt::requirement: o.requirements.push_back(value); break;
    case Opt::editable: o.editables.push_back(value); break;
    case Opt::find_links: o.find_links.push_back(value); break;
    case Opt::no_binary:
    case Opt::only_binary:
      if (!value.empty() && value[0] == '-') throw OptionError{"--no-binary / --only-binary option requires 1 argument."};
      if (id == Opt::no_binary) fc.add_no_binary(value);
      else fc.add_only_binary(value);
      break;
    case Opt::prefer_binary: o.prefer_binary = true; break;
    case Opt::require_hashes: o.require_hashes = true; break;
    case Opt::pre: o.pre = true; break;
    case Opt::trusted_host: o.trusted_hosts.push_back(value); break;
    case Opt::use_feature: break;
    case Opt::install_option: o.install_options.push_back(value); break;
    case Opt::global_option: o.global_options.push_back(value); break;
    case Opt::hash: {
      size_t colon = value.find(':');
      if (colon == std::string::npos)
        throw OptionError{"Arguments to " + opt_str +
                          " must be a hash name followed by a value, like --hash=sha256:abcde..."};
      std::string algo = value.substr(0, colon);
      if (algo != "sha256" && algo != "sha384" && algo != "sha512")
        throw OptionError{"Allowed hash algorithms for " + opt_str + " are sha256, sha384, sha512."};
      o.hashes.emplace_back(algo, value.substr(colon + 1));
      break;
    }
    case Opt::config_settings: {
      size_t eq = value.find('=');
      if (eq == std::string::npos) throw OptionError{"Arguments to " + opt_str + " must be of the form KEY=VAL"};
      o.config_settings.emplace_back(value.substr(0, eq), value.substr(eq + 1));
      break;
    }
  }
}

// optparse's parse_args: long options by unique prefix, "--opt=value", clustered short options, "--" ends
// options; positional arguments among the options are ignored, as pip ignores them.
LineOptions parse_options(const std::vector<std::string>& args, FormatControl& fc) {
  LineOptions o;
  const auto& specs = option_specs();
  for (size_t i = 0; i < args.size();) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) == 0) {
      ++i;
      std::string opt = arg;
      std::optional<std::string> explicit_value;
      if (size_t eq = arg.find('='); eq != std::string::npos) {
        opt = arg.substr(0, eq);
        explicit_value = arg.substr(eq + 1);
      }
      const OptSpec* match = nullptr;
      std::string match_name;
      std::vector<std::string> candidates;
      for (const auto& spec : specs)
        for (std::string_view name : spec.names) {
          if (name.size() < 3 || name[1] != '-') continue;
          if (name == opt) {
            match = &spec;
            match_name = std::string(name);
            candidates = {match_name};
            goto found;
          }
          if (name.rfind(opt, 0) == 0) {
            candidates.emplace_back(name);
            match = &spec;
            match_name = std::string(name);
          }
        }
    found:
      if (candidates.empty()) throw OptionError{"no such option: " + opt};
      if (candidates.size() > 1) {
        std::sort(candidates.begin(), candidates.end());
        std::string list;
        for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
        throw OptionError{"ambiguous option: " + opt + " (" + list + "?)"};
      }
      std::string value;
      if (match->takes_value) {
        if (explicit_value) {
          value = *explicit_value;
        } else {
          if (i >= args.size()) throw OptionError{match_name + " option requires 1 argument"};
          value = args[i++];
        }
      } else if (explicit_value) {
        throw OptionError{match_name + " option does not take a value"};
      }
      apply_option(o, match->id, match_name, value, fc);
    } else if (arg.size() > 1 && arg[0] == '-') {
      ++i;
      for (size_t k = 1; k < arg.size(); ++k) {
        std::string opt = std::string("-") + arg[k];
        const OptSpec* match = nullptr;
        for (const auto& spec : specs)
          for (std::string_view name : spec.names)
            if (name == opt) match = &spec;
        if (!match) throw OptionError{"no such option: " + opt};
        std::string value;
        if (match->takes_value) {
          if (k + 1 < arg.size()) {
            value = arg.substr(k + 1);
          } else {
            if (i >= args.size()) throw OptionError{opt + " option requires 1 argument"};
            value = args[i++];
          }
          apply_option(o, match->id, opt, value, fc);
          break;
        }
        apply_option(o, match->id, opt, value, fc);
      }
    } else {
      ++i;  // positional: optparse collects it, pip ignores it
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------------------------
// URLs and paths (pip utils/urls.py, vcs, models/link.py, utils/filetypes.py, utils/misc.py splitext)

const std::vector<std::string_view>& vcs_schemes() {
  static const std::vector<std::string_view> schemes = {
      "bzr+http", "bzr+https", "bzr+ssh",  "bzr+sftp", "bzr+ftp",        "bzr+lp",  "bzr+file", "git+http",
      "git+https", "git+ssh",  "git+git",  "git+file", "hg+file",        "hg+http", "hg+https", "hg+ssh",
      "hg+static-http", "svn+ssh", "svn+http", "svn+https", "svn+svn", "svn+file"};
  return schemes;
}

std::optional<std::string> url_scheme(std::string_view url) {
  size_t colon = url.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return ascii_lower(url.substr(0, colon));
}

bool is_vcs_scheme(const std::string& scheme) {
  const auto& v = vcs_schemes();
  return std::find(v.begin(), v.end(), scheme) != v.end();
}

bool is_url(std::string_view name) {
  auto scheme = url_scheme(name);
  if (!scheme) return false;
  return *scheme == "http" || *scheme == "https" || *scheme == "file" || *scheme == "ftp" || is_vcs_scheme(*scheme);
}

bool looks_like_path(std::string_view name) { return name.find('/') != std::string_view::npos || (!name.empty() && name[0] == '.'); }

// pip's misc.splitext (".tar.*" kept together) over posixpath.splitext.
std::string archive_ext(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  std::string_view stem = base, ext;
  if (dot != std::string_view::npos && base.find_first_not_of('.') < dot) {
    stem = base.substr(0, dot);
    ext = base.substr(dot);
  }
  std::string e(ext);
  if (stem.size() >= 4 && ascii_lower(stem.substr(stem.size() - 4)) == ".tar") e = std::string(stem.substr(stem.size() - 4)) + e;
  return ascii_lower(e);
}

bool is_archive_file(std::string_view name) {
  static const std::set<std::string> exts = {".zip", ".whl", ".tar.bz2", ".tbz", ".tar.gz", ".tgz", ".tar",
                                             ".tar.xz", ".txz", ".tlz", ".tar.lz", ".tar.lzma"};
  return exts.count(archive_ext(name)) > 0;
}

// Link.filename: last path segment (percent-decoded), or the host when the path is empty.
std::string link_filename(std::string_view url) {
  net::UrlParts u = urlsplit(url);
  std::string path = net::percent_decode(u.path);
  while (!path.empty() && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) return u.authority;
  return net::percent_decode(name);
}

// Link.egg_fragment: [#&]egg=([^&]*) anywhere in the URL.
std::optional<std::string> egg_fragment(std::string_view url) {
  for (size_t i = url.find("egg="); i != std::string_view::npos; i = url.find("egg=", i + 1)) {
    if (i == 0 || (url[i - 1] != '#' && url[i - 1] != '&')) continue;
    size_t start = i + 4;
    size_t end = url.find('&', start);
    return std::string(url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
  }
  return std::nullopt;
}

// _strip_extras: ^(.+)(\[[^\]]+\])$
std::pair<std::string, std::string> strip_extras(std::string_view s) {
  if (s.size() >= 4 && s.back() == ']') {
    size_t open = s.rfind('[');
    if (open != std::string_view::npos && open >= 1 && open + 2 < s.size() &&
        s.substr(open + 1, s.size() - open - 2).find(']') == std::string_view::npos)
      return {std::string(s.substr(0, open)), std::string(s.substr(open))};
  }
  return {std::string(s), ""};
}

// ---------------------------------------------------------------------------------------------------------------
// Paths and URLs of requirements files

std::string posix_join(std::string_view a, std::string_view b) {
  if (!b.empty() && b[0] == '/') return std::string(b);
  if (a.empty() || a.back() == '/') return std::string(a) + std::string(b);
  return std::string(a) + "/" + std::string(b);
}

std::string posix_dirname(std::string_view p) {
  size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return "";
  std::string_view head = p.substr(0, slash + 1);
  if (head.find_first_not_of('/') != std::string_view::npos)
    while (!head.empty() && head.back() == '/') head.remove_suffix(1);
  return std::string(head);
}

std::string normpath(std::string_view p) {
  bool absolute = !p.empty() && p[0] == '/';
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    std::string_view c = p.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (c.empty() || c == ".") {
    } else if (c == "..") {
      if (!parts.empty() && parts.back() != "..") parts.pop_back();
      else if (!absolute) parts.push_back(c);
    } else {
      parts.push_back(c);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + std::string(parts[i]);
  return out.empty() ? "." : out;
}

bool is_remote_scheme(std::string_view s) {  // SCHEME_RE: ^(http|https|file):  (case-insensitive)
  auto scheme = url_scheme(s);
  return scheme && (*scheme == "http" || *scheme == "https" || *scheme == "file");
}

// urllib.parse.urljoin for http(s)/file bases and a relative or absolute reference.
std::string url_join(const std::string& base, const std::string& ref) {
  if (urlsplit(ref).has_scheme) return ref;
  net::UrlParts b = urlsplit(base);
  std::string prefix = b.scheme + "://" + b.authority;
  if (ref.rfind("//", 0) == 0) return b.scheme + ":" + ref;
  if (!ref.empty() && ref[0] == '/') return prefix + normpath(ref);
  std::string dir = b.path.substr(0, b.path.rfind('/') + 1);
  std::string joined = normpath(dir + ref);
  if (!ref.empty() && ref.back() == '/') joined += '/';
  return prefix + joined;
}

// ---------------------------------------------------------------------------------------------------------------

[[noreturn]] void line_error(const std::string& file, int line, const std::string& reason,
                             const std::string& hint = {}) {
  throw Error(file + ":" + std::to_string(line) + ": " + visible_text(reason), hint);
}

const char* kOptionsHint =
    "pip accepts in requirements files: -i/--index-url, --extra-index-url, --no-index, -f/--find-links, "
    "-r/--requirement, -c/--constraint, -e/--editable, --no-binary, --only-binary, --prefer-binary, "
    "--require-hashes, --pre, --trusted-host, --use-feature; per requirement: --hash, --config-settings, "
    "--global-option";

std::optional<Requirement> parse_requirement_or_fail(const std::string& text, const std::string& file, int line) {
  try {
    return Requirement::parse(text);
  } catch (const Error& e) {
    std::string hint;
    static const char* ops[] = {"~=", "==", "!=", "<=", ">=", "<", ">", "==="};
    bool has_op = std::any_of(std::begin(ops), std::end(ops), [&](const char* op) { return text.find(op) != std::string::npos; });
    if (text.find('/') != std::string::npos)
      hint = "It looks like a path; paths are resolved against pip's working directory, not the requirements file";
    else if (text.find('=') != std::string::npos && !has_op)
      hint = "= is not a valid operator. Did you mean == ?";
    line_error(file, line, "Invalid requirement: '" + text + "' (" + e.what() + ")", hint);
  }
}

// The name==version pip derives from a wheel file name (models/wheel.py wheel_file_re).
std::string wheel_requirement(const std::string& filename, const std::string& file, int line) {
  // [^\t\n\v\f\r -] stands for pip's [^\s-] (Python's \s also takes \x1c-\x1f and non-ASCII spaces).
  static const RE2 re(
      R"((([^\t\n\v\f\r -]+?)-([^\t\n\v\f\r -]*?))((-([0-9][^-]*?))?-([^\t\n\v\f\r -]+?)-([^\t\n\v\f\r -]+?)-)"
      R"(([^\t\n\v\f\r -]+?)\.whl|\.dist-info))",
      byte_regex_options());
  re2::StringPiece name_part, version_part;
  if (!RE2::FullMatch(filename, re, nullptr, &name_part, &version_part))
    line_error(file, line, filename + " is not a valid wheel filename.");
  std::string name(name_part), version(version_part);
  std::replace(name.begin(), name.end(), '_', '-');
  std::replace(version.begin(), version.end(), '_', '-');
  return name + "==" + version;
}

void fill_from_link(RequirementLine& r, const std::string& url, const std::string& file, int line) {
  std::string filename = link_filename(url);
  std::optional<std::string> req_text;
  if (archive_ext(filename) == ".whl") req_text = wheel_requirement(filename, file, line);
  else req_text = egg_fragment(url);
  if (req_text) r.requirement = parse_requirement_or_fail(*req_text, file, line);
}

std::set<std::string> convert_extras(const std::string& extras, const std::string& file, int line) {
  if (extras.empty()) return {};
  return parse_requirement_or_fail("placeholder" + ascii_lower(extras), file, line)->extras;
}

// constructors.parse_req_from_line, by appearance (the file system is the image's, checked by the caller).
void classify_line(RequirementLine& r, const std::string& file, int line) {
  std::string name = r.requirement_text;
  const std::string marker_sep = is_url(name) ? "; " : ";";
  if (size_t at = name.find(marker_sep); at != std::string::npos) {
    std::string marker_text(unicode_strip(std::string_view(name).substr(at + marker_sep.size())));
    name.resize(at);
    if (!marker_text.empty()) {
      try {
        r.marker = Marker(marker_text);
      } catch (const Error& e) {
        line_error(file, line, e.what());
      }
    }
  }
  name = std::string(unicode_strip(name));
  if (is_url(name)) {
    r.kind = is_vcs_scheme(*url_scheme(name)) ? RequirementLine::Kind::vcs : RequirementLine::Kind::url;
    r.location = name;
    fill_from_link(r, name, file, line);
  } else {
    auto [path, extras] = strip_extras(name);
    bool is_path = false;
    if (is_archive_file(path)) {
      size_t at = name.find('@');
      is_path = at == std::string::npos || looks_like_path(name.substr(0, at));
    } else if (looks_like_path(name)) {
      // pip takes an existing directory first; a PEP 508 string cannot be one, so "parses" means "named".
      try {
        (void)Requirement::parse(name);
      } catch (const Error&) {
        is_path = true;
      }
    }
    if (is_path) {
      r.kind = RequirementLine::Kind::path;
      r.location = path;
      r.extras = convert_extras(extras, file, line);
      if (archive_ext(path) == ".whl") {
        size_t slash = path.rfind('/');
        r.requirement = parse_requirement_or_fail(
            wheel_requirement(slash == std::string::npos ? path : path.substr(slash + 1), file, line), file, line);
      }
    } else {
      r.kind = RequirementLine::Kind::named;
      r.requirement = parse_requirement_or_fail(name, file, line);
      r.location = r.requirement->url;
      if (auto scheme = url_scheme(r.location); scheme && is_vcs_scheme(*scheme)) r.kind = RequirementLine::Kind::vcs;
    }
  }
  if (r.requirement && r.marker) r.requirement->marker = r.marker;
}

// constructors.parse_editable, by appearance: file: URL, VCS URL (bare "git:" gets "git+"), else a directory.
void classify_editable(RequirementLine& r, const std::string& text, const std::string& file, int line) {
  auto [no_extras, extras] = strip_extras(text);
  r.editable = true;
  if (ascii_lower(no_extras).rfind("file:", 0) == 0) {
    r.kind = RequirementLine::Kind::url;
    r.location = no_extras;
    r.extras = convert_extras(extras, file, line);
    if (auto egg = egg_fragment(no_extras)) r.requirement = parse_requirement_or_fail(*egg, file, line);
    return;
  }
  std::string url = text;
  for (std::string_view vcs : {"bzr", "git", "hg", "svn"})
    if (ascii_lower(url).rfind(std::string(vcs) + ":", 0) == 0) {
      url = std::string(vcs) + "+" + url;
      break;
    }
  std::string scheme = urlsplit(url).scheme;
  if (is_vcs_scheme(scheme)) {
    r.kind = RequirementLine::Kind::vcs;
    r.location = url;
    auto egg = egg_fragment(url);
    if (!egg || egg->empty())
      line_error(file, line,
                 "Could not detect requirement name for '" + text + "', please specify one with #egg=your_package_name",
                 "or use 'name @ " + url + "'");
    r.requirement = parse_requirement_or_fail(*egg, file, line);
    return;
  }
  if (!scheme.empty() && scheme.size() > 1)
    line_error(file, line,
               text + " is not a valid editable requirement. It should either be a path to a local project or a "
                      "VCS URL (beginning with bzr+http, bzr+https, bzr+ssh, bzr+sftp, bzr+ftp, bzr+lp, bzr+file, "
                      "git+http, git+https, git+ssh, git+git, git+file, hg+file, hg+http, hg+https, hg+ssh, "
                      "hg+static-http, svn+ssh, svn+http, svn+https, svn+svn, svn+file).");
  r.kind = RequirementLine::Kind::path;
  r.location = no_extras;
  r.extras = convert_extras(extras, file, line);
}

class Parser {
 public:
  explicit Parser(const RequirementsEnv& env) : env_(env) {}

  void parse_file(const std::string& filename, bool constraint, const std::string& included_from) {
    std::string key = is_remote_scheme(filename) ? filename : normpath(posix_join(env_.cwd, filename));
    if (std::find(stack_.begin(), stack_.end(), key) != stack_.end())
      throw Error(included_from + ": requirements file '" + filename + "' includes itself (recursion)",
                  "remove the -r/-c line that leads back to a file already being read");
    std::string text = load(filename, included_from);
    stack_.push_back(key);
    parse_text(text, filename, constraint);
    stack_.pop_back();
  }

  void parse_text(std::string_view text, const std::string& filename, bool constraint) {
    for (auto& [number, line] : preprocess_requirements(text, env_.vars)) handle_line(filename, number, line, constraint);
  }

  RequirementsFile result;

 private:
  std::string load(const std::string& filename, const std::string& included_from) {
    std::string where = included_from.empty() ? "" : included_from + ": ";
    auto scheme = url_scheme(filename);
    if (scheme && (*scheme == "http" || *scheme == "https")) {
      if (!env_.fetch_url)
        throw Error(where + "requirements file URL '" + filename + "' is not supported",
                    "download the file into the build context and use -r with its path");
      return decode_requirements_bytes(env_.fetch_url(filename), filename);
    }
    std::string path = filename;
    if (scheme && *scheme == "file") {
      net::UrlParts u = urlsplit(filename);
      if (!u.authority.empty() && u.authority != "localhost")
        throw Error(where + "non-local file URIs are not supported: " + filename);
      path = net::percent_decode(u.path);
    }
    std::optional<std::string> bytes;
    if (env_.read_file) {
      bytes = env_.read_file(path);
    } else if (std::filesystem::exists(path)) {
      bytes = trainpack::read_file(path);
    }
    if (!bytes)
      throw Error(where + "Could not open requirements file: [Errno 2] No such file or directory: '" + path + "'",
                  included_from.empty() ? "" : "nested -r/-c paths are relative to the including file's directory");
    return decode_requirements_bytes(*bytes, filename);
  }

  bool exists(const std::string& path) const {
    return env_.path_exists ? env_.path_exists(path) : std::filesystem::exists(path);
  }

  void handle_line(const std::string& filename, int number, const std::string& line, bool constraint) {
    auto [args, options_text] = break_args_options(line);
    auto tokens = shlex_split(options_text);
    if (!tokens) line_error(filename, number, "Could not split options: " + options_text, "check the quoting");
    LineOptions o;
    try {
      o = parse_options(*tokens, result.options.format_control);
    } catch (const OptionError& e) {
      line_error(filename, number, "Invalid requirement: " + line + " (" + e.message + ")", kOptionsHint);
    }
    if (!args.empty() || !o.editables.empty()) {
      RequirementLine r;
      r.file = filename;
      r.line_number = number;
      r.line = line;
      r.constraint = constraint;
      if (!args.empty()) {
        r.requirement_text = args;
        if (!o.install_options.empty())
          line_error(filename, number, "--install-option is not supported",
                     "pip 23.1 removed it; it only applies to 'setup.py install', which trainpack never runs");
        r.hashes = o.hashes;
        r.config_settings = o.config_settings;
        r.global_options = o.global_options;
        classify_line(r, filename, number);
      } else {
        r.requirement_text = o.editables.front();
        r.config_settings = o.config_settings;  // pip >= 23.1; 23.0.1 drops every option of an editable line
        classify_editable(r, r.requirement_text, filename, number);
      }
      result.lines.push_back(std::move(r));
      return;
    }
    if (!o.requirements.empty() || !o.constraints.empty()) {
      bool nested_constraint = o.requirements.empty();
      std::string req_path = nested_constraint ? o.constraints.front() : o.requirements.front();
      if (is_remote_scheme(filename)) req_path = url_join(filename, req_path);
      else if (!is_remote_scheme(req_path)) req_path = posix_join(posix_dirname(filename), req_path);
      parse_file(req_path, nested_constraint, filename + ":" + std::to_string(number));
      return;
    }
    RequirementsOptions& opts = result.options;
    if (o.require_hashes) opts.require_hashes = true;
    if (o.no_index) {
      opts.no_index = true;
      opts.index_url.reset();
      opts.extra_index_urls.clear();
    }
    if (o.index_url && !o.index_url->empty() && !opts.no_index) {
      opts.index_url = *o.index_url;
      opts.extra_index_urls.clear();
    }
    if (!opts.no_index)
      opts.extra_index_urls.insert(opts.extra_index_urls.end(), o.extra_index_urls.begin(), o.extra_index_urls.end());
    if (!o.find_links.empty()) {
      std::string value = o.find_links.front();
      std::string req_dir = posix_dirname(normpath(posix_join(env_.cwd, filename)));
      std::string relative = posix_join(req_dir, value);
      if (exists(relative)) value = relative;
      opts.find_links.push_back(value);
    }
    if (o.pre) opts.pre = true;
    if (o.prefer_binary) opts.prefer_binary = true;
    opts.trusted_hosts.insert(opts.trusted_hosts.end(), o.trusted_hosts.begin(), o.trusted_hosts.end());
  }

  const RequirementsEnv& env_;
  std::vector<std::string> stack_;
};

void handle_mutual_excludes(std::string_view value, std::set<std::string>& target, std::set<std::string>& other) {
  std::vector<std::string_view> items = split_at(value, ',');
  size_t from = 0;
  for (;;) {
    auto all = std::find(items.begin() + from, items.end(), ":all:");
    if (all == items.end()) break;
    other.clear();
    target.clear();
    target.insert(":all:");
    from = static_cast<size_t>(all - items.begin()) + 1;
    if (std::find(items.begin() + from, items.end(), ":none:") == items.end()) return;
  }
  for (size_t i = from; i < items.size(); ++i) {
    if (items[i] == ":none:") {
      target.clear();
      continue;
    }
    std::string name = canonicalize_name(items[i]);
    other.erase(name);
    target.insert(name);
  }
}

}  // namespace

void FormatControl::add_no_binary(std::string_view value) { handle_mutual_excludes(value, no_binary, only_binary); }
void FormatControl::add_only_binary(std::string_view value) { handle_mutual_excludes(value, only_binary, no_binary); }

bool FormatControl::binary_allowed(std::string_view canonical_name) const {
  std::string n(canonical_name);
  if (only_binary.count(n)) return true;
  if (no_binary.count(n)) return false;
  if (only_binary.count(":all:")) return true;
  return !no_binary.count(":all:");
}

bool FormatControl::source_allowed(std::string_view canonical_name) const {
  std::string n(canonical_name);
  if (only_binary.count(n)) return false;
  if (no_binary.count(n)) return true;
  return !only_binary.count(":all:");
}

std::vector<std::string> RequirementsOptions::effective_index_urls(const std::vector<std::string>& cli_index_urls,
                                                                   bool cli_no_index) const {
  if (no_index || cli_no_index) return {};
  std::vector<std::string> out = index_url ? std::vector<std::string>{*index_url} : cli_index_urls;
  out.insert(out.end(), extra_index_urls.begin(), extra_index_urls.end());
  return out;
}

bool RequirementsFile::hash_checking_mode() const {
  if (options.require_hashes) return true;
  return std::any_of(lines.begin(), lines.end(), [](const RequirementLine& l) { return !l.hashes.empty(); });
}

RequirementsFile parse_requirements_file(const std::string& file, const RequirementsEnv& env, bool constraint) {
  Parser p(env);
  p.parse_file(file, constraint, "");
  return std::move(p.result);
}

RequirementsFile parse_requirements_text(std::string_view text, const std::string& name, const RequirementsEnv& env,
                                         bool constraint) {
  Parser p(env);
  p.parse_text(text, name, constraint);
  return std::move(p.result);
}

bool is_pinned(const Requirement& requirement) {
  if (requirement.specifier_items.size() != 1) return false;
  const auto& [op, version] = requirement.specifier_items.front();
  if (op == "===") return true;
  return op == "==" && !(version.size() >= 2 && version.compare(version.size() - 2, 2, ".*") == 0);
}

bool is_pinned(const RequirementLine& line) {
  if (line.kind != RequirementLine::Kind::named || !line.location.empty()) return true;
  return line.requirement && is_pinned(*line.requirement);
}

std::string_view to_string(RequirementLine::Kind kind) {
  switch (kind) {
    case RequirementLine::Kind::named: return "named";
    case RequirementLine::Kind::url: return "url";
    case RequirementLine::Kind::path: return "path";
    case RequirementLine::Kind::vcs: return "vcs";
  }
  return "?";
}

}  // namespace trainpack::python
