#pragma once
// pip's requirements files (`pip install -r`): decoding, line preprocessing, per-line option parsing, nested
// -r/-c files and the classification of each requirement line. Follows pip 23.0.1 `req/req_file.py`,
// `req/constructors.py`, `cli/cmdoptions.py`, `models/format_control.py`, `utils/encoding.py`.
//
// Paths on requirement lines are kept as written: pip resolves them against its CWD (/usr/app in our images),
// not against the requirements file, and whether they exist is only known inside the image, so the caller checks.
// Classification is by appearance (see RequirementLine::Kind).
//
// Where pip versions differ (we follow 23.0.1 unless noted):
// - `--config-settings`/`-C KEY=VALUE` per line: pip >= 23.1 (23.0.1 says "no such option"); accepted here.
// - `--install-option`: removed in pip 23.1; it forced `setup.py install`, which we never run -> Error.
//   `--global-option` (still accepted by pip 25) is kept in RequirementLine::global_options for the caller.
// - `--use-feature`: pip checks the value against its version's feature list; we accept any value and ignore it.
// - Decoding without BOM/coding line: pip 23 uses the locale encoding (UTF-8 in python images); pip >= 24 tries
//   UTF-8 first. We always use UTF-8 and fail on invalid UTF-8. Coding lines: utf-8, latin-1, ascii only.
//   A UTF-32-LE BOM is decoded as UTF-32 (pip 23 matches the UTF-16-LE BOM first and produces NULs).
// - Recursion (`-r` of a file already being read): pip 23 dies with RecursionError; we throw a clear Error.
// - `--hash` on an option-only line: ignored silently (pip >= 24 warns).
// - Not supported by pip 23.0.1 and rejected as unknown options: `--no-require-hashes` (26.2),
//   `--all-releases`/`--only-final` (26.0), `-r pylock.toml` (26.1 experimental).
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "python/markers.h"
#include "python/requirement.h"

namespace trainpack::python {

// pip's FormatControl: canonical project names, or ":all:".
struct FormatControl {
  std::set<std::string> no_binary;
  std::set<std::string> only_binary;

  // `--no-binary VALUE` / `--only-binary VALUE` (comma list; ":all:" clears both sides; ":none:" clears this side).
  void add_no_binary(std::string_view value);
  void add_only_binary(std::string_view value);
  // pip's get_allowed_formats: "binary" and/or "source" allowed for a canonical name.
  bool binary_allowed(std::string_view canonical_name) const;
  bool source_allowed(std::string_view canonical_name) const;
};

// The file-level options after every line was applied, in pip's order (finder / session / options).
struct RequirementsOptions {
  // Last `-i` seen while --no-index was off: replaces the command line's index list. Extras seen before it are gone
  // (pip replaces its whole list), so extra_index_urls holds only those after the last -i.
  std::optional<std::string> index_url;
  std::vector<std::string> extra_index_urls;
  bool no_index = false;
  std::vector<std::string> find_links;  // file-relative when that path exists (see RequirementsEnv::path_exists)
  FormatControl format_control;         // --no-binary / --only-binary from any line, including requirement lines
  bool prefer_binary = false;
  bool require_hashes = false;  // only --require-hashes; see RequirementsFile::hash_checking_mode()
  bool pre = false;
  std::vector<std::string> trusted_hosts;

  // pip's final index list given the command line's (default https://pypi.org/simple).
  std::vector<std::string> effective_index_urls(const std::vector<std::string>& cli_index_urls,
                                                bool cli_no_index = false) const;
};

struct RequirementLine {
  enum class Kind {
    named,  // PEP 508 requirement by name, including `name @ url` (unless url is a VCS URL)
    url,    // bare http(s)/ftp/file: URL (wheel, sdist, or a file: directory)
    path,   // local path as written: contains '/', starts with '.', or an archive name (.whl, .tar.gz, .zip, ...)
    vcs,    // git+/hg+/svn+/bzr+ URL, bare or as `name @ url`: trainpack refuses these later
  };
  std::string file;             // requirements file name as pip spells it (nested: joined to the parent's directory)
  int line_number = 0;          // first physical line of a `\`-continued line
  std::string line;             // the logical line after joining, comment stripping and ${VAR} expansion
  std::string requirement_text; // the part before the first option (pip's ParsedRequirement.requirement)
  Kind kind = Kind::named;
  bool editable = false;        // from -e (kind is then path, url (file:) or vcs)
  bool constraint = false;      // comes from a -c file
  // Named lines: the parsed requirement. URL/path/VCS lines: `name==version` from a wheel file name, else the
  // #egg= name, else nullopt (unnamed; pip learns the name from the metadata). marker is set on it too.
  std::optional<Requirement> requirement;
  std::optional<Marker> marker;  // after ";" (URLs: "; ") on the line
  std::string location;          // URL or path as written, without extras and marker; `name @ url`: the url
  std::set<std::string> extras;  // for path lines: the trailing "[a,b]" (lower-cased, like pip)
  std::vector<std::pair<std::string, std::string>> hashes;         // (algorithm, hex) in order
  std::vector<std::pair<std::string, std::string>> config_settings;  // (key, value) in order
  std::vector<std::string> global_options;

  bool is_url_or_path() const { return kind != Kind::named; }
};

struct RequirementsFile {
  std::vector<RequirementLine> lines;  // requirement and constraint lines in pip's order (nested files inline)
  RequirementsOptions options;

  // pip's hash-checking mode: --require-hashes, or any --hash on a (non-editable) requirement line.
  bool hash_checking_mode() const;
};

// Where the text of files comes from. Paths are pip's strings (relative ones against `cwd`).
struct RequirementsEnv {
  std::map<std::string, std::string> vars;  // the image's Env (+ build args): ${NAME} expansion
  std::string cwd = "/usr/app";             // pip's working directory (for -f relative to the file)
  // Bytes of a local file, nullopt when it does not exist. Default: the host file system.
  std::function<std::optional<std::string>(const std::string& path)> read_file;
  // Whether a path exists (for -f/--find-links relative to the file). Default: the host file system.
  std::function<bool(const std::string& path)> path_exists;
  // Body of an http(s) URL for `-r`/`-c` URLs. Unset: such lines are an Error.
  std::function<std::string(const std::string& url)> fetch_url;
};

// Parses `file` (a path, or an http(s)/file: URL) and everything it includes.
// Throws trainpack::Error("<file>:<line>: <pip's reason>", hint) on the first problem, in pip's order.
RequirementsFile parse_requirements_file(const std::string& file, const RequirementsEnv& env,
                                         bool constraint = false);
// The same for text already in memory; `name` is used for messages and as the base of nested -r/-c paths.
RequirementsFile parse_requirements_text(std::string_view text, const std::string& name,
                                         const RequirementsEnv& env, bool constraint = false);

// pip's auto_decode: BOM, else PEP 263 coding line in the first two lines, else UTF-8. Returns UTF-8.
std::string decode_requirements_bytes(std::string_view bytes, const std::string& name_for_messages);

// Logical lines after pip's preprocess(): (first line number, text).
std::vector<std::pair<int, std::string>> preprocess_requirements(std::string_view text,
                                                                 const std::map<std::string, std::string>& vars);

// Pinned for hash-checking mode: exactly one specifier, `==` or `===`, without a `.*` wildcard.
// Stricter than pip (InstallRequirement.is_pinned accepts `==1.*`, then hashes whichever 1.x it picks).
bool is_pinned(const Requirement& requirement);

// A line in hash-checking mode: URL, path, VCS and `name @ url` lines are direct (pip does not ask them to be
// pinned); named lines must satisfy is_pinned.
bool is_pinned(const RequirementLine& line);

std::string_view to_string(RequirementLine::Kind kind);

}  // namespace trainpack::python
