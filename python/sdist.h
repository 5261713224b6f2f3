#pragma once
// Source distributions (sdists) as pip opens them (pip/_internal/utils/unpacking.py): unpacked into a directory,
// the one top-level directory they all share stripped, nothing written outside the destination; and the check that
// tells a pure-Python sdist from one with native code, which a build on this host could not make for the image.
#include <filesystem>
#include <string>
#include <vector>

namespace trainpack::python {

// Unpacks a .tar.gz/.tgz/.tar.bz2/.tar.xz/.tar/.zip sdist into `destination` (created) and returns the project
// directory (destination itself: a shared leading directory is stripped, as pip's untar_file/unzip_file do).
// Regular files get 0644, or 0755 when the archive gives any execute bit; every file's mtime is `mtime`, so that
// bytecode compiled from them matches the layer. Symlinks that stay inside are kept; members that would land outside
// `destination` are refused with an Error naming them (pip raises InstallationError).
std::filesystem::path unpack_sdist(const std::filesystem::path& archive, const std::filesystem::path& destination,
                                   std::int64_t mtime);

// Files of an sdist that mean native code (C/C++/Cython/Fortran/Rust sources), relative to the archive's top
// directory; empty for a pure-Python sdist. Throws Error when the archive cannot be read.
std::vector<std::string> native_sources_in_sdist(const std::filesystem::path& archive);

}  // namespace trainpack::python
