#pragma once
// The base image's own CPython, run on the host when no host python3.X of the image's X.Y is at hand: the
// interpreter, its standard library and the shared libraries it and its lib-dynload modules need (found as the
// image's loader would, distro/library_search.h) are copied out of the base's layers into the cache
// (layers/image_extract.h), then started as
//     ROOT/<PT_INTERP resolved> [--inhibit-cache] --library-path ROOT/<dir>:... ROOT/<interpreter> ARGS
// with PYTHONHOME=ROOT<sys.base_prefix> (-I and -E would ignore it: callers must not pass them), LC_ALL=C with
// PYTHONUTF8=1 (python/interpreter.h), and PYTHONPATH naming the site dirs that hold the copied packages. The
// image's own dynamic loader (ld.so(8): it "can be run ... as an ordinary command") loads the image's libraries and
// never the host's; no chroot, no namespaces, no privileges. Its search follows --library-path, then the objects'
// own $ORIGIN run paths (which lead inside ROOT); glibc's --inhibit-cache keeps the host's /etc/ld.so.cache out.
// One run checks the result before anyone relies on it: X.Y, the bytecode magic number, that sys.prefix and every
// sys.path entry are inside ROOT, and that no file from outside ROOT is mapped into the process.
//
// What callers must know: sys.executable and sys.prefix are paths in the cache, not in the image. What ends up in
// the image must be given image paths explicitly (bytecode: py_compile's dfile; launchers: the image's
// sys.executable from PythonFacts). When site is enabled, a sitecustomize sets sys.executable to a launcher script
// (in the scratch directory) so that children started with it (pip's build subprocesses) go through the image's
// loader too; setuptools writes that path into the shebangs of build/scripts-X.Y. With -S there is no launcher.
// Not covered: an absolute DT_RPATH (searched before --library-path, so it would reach the host's directory of
// that name) beyond what the first run's check sees mapped.
//
// Cache: an interpreters entry (store/cache_dir.h), <key>/{root/,interpreter.json}, key = sha256 of a format
// version, every layer digest of the base (all of them: any layer may change the merged view) and the plan
// (interpreter, stdlib, search directories, packages). Written to a temporary directory and renamed into place; a
// later build finds it without reading a layer.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layers/image_filesystem.h"
#include "distro/library_search.h"
#include "layers/scanned_image.h"
#include "python/base_facts.h"
#include "python/interpreter.h"

namespace trainpack::python {

// What the base's interpreter needs from its image, decided from the facts and the image's file list.
struct InterpreterPlan {
  std::string loader;       // PT_INTERP resolved in the image: "/lib/x86_64-linux-gnu/ld-2.31.so"; "" when static
  std::string interpreter;  // "/usr/bin/python3.9"
  std::string home;         // PYTHONHOME in the image: sys.base_prefix, "/usr"
  std::vector<std::string> stdlib;  // "/usr/lib/python3.9" (and the platform stdlib when it is elsewhere)
  std::string lib_dynload;          // "/usr/lib/python3.9/lib-dynload" ("" when missing)
  std::vector<std::string> extras;  // other trees copied whole (Debian's python-wheels for its pip)
  std::vector<std::string> site_items;  // requested packages found in the site dirs, with their metadata
  std::vector<std::string> site_dirs;   // the site dirs that hold them, in sys.path order
  distro::LibrarySearch search;
  nlohmann::json to_json() const;  // part of the cache key
};

// Top-level names of the image's site dirs a wheel build uses: setuptools with its helpers, wheel and pip.
const std::vector<std::string>& build_packages();

// The plan for the facts' interpreter with `packages` (top-level names: "setuptools", "pkg_resources",
// "distutils-precedence.pth", ...; each with its .dist-info/.egg-info). Throws Error (cause + hint) when the host
// cannot run it: another architecture, no loader or interpreter in the image.
InterpreterPlan plan_image_interpreter(const layers::ImageFilesystem& fs, const PythonFacts& facts,
                                       const std::vector<std::string>& packages);

// Whether a path below a standard library directory is left out: site-packages, dist-packages, test suites and
// config-X.Y-* (the static library and the makefile that only builds need).
bool left_out_of_stdlib(std::string_view relative);

// Whether a site dir entry ("setuptools", "setuptools-65.5.0.dist-info", "six.py", "distutils-precedence.pth")
// belongs to one of `packages`.
bool names_package(std::string_view entry, const std::vector<std::string>& packages);

struct ImageInterpreterOptions {
  std::filesystem::path scratch;    // private to this interpreter (HOME, TMPDIR, its launcher)
  std::vector<std::string> packages;
  std::function<void(const std::string&)> log;
};

// The interpreter of an entry image_interpreter stored (an interpreters entry, or a copy of one made
// elsewhere), its launcher and HOME in `scratch`, without running it.
Interpreter launch_image_interpreter(const std::filesystem::path& entry, const PythonFacts& facts,
                                     const std::filesystem::path& scratch);

// The image's own copies of `packages` (setuptools, pkg_resources, _distutils_hack, wheel, ... with their
// metadata) from its site dirs, copied into a site-packages entry of the cache: the host directories that mirror the
// image's site dirs holding them, in sys.path order. pip runs setup.py with these when it does not isolate a build;
// any interpreter of the image's X.Y can import them. Empty when the image has none of them.
std::vector<std::string> image_site_packages(const layers::ScannedImage& image, const PythonFacts& facts,
                                             const std::vector<std::string>& packages,
                                             const store::CacheArea& entries,
                                             const std::function<void(const std::string&)>& log);

// The base's interpreter extracted into `entries` (or found there), started once and checked. Throws Error with a
// cause and a hint when it cannot be had.
Interpreter image_interpreter(const layers::ScannedImage& image, const PythonFacts& facts,
                              const store::CacheArea& entries, const ImageInterpreterOptions& options);

}  // namespace trainpack::python
