#!/usr/bin/env bash
# self-image.sh BASE OUTPUT [trainpack build flags...] -- trainpack's CI step image, built by trainpack itself.
#
#   bash scripts/self-image.sh python:3.11-slim-bookworm us-docker.pkg.dev/PROJECT/REPO/trainpack:0.1.0
#
# The image works the way CI runners start it:
#   - Cloud Build: `name: IMAGE`, `args: [build, ...]`, working directory /workspace: the ENTRYPOINT
#     ["python", "-m", "trainpack_step"] finds its module in site-packages from any directory;
#   - GitLab (`sh -c` scripts, usually `entrypoint: [""]`) and `docker run --entrypoint sh`: `trainpack` is a
#     command on PATH (/usr/local/bin/trainpack, a console-script launcher);
#   - any user (`docker run --user 12345:12345`, HOME=/): every file is world-readable, the cache falls back to
#     /tmp/trainpack-cache-UID when ~/.cache cannot be written;
#   - CA certificates: the system bundle when the base has one, else the bundle of the host that built the image,
#     shipped in the package (SSL_CERT_FILE is pointed at it only then).
#
# Why a wheel installed with --extra-packages: trainpack only builds what gcloud's Dockerfile describes, and in that
# Dockerfile the only way to put files outside /usr/app (so they are found from /workspace) and a command on PATH is
# a pip install. A setup.py step would not do: gcloud copies setup.py alone before `pip install .`, so the package
# data is not there when it installs. So this script writes a wheel (with Python's zipfile, setting each file's
# mode itself: the binary is 0755, everything else 0644) holding
#   trainpack_step.py                  the launcher: `python -m trainpack_step` and the `trainpack` entry point
#   trainpack_step_data/bin/trainpack  the (stripped) binary
#   trainpack_step_data/lib/           the shared libraries it loads beyond glibc, which the base provides
#   trainpack_step_data/cacert.pem     the host's CA bundle (used only when the base has none)
# and builds `--python-module=trainpack_step --extra-packages=<wheel>` from a package directory with the wheel and
# a copy of trainpack_step.py (gcloud requires the module's file in the package; run from /usr/app it is that copy
# that Python imports, and it finds trainpack_step_data on sys.path like the installed one).
# The launcher runs the binary through the dynamic loader named in its PT_INTERP (`ld.so --library-path LIB
# --argv0 trainpack BIN ARGS`): the packaged libraries are found without LD_LIBRARY_PATH, so programs trainpack
# starts (the image's Python, credential helpers) do not load them, and the binary runs even if an installer
# dropped its executable bit. BASE must therefore use glibc 2.33 or newer (for --argv0) and no older than the
# build host's glibc, and have `python` (gcloud's ENTRYPOINT calls it) with pip: e.g. python:3.11-slim-bookworm.
# The pip step needs a CPython of BASE's X.Y on the host or in BASE (see README.md, "Python packages").
# TRAINPACK_BIN selects the binary (default build/trainpack). Needs python3, readelf and strip on the host.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ $# -ge 2 ]] || { echo "usage: self-image.sh BASE OUTPUT-IMAGE [trainpack build flags...]" >&2; exit 2; }
base=$1 out=$2
shift 2
bin=$(realpath "${TRAINPACK_BIN:-build/trainpack}")
[[ -x "$bin" ]] || { echo "self-image.sh: no trainpack binary at $bin (run scripts/build.sh)" >&2; exit 1; }
version=$("$bin" --version | awk 'NR == 1 {print $2}')
interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
[[ -n "$interp" ]] || { echo "self-image.sh: $bin names no program interpreter" >&2; exit 1; }
cacert=$(bash scripts/ca-bundle.sh)

umask 022
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
data=$stage/tree/trainpack_step_data
mkdir -p "$data/bin" "$data/lib" "$stage/package"
cp "$bin" "$data/bin/trainpack"
strip "$data/bin/trainpack" 2>/dev/null || true
cp -L "$cacert" "$data/cacert.pem"
# Every shared library the binary loads except glibc's own, which the base provides.
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$data/lib/" ;;
  esac
done
sed "s|@INTERP@|$interp|" scripts/trainpack_step.py > "$stage/tree/trainpack_step.py"
cp "$stage/tree/trainpack_step.py" "$stage/package/trainpack_step.py"
wheel=trainpack_step-$version-py3-none-any.whl
python3 scripts/write_wheel.py "$stage/tree" "$version" "$stage/package/$wheel"
exec "$bin" build --executor-image-uri="$base" --local-package-path="$stage/package" \
  --python-module=trainpack_step --extra-packages="$wheel" --output-image-uri="$out" "$@"
