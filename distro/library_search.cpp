#include "distro/library_search.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "support/paths.h"
#include "support/text.h"

namespace trainpack::distro {
namespace {

constexpr std::size_t kConfCap = 1u << 20;
constexpr int kMaxIncludeDepth = 16;

std::string absolute(std::string_view path) { return "/" + normalize_path(path); }

bool has_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// glob(3) over the image: every regular file matching an absolute pattern, sorted.
std::vector<std::string> image_glob(const layers::ImageFilesystem& fs, std::string_view pattern) {
  std::vector<std::string> matches{""};
  for (std::string_view component : path_components(pattern)) {
    std::vector<std::string> next;
    for (const std::string& dir : matches) {
      if (!has_glob(component)) {
        next.push_back(join_path(dir, component));
        continue;
      }
      std::string pat(component);
      for (const std::string& child : fs.children(dir))
        if (::fnmatch(pat.c_str(), child.c_str(), FNM_PERIOD) == 0) next.push_back(join_path(dir, child));
    }
    matches = std::move(next);
  }
  std::vector<std::string> out;
  for (const std::string& m : matches)
    if (fs.is_file(m)) out.push_back(absolute(m));
  std::sort(out.begin(), out.end());
  return out;
}

void read_conf(const layers::ImageFilesystem& fs, const std::string& file, int depth, std::vector<std::string>& dirs,
               std::set<std::string>& seen_files) {
  if (depth > kMaxIncludeDepth || !seen_files.insert(file).second) return;
  std::optional<std::string> text = fs.is_file(file) ? fs.read(file, kConfCap) : std::nullopt;
  if (!text) return;
  for (const LdSoConfLine& line : parse_ld_so_conf(*text)) {
    if (!line.include) {
      if (std::find(dirs.begin(), dirs.end(), absolute(line.value)) == dirs.end()) dirs.push_back(absolute(line.value));
      continue;
    }
    std::string pattern = line.value.front() == '/' ? line.value : std::string(path_dir(file)) + "/" + line.value;
    for (const std::string& included : image_glob(fs, pattern)) read_conf(fs, included, depth + 1, dirs, seen_files);
  }
}

// "ld-musl-x86_64.so.1" -> "x86_64" (musl's LDSO_ARCH, which names /etc/ld-musl-ARCH.path).
std::string musl_arch(std::string_view loader_name) {
  constexpr std::string_view kPrefix = "ld-musl-";
  if (!loader_name.starts_with(kPrefix)) return {};
  std::string_view rest = loader_name.substr(kPrefix.size());
  return std::string(rest.substr(0, rest.find(".so")));
}

struct SearchDir {
  std::string path;
  bool from_rpath = false;
  bool origin_relative = false;
};

// One DT_RPATH/DT_RUNPATH entry with $ORIGIN expanded; nullopt for what this model leaves out (other tokens,
// relative entries, which the loader takes relative to the working directory).
std::optional<SearchDir> rpath_dir(const std::string& entry, const std::string& object_path) {
  std::string out = entry;
  bool origin = false;
  for (std::string_view token : {"${ORIGIN}", "$ORIGIN"}) {
    for (std::size_t at; (at = out.find(token)) != std::string::npos;) {
      out.replace(at, token.size(), std::string(path_dir(object_path)));
      origin = true;
    }
  }
  if (out.find('$') != std::string::npos || out.empty() || out.front() != '/') return std::nullopt;
  return SearchDir{absolute(out), true, origin};
}

void add_rpath(std::vector<SearchDir>& dirs, const std::vector<std::string>& entries, const std::string& object) {
  for (const std::string& e : entries)
    if (auto d = rpath_dir(e, object)) dirs.push_back(*d);
}

void add_plain(std::vector<SearchDir>& dirs, const std::vector<std::string>& paths) {
  for (const std::string& p : paths) dirs.push_back({absolute(p), false, false});
}

// The directories searched for a DT_NEEDED of `object`, in the loader's order.
std::vector<SearchDir> search_order(const LibrarySearch& search, const LoadedObject& object,
                                    const LoadedObject& executable) {
  std::vector<SearchDir> dirs;
  const bool is_executable = object.path == executable.path;
  if (search.musl) {
    add_plain(dirs, search.library_path);
    add_rpath(dirs, object.elf.runpath.empty() ? object.elf.rpath : object.elf.runpath, object.path);
    if (!is_executable)
      add_rpath(dirs, executable.elf.runpath.empty() ? executable.elf.rpath : executable.elf.runpath, executable.path);
    add_plain(dirs, search.configured.empty() ? search.system : search.configured);
    return dirs;
  }
  if (object.elf.runpath.empty()) {
    add_rpath(dirs, object.elf.rpath, object.path);
    if (!is_executable && executable.elf.runpath.empty()) add_rpath(dirs, executable.elf.rpath, executable.path);
  }
  add_plain(dirs, search.library_path);
  add_rpath(dirs, object.elf.runpath, object.path);
  add_plain(dirs, search.configured);
  add_plain(dirs, search.system);
  return dirs;
}

}  // namespace

std::vector<LdSoConfLine> parse_ld_so_conf(std::string_view text) {
  std::vector<LdSoConfLine> out;
  for (std::string_view line : split_nonempty(text, "\n")) {
    line = ascii_trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    auto keyword = [&line](std::string_view word) {
      return line.size() > word.size() && line.substr(0, word.size()) == word &&
             (line[word.size()] == ' ' || line[word.size()] == '\t');
    };
    if (keyword("include")) {
      for (const std::string& pattern : split_nonempty(line.substr(7), " \t")) out.push_back({true, pattern});
    } else if (!keyword("hwcap")) {
      std::string dir(line);
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      out.push_back({false, dir});
    }
  }
  return out;
}

std::vector<std::string> ld_so_conf_directories(const layers::ImageFilesystem& fs, std::string_view conf) {
  std::vector<std::string> dirs;
  std::set<std::string> seen_files;
  read_conf(fs, absolute(conf), 0, dirs, seen_files);
  return dirs;
}

LibrarySearch image_library_search(const layers::ImageFilesystem& fs, std::string_view loader,
                                   std::string_view multiarch, std::string_view ld_library_path) {
  LibrarySearch search;
  search.loader_name = std::string(path_base(loader));
  search.musl = search.loader_name.starts_with("ld-musl-");
  search.library_path = split_nonempty(ld_library_path, search.musl ? ":" : ":;");
  if (search.musl) {
    std::string path_file = "/etc/ld-musl-" + musl_arch(search.loader_name) + ".path";
    if (fs.is_file(path_file))
      if (auto text = fs.read(path_file, kConfCap)) search.configured = split_nonempty(*text, ":\n");
    search.system = {"/lib", "/usr/local/lib", "/usr/lib"};
    return search;
  }
  search.configured = ld_so_conf_directories(fs);
  if (!multiarch.empty())
    for (const char* d : {"/lib/", "/usr/lib/"}) search.system.push_back(d + std::string(multiarch));
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) search.system.push_back(d);
  return search;
}

std::optional<FoundLibrary> find_library(const layers::ImageFilesystem& fs, const LibrarySearch& search,
                                         std::string_view name, const LoadedObject& object,
                                         const LoadedObject& executable) {
  if (name.find('/') != std::string_view::npos) {
    if (name.front() != '/' || !fs.is_file(name)) return std::nullopt;
    return FoundLibrary{absolute(name), absolute(path_dir(name)), false, false};
  }
  for (const SearchDir& dir : search_order(search, object, executable)) {
    std::string candidate = dir.path + "/" + std::string(name);
    if (fs.is_file(candidate)) return FoundLibrary{absolute(candidate), dir.path, dir.from_rpath, dir.origin_relative};
  }
  return std::nullopt;
}

LibraryClosure library_closure(const layers::ImageFilesystem& fs, const LibrarySearch& search,
                               const std::string& executable,
                               const std::vector<std::string>& roots,
                               const std::function<std::optional<std::string>(const std::string& path)>& read) {
  LibraryClosure out;
  std::map<std::string, std::optional<ElfFile>> parsed;  // resolved image path -> its dynamic section
  auto load = [&](const std::string& path) -> std::optional<LoadedObject> {
    std::string resolved = absolute(fs.resolve(path));
    auto [it, fresh] = parsed.try_emplace(resolved);
    if (fresh) {
      std::optional<std::string> bytes = read(resolved);
      if (bytes) it->second = parse_elf(*bytes);
      else out.unread.push_back(path);
    }
    if (!it->second) return std::nullopt;
    return LoadedObject{path, *it->second};
  };
  const LoadedObject exe = load(absolute(fs.resolve(executable))).value_or(LoadedObject{executable, {}});
  std::set<std::string> listed;
  for (const std::string& root : roots) {
    std::vector<std::string> todo{root};
    std::set<std::string> visited{absolute(fs.resolve(root))};
    while (!todo.empty()) {
      std::string path = todo.back();
      todo.pop_back();
      std::optional<LoadedObject> object = path == root && root == executable ? exe : load(path);
      if (!object) continue;
      for (const std::string& name : object->elf.needed) {
        if (name == search.loader_name) continue;  // the running loader answers to its own name
        std::optional<FoundLibrary> found = find_library(fs, search, name, *object, exe);
        if (!found) {
          out.missing.push_back({name, object->path, root});
          continue;
        }
        if (listed.insert(found->path).second) out.libraries.push_back(*found);
        if (visited.insert(absolute(fs.resolve(found->path))).second) todo.push_back(found->path);
      }
    }
  }
  return out;
}

}  // namespace trainpack::distro
