#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test (unit + integration) through CTest, then the
# sanitizer step (scripts/sanitize.sh: unit tests under ASan/UBSan and a bounded run of every fuzz target).
# CTest starts the fixtures itself (Debian python base image, a private dockerd, a registry) and stops them after.
#   bash scripts/test.sh                 everything
#   bash scripts/test.sh -L unit         extra arguments go to ctest (here: unit tests only), and without SANITIZE=1
#                                        the sanitizer step is left out
#   SANITIZE=0 bash scripts/test.sh      everything but the sanitizer step
# Exit code: 0 when ctest and the sanitizer step both passed, else ctest's code (or 1 if only the sanitizer failed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# What runs in the background (the fixtures' cache, the sanitizer build) stops when this does.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

bash scripts/install-deps.sh --test
build_dir=${BUILD_DIR:-build}
# The whole suite makes the fixtures' slow cache entries (base images, a CPython compile, Debian roots) beside the
# compile, which needs none of them: their time is mostly downloads and dpkg (tests/fixtures/warm-cache.sh).
warm=$(( $# == 0 ))
if [[ "$warm" == 1 ]]; then
  mkdir -p "$build_dir"
  nice -n 10 bash tests/fixtures/warm-cache.sh "$build_dir/warm-cache" > "$build_dir/warm-cache.out" 2>&1 &
  warm_cache=$!
fi
# In CI a compiler warning in the project's code fails the build (TRAINPACK_WERROR). Only this build's: the release
# builds the tests make (scripts/package.sh) keep their own flags.
configure=${CMAKE_ARGS:-}
if [[ -n "${CI:-}" ]]; then  # one more argument, in the form build.sh splits this value by
  if [[ "$configure" == *$'\n'* ]]; then configure+=$'\n'; else configure+=' '; fi
  configure+=-DTRAINPACK_WERROR=ON
fi
CMAKE_ARGS=$configure bash scripts/build.sh
# A run of selected tests (ctest arguments) skips the sanitizer step unless asked for.
sanitize=${SANITIZE:-$(( $# == 0 ))}
# The sanitizer step's clang build goes on beside ctest, at the lowest CPU priority: the integration tests run one
# at a time and often wait (on dockerd, the registry, a container), and the compile fills those gaps without
# slowing them. Its output goes to a log, shown if it fails.
sanitize_log=${ASAN_BUILD_DIR:-build-asan}/build.log
if [[ "$sanitize" == 1 ]]; then
  mkdir -p "$(dirname "$sanitize_log")"
  nice -n 19 bash scripts/sanitize.sh build > "$sanitize_log" 2>&1 &
  sanitize_build=$!
fi
# -j2: unit tests run in parallel; integration tests hold RESOURCE_LOCK trainpack_integration (one dockerd, one
# registry) so they run one at a time.
rc=0
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@" || rc=$?
if [[ "$sanitize" == 1 ]]; then
  if wait "$sanitize_build"; then
    bash scripts/sanitize.sh run || { (( rc != 0 )) || rc=1; }
  else
    echo "test.sh: the sanitizer build failed; the end of $sanitize_log:" >&2
    tail -n 40 "$sanitize_log" >&2
    (( rc != 0 )) || rc=1
  fi
fi
if [[ "$warm" == 1 ]]; then
  wait "$warm_cache" || true  # a fixture it could not make was made again, or reported, by its test
  cat "$build_dir/warm-cache.out"
fi
exit "$rc"
