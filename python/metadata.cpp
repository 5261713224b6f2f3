#include "python/metadata.h"

#include "python/text.h"
#include "support/error.h"
#include "support/text.h"

namespace trainpack::python {

namespace {

// Lines with their line breaks, split on \r\n, \r or \n (the email feed parser's universal newlines).
std::vector<std::string_view> split_lines_keep_ends(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      lines.push_back(text.substr(start, i + 1 - start));
      start = i + 1;
    }
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// feedparser.headerRE: ^(From |[\041-\071\073-\176]*:|[\t ])
bool is_header_line(std::string_view line) {
  if (line.empty()) return false;
  if (line[0] == ' ' || line[0] == '\t' || line.starts_with("From ")) return true;
  for (char c : line) {
    if (c == ':') return true;
    if (c < '\x21' || c > '\x7e') return false;
  }
  return false;
}

std::string_view strip_line_break(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// compat32 header_source_parse: the value after the first ':', left-stripped of spaces/tabs, continuation lines
// appended verbatim, trailing line breaks removed.
std::pair<std::string, std::string> header_from_lines(const std::vector<std::string_view>& lines) {
  std::string_view first = lines.front();
  const std::size_t colon = first.find(':');
  std::string_view value = first.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  std::string joined(value);
  for (std::size_t i = 1; i < lines.size(); ++i) joined.append(lines[i]);
  return {std::string(first.substr(0, colon)), std::string(strip_line_break(joined))};
}

bool is_word_char(char c) {
  // Python's \w; bytes of non-ASCII characters count as word characters (an approximation of Unicode \w).
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// importlib.metadata EntryPoint.pattern:
//   (?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$   and extras = re.findall(r'\w+', ...)
void split_entry_point_value(EntryPoint& ep) {
  std::string_view v = ep.value;
  std::size_t i = 0;
  auto name_run = [&] {
    const std::size_t start = i;
    while (i < v.size() && (is_word_char(v[i]) || v[i] == '.')) ++i;
    return v.substr(start, i - start);
  };
  auto skip_space = [&] {
    while (i < v.size() && is_py_space(v[i])) ++i;
  };
  std::string_view module = name_run();
  if (module.empty()) return;
  skip_space();
  std::optional<std::string_view> attr;
  if (i < v.size() && v[i] == ':') {
    ++i;
    skip_space();
    std::string_view a = name_run();
    if (a.empty()) return;  // the optional group cannot match and ':' cannot start the extras: no match
    attr = a;
    skip_space();
  }
  std::vector<std::string> extras;
  if (i < v.size()) {
    // "[" ... "]" followed only by whitespace (`.*` is greedy, so the last such ']').
    std::string_view rest = v.substr(i);
    while (!rest.empty() && is_py_space(rest.back())) rest.remove_suffix(1);
    if (rest.size() < 2 || rest.front() != '[' || rest.back() != ']') return;
    for (std::size_t j = 0; j < rest.size();) {
      if (!is_word_char(rest[j])) {
        ++j;
        continue;
      }
      const std::size_t start = j;
      while (j < rest.size() && is_word_char(rest[j])) ++j;
      extras.emplace_back(rest.substr(start, j - start));
    }
  }
  ep.valid = true;
  ep.module = std::string(module);
  if (attr) ep.attr = std::string(*attr);
  ep.extras = std::move(extras);
}


// "2.1" -> (2, 1); nullopt unless two dot-separated decimal numbers.
std::optional<std::pair<int, int>> parse_major_minor(std::string_view text) {
  text = py_strip(text);
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size() || dot > 4 || text.size() - dot > 5)
    return std::nullopt;
  int parts[2] = {0, 0};
  for (std::size_t i = 0, k = 0; i < text.size(); ++i) {
    if (i == dot) {
      k = 1;
      continue;
    }
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    parts[k] = parts[k] * 10 + (text[i] - '0');
  }
  return std::make_pair(parts[0], parts[1]);
}

}  // namespace

EmailMessage EmailMessage::parse(std::string_view text) {
  EmailMessage msg;
  std::vector<std::string_view> lines = split_lines_keep_ends(text);

  // Header lines run up to a blank line (consumed) or the first line that is not a header (kept for the body).
  std::size_t body_start = lines.size();
  std::vector<std::string_view> header_lines;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!is_header_line(lines[i])) {
      const char c = lines[i][0];
      body_start = (c == '\n' || c == '\r') ? i + 1 : i;
      break;
    }
    header_lines.push_back(lines[i]);
  }

  std::string pushed_back;  // a trailing "From " line goes back to the body
  std::vector<std::string_view> current;
  for (std::size_t n = 0; n < header_lines.size(); ++n) {
    std::string_view line = header_lines[n];
    if (line[0] == ' ' || line[0] == '\t') {
      if (!current.empty()) current.push_back(line);  // a leading continuation line is dropped (a defect)
      continue;
    }
    if (!current.empty()) {
      msg.headers.push_back(header_from_lines(current));
      current.clear();
    }
    if (line.starts_with("From ")) {
      // Line 0 is the unix-from envelope; the last header line starts the body; others are dropped.
      if (n != 0 && n + 1 == header_lines.size()) pushed_back = std::string(line);
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == 0) continue;  // missing header name (a defect)
    current.push_back(line);
  }
  if (!current.empty()) msg.headers.push_back(header_from_lines(current));

  msg.body = pushed_back;
  for (std::size_t i = body_start; i < lines.size(); ++i) msg.body.append(lines[i]);
  return msg;
}

const std::string* EmailMessage::get(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (ascii_iequals(k, name)) return &v;
  return nullptr;
}

std::vector<std::string> EmailMessage::get_all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers)
    if (ascii_iequals(k, name)) out.push_back(v);
  return out;
}

CoreMetadata CoreMetadata::parse(std::string_view text) {
  CoreMetadata md;
  md.message = EmailMessage::parse(text);
  const EmailMessage& m = md.message;

  if (const std::string* mv = m.get("Metadata-Version")) {
    md.metadata_version = *mv;
    auto v = parse_major_minor(*mv);
    if (!v) {
      md.warnings.push_back("unrecognised Metadata-Version '" + *mv + "'");
    } else if (v->first > 2) {
      throw Error("unsupported Metadata-Version " + *mv + " (this tool reads core metadata 1.0 to 2.5)",
                  "a newer packaging tool built this distribution; use an older release of it");
    } else if (*v > std::make_pair(2, 5)) {
      md.warnings.push_back("Metadata-Version " + *mv + " is newer than 2.5; reading the fields known to 2.5");
    }
  } else {
    md.warnings.push_back("no Metadata-Version header");
  }

  if (const std::string* name = m.get("Name")) md.name = *name;
  if (const std::string* version = m.get("Version")) {
    md.version_text = *version;
    md.version = Version::try_parse(*version);
    if (!md.version) md.warnings.push_back("invalid Version '" + *version + "'");
  }
  for (const std::string& r : m.get_all("Requires-Dist")) {
    try {
      md.requires_dist.push_back(Requirement::parse(r));
    } catch (const Error& e) {
      throw Error(std::string("invalid Requires-Dist in metadata: ") + e.what(), e.hint());
    }
  }
  if (const std::string* rp = m.get("Requires-Python")) {
    md.requires_python = *rp;
    try {
      md.requires_python_specifier = SpecifierSet(*rp);
    } catch (const Error& e) {
      md.warnings.push_back("invalid Requires-Python '" + *rp + "' (ignored): " + e.what());
    }
  }
  md.provides_extra = m.get_all("Provides-Extra");
  md.dynamic = m.get_all("Dynamic");
  md.description = m.body;
  return md;
}

bool CoreMetadata::is_dynamic(std::string_view field) const {
  for (const auto& d : dynamic)
    if (ascii_iequals(py_strip(d), field)) return true;
  return false;
}

WheelInfo WheelInfo::parse(std::string_view text) {
  WheelInfo w;
  w.message = EmailMessage::parse(text);
  const std::string* version = w.message.get("Wheel-Version");
  if (!version) throw Error("WHEEL is missing Wheel-Version", "the wheel is damaged or was not built by a wheel tool");
  // pip: tuple(map(int, version.strip().split(".")))
  std::string_view v = py_strip(*version);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= v.size(); ++i) {
    if (i < v.size() && v[i] != '.') continue;
    std::string_view part = py_strip(v.substr(start, i - start));
    std::uint64_t n = 0;
    bool ok = !part.empty() && part.size() <= 18;
    for (char c : part) {
      ok = ok && c >= '0' && c <= '9';
      n = n * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!ok)
      throw Error("invalid Wheel-Version: '" + std::string(v) + "'",
                  "the wheel is damaged or was not built by a wheel tool");
    w.wheel_version.push_back(n);
    start = i + 1;
  }
  if (w.wheel_version[0] > 1)
    throw Error("unsupported Wheel-Version " + std::string(v) + " (this tool installs wheel format 1.x)",
                "use a wheel built for format 1.x");
  if (w.wheel_version > std::vector<std::uint64_t>{1, 0})
    w.warnings.push_back("installing from a newer Wheel-Version (" + std::string(v) + ")");
  if (const std::string* purelib = w.message.get("Root-Is-Purelib")) w.root_is_purelib = ascii_iequals(*purelib, "true");
  w.tags = w.message.get_all("Tag");
  if (const std::string* build = w.message.get("Build")) w.build = *build;
  return w;
}

std::vector<EntryPoint> parse_entry_points(std::string_view text) {
  std::vector<EntryPoint> out;
  std::optional<std::string> group;
  for (std::string_view raw : py_splitlines(text)) {
    std::string_view line = py_strip(raw);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      // value.strip('[]')
      while (!line.empty() && (line.front() == '[' || line.front() == ']')) line.remove_prefix(1);
      while (!line.empty() && (line.back() == '[' || line.back() == ']')) line.remove_suffix(1);
      group = std::string(line);
      continue;
    }
    if (!group) continue;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      throw Error("invalid line in entry_points.txt: '" + std::string(line) + "' (expected 'name = value')",
                  "the distribution's entry_points.txt is malformed");
    EntryPoint ep;
    ep.group = *group;
    ep.name = std::string(py_strip(line.substr(0, eq)));
    ep.value = std::string(py_strip(line.substr(eq + 1)));
    split_entry_point_value(ep);
    out.push_back(std::move(ep));
  }
  return out;
}

}  // namespace trainpack::python
