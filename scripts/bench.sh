#!/usr/bin/env bash
# Benchmarks: wall time and peak memory of `trainpack build` on synthetic trainers, cold and warm.
#
#   bash scripts/bench.sh              build trainpack if needed, run every case, print a table
#   BENCH_MB=2048 bash scripts/bench.sh  size of the big inputs (default 512 MB)
#
# Cases (each on the Debian 12 Python base of tests/fixtures/python-base.sh, output to an OCI layout):
#   code-cold       a trainer with an extra dir of BENCH_MB MB (one large file + 20,000 small ones), empty cache
#   code-warm       the same again: every layer comes from the cache
#   code-changed    one line of the trainer changed: only the code layer is rebuilt
#   wheel-cold      --extra-packages with a BENCH_MB MB wheel (streamed from the zip into the layer), empty cache
#   wheel-warm      the same again (the wheel's layer is reused)
# Peak memory should stay flat as BENCH_MB grows (one streaming pass per layer, bounded buffers).
# Results: .cache/bench/results.txt (also printed). Needs GNU time (/usr/bin/time, package "time").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
bench=$root/.cache/bench
mb=${BENCH_MB:-512}
build_dir=${BUILD_DIR:-build}
[[ "$build_dir" == /* ]] || build_dir=$root/$build_dir
tp=${TRAINPACK_BIN:-$build_dir/trainpack}

bash scripts/install-deps.sh --demo
[[ -n "${TRAINPACK_BIN:-}" ]] || bash scripts/build.sh >/dev/null
[[ -x /usr/bin/time ]] || { echo "bench.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
mkdir -p "$bench"
bash tests/fixtures/python-base.sh "$bench/base" >/dev/null
base=oci:$bench/base/oci:3.11

# Inputs, made once per size.
inputs=$bench/inputs-$mb
if [[ ! -e "$inputs/.done" ]]; then
  rm -rf "$inputs"
  mkdir -p "$inputs/pkg/trainer" "$inputs/pkg/data/small" "$inputs/pkg/dist"
  printf 'print("training")\n' > "$inputs/pkg/trainer/task.py"
  head -c "$((mb * 1024 * 1024))" /dev/urandom > "$inputs/pkg/data/large.bin"
  python3 - "$inputs/pkg/data/small" <<'EOF'
import os, sys
d = sys.argv[1]
for i in range(20000):
    sub = os.path.join(d, f"{i // 1000:02d}")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, f"f{i}.txt"), "w") as f:
        f.write(f"sample {i}\n" * 8)
EOF
  # A pure-Python wheel whose payload is BENCH_MB of incompressible bytes (stored, like model weights).
  python3 - "$inputs/pkg/dist" "$mb" <<'EOF'
import base64, hashlib, os, sys, zipfile
out, mb = sys.argv[1], int(sys.argv[2])
name = "benchweights-1.0-py3-none-any.whl"
records = []
def add(z, path, data, compress=zipfile.ZIP_DEFLATED):
    z.writestr(zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0)), data, compress_type=compress)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    records.append(f"{path},sha256={digest},{len(data)}")
with zipfile.ZipFile(os.path.join(out, name), "w") as z:
    add(z, "benchweights/__init__.py", b"WEIGHTS = 'weights.bin'\n")
    chunk = 64 * 1024 * 1024
    for i in range(0, mb * 1024 * 1024, chunk):
        add(z, f"benchweights/weights{i // chunk:03d}.bin", os.urandom(min(chunk, mb * 1024 * 1024 - i)),
            zipfile.ZIP_STORED)
    add(z, "benchweights-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: benchweights\nVersion: 1.0\n")
    add(z, "benchweights-1.0.dist-info/WHEEL",
        b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    records.append("benchweights-1.0.dist-info/RECORD,,")
    z.writestr(zipfile.ZipInfo("benchweights-1.0.dist-info/RECORD", (2020, 1, 1, 0, 0, 0)),
               "\n".join(records) + "\n")
EOF
  touch "$inputs/.done"
fi

results=$bench/results.txt
printf '%-14s %10s %12s   (BENCH_MB=%s, %s)\n' case seconds peak_rss_MB "$mb" "$(nproc) cores" | tee "$results"
run() {  # NAME ARGS...
  local name=$1
  shift
  local stats=$bench/time.$name
  /usr/bin/time -f '%e %M' -o "$stats" "$tp" build -q --executor-image-uri=python:3.11 --base-source="$base" \
    --local-package-path="$inputs/pkg" --script=trainer/task.py --output="oci:$bench/out:x" "$@" >/dev/null
  read -r secs kb < "$stats"
  printf '%-14s %10s %12s\n' "$name" "$secs" "$((kb / 1024))" | tee -a "$results"
}

rm -rf "$bench/cache" "$bench/out"
run code-cold --extra-dirs=data --cache-dir="$bench/cache"
run code-warm --extra-dirs=data --cache-dir="$bench/cache"
printf 'print("training, changed")\n' > "$inputs/pkg/trainer/task.py"
run code-changed --extra-dirs=data --cache-dir="$bench/cache"
printf 'print("training")\n' > "$inputs/pkg/trainer/task.py"

rm -rf "$bench/cache-wheel" "$bench/out"
run wheel-cold --extra-packages=dist/benchweights-1.0-py3-none-any.whl --break-system-packages --no-compile \
  --cache-dir="$bench/cache-wheel"
run wheel-warm --extra-packages=dist/benchweights-1.0-py3-none-any.whl --break-system-packages --no-compile \
  --cache-dir="$bench/cache-wheel"
echo "results: $results" >&2
