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
# when /dev/shm has room, else BENCH_REGISTRY_DIR or .cache/bench/registry) and two package indexes of the same
# wheels: one as PyPI serves it, with PEP 658 .metadata files (python3 -m http.server, 127.0.0.1:BENCH_INDEX_PORT,
# default 5191), one without them as a plain directory server has it (busybox httpd, which answers Range requests,
# 127.0.0.1:BENCH_PLAIN_INDEX_PORT, default 5192); it stops them at the end. Inputs come from
# scripts/bench_inputs.py (made once, seeded): numpy 1.24.2 (a ~6 MB binary wheel), a 148 MB pure wheel, a small
# dependency tree, and a framework-shaped wheel (a 1 GiB library, 19,000 modules) with a CUDA-shaped dependency
# (600 MiB of libraries), about 2 GB installed. The bases are the Debian 12 Python image of
# tests/fixtures/python-base.sh with its pip pointed at one index or the other, pushed to the registry.
# Workloads: pip (requirements.txt of numpy, the 148 MB wheel and the tree), framework (requirements.txt of the
# framework wheel), each also against the index without .metadata (cold only: a warm build asks no index), code
# (a trainer only), extra (a trainer with a BENCH_EXTRA_MB MiB extra dir, default 1024).
#
# For each workload:
#   cold  gcloud's path: `docker build --no-cache` of the Dockerfile gcloud generates (BuildKit) + `docker push`,
#         vs `trainpack build` with an empty cache; each run pushes to a fresh repository.
#   warm  one line of the trainer changed: `docker build` with BuildKit's cache + `docker push`, vs `trainpack build`
#         with its cache; both to the repository their first build pushed.
# Besides: host `pip install --target` of the pip workload vs trainpack's resolve + install phases, and
# `tar | pigz -6 | sha256sum` of the extra dir vs trainpack writing its layer (time and compressed size), the
# machine's floor for the framework workload (receiving its wheels over loopback, inflating and hashing what they
# install, and pushing the compressed layers, each measured alone, summed), and trainpack's peak RSS per workload.
# The edit-run loop of local-run, for the code and pip workloads after a one-line change: `docker build` with its
# cache + `docker run` (gcloud's path) against `trainpack local-run --engine=runc` and `--engine=docker`.
# wan: the pip workload's warm rows with the registry a 30 ms round trip away (tests/fixtures/delay_line.py in front
# of it, for both tools), since a real registry's round trips, which loopback hides, are most of a warm build.
# buildah: the daemonless way to build gcloud's Dockerfile in CI, `buildah bud --layers` (vfs, chroot isolation, its
# own storage under .cache/bench) + `buildah push`, cold and warm against trainpack on the pip workload.
# BENCH_PARTS="build local-run wan buildah" (the default) chooses what to measure.
# The last table checks the targets of the project's performance issues.
set -euo pipefail
export LC_NUMERIC=C  # EPOCHREALTIME and awk with a "." decimal point
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
runs=${BENCH_RUNS:-3}
warm_runs=${BENCH_WARM_RUNS:-$((3 * runs))}
extra_mb=${BENCH_EXTRA_MB:-1024}
registry_port=${BENCH_REGISTRY_PORT:-5190}
index_port=${BENCH_INDEX_PORT:-5191}
plain_index_port=${BENCH_PLAIN_INDEX_PORT:-5192}
bench=$root/.cache/bench
build_dir=${BUILD_DIR:-build}
[[ "$build_dir" == /* ]] || build_dir=$root/$build_dir
tp=${TRAINPACK_BIN:-$build_dir/trainpack}
registry=127.0.0.1:$registry_port
index_url=http://127.0.0.1:$index_port/simple/
plain_index_url=http://127.0.0.1:$plain_index_port/simple/

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
# BENCH_PARTS=local-run (a space-separated list of build, local-run, wan, buildah) measures only those; the report
# leaves the others' rows empty.
parts=" ${BENCH_PARTS:-build local-run wan buildah} "
for part in $parts; do
  [[ " build local-run wan buildah " == *" $part "* ]] || die "unknown part in BENCH_PARTS: $part"
done

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
plain_index_pid=
delay_pid=
stop_services() {
  [[ -n "$delay_pid" ]] && kill "$delay_pid" 2>/dev/null || true
  [[ -n "$index_pid" ]] && kill "$index_pid" 2>/dev/null || true
  [[ -n "$plain_index_pid" ]] && kill "$plain_index_pid" 2>/dev/null || true
  bash tests/fixtures/registry.sh stop --purge "$registry_dir" >/dev/null 2>&1 || true
  bash tests/fixtures/dockerd.sh stop "$docker_state" >/dev/null 2>&1 || true
}
trap stop_services EXIT

inputs=$bench/inputs-$extra_mb
index_format=4  # raise when scripts/bench_inputs.py writes the index differently
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
busybox httpd -f -p "127.0.0.1:$plain_index_port" -h "$inputs/index-plain" >"$bench/logs/plain-index.log" 2>&1 &
plain_index_pid=$!
for url in "$index_url" "$plain_index_url"; do
  for _ in $(seq 50); do curl -fs "$url" >/dev/null && break; sleep 0.1; done
  curl -fs "$url" >/dev/null || die "the package index $url did not start (see $bench/logs/*index.log)"
done

# --- bases: the test base with pip pointed at one bench index or the other, in the registry and in dockerd ----------
bash tests/fixtures/python-base.sh "$bench/base" >/dev/null
"$docker" load -q -i "$bench/base/base.tar" >/dev/null
make_base() {  # REF INDEX-URL
  mkdir -p "$bench/base-ctx"
  printf '[global]\nindex-url = %s\nbreak-system-packages = true\n' "$2" > "$bench/base-ctx/pip.conf"
  printf 'FROM trainpack-test/python:3.11\nCOPY pip.conf /etc/pip.conf\n' > "$bench/base-ctx/Dockerfile"
  DOCKER_BUILDKIT=1 "$docker" build -q -t "$1" "$bench/base-ctx" >/dev/null
  "$docker" push -q "$1" >/dev/null
}
base=$registry/bench/base:1
plain_base=$registry/bench/base-plain:1
make_base "$base" "$index_url"
make_base "$plain_base" "$plain_index_url"

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
gcloud_dockerfile() {  # WORKLOAD: $bench/Dockerfile.WORKLOAD, the one gcloud generates, FROM `base`
  local extra=()
  [[ "$1" == extra ]] && extra=(--extra-dirs=data)
  "$tp" dockerfile --executor-image-uri="$base" --local-package-path="$inputs/projects/$1" \
    --script=trainer/task.py "${extra[@]}" > "$bench/Dockerfile.$1" || die "trainpack dockerfile of $1 failed"
}
gcloud_path() {  # WORKLOAD REPOSITORY [--no-cache] -> seconds of docker build + docker push
  local workload=$1 repository=$2 nocache=${3:-} ref=$registry/$2:v1
  gcloud_dockerfile "$workload"
  elapsed "$bench/logs/docker-${repository//\//-}.log" bash -c '
    DOCKER_BUILDKIT=1 "$0" build $1 --network host -f "$2" -t "$3" "$4" && "$0" push "$3"' \
    "$docker" "$nocache" "$bench/Dockerfile.$workload" "$ref" "$inputs/projects/$workload"
}
gcloud_drop() {  # REPOSITORY: its images off dockerd's disk (the tagged one and those a warm row's builds untagged)
  "$docker" image ls -q "$registry/$1" | xargs -r "$docker" rmi -f >/dev/null 2>&1 || true
}
gcloud_prune() { "$docker" builder prune -af >/dev/null 2>&1 || true; }  # BuildKit's cache
edit_trainer() {  # WORKLOAD N: one changed line
  printf "print('training')\n# edit %s\n" "$2" > "$inputs/projects/$1/trainer/task.py"
}

declare -A result
# A row compares TOOL's path (TOOL_path WORKLOAD REPOSITORY [--no-cache] -> seconds; TOOL_drop REPOSITORY forgets
# the image it built, TOOL_prune its cache) with trainpack's, and keeps TOOL's median as result[LABEL.MODE.KEY].
# LABEL names the results and logs; the trainer builds FROM `base`, pushed to `registry` (the caller's, seen by the
# functions called).
measure_cold() {  # LABEL WORKLOAD TOOL KEY
  local label=$1 w=$2 tool=$3 i other_runs=() tp_runs=()
  edit_trainer "$w" 0
  for i in $(seq "$runs"); do
    say "$label cold, run $i/$runs"
    settle
    other_runs+=("$("${tool}_path" "$w" "bench/$tool-cold-$label-$i" --no-cache)")
    "${tool}_drop" "bench/$tool-cold-$label-$i"
    rm -rf "$bench/cache-cold"
    settle
    tp_runs+=("$(trainpack_build "$bench/logs/tp-cold-$label-$i.log" "$w" "bench/tp-cold-$label-$i" "$bench/cache-cold")")
  done
  result[$label.cold.$4]=$(printf '%s\n' "${other_runs[@]}" | median)
  result[$label.cold.trainpack]=$(printf '%s\n' "${tp_runs[@]}" | median)
  "${tool}_prune"
}
# Warm: each tool's first build fills its cache (TOOL's, trainpack's), then every run changes one line.
measure_warm() {  # LABEL WORKLOAD TOOL KEY
  local label=$1 w=$2 tool=$3 i other_runs=() tp_runs=()
  rm -rf "$bench/cache-warm-$label"
  "${tool}_path" "$w" "bench/$tool-warm-$label" >/dev/null
  trainpack_build "$bench/logs/tp-prime-$label.log" "$w" "bench/tp-warm-$label" "$bench/cache-warm-$label" >/dev/null
  for i in $(seq "$warm_runs"); do
    say "$label warm, run $i/$warm_runs"
    edit_trainer "$w" "$i"
    other_runs+=("$("${tool}_path" "$w" "bench/$tool-warm-$label")")
    tp_runs+=("$(trainpack_build "$bench/logs/tp-warm-$label-$i.log" "$w" "bench/tp-warm-$label" \
      "$bench/cache-warm-$label")")
  done
  edit_trainer "$w" 0
  "${tool}_drop" "bench/$tool-warm-$label"
  "${tool}_prune"
  result[$label.warm.$4]=$(printf '%s\n' "${other_runs[@]}" | median)
  result[$label.warm.trainpack]=$(printf '%s\n' "${tp_runs[@]}" | median)
}
# gcloud's path against trainpack, cold then (without --cold-only) warm: BuildKit with its cache.
measure_workload() {  # LABEL WORKLOAD BASE [--cold-only]
  local label=$1 w=$2 base=$3
  measure_cold "$label" "$w" gcloud gcloud
  [[ "${4:-}" == --cold-only ]] || measure_warm "$label" "$w" gcloud buildkit
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

# The machine's floor for the framework workload, each part measured alone: receiving its wheels over loopback
# (both at once, as trainpack downloads them), inflating and hashing every member once (`unzip -p | sha256sum`, a
# wheel per core), and pushing the compressed layers trainpack made of them (a monolithic upload each, at once).
measure_floor() {
  local wheels=() w digest
  local accept='application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json'
  for w in "$inputs"/index/files/torchlike-*.whl "$inputs"/index/files/cudalike_cudnn-*.whl; do wheels+=("$w"); done
  mkdir -p "$bench/floor"
  settle
  result[floor.receive]=$(elapsed "$bench/logs/floor-receive.log" bash -c '
    for w in "$@"; do curl -fs -o /dev/null "$0/files/${w##*/}" & done; wait' \
    "http://127.0.0.1:$index_port" "${wheels[@]}")
  settle
  result[floor.inflate]=$(elapsed "$bench/logs/floor-inflate.log" bash -c '
    for w in "$@"; do unzip -p "$w" | sha256sum & done; wait' inflate "${wheels[@]}")
  # The framework's layers in trainpack's image (those the base has not), fetched untimed, then pushed again.
  curl -fs -H "Accept: $accept" "http://$registry/v2/bench/base/manifests/1" > "$bench/floor/base.json"
  rm -f "$bench"/floor/*.blob
  for digest in $(curl -fs -H "Accept: $accept" "http://$registry/v2/bench/tp-cold-framework-1/manifests/v1" |
                  jq -r --slurpfile base "$bench/floor/base.json" \
                    '[$base[0].layers[].digest] as $old | .layers[].digest | select(. as $d | $old | index($d) | not)'); do
    curl -fs -o "$bench/floor/${digest#sha256:}.blob" "http://$registry/v2/bench/tp-cold-framework-1/blobs/$digest"
  done
  compgen -G "$bench/floor/*.blob" >/dev/null || die "the floor found no layers of the framework image to push"
  settle
  result[floor.push]=$(elapsed "$bench/logs/floor-push.log" bash -c '
    push() {
      local blob=$1 digest=sha256:$(basename "$1" .blob) location
      location=$(curl -fsi -X POST "http://$0/v2/bench/floor/blobs/uploads/" | tr -d "\r" |
                 awk "tolower(\$1) == \"location:\" {print \$2}")
      [[ "$location" == http* ]] || location=http://$0$location
      [[ "$location" == *\?* ]] && location+="&digest=$digest" || location+="?digest=$digest"
      curl -fs -X PUT -H "Content-Type: application/octet-stream" -T "$blob" "$location"
    }
    pids=()
    for b in "$1"/*.blob; do push "$b" & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || exit 1; done' "$registry" "$bench/floor")
  result[floor.total]=$(awk -v a="${result[floor.receive]}" -v b="${result[floor.inflate]}" \
    -v c="${result[floor.push]}" 'BEGIN {printf "%.3f\n", a + b + c}')
  rm -f "$bench"/floor/*.blob
}

# The edit-run loop of `gcloud ai custom-jobs local-run`: after one changed line of the trainer, `docker build` with
# BuildKit's cache + `docker run --rm --ipc host` (gcloud's docker/run.py) against `trainpack local-run` with its
# cache, daemonless (--engine=runc: the layers' trees kept, stacked with overlayfs) and through the same dockerd
# (--engine=docker: a docker-archive loaded, then gcloud's run). Each run's trainer prints one line and exits.
measure_local_run() {  # WORKLOAD
  local w=$1 tag=trainpack-bench/local-run-$1:latest cache=$bench/cache-local-run-$1 i
  local docker_runs=() runc_runs=() engine_runs=()
  local flags=(--executor-image-uri="$base" --insecure-registry="$registry" --local-package-path="$inputs/projects/$w"
               --script=trainer/task.py --cache-dir="$cache" -q)
  "$tp" dockerfile --executor-image-uri="$base" --local-package-path="$inputs/projects/$w" \
    --script=trainer/task.py > "$bench/Dockerfile.local-run-$w"
  local_run_docker() {
    DOCKER_BUILDKIT=1 "$docker" build -q --network host -f "$bench/Dockerfile.local-run-$w" -t "$tag" \
      "$inputs/projects/$w" >/dev/null && "$docker" run --rm --ipc host "$tag"
  }
  rm -rf "$cache"
  edit_trainer "$w" 0
  elapsed "$bench/logs/local-run-prime-docker-$w.log" local_run_docker >/dev/null
  elapsed "$bench/logs/local-run-prime-runc-$w.log" "$tp" local-run --engine=runc "${flags[@]}" >/dev/null
  elapsed "$bench/logs/local-run-prime-engine-$w.log" "$tp" local-run --engine=docker "${flags[@]}" >/dev/null
  for i in $(seq "$warm_runs"); do
    say "local-run $w after a one-line change, run $i/$warm_runs"
    edit_trainer "$w" "$((3 * i))"
    docker_runs+=("$(elapsed "$bench/logs/local-run-docker-$w-$i.log" local_run_docker)")
    edit_trainer "$w" "$((3 * i + 1))"
    runc_runs+=("$(elapsed "$bench/logs/local-run-runc-$w-$i.log" "$tp" local-run --engine=runc "${flags[@]}")")
    edit_trainer "$w" "$((3 * i + 2))"
    engine_runs+=("$(elapsed "$bench/logs/local-run-engine-$w-$i.log" "$tp" local-run --engine=docker "${flags[@]}")")
  done
  grep -q "^training$" "$bench/logs/local-run-runc-$w-1.log" || die "the trainer did not run (see $bench/logs)"
  edit_trainer "$w" 0
  { "$docker" image ls -q 'trainpack-bench/*'; "$docker" image ls -q 'cloudai-autogenerated/*'; } | sort -u |
    xargs -r "$docker" rmi -f >/dev/null 2>&1 || true
  "$docker" builder prune -af >/dev/null 2>&1 || true
  result[local-run.$w.docker]=$(printf '%s\n' "${docker_runs[@]}" | median)
  result[local-run.$w.runc]=$(printf '%s\n' "${runc_runs[@]}" | median)
  result[local-run.$w.engine]=$(printf '%s\n' "${engine_runs[@]}" | median)
}

# The pip workload's warm builds with the registry a round trip of MS away (tests/fixtures/delay_line.py in front of
# it), as Artifact Registry is from a laptop or from a runner in another region: a warm build is then mostly its
# requests in a row. Both tools go through the delay line: BuildKit pulls the base through it when priming and docker
# pushes through it; trainpack resolves the base through it and pushes there.
measure_wan() {  # MS
  local label=pip-wan$1 ready=$bench/delay-line.json registry base
  rm -f "$ready"
  /usr/bin/python3 tests/fixtures/delay_line.py --target "127.0.0.1:$registry_port" --delay-ms "$1" \
    --ready-file "$ready" >"$bench/logs/delay-line.log" 2>&1 &
  delay_pid=$!
  for _ in $(seq 50); do [[ -e "$ready" ]] && break; sleep 0.1; done
  [[ -e "$ready" ]] || die "the delay line did not start (see $bench/logs/delay-line.log)"
  registry=127.0.0.1:$(jq -r .port "$ready")
  base=$registry/bench/base:1
  measure_warm "$label" pip gcloud buildkit
  "$docker" rmi "$base" >/dev/null 2>&1 || true  # the tag the priming build pulled (the image stays)
  kill "$delay_pid" 2>/dev/null || true
  wait "$delay_pid" 2>/dev/null || true
  delay_pid=
}

# buildah, the daemonless peer: `buildah bud --layers` of gcloud's Dockerfile + `buildah push`, with its storage under
# .cache/bench (vfs and chroot isolation: what buildah runs with where there is no daemon and no overlay mount, as in
# an unprivileged CI container). A cold run starts from a storage holding only the base (as dockerd holds it for
# gcloud's cold path) and builds with --no-cache; a warm one builds with the --layers cache.
buildah_dir=$bench/buildah
buildah_at() {
  TMPDIR=$buildah_dir/tmp buildah --root "$buildah_dir/root" --runroot "$buildah_dir/run" --storage-driver vfs "$@"
}
buildah_build_push() {  # DOCKERFILE REF CONTEXT [--no-cache]
  buildah_at bud --layers "${@:4}" --isolation chroot --tls-verify=false -f "$1" -t "$2" "$3" &&
    buildah_at push --tls-verify=false "$2" "docker://$2"
}
buildah_path() {  # WORKLOAD REPOSITORY [--no-cache] -> seconds of buildah bud + buildah push
  gcloud_dockerfile "$1"
  elapsed "$bench/logs/buildah-${2//\//-}.log" buildah_build_push "$bench/Dockerfile.$1" "$registry/$2:v1" \
    "$inputs/projects/$1" "${@:3}"
}
buildah_prune() {  # --one-file-system: never into a mount a RUN step might have left
  rm -rf --one-file-system "$buildah_dir"
  mkdir -p "$buildah_dir/tmp"
}
buildah_drop() {  # REPOSITORY: the image and the intermediate ones of its --layers cache go; the base stays
  { buildah_at rmi -f "$registry/$1:v1" && buildah_at rmi --prune; } >"$bench/logs/buildah-rmi.log" 2>&1 ||
    die "buildah rmi failed (see $bench/logs/buildah-rmi.log)"
}
measure_buildah() {
  buildah_prune
  buildah_at pull -q --tls-verify=false "$base" >"$bench/logs/buildah-pull.log" 2>&1 ||
    die "buildah pull of $base failed (see $bench/logs/buildah-pull.log)"
  measure_cold pip-buildah pip buildah buildah
  measure_warm pip-buildah pip buildah buildah
}

if [[ "$parts" == *" build "* ]]; then
  measure_workload pip pip "$base"
  measure_workload pip-plain pip "$plain_base" --cold-only
  measure_workload framework framework "$base"
  measure_floor
  measure_workload framework-plain framework "$plain_base" --cold-only
  measure_workload code code "$base"
  measure_workload extra extra "$base"
  measure_cache_repo
  measure_pip
  measure_layer
fi
if [[ "$parts" == *" local-run "* ]]; then
  measure_local_run code
  measure_local_run pip
fi
if [[ "$parts" == *" wan "* ]]; then
  measure_wan 30
fi
if [[ "$parts" == *" buildah "* ]]; then
  measure_buildah
fi
# Peak RSS of trainpack's builds per workload, and over them all (GNU time's %M, KiB).
peak_mb() {  # FILE... (those that exist)
  local f
  for f in "$@"; do [[ ! -e "$f" ]] || cat "$f"; done |
    awk '$1 > m {m = $1} END {if (NR == 0) print "n/a"; else printf "%d\n", m / 1024}'
}
for label in pip pip-plain framework framework-plain code extra pip-buildah; do
  rss=$(peak_mb "$bench"/logs/tp-{cold,warm}-"$label"-[0-9]*.log.time "$bench/logs/tp-prime-$label.log.time")
  [[ "$rss" == n/a ]] || result[$label.peak_rss_mb]=$rss
done
result[peak_rss_mb]=$(peak_mb "$bench"/logs/tp-*.log.time)

# --- report ----------------------------------------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.1f\n", a / b}'; }
check() {  # VALUE OP TARGET -> PASS/FAIL (n/a for a value not measured)
  awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {if (v == "n/a" || v == "") {print "n/a"; exit}
    ok = (op == ">=") ? (v + 0 >= t + 0) : (op == "<") ? (v + 0 < t + 0) : (v + 0 <= t + 0)
    print ok ? "pass" : "FAIL"}'
}
results=$bench/results.txt
row() { printf '%-48s %8s %8s %6s\n' "$1" "$2" "$3" "$4"; }
target() {  # NAME VALUE OP WANTED
  row "$1" "${2:-n/a}" "$3 $4" "$(check "$2" "$3" "$4")"
}
{
  printf 'trainpack bench: %s runs each (%s warm; medians), %s cores, extra dir %s MiB, %s\n\n' \
    "$runs" "$warm_runs" "$(nproc)" "$extra_mb" "$(date -u +%Y-%m-%dT%H:%MZ)"
  printf '%-16s %-5s %12s %12s %8s %8s\n' workload mode other_s trainpack_s ratio rss_mb
  mode_row() {  # LABEL MODE KEY [RSS]: other_s is result[LABEL.MODE.KEY]
    local other=${result[$1.$2.$3]:-} mine=${result[$1.$2.trainpack]:-}
    printf '%-16s %-5s %12s %12s %8s' "$1" "$2" "$other" "$mine" "$(ratio "$other" "$mine")"
    (($# < 4)) || printf ' %8s' "$4"
    printf '\n'
  }
  for w in pip pip-plain framework framework-plain code extra; do
    mode_row "$w" cold gcloud "${result[$w.peak_rss_mb]:-}"
    [[ -z "${result[$w.warm.buildkit]:-}" ]] || mode_row "$w" warm buildkit
  done
  mode_row pip-wan30 warm buildkit
  mode_row pip-buildah cold buildah "${result[pip-buildah.peak_rss_mb]:-}"
  mode_row pip-buildah warm buildah
  printf '\n(cold: other = docker build --no-cache + docker push; warm: other = docker build with cache + push;\n'
  printf ' -plain: against the index without PEP 658 .metadata files; -wan30: both through a 30 ms round trip to the\n'
  printf ' registry; -buildah: other = buildah bud --layers (cold: --no-cache) + buildah push;\n'
  printf ' rss_mb: trainpack peak RSS over the workload)\n'
  printf 'host pip install --target %ss, trainpack resolve + install %ss\n' "${result[pip.host]:-}" \
    "${result[pip.trainpack]:-n/a}"
  printf 'tar | pigz -6 | sha256sum %ss (%s bytes), trainpack layer %ss (%s bytes)\n' "${result[layer.pigz]:-}" \
    "${result[layer.pigz_bytes]:-}" "${result[layer.trainpack]:-n/a}" "${result[layer.trainpack_bytes]:-}"
  printf 'framework floor %ss: receive the wheels %ss + inflate and hash %ss + push the layers %ss\n' \
    "${result[floor.total]:-}" "${result[floor.receive]:-}" "${result[floor.inflate]:-}" "${result[floor.push]:-}"
  printf 'trainpack peak RSS %s MB\n' "${result[peak_rss_mb]:-}"
  for w in code pip; do
    docker_s=${result[local-run.$w.docker]:-} runc_s=${result[local-run.$w.runc]:-}
    engine_s=${result[local-run.$w.engine]:-}
    printf 'local-run %s, one line changed: docker build + run %ss, trainpack runc %ss (%s×), docker %ss (%s×)\n' \
      "$w" "$docker_s" "$runc_s" "$(ratio "$docker_s" "$runc_s")" "$engine_s" "$(ratio "$docker_s" "$engine_s")"
  done
  printf 'pip, empty cache + warm --cache-repo: trainpack %ss (gcloud cold %ss)\n\n' \
    "${result[pip.cache_repo.trainpack]:-}" "${result[pip.cold.gcloud]:-}"
  cold() { ratio "${result[$1.cold.${2:-gcloud}]:-}" "${result[$1.cold.trainpack]:-}"; }  # LABEL [KEY]
  warm() { ratio "${result[$1.warm.${2:-buildkit}]:-}" "${result[$1.warm.trainpack]:-}"; }
  size=$(awk -v a="${result[layer.trainpack_bytes]:-}" -v b="${result[layer.pigz_bytes]:-}" \
    'BEGIN {if (a == "" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b}')
  row target measured wanted ""
  target "pip cold: gcloud's path / trainpack" "$(cold pip)" '>=' 5
  target "pip cold, no .metadata: gcloud / trainpack" "$(cold pip-plain)" '>=' 8
  target "pip warm: BuildKit cache / trainpack" "$(warm pip)" '>=' 6
  target "pip warm, one line changed (s)" "${result[pip.warm.trainpack]:-}" '<=' 0.12
  target "pip fresh runner, --cache-repo: gcloud / tp" \
    "$(ratio "${result[pip.cold.gcloud]:-}" "${result[pip.cache_repo.trainpack]:-}")" '>=' 5
  target "framework cold: gcloud's path / trainpack" "$(cold framework)" '>=' 8
  target "framework cold, no .metadata: gcloud / tp" "$(cold framework-plain)" '>=' 8
  target "framework warm: BuildKit cache / trainpack" "$(warm framework)" '>=' 8
  target "framework warm, one line changed (s)" "${result[framework.warm.trainpack]:-}" '<=' 0.15
  target "framework cold: trainpack / machine floor" \
    "$(ratio "${result[framework.cold.trainpack]:-}" "${result[floor.total]:-}")" '<=' 1.5
  target "resolve + install: host pip / trainpack" \
    "$(ratio "${result[pip.host]:-}" "${result[pip.trainpack]:-}")" '>=' 10
  target "layer writing: pigz -6 / trainpack" "$(ratio "${result[layer.pigz]:-}" "${result[layer.trainpack]:-}")" '>=' 2
  target "layer size: trainpack / pigz -6" "$size" '<=' 1.15
  for w in pip pip-plain framework framework-plain code extra; do
    target "peak RSS (MB), $w" "${result[$w.peak_rss_mb]:-}" '<' 150
  done
  target "local-run pip, one line changed, runc (s)" "${result[local-run.pip.runc]:-}" '<=' 1
  target "local-run pip: docker build + run / runc" \
    "$(ratio "${result[local-run.pip.docker]:-}" "${result[local-run.pip.runc]:-}")" '>=' 2
  target "pip warm, 30 ms RTT registry (s)" "${result[pip-wan30.warm.trainpack]:-}" '<=' 0.3
  # buildah's: informational, the bar gcloud's path has for the same workload (buildah stands in for it where
  # there is no daemon).
  target "pip cold: buildah --no-cache / trainpack" "$(cold pip-buildah buildah)" '>=' 5
  target "pip warm: buildah --layers / trainpack" "$(warm pip-buildah buildah)" '>=' 5
} | tee "$results"
for key in "${!result[@]}"; do printf '%s\t%s\n' "$key" "${result[$key]:-}"; done | sort |
  jq -Rn '[inputs | split("\t") | {(.[0]): (.[1] | tonumber? // .)}] | add' > "$bench/results.json"
say "results: $results, $bench/results.json"
