#!/usr/bin/env bash
# Configure and build trainpack (binary, library, tests) into build/ (or $BUILD_DIR).
#   BUILD_TYPE=Release bash scripts/build.sh      default: RelWithDebInfo
#   bash scripts/build.sh --target trainpack      only the binary (arguments go to `cmake --build`)
#   CMAKE_ARGS='-DA=1 -DB=2' bash scripts/build.sh  more arguments for configuring (split at spaces, or one a line
#                                                   when the value has several lines: a path with spaces stays whole)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${BUILD_DIR:-build}
build_type=${BUILD_TYPE:-RelWithDebInfo}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

launcher=()
# ccache, when installed, makes rebuilds in other checkouts (worktrees, fresh clones) cheap.
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the checkout, so another clone of the repository hits the same cache entries.
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi
if [[ "${CMAKE_ARGS:-}" == *$'\n'* ]]; then
  mapfile -t configure_args < <(printf '%s\n' "$CMAKE_ARGS" | sed '/^$/d')
else
  read -ra configure_args <<<"${CMAKE_ARGS:-}"
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" "${launcher[@]}" "${configure_args[@]}"
cmake --build "$build_dir" -j"$jobs" "$@"
