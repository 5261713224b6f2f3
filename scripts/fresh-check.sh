#!/usr/bin/env bash
# README's two commands, from a clean clone in a clean Debian 12 root, as a newcomer on a new machine runs them.
#
#   bash scripts/fresh-check.sh                        the committed HEAD: `bash scripts/demo.sh`, then
#                                                      `bash scripts/test.sh` with CI=1 (as .ci/run)
#   FRESH_COMMANDS='bash scripts/demo.sh' bash scripts/fresh-check.sh     other commands (one a line)
#   FRESH_DIR=/var/tmp/fresh bash scripts/fresh-check.sh   where the root goes (default /var/tmp/trainpack-fresh-PID)
#   FRESH_KEEP=1 bash scripts/fresh-check.sh           keep the root afterwards (to read its build logs)
#
# The root is `mmdebstrap --variant=minbase bookworm` with git, ca-certificates and mount, from the Debian mirror apt
# uses (MIRROR=... overrides): nothing of the host's caches (no ccache, no ~/.cache/trainpack-tests, no apt archives).
# The clone is `git clone` of this checkout's HEAD into "/tmp/x y/trainpack" inside the root: under /tmp, with a space.
# Each command runs there as root, with an environment of HOME, PATH, LANG, TERM and CI only, in a mount and PID
# namespace whose root is the new tree (pivot_root, so the dockerd and runc the tests start see a real root mount);
# /dev, /sys and the network are the host's, so the host must not run the suite (its ports) at the same time.
#
# Prints every line of output with the seconds since the command started, and at the end a table of times: the
# root, the clone, each command, and within test.sh its parts (packages, compile, ctest, sanitizer step).
# Logs: ROOT/fresh-check/N.log. Needs root, mmdebstrap, git and util-linux's unshare. Exit: 0 when every command
# passed, else the first failing command's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
checkout=$PWD

die() { echo "fresh-check.sh: $*" >&2; exit 1; }
((EUID == 0)) || die "needs root (mmdebstrap --variant=minbase runs maintainer scripts; the tests start dockerd)"
for tool in mmdebstrap git unshare pivot_root; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get install mmdebstrap git util-linux)"
done
# shellcheck source=SCRIPTDIR/../tests/fixtures/python-bases/lib.sh
source tests/fixtures/python-bases/lib.sh   # debian_mirror, mmdebstrap_retried

root=${FRESH_DIR:-/var/tmp/trainpack-fresh-$$}
[[ ! -e "$root" ]] || die "$root exists; remove it or choose another FRESH_DIR"
commands=${FRESH_COMMANDS:-$'bash scripts/demo.sh\nbash scripts/test.sh'}
clone=/tmp/'x y'/trainpack
cleanup() { [[ -n "${FRESH_KEEP:-}" ]] || rm -rf --one-file-system "$root"; }
trap cleanup EXIT

times=()
elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
record() { times+=("$(printf '%-58s %s' "$1" "$(elapsed "$2")")"); }

start=$SECONDS
echo "fresh-check.sh: a minbase Debian 12 root in $root from $(debian_mirror)" >&2
mmdebstrap_retried "$root" --quiet --variant=minbase --include=git,ca-certificates,mount bookworm "$root" \
  "$(debian_mirror)"
record "clean Debian 12 root (mmdebstrap --variant=minbase)" $((SECONDS - start))

start=$SECONDS
git clone --quiet --no-hardlinks "$checkout" "$root$clone"
echo "fresh-check.sh: cloned $(git -C "$root$clone" rev-parse --short HEAD) into \"$clone\"" >&2
record "git clone into \"$clone\"" $((SECONDS - start))
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/fresh-check"

# In new mount and PID namespaces: the tree becomes / (a bind mount of itself, so pivot_root can take it), with a
# fresh /proc for the new PID namespace, the host's /dev and /sys, an empty /run; then the command in the clone.
# Every process it leaves behind (dockerd, registries) dies with the namespace's first process.
# shellcheck disable=SC2016
enter='set -e
root=$1 clone=$2 command=$3
mount --make-rprivate /
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
cd "$root"
mkdir -p .host
pivot_root . .host
umount -l /.host && rmdir /.host
cd "$clone"
exec env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
  CI=1 bash -c "$command"'

# Each output line with the seconds since the command began; the first line that marks a part of test.sh starts it.
stamp() {
  local began=$SECONDS line
  while IFS= read -r line; do printf '%5d %s\n' $((SECONDS - began)) "$line"; done
}
part_times() {  # $1: the stamped log of scripts/test.sh; prints "PART SECONDS" for each part found
  awk '
    function mark(name) { if (!(name in at)) { at[name] = $1; order[n++] = name } }
    NR == 1 { mark("packages (install-deps.sh --test)") }
    /The CXX compiler identification/ && ++compilers == 1 { mark("compile (scripts/build.sh: gcc)") }
    /^ *[0-9]+ Test project / && ++projects == 1 { mark("ctest (the sanitizer build beside it)") }
    /^ *[0-9]+ Test project / && projects == 2 { mark("sanitizer step: unit tests and fuzzing") }
    { last = $1 }
    END { for (i = 0; i < n; i++) print order[i] "\t" ((i + 1 < n ? at[order[i + 1]] : last) - at[order[i]]) }
  ' "$1"
}

status=0 number=0
while IFS= read -r command; do
  [[ -n "$command" ]] || continue
  number=$((number + 1))
  log=$root/fresh-check/$number.log
  echo "fresh-check.sh: [$number] $command (log: $log)" >&2
  start=$SECONDS
  rc=0
  unshare --mount --pid --fork bash -c "$enter" enter "$root" "$clone" "$command" 2>&1 | stamp | tee "$log" || rc=$?
  record "$command" $((SECONDS - start))
  if [[ "$command" == *scripts/test.sh* ]]; then
    while IFS=$'\t' read -r part seconds; do record "  $part" "$seconds"; done < <(part_times "$log")
  fi
  if ((rc != 0)); then
    echo "fresh-check.sh: [$number] $command failed (exit $rc)" >&2
    status=$rc
    break
  fi
done <<<"$commands"

printf '\nfresh-check.sh: times (%s, %s cores)\n' "$(git -C "$root$clone" rev-parse --short HEAD)" "$(nproc)"
printf '  %s\n' "${times[@]}"
((status == 0)) && echo "fresh-check.sh: passed" || echo "fresh-check.sh: FAILED" >&2
exit "$status"
