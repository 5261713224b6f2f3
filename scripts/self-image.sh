#!/usr/bin/env bash
# self-image.sh BASE OUTPUT [trainpack build flags...] -- trainpack's own container image, built by trainpack.
#
# The image is a trainer in gcloud's sense: the package holds trainpack/entry.py, the binary and the shared
# libraries it needs beyond glibc, so `trainpack build --script=trainpack/entry.py` packs it like any trainer and
# its ENTRYPOINT ["python", "trainpack/entry.py"] execs the binary with the container's arguments. BASE must be a
# Debian 12 (glibc 2.36 or newer) image with `python` and CA certificates, e.g. python:3.11-slim-bookworm.
#   bash scripts/self-image.sh python:3.11-slim-bookworm us-docker.pkg.dev/PROJECT/REPO/trainpack:0.1.0
# As a Cloud Build step: `name: <that image>`, `args: [build, ...]`; credentials come from the metadata server.
# TRAINPACK_BIN selects the binary (default build/trainpack).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ $# -ge 2 ]] || { echo "usage: self-image.sh BASE OUTPUT-IMAGE [trainpack build flags...]" >&2; exit 2; }
base=$1 out=$2
shift 2
bin=$(realpath "${TRAINPACK_BIN:-build/trainpack}")
[[ -x "$bin" ]] || { echo "self-image.sh: no trainpack binary at $bin (run scripts/build.sh)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/trainpack/bin" "$stage/trainpack/lib"
cp "$bin" "$stage/trainpack/bin/trainpack"
strip "$stage/trainpack/bin/trainpack" 2>/dev/null || true
# Every shared library the binary loads except glibc's own, which the base provides.
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$stage/trainpack/lib/" ;;
  esac
done
cat > "$stage/trainpack/entry.py" <<'PY'
# Runs trainpack with the container's arguments, finding the libraries packed beside it.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(here, "lib"))
os.execve(os.path.join(here, "bin", "trainpack"), ["trainpack"] + sys.argv[1:], env)
PY
exec "$bin" build --executor-image-uri="$base" --local-package-path="$stage" --script=trainpack/entry.py \
  --output-image-uri="$out" "$@"
