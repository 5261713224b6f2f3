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

bash scripts/install-deps.sh --test
# In CI a compiler warning in the project's code fails the build (TRAINPACK_WERROR). Only this build's: the release
# builds the tests make (scripts/package.sh) keep their own flags.
werror=()
[[ -z "${CI:-}" ]] || werror=(-DTRAINPACK_WERROR=ON)
CMAKE_ARGS="${CMAKE_ARGS:-} ${werror[*]}" bash scripts/build.sh
build_dir=${BUILD_DIR:-build}
# -j2: unit tests run in parallel; integration tests hold RESOURCE_LOCK trainpack_integration (one dockerd, one
# registry) so they run one at a time.
rc=0
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@" || rc=$?
# A run of selected tests (ctest arguments) skips the sanitizer step unless asked for.
if [[ "${SANITIZE:-$(( $# == 0 ))}" == 1 ]]; then
  bash scripts/sanitize.sh || { (( rc != 0 )) || rc=1; }
fi
exit "$rc"
