#!/usr/bin/env bash
# make-deb.sh BUILD_DIR DIST_DIR -- the .deb of a configured and built tree, for the Debian release this runs on:
# DIST_DIR/trainpack_VERSION-1~debN_ARCH.deb, N that release's major version (the ~ sorts it below any Debian
# revision, and the ~deb13 package above the ~deb12 one on an upgraded system). Its Depends come from
# dpkg-shlibdeps, so they are the names of this release's library packages. Prints the package's path.
#
# The package holds what `cmake --install --strip` puts under /usr (the DEB generator's prefix). CPack packs that
# staged tree rather than installing the project itself, which would first build the tree's `preinstall` target
# (all of it): nothing may be rebuilt here. CPack's own staging is under BUILD_DIR; only the package lands in DIST_DIR.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: make-deb.sh BUILD_DIR DIST_DIR" >&2; exit 2; }
build_dir=$(realpath "$1")
dist=$(mkdir -p "$2" && realpath "$2")
release=$(. /etc/os-release && echo "${VERSION_ID%%.*}")
[[ -n "$release" ]] || { echo "make-deb.sh: /etc/os-release names no VERSION_ID (not a Debian release?)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build_dir" --prefix "$stage/usr" --strip >/dev/null
rm -f "$build_dir"/cpack/trainpack_*.deb
(cd "$build_dir" && cpack -G DEB -B "$build_dir/cpack" -D CPACK_INSTALL_CMAKE_PROJECTS= \
   -D "CPACK_INSTALLED_DIRECTORIES=$stage;/" -D "CPACK_DEBIAN_PACKAGE_RELEASE=1~deb$release" >/dev/null)
deb=$(ls "$build_dir"/cpack/trainpack_*.deb)
mv -f "$deb" "$dist/"
echo "$dist/$(basename "$deb")"
