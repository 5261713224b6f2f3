#!/usr/bin/env bash
# Release packages of trainpack, built from this checkout (in Release mode unless told otherwise) into dist/, for
# this machine's architecture or, with ARCH=arm64 on amd64, cross-built for arm64 (the tarball only):
#   trainpack_VERSION-1~debN_ARCH.deb       for this machine's Debian release N (scripts/make-deb.sh), and one for
#                                           each release DEB_SUITES names (e.g. DEB_SUITES=trixie), built in a root
#                                           of that release (scripts/deb-in-debian.sh: a full compile at first)
#   trainpack-VERSION-linux-ARCH.tar.gz     self-contained: runs on any Linux of ARCH whatever its libc (below)
#   trainpack-step-VERSION-linux-ARCH.oci.tar
#                                           the CI step image (scripts/self-image.sh) on STEP_BASE (default
#                                           python:3.11-slim-bookworm; STEP_BASE= leaves it out; STEP_BASE_SOURCE
#                                           reads the base from that location, a path or URL kept whole; STEP_FLAGS
#                                           adds flags to its build, split at spaces), an OCI image layout archive:
#                                           push it with
#                                           `skopeo copy oci-archive:FILE docker://REF`
#   SHA256SUMS                              the sha256 of each package in dist/ (`sha256sum -c SHA256SUMS`):
#                                           a run replaces the lines of the files it makes and keeps the others
#
#   bash scripts/package.sh        BUILD_DIR (default build-release) holds the build, of type BUILD_TYPE (default
#                                  Release); DIST_DIR (default dist) receives the packages
#   ARCH=arm64 bash scripts/package.sh
#                                  the linux-arm64 tarball, cross-built into BUILD_DIR (default build-arm64) with
#                                  Debian's toolchain (cmake/toolchains/aarch64-linux-gnu.cmake) and checked with
#                                  qemu-user; installs what it needs (scripts/install-deps.sh --cross-arm64)
#   PREBUILT=1 BUILD_DIR=build bash scripts/package.sh
#                                  packages BUILD_DIR as it is, without configuring or building it (the package
#                                  test packages the build under test; reconfiguring it could rebuild everything)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build_dir=${BUILD_DIR:-build-release}
[[ "$build_dir" == /* ]] || build_dir=$root/$build_dir   # cpack runs from inside it
dist=${DIST_DIR:-$root/dist}

host_arch=$(dpkg --print-architecture)
arch=${ARCH:-$host_arch}
# For another architecture: run=() starts its programs (qemu-user), prefix holds the libraries Debian cannot
# install beside the host's (scripts/cross-prefix.sh).
run=() prefix= prefix_libs= cc=${CC:-cc} strip=strip
cmake_args=(-DBUILD_TESTING=OFF)
if [[ "$arch" == "$host_arch" ]]; then
  bash scripts/install-deps.sh --package
elif [[ "$host_arch/$arch" == amd64/arm64 ]]; then
  [[ -n "${BUILD_DIR:-}" ]] || build_dir=$root/build-arm64
  bash scripts/install-deps.sh --package --cross-arm64
  prefix=$build_dir/cross-prefix
  bash scripts/cross-prefix.sh arm64 "$prefix"
  prefix_libs=$prefix/usr/lib/aarch64-linux-gnu
  run=(qemu-aarch64) cc=aarch64-linux-gnu-gcc strip=aarch64-linux-gnu-strip
  cmake_args+=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake"
               -DTRAINPACK_CROSS_PREFIX="$prefix")
else
  echo "package.sh: cannot build for ARCH=$arch on $host_arch" >&2
  echo "hint: packages are built for this machine's architecture, or with ARCH=arm64 on amd64" >&2
  exit 2
fi
if [[ "${PREBUILT:-0}" == 1 ]]; then
  [[ -x "$build_dir/trainpack" && -f "$build_dir/CPackConfig.cmake" ]] ||
    { echo "package.sh: PREBUILT=1 but $build_dir holds no built trainpack (run scripts/build.sh)" >&2; exit 1; }
else
  # Without the tests: the binary, its man page and the rooms they are made of.
  # One argument a line: the toolchain's and the prefix's paths may hold spaces.
  BUILD_DIR=$build_dir BUILD_TYPE=${BUILD_TYPE:-Release} CMAKE_ARGS="$(printf '%s\n' "${cmake_args[@]}")" \
    bash scripts/build.sh >/dev/null
fi
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")
mkdir -p "$dist"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
made=()   # the files this run puts in dist/

# The .deb for this machine's Debian release, then those of DEB_SUITES.
if [[ "$arch" == "$host_arch" ]]; then
  made+=("$(bash scripts/make-deb.sh "$build_dir" "$dist")")
  for suite in ${DEB_SUITES:-}; do
    made+=("$(bash scripts/deb-in-debian.sh "$suite" "$dist")")
  done
fi

# The tarball: self-contained, for any Linux of this architecture whatever its libc (glibc of any version, musl,
# none). It holds
#   bin/trainpack                the static launcher (scripts/release_launcher.c): runs lib/trainpack.bin through
#                                lib/LOADER --library-path lib, so nothing of the host's libc or libraries is used
#   lib/trainpack.bin            the binary
#   lib/                         every shared library it loads (ldd, transitively), glibc's and the loader included,
#                                and the NSS module glibc loads for `compat` (`files` and `dns` are in libc.so.6)
#   share/trainpack/cacert.pem   this machine's CA bundle, used only when the host has none
#   share/trainpack/example/     a code-only trainer (testdata/example-trainer) to try a build with
#   share/man/man1/trainpack.1   the man page (`man -l share/man/man1/trainpack.1`, or MANPATH=DIR/share)
#   share/doc/                   README.md and the copyright file of every Debian package a library comes from
# No gconv modules: trainpack never calls setlocale(3), so libarchive's name conversions are the C locale's (UTF-8
# and ASCII), which glibc's iconv has built in.
name=trainpack-$version-linux-$arch
top=$stage/$name
mkdir -p "$top/bin" "$top/lib" "$top/share/trainpack" "$top/share/doc/trainpack"
install -m 755 "$build_dir/trainpack" "$top/lib/trainpack.bin"
"$strip" --strip-debug "$top/lib/trainpack.bin"
patchelf --remove-rpath "$top/lib/trainpack.bin"
interp=$(patchelf --print-interpreter "$build_dir/trainpack")
loader=$(basename "$interp")
# What ldd prints, from the binary's own loader (of its architecture: ldd runs only this machine's).
loaded=$("${run[@]}" "$interp" ${prefix_libs:+--library-path "$prefix_libs"} --list "$build_dir/trainpack")
# "NAME => PATH (0xADDRESS)" lines; PATH may hold blanks (a cross prefix under the checkout).
mapfile -t libs < <(sed -n 's/^[[:space:]]*[^[:space:]]* => \(\/.*\) (0x[0-9a-f]*)$/\1/p' <<<"$loaded")
nss=$(dirname "$(sed -n 's/^[[:space:]]*libc\.so[^[:space:]]* => \(\/.*\) (0x[0-9a-f]*)$/\1/p' <<<"$loaded")")
nss+=/libnss_compat.so.2
for path in "${libs[@]}" "$nss" "$interp"; do
  soname=$(basename "$path")
  cp -L "$path" "$top/lib/$soname"
  chmod 755 "$top/lib/$soname"
  real=$(realpath "$path")   # dpkg knows it under /usr or, on a merged-/usr system, maybe under /lib
  pkg=$({ dpkg -S "$real" || dpkg -S "${real#/usr}"; } 2>/dev/null | sed -n '1s/:.*//p' || true)
  if [[ -n "$pkg" && -f /usr/share/doc/$pkg/copyright ]]; then
    mkdir -p "$top/share/doc/$pkg"
    cp /usr/share/doc/"$pkg"/copyright "$top/share/doc/$pkg/"
  fi
done
if [[ -n "$prefix" ]]; then   # the unpacked packages' copyright files (dpkg does not know them)
  for doc in "$prefix"/usr/share/doc/*/copyright; do
    [[ "$doc" != */*-dev/copyright ]] || continue   # the library's own package has the same notice
    install -D -m 644 "$doc" "$top/share/doc/$(basename "$(dirname "$doc")")/copyright"
  done
fi
"$cc" -static -Os -s -Wall -Werror -DLOADER="\"$loader\"" -o "$top/bin/trainpack" scripts/release_launcher.c
cp README.md "$top/share/doc/trainpack/"
install -D -m 644 "$build_dir/trainpack.1" "$top/share/man/man1/trainpack.1"
cp -L "$(bash scripts/ca-bundle.sh)" "$top/share/trainpack/cacert.pem"
cp -r testdata/example-trainer "$top/share/trainpack/example"
chmod -R u+w,go-w,a+rX "$top"
# Nothing of this machine may be picked instead: with the bundle's loader, every library resolves inside lib/.
bundled=("${run[@]}" "$top/lib/$loader" --inhibit-cache --library-path "$top/lib")
resolved=$("${bundled[@]}" --list "$top/lib/trainpack.bin")
# The vDSO is named linux-vdso.so.1 natively, and not at all under qemu-user.
if grep -Ev "^\s*(linux-vdso\.so|/|\(0x)|=> $top/lib/" <<<"$resolved" | grep .; then
  echo "package.sh: the libraries above resolve outside the tarball" >&2
  exit 1
fi
# The launcher's own run, for another architecture, needs the kernel to hand it to qemu (binfmt_misc).
if ((${#run[@]})); then "${bundled[@]}" "$top/lib/trainpack.bin" --version >/dev/null
else "$top/bin/trainpack" --version >/dev/null; fi
# Reproducible: sorted names, one mtime (the commit's), no owner names, gzip without a timestamp.
reproducible_tar() {  # OUTPUT DIR NAMES...: NAMES of DIR, into OUTPUT (a .gz name compresses)
  local out=$1 dir=$2
  shift 2
  tar -C "$dir" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf - "$@" |
    if [[ "$out" == *.gz ]]; then gzip -n9; else cat; fi > "$out.tmp"
  mv -f "$out.tmp" "$out"
}
reproducible_tar "$dist/$name.tar.gz" "$stage" "$name"
made+=("$dist/$name.tar.gz")

# The step image, written as an OCI layout and archived as one (the layout's files at the top of the tar); made by
# this machine's trainpack, so for its architecture only.
if [[ "$arch" == "$host_arch" && -n "${STEP_BASE-python:3.11-slim-bookworm}" ]]; then
  step=trainpack-step-$version-linux-$arch.oci.tar
  step_flags=()
  [[ -z "${STEP_BASE_SOURCE:-}" ]] || step_flags+=(--base-source="$STEP_BASE_SOURCE")
  # shellcheck disable=SC2086  # STEP_FLAGS is a list of flags
  TRAINPACK_BIN=$build_dir/trainpack bash scripts/self-image.sh "${STEP_BASE-python:3.11-slim-bookworm}" \
    "trainpack-step:$version" --output="oci:$stage/step" -q "${step_flags[@]}" ${STEP_FLAGS:-} >/dev/null
  reproducible_tar "$dist/$step" "$stage/step" oci-layout index.json blobs
  made+=("$dist/$step")
fi

# SHA256SUMS: this run's files, and the lines of earlier runs (another architecture's) whose files are still there.
earlier_sums() {
  [[ -f SHA256SUMS ]] || return 0
  local sum file
  while read -r sum file; do
    if [[ -f "$file" && " ${made[*]##*/} " != *" $file "* ]]; then printf '%s  %s\n' "$sum" "$file"; fi
  done < SHA256SUMS
}
(
  cd "$dist"
  { sha256sum -- "${made[@]##*/}"; earlier_sums; } | sort -k2 > SHA256SUMS.tmp
  mv -f SHA256SUMS.tmp SHA256SUMS
)
printf '%s\n' "${made[@]}" "$dist/SHA256SUMS"
