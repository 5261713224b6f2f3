#!/usr/bin/env bash
# Install what trainpack needs from the Debian archive, and nothing that is already there.
#
#   scripts/install-deps.sh           build dependencies (compiler, CMake, libraries, GoogleTest)
#   scripts/install-deps.sh --demo    + what scripts/demo.sh needs (mmdebstrap, umoci, skopeo, runc, python3
#                                     with pip, setuptools and wheel for the local index's wheels, curl)
#   scripts/install-deps.sh --bench   + what scripts/bench.sh needs (dockerd, registry, buildah, pigz, pip, jq, time)
#   scripts/install-deps.sh --package + what scripts/package.sh needs (dpkg-shlibdeps, patchelf)
#   scripts/install-deps.sh --cross-arm64
#                                     + what `ARCH=arm64 scripts/package.sh` needs on amd64: Debian's cross
#                                     toolchain, the arm64 (multiarch) -dev packages, qemu-user to run the result
#                                     (adds the arm64 architecture to dpkg first)
#   scripts/install-deps.sh --print --package   prints the packages of those sets, one a line, installing nothing
#                                     (scripts/deb-in-debian.sh installs the build dependencies in another release)
#   scripts/install-deps.sh --test    + what the test suite needs (registry, OCI tools, runtimes, dockerd, python,
#                                     clang for the sanitizer build, mmdebstrap, and --package's and --cross-arm64's:
#                                     the Packages* tests run scripts/package.sh for amd64 and arm64)
#
# Idempotent: packages are checked with dpkg-query first, so a machine that has everything runs no apt at all.
# `apt-get update` runs only when something is missing. Needs root, or sudo when not root.
set -euo pipefail

BUILD_PKGS=(cmake g++ make pkg-config libarchive-dev libzip-dev libisal-dev libzstd-dev libre2-dev libcurl4-openssl-dev libssl-dev zlib1g-dev
            nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libgtest-dev)
DEMO_PKGS=(mmdebstrap umoci skopeo runc python3 python3-setuptools python3-wheel python3-pip curl ca-certificates)
PACKAGE_PKGS=(dpkg-dev patchelf file binutils)
# libisal (not co-installable with its amd64 version) is unpacked by scripts/cross-prefix.sh instead.
CROSS_ARM64_PKGS=(crossbuild-essential-arm64 qemu-user qemu-user-binfmt binfmt-support
                  libarchive-dev:arm64 libcurl4-openssl-dev:arm64 libssl-dev:arm64 libzip-dev:arm64 libzstd-dev:arm64
                  libre2-dev:arm64 zlib1g-dev:arm64 libtomlplusplus-dev:arm64)
BENCH_PKGS=(mmdebstrap umoci skopeo time docker.io docker-registry buildah pigz python3 python3-pip jq curl ca-certificates busybox-static unzip)
TEST_PKGS=(docker-registry apache2-utils python3-jsonschema skopeo umoci oci-image-tool mmdebstrap runc bubblewrap busybox-static docker.io zstd
           python3 python3-yaml python3-jwt python3-cryptography python3-setuptools python3-wheel python3-pip curl ca-certificates openssl
           # tests/fixtures/python-bases: CPython compiled from source, relocated with patchelf
           gcc make dpkg-dev xz-utils patchelf libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev
           uuid-dev libreadline-dev libncurses-dev
           # tests/integration/cli_docs_test.cpp: the completion scripts loaded by each shell, the man page by groff
           zsh fish groff-base
           # scripts/sanitize.sh: clang with its ASan/UBSan/libFuzzer runtimes, llvm-symbolizer for readable stacks
           clang libclang-rt-dev llvm)

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; }

want=("${BUILD_PKGS[@]}")
print=0
for arg in "$@"; do
  case "$arg" in
    --print) print=1 ;;
    --test) want+=("${TEST_PKGS[@]}" "${PACKAGE_PKGS[@]}")
            [[ "$(dpkg --print-architecture 2>/dev/null)" != amd64 ]] || want+=("${CROSS_ARM64_PKGS[@]}") ;;
    --cross-arm64) want+=("${CROSS_ARM64_PKGS[@]}") ;;
    --demo) want+=("${DEMO_PKGS[@]}") ;;
    --bench) want+=("${BENCH_PKGS[@]}") ;;
    --package) want+=("${PACKAGE_PKGS[@]}") ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install-deps.sh: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
  esac
done

if ((print)); then
  printf '%s\n' "${want[@]}"
  exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps.sh: this script needs a Debian/Ubuntu system (dpkg-query and apt-get)" >&2
  exit 1
fi

# One dpkg-query call for all packages (unknown ones are simply absent from its output). A package of another
# architecture is wanted as NAME:ARCH; one of this machine's (or of all) as NAME.
native=$(dpkg --print-architecture)
declare -A installed=()
while read -r name arch status; do
  [[ "$status" == "install ok installed" ]] || continue
  installed[$name:$arch]=1
  [[ "$arch" != "$native" && "$arch" != all ]] || installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${Architecture} ${Status}\n' "${want[@]}" 2>/dev/null || true)

missing=()
declare -A seen=()
for pkg in "${want[@]}"; do
  [[ -n "${seen[$pkg]:-}" || -n "${installed[$pkg]:-}" ]] && continue
  seen[$pkg]=1
  missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

as_root=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "install-deps.sh: missing packages: ${missing[*]}" >&2
    echo "install-deps.sh: not root and sudo is not available; install them as root" >&2
    exit 1
  fi
fi

echo "install-deps.sh: installing: ${missing[*]}" >&2
# Packages of another architecture (Debian multiarch) need it known to dpkg before apt-get update.
for pkg in "${missing[@]}"; do
  [[ "$pkg" == *:* ]] || continue
  foreign=${pkg##*:}
  dpkg --print-foreign-architectures | grep -qx "$foreign" || "${as_root[@]}" dpkg --add-architecture "$foreign"
done
# Another apt or dpkg (unattended-upgrades on a new machine, a second script) may hold apt's locks: wait for it, up
# to DPKG_LOCK_WAIT seconds, rather than failing at once. apt's DPkg::Lock::Timeout waits for dpkg's lock only, so a
# run refused on any lock is tried again.
lock_wait=${DPKG_LOCK_WAIT:-600}
apt_get() {
  local deadline=$((SECONDS + lock_wait)) log rc told=0
  log=$(mktemp)
  while :; do
    rc=0
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$lock_wait" "$@" 2>&1 |
      tee "$log" || rc=$?
    ((rc != 0)) || break
    if ! grep -q -e 'Could not get lock' -e 'Unable to lock' "$log" || ((SECONDS >= deadline)); then
      rm -f "$log"
      return "$rc"
    fi
    ((told)) || echo "install-deps.sh: another apt or dpkg holds its lock; waiting up to ${lock_wait}s" >&2
    told=1
    sleep 5
  done
  rm -f "$log"
}
apt_get update -q
apt_get install -y -q --no-install-recommends "${missing[@]}"
