#pragma once
// Where an image's dynamic loader would find shared libraries, decided from the image's files without running it.
// glibc, ld.so(8) "Rules for finding shared objects": the requesting object's DT_RPATH (only without DT_RUNPATH;
// then the executable's), LD_LIBRARY_PATH, the object's DT_RUNPATH, the cache ldconfig(8) builds from
// /etc/ld.so.conf, then the built-in directories. musl, ldso/dynlink.c load_library(): LD_LIBRARY_PATH, the rpath
// (DT_RPATH or DT_RUNPATH) of the object and of the executable, then /etc/ld-musl-ARCH.path or /lib:/usr/local/lib:
// /usr/lib. "$ORIGIN" is the requesting object's directory. Not modelled: glibc-hwcaps subdirectories, $LIB and
// $PLATFORM, a library of the wrong ELF class sitting first in a directory (the loader skips it, this does not).
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layers/image_filesystem.h"
#include "support/elf.h"

namespace trainpack::distro {

// One meaningful line of an ld.so.conf file.
struct LdSoConfLine {
  bool include = false;  // "include PATTERN": more files (a glob; relative to the including file's directory)
  std::string value;     // the directory, or the pattern
  bool operator==(const LdSoConfLine&) const = default;
};

// An ld.so.conf file's lines as glibc's ldconfig reads them (elf/ldconfig.c parse_conf): '#' starts a comment,
// "include" names patterns separated by blanks, "hwcap" lines are ignored, any other line is a directory (trailing
// blanks and slashes dropped).
std::vector<LdSoConfLine> parse_ld_so_conf(std::string_view text);

// The directories `conf` (default /etc/ld.so.conf) lists in the image, includes expanded in glob(3)'s sorted order
// (fnmatch(3) over the image's names), each once, as absolute image paths.
std::vector<std::string> ld_so_conf_directories(const layers::ImageFilesystem& fs,
                                                std::string_view conf = "/etc/ld.so.conf");

struct LibrarySearch {
  bool musl = false;
  std::string loader_name;                // "ld-linux-x86-64.so.2": a DT_NEEDED of this name is the loader itself
  std::vector<std::string> library_path;  // LD_LIBRARY_PATH in the image's Env
  std::vector<std::string> configured;    // glibc: the ld.so.conf directories; musl: /etc/ld-musl-ARCH.path's
  std::vector<std::string> system;        // the loader's built-in directories
};

// The search of the image's loader. `loader` is PT_INTERP ("/lib64/ld-linux-x86-64.so.2",
// "/lib/ld-musl-x86_64.so.1"), `multiarch` the Debian tuple ("x86_64-linux-gnu"; "" when none) and
// `ld_library_path` the value in the image's Env ("" when unset).
LibrarySearch image_library_search(const layers::ImageFilesystem& fs, std::string_view loader,
                                   std::string_view multiarch, std::string_view ld_library_path);

// An ELF object whose dependencies are looked up.
struct LoadedObject {
  std::string path;  // absolute path in the image; "$ORIGIN" is its directory
  ElfFile elf;
};

struct FoundLibrary {
  std::string path;       // "/usr/lib/x86_64-linux-gnu/libz.so.1": the name in the directory (maybe a symlink)
  std::string directory;  // the search directory it was found in
  bool from_rpath = false;       // found through a DT_RPATH or DT_RUNPATH entry
  bool origin_relative = false;  // ... one that starts from $ORIGIN (the loader finds it again by itself)
};

// Looks `name` (a DT_NEEDED value) up for `object`, which `executable` loaded; nullopt when the image has none.
std::optional<FoundLibrary> find_library(const layers::ImageFilesystem& fs, const LibrarySearch& search,
                                         std::string_view name, const LoadedObject& object,
                                         const LoadedObject& executable);

struct LibraryClosure {
  std::vector<FoundLibrary> libraries;  // each found once, in discovery order
  std::vector<std::string> unread;      // found, but `read` had no bytes for them yet: provide them and ask again
  struct Missing {
    std::string name;    // "libtk8.6.so"
    std::string needer;  // the object whose DT_NEEDED names it
    std::string root;    // the object of `roots` whose closure lacks it
  };
  std::vector<Missing> missing;
};

// Every library `roots` need, transitively, as the image's loader would find them. `executable` (also a root)
// is the program the others are loaded into (lib-dynload modules, say). `read` gives an object's bytes by its
// image path, nullopt when they are not at hand.
LibraryClosure library_closure(const layers::ImageFilesystem& fs, const LibrarySearch& search,
                               const std::string& executable,
                               const std::vector<std::string>& roots,
                               const std::function<std::optional<std::string>(const std::string& path)>& read);

}  // namespace trainpack::distro
