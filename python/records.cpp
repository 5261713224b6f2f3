#include "python/records.h"

#include <algorithm>

#include "net/encoding.h"
#include "python/text.h"
#include "support/hash.h"
#include "support/paths.h"

namespace trainpack::python {
namespace {

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

}  // namespace

std::string record_hash(std::string_view bytes) {
  Hasher sha256;
  sha256.update(bytes);
  return "sha256=" + net::base64url_encode(sha256.finish_bytes());  // PEP 376: urlsafe base64, no padding
}

std::string record_relative_path(std::string_view absolute_path, std::string_view lib_dir) {
  return relpath(normalize_path(absolute_path), normalize_path(lib_dir));
}

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

std::vector<RecordRow> parse_record_file(std::string_view text, const std::string& where,
                                         std::vector<std::string>& warnings) {
  std::vector<RecordRow> rows;
  for (std::string_view line : py_splitlines(text)) {
    if (line.empty()) continue;  // csv gives [] and pip would crash on row[0]
    std::size_t fields = 0;
    rows.push_back(parse_record_line(line, fields));
    if (fields > 3) warnings.push_back(where + "RECORD line has more than three elements: " + std::string(line));
  }
  return rows;
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

std::vector<RecordRow> installed_record_rows(const std::vector<RecordRow>& wheel_rows, RecordChanges changes) {
  std::vector<RecordRow> out;
  for (const RecordRow& row : wheel_rows) {
    auto it = changes.installed.find(row[0]);
    std::string path = it == changes.installed.end() ? row[0] : it->second;
    if (it != changes.installed.end()) changes.installed.erase(it);
    auto rewritten = changes.rewritten.find(path);
    if (rewritten != changes.rewritten.end()) out.push_back({path, rewritten->second.first, rewritten->second.second});
    else out.push_back({path, row[1], row[2]});
  }
  out.insert(out.end(), changes.generated.begin(), changes.generated.end());
  for (const auto& [src, path] : changes.installed) out.push_back({path, "", ""});
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainpack::python
