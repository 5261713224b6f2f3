#!/usr/bin/env bash
# The sanitizer step of the test suite: a clang build with AddressSanitizer and UndefinedBehaviorSanitizer in
# build-asan/ (or $ASAN_BUILD_DIR), every unit test run under them, then every fuzz target (tests/fuzz) run for
# FUZZ_SECONDS (default 10) over its seed corpus. scripts/test.sh runs it after the rest of the suite.
#   bash scripts/sanitize.sh                      everything
#   FUZZ_SECONDS=600 bash scripts/sanitize.sh     fuzz longer (the unit tests still run first)
#   FUZZ_SECONDS=0 bash scripts/sanitize.sh       unit tests only
#   bash scripts/sanitize.sh build                only the clang build (scripts/test.sh runs it beside ctest)
#   bash scripts/sanitize.sh run                  only the unit tests and fuzz targets of a finished build
# New inputs a fuzzer finds go to build-asan/fuzz/<target>/corpus (the seeds in tests/fuzz/corpus are only read);
# an input that crashes one is saved as build-asan/fuzz/<target>/crash-* and its log printed. Exit code: 0 when the
# unit tests and every fuzz target passed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

phase=${1:-all}
case "$phase" in all|build|run) ;; *) echo "sanitize.sh: unknown phase $phase (all, build or run)" >&2; exit 2 ;; esac
build_dir=${ASAN_BUILD_DIR:-build-asan}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
fuzz_seconds=${FUZZ_SECONDS:-10}

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the checkout, so another clone of the repository hits the same cache entries.
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi
if [[ "$phase" != run ]]; then
  # Line tables are all a sanitizer's stack needs (file:line): about a tenth less compiling than full -g.
  cmake -S . -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -DTRAINPACK_SANITIZE=ON -DTRAINPACK_FUZZ=ON "${launcher[@]}"
  # Only what runs here: neither the trainpack binary nor the integration tests.
  cmake --build "$build_dir" -j"$jobs" --target trainpack_unit_tests trainpack_fuzz_targets
fi
[[ "$phase" != build ]] || exit 0

# A leak or any undefined behaviour fails the run, with a symbolised stack.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
rc=0
ctest --test-dir "$build_dir" -L unit -j"$jobs" --output-on-failure || rc=$?

# One fuzz target: its seeds plus what earlier runs found, for fuzz_seconds. Inputs may grow to 1 MiB (-max_len;
# libFuzzer's default stops at 4 KB or the largest seed), so long lines are tried too. Inputs that take over 10 s or
# 2 GB count as failures (libFuzzer's -timeout and -rss_limit_mb).
fuzz_one() {
  local target=$1 work=$build_dir/fuzz/$1
  mkdir -p "$work/corpus"
  if "$build_dir/tests/fuzz/fuzz_$target" -max_total_time="$fuzz_seconds" -max_len=1048576 -timeout=10 \
      -rss_limit_mb=2048 \
      -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" "tests/fuzz/corpus/$target" >"$work/log" 2>&1; then
    echo "fuzz_$target: ok ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$') runs)"
  else
    echo "fuzz_$target: FAILED (log: $work/log)"
    tail -n 60 "$work/log"
    return 1
  fi
}

if ((fuzz_seconds > 0)); then
  # Two at a time (each is single-threaded), in the order CMake lists them.
  pids=()
  while read -r target; do
    [[ -n "$target" ]] || continue
    fuzz_one "$target" &
    pids+=($!)
    if ((${#pids[@]} >= jobs)); then
      wait "${pids[0]}" || rc=1
      pids=("${pids[@]:1}")
    fi
  done <"$build_dir/fuzz-targets.txt"
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
fi
exit "$rc"
