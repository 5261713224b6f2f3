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

versions=$(apt-cache policy "${packages[@]/%/:$arch}" | awk '/^[^ ]/ {name=$1} /Candidate:/ {print name, $2}')
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
find "$work/root" -name '*.pc' -exec sed -i "s|^prefix=/usr\$|prefix=$abs/usr|" {} +
printf '%s\n' "$versions" > "$work/root/.packages"
rm -rf "$dir"
mkdir -p "$(dirname "$abs")"
mv "$work/root" "$abs"
