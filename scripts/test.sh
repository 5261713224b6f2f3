#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test (unit + integration) through CTest.
# CTest starts the fixtures itself (Debian python base image, a private dockerd, a registry) and stops them after.
#   bash scripts/test.sh                 everything
#   bash scripts/test.sh -L unit         extra arguments go to ctest (here: unit tests only)
# Exit code: ctest's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh --test
bash scripts/build.sh
build_dir=${BUILD_DIR:-build}
# -j2: unit tests run in parallel; integration tests hold RESOURCE_LOCK trainpack_integration (one dockerd, one
# registry) so they run one at a time.
rc=0
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@" || rc=$?
exit "$rc"
