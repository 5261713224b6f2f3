#!/usr/bin/env bash
# trainpack against the tools it replaces, side by side in one run, as ratios (medians of BENCH_RUNS runs).
#
#   bash scripts/bench.sh                     everything below; results in .cache/bench/results.txt (+ .json)
#   BENCH_RUNS=5 BENCH_EXTRA_MB=256 bash scripts/bench.sh
#
# Warm builds take a fraction of a second and swing most from run to run on a small machine, while a cold run takes
# up to minutes: they get BENCH_WARM_RUNS runs (default three times BENCH_RUNS).
#
# It starts its own dockerd (BuildKit), registry (127.0.0.1:BENCH_REGISTRY_PORT, default 5190; its storage on tmpfs
# when /dev/shm has room, else BENCH_REGISTRY_DIR or .cache/bench/registry) and package index
# (127.0.0.1:BENCH_INDEX_PORT, default 5191), and stops them at the end. Inputs come from scripts/bench_inputs.py
# (made once, seeded): a local index with numpy 1.24.2 (a ~6 MB binary wheel), a 148 MB pure wheel and a small
# dependency tree; the base is the Debian 12 Python image of tests/fixtures/python-base.sh with its pip pointed at
# that index, pushed to the registry. Workloads: pip (requirements.txt of those), code (a trainer only), extra
# (a trainer with a BENCH_EXTRA_MB MiB extra dir, default 1024).
#
# For each workload:
#   cold  gcloud's path: `docker build --no-cache` of the Dockerfile gcloud generates (BuildKit) + `docker push`,
#         vs `trainpack build` with an empty cache; each run pushes to a fresh repository.
#   warm  one line of the trainer changed: `docker build` with BuildKit's cache + `docker push`, vs `trainpack build`
#         with its cache; both to the repository their first build pushed.
# Besides: host `pip install --target` of the pip workload vs trainpack's resolve + install phases, and
# `tar | pigz -6 | sha256sum` of the extra dir vs trainpack writing its layer (time and compressed size), and
# trainpack's peak RSS over every run. The last table checks the targets of the project's performance issue.
set -euo pipefail
export LC_NUMERIC=C  # EPOCHREALTIME and awk with a "." decimal point
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
runs=${BENCH_RUNS:-3}
warm_runs=${BENCH_WARM_RUNS:-$((3 * runs))}
extra_mb=${BENCH_EXTRA_MB:-1024}
registry_port=${BENCH_REGISTRY_PORT:-5190}
index_port=${BENCH_INDEX_PORT:-5191}
bench=$root/.cache/bench
build_dir=${BUILD_DIR:-build}
[[ "$build_dir" == /* ]] || build_dir=$root/$build_dir
tp=${TRAINPACK_BIN:-$build_dir/trainpack}
registry=127.0.0.1:$registry_port
index_url=http://127.0.0.1:$index_port/simple/

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

bash scripts/install-deps.sh --bench
[[ -n "${TRAINPACK_BIN:-}" ]] || bash scripts/build.sh >/dev/null
rm -rf "$bench/logs"
mkdir -p "$bench/logs"

# --- services --------------------------------------------------------------------------------------------------------
# The registry stores on tmpfs when there is room: both tools push the same blobs to it, and on a disk where creating
# files is slow (this VM's ext4 takes milliseconds per new file) the registry's own writes would be most of a warm
# build's time for either tool. BENCH_REGISTRY_DIR chooses another place.
registry_dir=${BENCH_REGISTRY_DIR:-}
if [[ -z "$registry_dir" ]]; then
  registry_dir=$bench/registry
  shm_free_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
  if [[ "${shm_free_kb:-0}" -gt $((12 * 1024 * 1024)) ]]; then
    registry_dir=/dev/shm/trainpack-bench-$(printf '%s' "$bench" | sha256sum | cut -c1-8)-registry
  fi
fi
# dockerd's socket path must stay short (108 bytes): its state lives under /tmp, named after this checkout.
docker_state=/tmp/trainpack-bench-$(printf '%s' "$bench" | sha256sum | cut -c1-8)/dockerd
index_pid=
stop_services() {
  [[ -n "$index_pid" ]] && kill "$index_pid" 2>/dev/null || true
  bash tests/fixtures/registry.sh stop --purge "$registry_dir" >/dev/null 2>&1 || true
  bash tests/fixtures/dockerd.sh stop "$docker_state" >/dev/null 2>&1 || true
}
trap stop_services EXIT

inputs=$bench/inputs-$extra_mb
index_format=3  # raise when scripts/bench_inputs.py writes the index differently
if [[ ! -e "$inputs/.done" ]]; then
  say "making inputs in $inputs (once)"
  rm -rf "$inputs"
  python3 scripts/bench_inputs.py "$inputs" "$extra_mb"
  echo "$index_format" > "$inputs/.index-format"
  touch "$inputs/.done"
elif [[ "$(cat "$inputs/.index-format" 2>/dev/null)" != "$index_format" ]]; then
  say "making the package index of $inputs again (its format changed)"
  rm -rf "$inputs/index"
  python3 scripts/bench_inputs.py --index-only "$inputs"
  echo "$index_format" > "$inputs/.index-format"
fi

bash tests/fixtures/dockerd.sh start "$docker_state" >/dev/null
set -a; source "$docker_state/env"; set +a
docker=${TRAINPACK_DOCKER_CLI:-docker}
bash tests/fixtures/registry.sh stop --purge "$registry_dir" >/dev/null 2>&1 || true
bash tests/fixtures/registry.sh start "$registry_dir" "$registry_port" >/dev/null
python3 -m http.server --bind 127.0.0.1 --directory "$inputs/index" "$index_port" >"$bench/logs/index.log" 2>&1 &
index_pid=$!
for _ in $(seq 50); do curl -fs "$index_url" >/dev/null && break; sleep 0.1; done
curl -fs "$index_url" >/dev/null || die "the package index did not start (see $bench/logs/index.log)"

# --- base: the test base with pip pointed at the bench index, in the registry and in dockerd ------------------------
bash tests/fixtures/python-base.sh "$bench/base" >/dev/null
"$docker" load -q -i "$bench/base/base.tar" >/dev/null
mkdir -p "$bench/base-ctx"
printf '[global]\nindex-url = %s\nbreak-system-packages = true\n' "$index_url" > "$bench/base-ctx/pip.conf"
printf 'FROM trainpack-test/python:3.11\nCOPY pip.conf /etc/pip.conf\n' > "$bench/base-ctx/Dockerfile"
base=$registry/bench/base:1
DOCKER_BUILDKIT=1 "$docker" build -q -t "$base" "$bench/base-ctx" >/dev/null
"$docker" push -q "$base" >/dev/null

# --- measuring -------------------------------------------------------------------------------------------------------
median() { sort -n | awk '{v[NR] = $1} END {if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2];
                                           else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# Before a measured command that follows a heavy one (a cold build, an install, a 1 GiB layer) the machine settles, so
# that no tool pays for the writeback, or the daemon's work, that the one before it left behind. Warm runs follow
# light ones and go at once: idling first would add a wake-up to both tools' few milliseconds.
settle() { sync; sleep 0.5; }
elapsed() {  # LOG CMD... -> seconds on stdout; the command's output goes to LOG
  local log=$1 start end
  shift
  start=$EPOCHREALTIME
  "$@" >"$log" 2>&1 || { say "failed: $* (log: $log)"; tail -5 "$log" >&2; exit 1; }
  end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" 'BEGIN {printf "%.3f\n", e - s}'
}
trainpack_build() {  # LOG WORKLOAD REPOSITORY CACHE -> seconds; JSON result in LOG.json
  local log=$1 workload=$2 repository=$3 cache=$4 stats=$1.time  # peak RSS: see the report
  local flags=(--executor-image-uri="$base" --local-package-path="$inputs/projects/$workload"
               --script=trainer/task.py --output-image-uri="$registry/$repository:v1" --insecure-registry="$registry"
               --cache-dir="$cache" --format=json -q)
  [[ "$workload" == extra ]] && flags+=(--extra-dirs=data)
  # Wall time from bash's EPOCHREALTIME (GNU time's %e has 10 ms steps, too coarse for a warm build; `date` would
  # add a fork to what is measured); peak RSS from GNU time.
  local start end
  start=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$stats" "$tp" build "${flags[@]}" >"$log.json" 2>"$log" ||
    { say "failed: trainpack build of $workload (log: $log)"; tail -5 "$log" >&2; exit 1; }
  end=$EPOCHREALTIME
  awk -v s="$start" -v e="$end" 'BEGIN {printf "%.3f\n", e - s}'
}
gcloud_path() {  # WORKLOAD REPOSITORY [--no-cache] -> seconds of docker build + docker push
  local workload=$1 repository=$2 nocache=${3:-} ref=$registry/$2:v1
  local extra=()
  [[ "$workload" == extra ]] && extra=(--extra-dirs=data)
  "$tp" dockerfile --executor-image-uri="$base" --local-package-path="$inputs/projects/$workload" \
    --script=trainer/task.py "${extra[@]}" > "$bench/Dockerfile.$workload"
  elapsed "$bench/logs/docker-${repository//\//-}.log" bash -c '
    DOCKER_BUILDKIT=1 "$0" build $1 --network host -f "$2" -t "$3" "$4" && "$0" push "$3"' \
    "$docker" "$nocache" "$bench/Dockerfile.$workload" "$ref" "$inputs/projects/$workload"
}
edit_trainer() {  # WORKLOAD N: one changed line
  printf "print('training')\n# edit %s\n" "$2" > "$inputs/projects/$1/trainer/task.py"
}

declare -A result
measure_workload() {  # WORKLOAD
  local w=$1 i gcloud_cold=() tp_cold=() gcloud_warm=() tp_warm=()
  edit_trainer "$w" 0
  for i in $(seq "$runs"); do
    say "$w cold, run $i/$runs"
    settle
    gcloud_cold+=("$(gcloud_path "$w" "bench/gcloud-cold-$w-$i" --no-cache)")
    rm -rf "$bench/cache-cold"
    settle
    tp_cold+=("$(trainpack_build "$bench/logs/tp-cold-$w-$i.log" "$w" "bench/tp-cold-$w-$i" "$bench/cache-cold")")
  done
  # Warm: each tool's first build fills its cache (BuildKit's, trainpack's), then every run changes one line.
  rm -rf "$bench/cache-warm-$w"
  gcloud_path "$w" "bench/gcloud-warm-$w" >/dev/null
  trainpack_build "$bench/logs/tp-prime-$w.log" "$w" "bench/tp-warm-$w" "$bench/cache-warm-$w" >/dev/null
  for i in $(seq "$warm_runs"); do
    say "$w warm, run $i/$warm_runs"
    edit_trainer "$w" "$i"
    gcloud_warm+=("$(gcloud_path "$w" "bench/gcloud-warm-$w")")
    tp_warm+=("$(trainpack_build "$bench/logs/tp-warm-$w-$i.log" "$w" "bench/tp-warm-$w" "$bench/cache-warm-$w")")
  done
  edit_trainer "$w" 0
  result[$w.cold.gcloud]=$(printf '%s\n' "${gcloud_cold[@]}" | median)
  result[$w.cold.trainpack]=$(printf '%s\n' "${tp_cold[@]}" | median)
  result[$w.warm.buildkit]=$(printf '%s\n' "${gcloud_warm[@]}" | median)
  result[$w.warm.trainpack]=$(printf '%s\n' "${tp_warm[@]}" | median)
}

# Sum of the named phases in a trainpack --format=json result ("timings": {"resolve": s, ...}); empty if absent.
phases() {  # JSON-FILE PHASE...
  python3 - "$@" <<'EOF'
import json, sys
try:
    timings = json.load(open(sys.argv[1])).get("timings", {})
    print(f"{sum(float(timings[p]) for p in sys.argv[2:]):.3f}")
except (OSError, ValueError, KeyError, AttributeError, TypeError):
    print("")
EOF
}

# Host pip and trainpack's resolve + install, run by run in turn and each after the machine settles, so that both
# meet the same conditions (not, for trainpack, the wake of the docker build it follows in measure_workload).
# trainpack's figure is the sum of those phases in a cold build (empty cache, fresh repository) of the pip workload.
measure_pip() {
  local pip_runs=() tp_runs=() i target=$bench/pip-target
  for i in $(seq "$runs"); do
    say "host pip install --target, run $i/$runs"
    rm -rf "$target"
    settle
    pip_runs+=("$(elapsed "$bench/logs/pip-$i.log" python3 -m pip install --no-cache-dir --break-system-packages \
      --disable-pip-version-check --target "$target" --index-url "$index_url" -r "$inputs/projects/pip/requirements.txt")")
    say "trainpack resolve + install, run $i/$runs"
    rm -rf "$bench/cache-pip"
    settle
    trainpack_build "$bench/logs/tp-pip-$i.log" pip "bench/tp-pip-$i" "$bench/cache-pip" >/dev/null
    tp_runs+=("$(phases "$bench/logs/tp-pip-$i.log.json" resolve install)")
  done
  result[pip.host]=$(printf '%s\n' "${pip_runs[@]}" | median)
  result[pip.trainpack]=$(printf '%s\n' "${tp_runs[@]}" | grep . | median || true)
}

measure_layer() {
  local pigz_runs=() i
  for i in $(seq "$runs"); do
    say "tar | pigz -6 | sha256sum, run $i/$runs"
    settle
    pigz_runs+=("$(elapsed "$bench/logs/pigz-$i.log" bash -c \
      'tar -C "$0" -cf - . | pigz -6 | tee >(wc -c > "$1") | sha256sum' \
      "$inputs/projects/extra/data" "$bench/pigz-size")")
  done
  sleep 0.2  # the size is written by a process substitution
  result[layer.pigz]=$(printf '%s\n' "${pigz_runs[@]}" | median)
  result[layer.pigz_bytes]=$(cat "$bench/pigz-size")
  local tp_runs=()
  for i in $(seq "$runs"); do
    tp_runs+=("$(phases "$bench/logs/tp-cold-extra-$i.log.json" layers)")
  done
  result[layer.trainpack]=$(printf '%s\n' "${tp_runs[@]}" | grep . | median || true)
  # The extra dir's layer: the largest of the layers trainpack added to the base.
  local accept='application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json'
  curl -fs -H "Accept: $accept" "http://$registry/v2/bench/base/manifests/1" > "$bench/base-manifest.json"
  result[layer.trainpack_bytes]=$(curl -fs -H "Accept: $accept" \
    "http://$registry/v2/bench/tp-cold-extra-1/manifests/v1" |
    jq --slurpfile base "$bench/base-manifest.json" \
      '[$base[0].layers[].digest] as $old | [.layers[] | select(.digest as $d | $old | index($d) | not) | .size] | max')
}

# A fresh CI runner (empty --cache-dir) with a warm --cache-repo: one build fills the cache repository, then each
# run changes one line of the trainer and builds with a new empty cache, pushing to a fresh repository.
measure_cache_repo() {
  local runs_s=() i repo=$registry/bench/tp-cache
  local flags=(--executor-image-uri="$base" --local-package-path="$inputs/projects/pip" --script=trainer/task.py
               --insecure-registry="$registry" --cache-repo="$repo" --format=json -q)
  rm -rf "$bench/cache-repo-prime"
  elapsed "$bench/logs/tp-cache-repo-prime.log" "$tp" build "${flags[@]}" --cache-dir="$bench/cache-repo-prime" \
    --output-image-uri="$registry/bench/tp-cache-prime:v1" >/dev/null
  for i in $(seq "$runs"); do
    say "pip, empty cache, warm --cache-repo, run $i/$runs"
    edit_trainer pip "$i"
    rm -rf "$bench/cache-fresh"
    settle
    runs_s+=("$(elapsed "$bench/logs/tp-cache-repo-$i.log" "$tp" build "${flags[@]}" --cache-dir="$bench/cache-fresh" \
      --output-image-uri="$registry/bench/tp-cache-repo-$i:v1")")
  done
  edit_trainer pip 0
  result[pip.cache_repo.trainpack]=$(printf '%s\n' "${runs_s[@]}" | median)
}

for workload in pip code extra; do measure_workload "$workload"; done
measure_cache_repo
measure_pip
measure_layer
# Peak RSS over every trainpack build (GNU time's %M, KiB).
result[peak_rss_mb]=$(cat "$bench"/logs/tp-*.log.time | awk '$1 > m {m = $1} END {printf "%d\n", m / 1024}')

# --- report ----------------------------------------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.1f\n", a / b}'; }
check() {  # VALUE OP TARGET -> PASS/FAIL
  awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {if (v == "n/a") {print "n/a"; exit}
    ok = (op == ">=") ? (v + 0 >= t + 0) : (v + 0 <= t + 0); print ok ? "pass" : "FAIL"}'
}
results=$bench/results.txt
{
  printf 'trainpack bench: %s runs each (%s warm; medians), %s cores, extra dir %s MiB, %s\n\n' \
    "$runs" "$warm_runs" "$(nproc)" "$extra_mb" "$(date -u +%Y-%m-%dT%H:%MZ)"
  printf '%-8s %-5s %12s %12s %8s\n' workload mode other_s trainpack_s ratio
  for w in pip code extra; do
    printf '%-8s %-5s %12s %12s %8s\n' "$w" cold "${result[$w.cold.gcloud]}" "${result[$w.cold.trainpack]}" \
      "$(ratio "${result[$w.cold.gcloud]}" "${result[$w.cold.trainpack]}")"
    printf '%-8s %-5s %12s %12s %8s\n' "$w" warm "${result[$w.warm.buildkit]}" "${result[$w.warm.trainpack]}" \
      "$(ratio "${result[$w.warm.buildkit]}" "${result[$w.warm.trainpack]}")"
  done
  printf '\n(cold: other = docker build --no-cache + docker push; warm: other = docker build with cache + push)\n'
  printf 'host pip install --target %ss, trainpack resolve + install %ss\n' "${result[pip.host]}" \
    "${result[pip.trainpack]:-n/a}"
  printf 'tar | pigz -6 | sha256sum %ss (%s bytes), trainpack layer %ss (%s bytes)\n' "${result[layer.pigz]}" \
    "${result[layer.pigz_bytes]}" "${result[layer.trainpack]:-n/a}" "${result[layer.trainpack_bytes]}"
  printf 'trainpack peak RSS %s MB\n' "${result[peak_rss_mb]}"
  printf 'pip, empty cache + warm --cache-repo: trainpack %ss (gcloud cold %ss)\n\n' \
    "${result[pip.cache_repo.trainpack]}" "${result[pip.cold.gcloud]}"
  cold=$(ratio "${result[pip.cold.gcloud]}" "${result[pip.cold.trainpack]}")
  warm=$(ratio "${result[pip.warm.buildkit]}" "${result[pip.warm.trainpack]}")
  pip=$(ratio "${result[pip.host]}" "${result[pip.trainpack]:-}")
  layer=$(ratio "${result[layer.pigz]}" "${result[layer.trainpack]:-}")
  size=$(awk -v a="${result[layer.trainpack_bytes]}" -v b="${result[layer.pigz_bytes]}" \
    'BEGIN {if (a == "" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b}')
  printf '%-44s %8s %8s %6s\n' target measured wanted ""
  printf '%-44s %8s %8s %6s\n' "pip cold: gcloud's path / trainpack" "$cold" ">= 5" "$(check "$cold" '>=' 5)"
  printf '%-44s %8s %8s %6s\n' "pip warm: BuildKit cache / trainpack" "$warm" ">= 5" "$(check "$warm" '>=' 5)"
  shared=$(ratio "${result[pip.cold.gcloud]}" "${result[pip.cache_repo.trainpack]}")
  printf '%-44s %8s %8s %6s\n' "pip fresh runner, --cache-repo: gcloud / tp" "$shared" ">= 5" \
    "$(check "$shared" '>=' 5)"
  printf '%-44s %8s %8s %6s\n' "resolve + install: host pip / trainpack" "$pip" ">= 10" "$(check "$pip" '>=' 10)"
  printf '%-44s %8s %8s %6s\n' "layer writing: pigz -6 / trainpack" "$layer" ">= 2" "$(check "$layer" '>=' 2)"
  printf '%-44s %8s %8s %6s\n' "layer size: trainpack / pigz -6" "$size" "<= 1.15" "$(check "$size" '<=' 1.15)"
  printf '%-44s %8s %8s %6s\n' "peak RSS (MB)" "${result[peak_rss_mb]}" "< 150" \
    "$(check "${result[peak_rss_mb]}" '<=' 149)"
} | tee "$results"
for key in "${!result[@]}"; do printf '%s\t%s\n' "$key" "${result[$key]}"; done | sort |
  jq -Rn '[inputs | split("\t") | {(.[0]): (.[1] | tonumber? // .)}] | add' > "$bench/results.json"
say "results: $results, $bench/results.json"
