#!/usr/bin/env bash
# Release packages of trainpack, built from this checkout (in Release mode unless told otherwise) into dist/:
#   trainpack_VERSION_ARCH.deb              CPack; its Depends come from dpkg-shlibdeps (Debian 12 libraries)
#   trainpack-VERSION-linux-ARCH.tar.gz     self-contained: bin/trainpack plus, in lib/, every shared library it
#                                           loads that is not part of glibc (found through RUNPATH $ORIGIN/../lib);
#                                           runs on any x86-64 Linux with glibc >= the build machine's (2.36 here)
#
#   bash scripts/package.sh        BUILD_DIR (default build-release) holds the build, of type BUILD_TYPE (default
#                                  Release); DIST_DIR (default dist) receives the packages
#   PREBUILT=1 BUILD_DIR=build bash scripts/package.sh
#                                  packages BUILD_DIR as it is, without configuring or building it (the package
#                                  test packages the build under test; reconfiguring it could rebuild everything)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build_dir=${BUILD_DIR:-build-release}
[[ "$build_dir" == /* ]] || build_dir=$root/$build_dir   # cpack runs from inside it
dist=${DIST_DIR:-$root/dist}

bash scripts/install-deps.sh --package
if [[ "${PREBUILT:-0}" == 1 ]]; then
  [[ -x "$build_dir/trainpack" && -f "$build_dir/CPackConfig.cmake" ]] ||
    { echo "package.sh: PREBUILT=1 but $build_dir holds no built trainpack (run scripts/build.sh)" >&2; exit 1; }
else
  BUILD_DIR=$build_dir BUILD_TYPE=${BUILD_TYPE:-Release} bash scripts/build.sh >/dev/null
fi
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")
arch=$(dpkg --print-architecture)
mkdir -p "$dist"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# The .deb, of what `cmake --install` puts under /usr (the DEB generator's prefix). CPack packs that staged tree
# rather than installing the project itself, which would first build the tree's `preinstall` target (all of it):
# with PREBUILT=1 nothing may be rebuilt. CPack's own staging is under the build directory; only the package lands
# in dist/.
cmake --install "$build_dir" --prefix "$stage/deb/usr" >/dev/null
(cd "$build_dir" && cpack -G DEB -B "$build_dir/cpack" -D CPACK_INSTALL_CMAKE_PROJECTS= \
   -D "CPACK_INSTALLED_DIRECTORIES=$stage/deb;/" >/dev/null)
deb=$(ls -t "$build_dir"/cpack/trainpack_*.deb | head -1)
mv -f "$deb" "$dist/"
echo "$dist/$(basename "$deb")"

# The tarball: the binary, README, and the non-glibc libraries ldd resolves (transitively) for it.
name=trainpack-$version-linux-$arch
mkdir -p "$stage/$name/bin" "$stage/$name/lib"
install -m 755 "$build_dir/trainpack" "$stage/$name/bin/trainpack"
strip --strip-debug "$stage/$name/bin/trainpack"
cp README.md "$stage/$name/"
glibc='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnss_[a-z]+)\.so'
ldd "$build_dir/trainpack" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
  [[ "$soname" =~ $glibc ]] && continue
  cp -L "$path" "$stage/$name/lib/$soname"
  patchelf --set-rpath '$ORIGIN' "$stage/$name/lib/$soname"
done
patchelf --set-rpath '$ORIGIN/../lib' "$stage/$name/bin/trainpack"
# Nothing of this machine may be picked instead: the packaged binary must resolve every library from lib/.
if LD_LIBRARY_PATH= ldd "$stage/$name/bin/trainpack" | awk '$2 == "=>" {print $1, $3}' |
   grep -Ev "$glibc" | grep -Ev " $stage/$name/(bin/\.\./)?lib/"; then
  echo "package.sh: the libraries above resolve outside the tarball" >&2
  exit 1
fi
"$stage/$name/bin/trainpack" --version >/dev/null
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar -C "$stage" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -czf "$dist/$name.tar.gz.tmp" "$name"
mv -f "$dist/$name.tar.gz.tmp" "$dist/$name.tar.gz"
echo "$dist/$name.tar.gz"
