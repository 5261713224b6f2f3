#include "gcloud/dockerfile.h"

#include <algorithm>
#include <initializer_list>

#include "support/python_strings.h"

namespace trainpack::templates {
// templates/dockerfile/*.txt, embedded by CMakeLists.txt.
extern const std::string_view dockerfile_header, dockerfile_sitecustomize_removal, dockerfile_setup_py,
    dockerfile_requirements_txt, dockerfile_extra_package, dockerfile_extra_requirement, dockerfile_extra_dir,
    dockerfile_main_dir, dockerfile_entrypoint;
}  // namespace trainpack::templates

namespace trainpack::gcloud {

namespace {

// The fragments of the generated Dockerfile, in output order (gcloud 578.0.0:
// lib/googlecloudsdk/command_lib/ai/docker/build.py), are templates/dockerfile/*.txt, embedded at build time;
// "{}" marks an inserted value:
//   header                      H: FROM, work dir and home, no-.pyc.
//   sitecustomize_removal       S, prebuilt images only. No newline: it takes the place of the empty line the next
//                               fragment starts with.
//   setup_py, requirements_txt  SETUP and REQ ({} is pip or pip3): the commented COPY line is inserted unindented
//                               into an 8-space template before textwrap.dedent runs, so there is no common margin
//                               and the other lines keep their 8 spaces (Docker ignores them). The missing "copy it"
//                               in REQ's comment is gcloud's.
//   extra_package               XPKG(P), one per --extra-packages item: COPY json([P, basename(P)]), then pip
//                               install q(basename(P)).
//   extra_requirement           XREQ(R), one per --requirements item: pip install --upgrade q(R).
//   extra_dir                   XDIR(D), one per --extra-dirs item: COPY json([D, D]). Not dedented.
//   main_dir                    MAIN: COPY json([parent, parent]) where parent = dirname(script) or ".".
//   entrypoint                  EP: ENTRYPOINT json(argv). The Dockerfile ends here, without a newline.
//
// gcloud writes H, XPKG and XREQ as indented triple-quoted templates, fills them with str.format() and runs
// textwrap.dedent over the result. With one-line values dedent removes exactly the template margin and the texts
// of the files come out; a value containing '\n' (a base image, a shlex-quoted requirement or package name) changes
// the common margin. gcloud_dedented() therefore re-creates the indented template and runs a faithful dedent over it.
constexpr int kHeaderMargin = 6;      // H's indentation in gcloud's source
constexpr int kDependencyMargin = 8;  // XPKG's and XREQ's

// Replaces each "{}" of `templ`, in order, with the next value (str.format with positional fields).
std::string fill(std::string_view templ, std::initializer_list<std::string_view> values) {
  std::string out;
  auto value = values.begin();
  for (std::size_t i = 0; i < templ.size(); ++i) {
    if (templ[i] == '{' && i + 1 < templ.size() && templ[i + 1] == '}' && value != values.end()) {
      out += *value++;
      ++i;
    } else {
      out += templ[i];
    }
  }
  return out;
}

// textwrap.dedent(template_indented_by_margin.format(values)), i.e. what gcloud computes for H, XPKG and XREQ.
std::string gcloud_dedented(std::string_view templ, int margin, std::initializer_list<std::string_view> values) {
  const std::string indent(static_cast<std::size_t>(margin), ' ');
  std::string indented;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = templ.find('\n', start);
    const std::string_view line = templ.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!line.empty()) indented += indent;
    indented += line;
    if (nl == std::string_view::npos) break;
    indented += '\n';
    start = nl + 1;
  }
  indented += indent;  // the closing """ sits on its own indented line
  return python_dedent(fill(indented, values));
}

// posixpath.basename
std::string posix_basename(std::string_view p) {
  const std::size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

// posixpath.dirname: everything up to the last '/', trailing slashes removed unless it is all slashes.
std::string posix_dirname(std::string_view p) {
  const std::size_t slash = p.rfind('/');
  if (slash == std::string_view::npos) return {};
  std::string head(p.substr(0, slash + 1));
  if (head.find_first_not_of('/') != std::string::npos) {
    while (!head.empty() && head.back() == '/') head.pop_back();
  }
  return head;
}

// The extension posixpath.splitext returns: from the last '.' of the last component, unless that component
// consists only of dots up to it (".py" and "..py" have no extension).
std::string_view posix_extension(std::string_view p) {
  const std::size_t slash = p.rfind('/');
  const std::size_t dot = p.rfind('.');
  const std::size_t name_start = slash == std::string_view::npos ? 0 : slash + 1;
  if (dot == std::string_view::npos || dot < name_start) return {};
  for (std::size_t i = name_start; i < dot; ++i) {
    if (p[i] != '.') return p.substr(dot);
  }
  return {};
}

}  // namespace

std::string json_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += python_json_string(items[i]);
  }
  out += ']';
  return out;
}

std::string shlex_quote(std::string_view s) {
  if (s.empty()) return "''";
  const auto safe = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(static_cast<char>(c)) != std::string_view::npos;
  };
  if (std::all_of(s.begin(), s.end(), [&](char c) { return safe(static_cast<unsigned char>(c)); })) {
    return std::string(s);
  }
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\"'\"'";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string module_to_path(std::string_view module) {
  std::string path(module);
  std::replace(path.begin(), path.end(), '.', '/');
  return path + ".py";
}

std::string python_dedent(std::string_view text) {
  // Split on '\n' only (re's '^'/'$' in MULTILINE mode know no other line break).
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    lines.emplace_back(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  const auto is_indent_char = [](char c) { return c == ' ' || c == '\t'; };
  // _whitespace_only_re = '^[ \t]+$': such lines become empty.
  for (auto& line : lines) {
    if (std::all_of(line.begin(), line.end(), is_indent_char)) line.clear();
  }
  // _leading_whitespace_re = '(^[ \t]*)(?:[^ \t\n])': the margin is the longest common leading run of spaces and
  // tabs over the lines that have anything else.
  bool have_margin = false;
  std::string margin;
  for (const auto& line : lines) {
    if (line.empty()) continue;
    const std::size_t end = line.find_first_not_of(" \t");
    const std::string_view indent = std::string_view(line).substr(0, end);
    if (!have_margin) {
      margin = std::string(indent);
      have_margin = true;
    } else {
      std::size_t k = 0;
      while (k < margin.size() && k < indent.size() && margin[k] == indent[k]) ++k;
      margin.resize(k);
    }
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    std::string_view line = lines[i];
    if (!margin.empty() && line.substr(0, margin.size()) == margin) line.remove_prefix(margin.size());
    out += line;
  }
  return out;
}

bool is_vertex_prebuilt_image(std::string_view uri) {
  // Matched on code points, as Python does: each unescaped '.' of the pattern is one code point other than '\n'.
  const std::u32string s = python_code_points(uri);
  std::size_t i = 0;
  const auto literal = [&](std::u32string_view text) {
    if (std::u32string_view(s).substr(i, text.size()) != text) return false;
    i += text.size();
    return true;
  };
  const auto any_char = [&] {  // '.' without re.DOTALL
    if (i >= s.size() || s[i] == U'\n') return false;
    ++i;
    return true;
  };
  // The alternatives of each group start with different letters, so taking the first that matches never needs
  // backtracking.
  if (!(literal(U"us") || literal(U"europe") || literal(U"asia"))) return false;  // ^(us|europe|asia)
  if (!(literal(U"-docker") && any_char() && literal(U"pkg") && any_char() &&   // -docker.pkg.dev
        literal(U"dev/vertex-ai/training/"))) {                                  // /vertex-ai/training/
    return false;
  }
  if (!(literal(U"tf") || literal(U"scikit-learn") || literal(U"pytorch") || literal(U"xgboost"))) return false;
  if (!literal(U"-")) return false;
  // .+$ under fullmatch: at least one more character, none of them '\n'.
  if (i == s.size()) return false;
  return std::find(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(), U'\n') == s.end();
}

DockerfileSpec& DockerfileSpec::derive() {
  prebuilt = is_vertex_prebuilt_image(base_image);
  if (script.empty() && !python_module.empty()) script = module_to_path(python_module);
  std::replace(script.begin(), script.end(), '\\', '/');
  parent_dir = posix_dirname(script);
  if (parent_dir.empty()) parent_dir.push_back('.');  // (not = ".": GCC 12 warns falsely, -Wrestrict)
  // _GenerateEntrypoint: python3 on prebuilt images; a script not ending in ".py" runs under /bin/bash either way.
  const std::string python = prebuilt ? "python3" : "python";
  if (!python_module.empty()) {
    entrypoint = {python, "-m", python_module};
  } else if (posix_extension(script) == ".py") {
    entrypoint = {python, script};
  } else {
    entrypoint = {"/bin/bash", script};
  }
  return *this;
}

std::string render_dockerfile(const DockerfileSpec& input) {
  DockerfileSpec s = input;
  s.derive();
  const std::string_view pip = s.prebuilt ? "pip3" : "pip";
  const std::string workdir = shlex_quote(kWorkdir);
  const std::string home = shlex_quote(kHome);

  std::string out = gcloud_dedented(templates::dockerfile_header, kHeaderMargin, {s.base_image, workdir, home, workdir, home});  // H
  if (s.prebuilt) out += templates::dockerfile_sitecustomize_removal;                                                           // S
  if (s.has_setup_py) out += fill(templates::dockerfile_setup_py, {pip});                                                       // SETUP
  if (s.has_requirements_txt) out += fill(templates::dockerfile_requirements_txt, {pip});                                       // REQ
  for (const auto& package : s.extra_packages) {                                                          // XPKG
    const std::string name = posix_basename(package);
    out += gcloud_dedented(templates::dockerfile_extra_package, kDependencyMargin, {json_list({package, name}), pip, shlex_quote(name)});
  }
  for (const auto& requirement : s.requirements) {  // XREQ
    out += gcloud_dedented(templates::dockerfile_extra_requirement, kDependencyMargin, {pip, shlex_quote(requirement)});
  }
  for (const auto& dir : s.extra_dirs) out += fill(templates::dockerfile_extra_dir, {json_list({dir, dir})});  // XDIR
  out += fill(templates::dockerfile_main_dir, {json_list({s.parent_dir, s.parent_dir})});                      // MAIN
  out += fill(templates::dockerfile_entrypoint, {json_list(s.entrypoint)});                                   // EP
  return out;
}

}  // namespace trainpack::gcloud
