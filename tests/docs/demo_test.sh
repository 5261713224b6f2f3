#!/usr/bin/env bash
# demo_test.sh WORKDIR -- runs README's first command, `bash scripts/demo.sh`, end to end with the binary under test
# (TRAINPACK_BIN) and its work under WORKDIR (DEMO_DIR), then checks what a newcomer would look at: the exit status,
# the trainer's own lines from local-run, and the image written as an OCI layout.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: demo_test.sh WORKDIR" >&2; exit 2; }
: "${TRAINPACK_BIN:?the trainpack binary under test}"
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
rm -rf "$1" && mkdir -p "$1"
work=$(cd "$1" && pwd -P)
log=$work/demo.log

rc=0
DEMO_DIR=$work/demo bash "$source_dir/scripts/demo.sh" >"$log" 2>&1 || rc=$?
fail() { cat "$log"; echo "demo_test.sh: $*" >&2; exit 1; }
((rc == 0)) || fail "scripts/demo.sh exited with status $rc"
# testdata/example-pip-trainer/trainer/task.py prints the versions pip chose, then each epoch.
for line in "tp-gamma 1.0" "tp-delta " "epoch 1/2" "epoch 2/2" "==> Done in"; do
  grep -qF -- "$line" "$log" || fail "the demo's output has no line with '$line'"
done
[[ -f "$work/demo/image/index.json" ]] || fail "no OCI layout at $work/demo/image"
skopeo inspect --raw "oci:$work/demo/image:latest" >/dev/null || fail "skopeo cannot read oci:$work/demo/image:latest"
echo "demo_test.sh: scripts/demo.sh passed ($(grep -F '==> Done in' "$log"))"
