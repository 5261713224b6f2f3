#!/usr/bin/env bash
# The arm64 libraries a cross build needs that Debian cannot install beside their amd64 version (libisal2 and
# libisal-dev are not Multi-Arch: same), unpacked from their .debs with `dpkg -x` into DIR (DIR/usr/...), with their
# pkg-config files pointed at DIR. cmake/toolchains/aarch64-linux-gnu.cmake reads them from there
# (-DTRAINPACK_CROSS_PREFIX=DIR) and scripts/package.sh bundles the library from there.
#   bash scripts/cross-prefix.sh ARCH DIR      ARCH: a Debian architecture dpkg knows (scripts/install-deps.sh
#                                              --cross-arm64 adds arm64)
# The packages are the versions apt would install; DIR is rebuilt only when one of them changes.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: cross-prefix.sh ARCH DIR" >&2; exit 2; }
arch=$1 dir=$2
packages=(libisal2 libisal-dev)

# The stamp: the packages' versions, and the form this script writes the .pc files in.
versions=$(apt-cache policy "${packages[@]/%/:$arch}" | awk '/^[^ ]/ {name=$1} /Candidate:/ {print name, $2}'
           echo "pc prefix: blanks escaped")
if [[ -f "$dir/.packages" && "$(cat "$dir/.packages")" == "$versions" ]]; then
  exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cross-prefix.XXXXXX")
trap 'rm -rf "$work"' EXIT
# apt-get download writes into the current directory; _apt cannot write to a root-owned mktemp directory.
chmod 755 "$work"
if ! (cd "$work" && apt-get download -q "${packages[@]/%/:$arch}" >/dev/null 2>&1); then
  echo "cross-prefix.sh: cannot download ${packages[*]} for $arch" >&2
  echo "hint: dpkg must know the architecture: bash scripts/install-deps.sh --cross-$arch" >&2
  exit 1
fi
mkdir "$work/root"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
abs=$(realpath -m "$dir")
# A value of a .pc file is split at blanks unless they are escaped with a backslash (pkg-config prints them escaped,
# and CMake's FindPkgConfig reads them back whole); then \, & and | escaped again for sed's replacement text.
pc_prefix=$(printf '%s' "$abs/usr" | sed 's/[[:space:]\\]/\\&/g')
replacement=$(printf '%s' "$pc_prefix" | sed 's/[\\&|]/\\&/g')
find "$work/root" -name '*.pc' -exec sed -i "s|^prefix=/usr\$|prefix=$replacement|" {} +
printf '%s\n' "$versions" > "$work/root/.packages"
rm -rf "$dir"
mkdir -p "$(dirname "$abs")"
mv "$work/root" "$abs"
