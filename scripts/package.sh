#!/usr/bin/env bash
# Release packages of trainpack, built from this checkout (in Release mode unless told otherwise) into dist/:
#   trainpack_VERSION-1~debN_ARCH.deb       for this machine's Debian release N (scripts/make-deb.sh), and one for
#                                           each release DEB_SUITES names (e.g. DEB_SUITES=trixie), built in a root
#                                           of that release (scripts/deb-in-debian.sh: a full compile at first)
#   trainpack-VERSION-linux-ARCH.tar.gz     self-contained: runs on any Linux of ARCH whatever its libc (below)
#   trainpack-step-VERSION-linux-ARCH.oci.tar
#                                           the CI step image (scripts/self-image.sh) on STEP_BASE (default
#                                           python:3.11-slim-bookworm; STEP_BASE= leaves it out; STEP_FLAGS adds
#                                           flags to its build), an OCI image layout archive: push it with
#                                           `skopeo copy oci-archive:FILE docker://REF`
#   SHA256SUMS                              the sha256 of each of the above (`sha256sum -c SHA256SUMS`)
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

epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
made=()   # the files this run puts in dist/

# The .deb for this machine's Debian release, then those of DEB_SUITES.
made+=("$(bash scripts/make-deb.sh "$build_dir" "$dist")")
for suite in ${DEB_SUITES:-}; do
  made+=("$(bash scripts/deb-in-debian.sh "$suite" "$dist")")
done

# The tarball: self-contained, for any Linux of this architecture whatever its libc (glibc of any version, musl,
# none). It holds
#   bin/trainpack                the static launcher (scripts/release_launcher.c): runs lib/trainpack.bin through
#                                lib/LOADER --library-path lib, so nothing of the host's libc or libraries is used
#   lib/trainpack.bin            the binary
#   lib/                         every shared library it loads (ldd, transitively), glibc's and the loader included,
#                                and the NSS module glibc loads for `compat` (`files` and `dns` are in libc.so.6)
#   share/trainpack/cacert.pem   this machine's CA bundle, used only when the host has none
#   share/trainpack/example/     a code-only trainer (testdata/example-trainer) to try a build with
#   share/doc/                   README.md and the copyright file of every Debian package a library comes from
# No gconv modules: trainpack never calls setlocale(3), so libarchive's name conversions are the C locale's (UTF-8
# and ASCII), which glibc's iconv has built in.
name=trainpack-$version-linux-$arch
top=$stage/$name
mkdir -p "$top/bin" "$top/lib" "$top/share/trainpack" "$top/share/doc/trainpack"
install -m 755 "$build_dir/trainpack" "$top/lib/trainpack.bin"
strip --strip-debug "$top/lib/trainpack.bin"
patchelf --remove-rpath "$top/lib/trainpack.bin"
interp=$(patchelf --print-interpreter "$build_dir/trainpack")
loader=$(basename "$interp")
libs=$(ldd "$build_dir/trainpack" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
nss=$(dirname "$(ldd "$build_dir/trainpack" | awk '$1 ~ /^libc\.so/ {print $3}')")/libnss_compat.so.2
for path in $libs "$nss" "$interp"; do
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
${CC:-cc} -static -Os -s -Wall -Werror -DLOADER="\"$loader\"" -o "$top/bin/trainpack" scripts/release_launcher.c
cp README.md "$top/share/doc/trainpack/"
cp -L "$(bash scripts/ca-bundle.sh)" "$top/share/trainpack/cacert.pem"
cp -r testdata/example-trainer "$top/share/trainpack/example"
chmod -R u+w,go-w,a+rX "$top"
# Nothing of this machine may be picked instead: with the bundle's loader, every library resolves inside lib/.
resolved=$("$top/lib/$loader" --inhibit-cache --library-path "$top/lib" --list "$top/lib/trainpack.bin")
if grep -Ev "^\s*(linux-vdso\.so|/)|=> $top/lib/" <<<"$resolved" | grep .; then
  echo "package.sh: the libraries above resolve outside the tarball" >&2
  exit 1
fi
"$top/bin/trainpack" --version >/dev/null
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

# The step image, written as an OCI layout and archived as one (the layout's files at the top of the tar).
if [[ -n "${STEP_BASE-python:3.11-slim-bookworm}" ]]; then
  step=trainpack-step-$version-linux-$arch.oci.tar
  # shellcheck disable=SC2086  # STEP_FLAGS is a list of flags
  TRAINPACK_BIN=$build_dir/trainpack bash scripts/self-image.sh "${STEP_BASE-python:3.11-slim-bookworm}" \
    "trainpack-step:$version" --output="oci:$stage/step" -q ${STEP_FLAGS:-} >/dev/null
  reproducible_tar "$dist/$step" "$stage/step" oci-layout index.json blobs
  made+=("$dist/$step")
fi

(cd "$dist" && sha256sum -- "${made[@]##*/}" > SHA256SUMS.tmp && mv -f SHA256SUMS.tmp SHA256SUMS)
printf '%s\n' "${made[@]}" "$dist/SHA256SUMS"
