#pragma once
// RECORD, the list of installed files with their hashes and sizes (PEP 376 "RECORD"; PEP 627 and the "Recording
// installed projects" specification; PEP 427 for the wheel's own copy): csv.reader/csv.writer's excel dialect,
// "sha256=" + urlsafe base64 without padding, paths relative to the lib dir.
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainpack::python {

// One RECORD row: path relative to lib_dir ("../../../bin/x" for scripts), "sha256=<b64>" or "", size or "".
using RecordRow = std::array<std::string, 3>;

// RECORD's hash of some bytes: "sha256=" + urlsafe base64 without padding.
std::string record_hash(std::string_view bytes);

// How RECORD names an installed file: relative to the lib dir ("../../../bin/x" for a script). Absolute paths.
std::string record_relative_path(std::string_view absolute_path, std::string_view lib_dir);

// One RECORD line as csv.reader (excel dialect) reads it: quoted fields with doubled quotes; the first three fields,
// and in `fields` how many there were.
RecordRow parse_record_line(std::string_view line, std::size_t& fields);

// A wheel's RECORD as pip reads it: one row per non-empty line (str.splitlines()); a line of more than three fields
// adds a warning starting with `where`.
std::vector<RecordRow> parse_record_file(std::string_view text, const std::string& where,
                                         std::vector<std::string>& warnings);

// csv.writer (excel dialect: minimal quoting, "\r\n") over sorted rows.
std::string format_record(const std::vector<RecordRow>& rows);

// What an installation changes in the wheel's RECORD (pip's get_csv_rows_for_installed).
struct RecordChanges {
  std::map<std::string, std::string> installed;  // wheel RECORD path → installed RECORD path
  std::map<std::string, std::pair<std::string, std::string>> rewritten;  // installed path → new hash, size
  std::vector<RecordRow> generated;  // files the installer wrote itself (launchers, dist-info files)
};

// The installed RECORD, sorted: the wheel's rows mapped to install paths, hashes kept unless the file was
// rewritten; then the generated files; then installed files the wheel's RECORD did not list (no hash, no size).
std::vector<RecordRow> installed_record_rows(const std::vector<RecordRow>& wheel_rows, RecordChanges changes);

}  // namespace trainpack::python
