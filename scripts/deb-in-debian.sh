#!/usr/bin/env bash
# deb-in-debian.sh SUITE DIST_DIR -- the .deb for another Debian release (e.g. trixie), built inside a root
# filesystem of that release so that the binary links that release's libraries and dpkg-shlibdeps names that
# release's packages (Debian 13 renamed many in its 64-bit time_t transition: libcurl4 -> libcurl4t64, ...).
# Prints the package's path (DIST_DIR/trainpack_VERSION-1~debN_ARCH.deb, scripts/make-deb.sh).
#
# The root: `mmdebstrap --variant=minbase SUITE` with the build dependencies (scripts/install-deps.sh --print
# --package, GoogleTest left out: the tests are not built), cached as tests/fixtures cache theirs (under
# $TRAINPACK_TEST_CACHE or ~/.cache/trainpack-tests, keyed by this script and install-deps.sh). The build: trainpack
# alone (BUILD_TESTING=OFF) in Release mode, run with bwrap in that root (the checkout bound read-only at /src), into
# SUITE_BUILD_DIR (default build-release-SUITE in the checkout), which later runs reuse. A first build compiles everything with that
# release's compiler (about 10 minutes on 2 cores); the root takes about 600 MB. Needs root (mmdebstrap, bwrap).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=SCRIPTDIR/../tests/fixtures/python-bases/lib.sh
source tests/fixtures/python-bases/lib.sh
[[ $# -eq 2 && -n "$1" ]] || die "usage: deb-in-debian.sh SUITE DIST_DIR"
suite=$1
dist=$(mkdir -p "$2" && realpath "$2")
build_dir=$(realpath -m "${SUITE_BUILD_DIR:-build-release-$suite}")
need_tools bwrap flock sha256sum
((EUID == 0)) || die "mmdebstrap --variant=minbase and bwrap --bind /: run as root"

build_root() {  # $1: empty directory to fill
  local packages
  need_tools mmdebstrap
  packages=$(bash scripts/install-deps.sh --print --package | grep -vx libgtest-dev | paste -sd, -)
  echo "deb-in-debian.sh: building a minbase $suite rootfs with the build dependencies (takes minutes)" >&2
  mmdebstrap_retried "$1/rootfs" --quiet --variant=minbase --include="$packages" --format=directory "$suite" \
    "$1/rootfs" "$(debian_mirror)"
  mkdir -p "$1/rootfs/src" "$1/rootfs/build" "$1/rootfs/dist"   # mount points in the read-only root
}
root=$(cached_entry "debian-build-$suite" "$(content_key "${BASH_SOURCE[0]}" scripts/install-deps.sh)" build_root)

commit=$(git describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null || echo unknown)
mkdir -p "$build_dir"
bwrap --ro-bind "$root/rootfs" / --ro-bind "$PWD" /src --bind "$build_dir" /build --bind "$dist" /dist \
  --proc /proc --dev /dev --tmpfs /tmp --chdir /src --setenv HOME /tmp \
  bash -c "cmake -S /src -B /build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DTRAINPACK_COMMIT=$commit >&2 &&
           cmake --build /build -j${JOBS:-$(nproc)} --target trainpack >&2 && bash scripts/make-deb.sh /build /dist" |
  sed "s|^/dist/|$dist/|"
