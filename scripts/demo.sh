#!/usr/bin/env bash
# The main demo: build trainpack, make a real Debian 12 Python base image, then turn the bundled example trainer
# (testdata/example-pip-trainer: a script and a requirements.txt) into a container image without any Docker daemon,
# and run it as `gcloud ai custom-jobs local-run` would.
#
#   1. install missing build deps + mmdebstrap/umoci/skopeo/runc (scripts/install-deps.sh --demo)
#   2. build the trainpack binary, not the tests, in Release mode into build-release/ (scripts/build.sh --target
#      trainpack; no debug info: a third less compiling; scripts/package.sh packages the same build)
#   3. base image: tests/fixtures/python-base.sh .cache/demo/base   (OCI layout, tag 3.11; cached after the first run)
#   4. a local Python package index with the trainer's requirements (tests/fixtures/python-index.sh; the public
#      index is not needed), on 127.0.0.1:DEMO_INDEX_PORT (default 5391)
#   5. print the Dockerfile gcloud would generate:   trainpack dockerfile ...
#   6. build the image:                               trainpack build ... --output=oci:.cache/demo/image:latest
#   7. build and run it as gcloud's local-run does:   trainpack local-run --engine=runc ... -- --epochs 2
# Everything it writes is under .cache/demo/ (gitignored; DEMO_DIR=/elsewhere chooses another directory).
# TRAINPACK_BIN=/path/to/trainpack skips step 2.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# Each step is numbered and says how long the demo has run so far.
started=$SECONDS
step_number=0
step() {
  step_number=$((step_number + 1))
  printf '\n==> [%d/7, %ds] %s\n' "$step_number" "$((SECONDS - started))" "$*" >&2
}
die() { printf '\ndemo.sh: %s\n' "$*" >&2; exit 1; }

# Paths relative to the repository root (the working directory from here on), so the commands shown read well.
demo=${DEMO_DIR:-.cache/demo}
trainer=testdata/example-pip-trainer
index_port=${DEMO_INDEX_PORT:-5391}
build_dir=${BUILD_DIR:-build-release}
[[ "$build_dir" == /* ]] || build_dir=$root/$build_dir
tp=${TRAINPACK_BIN:-$build_dir/trainpack}   # TRAINPACK_BIN=/path/to/trainpack: use that binary, skip the build
base_name=trainpack-test/python:3.11
mkdir -p "$demo"

step "Installing missing packages (build + mmdebstrap, umoci, skopeo, runc, setuptools for the index's wheels)"
bash scripts/install-deps.sh --demo

if [[ -z "${TRAINPACK_BIN:-}" ]]; then
  step "Building the trainpack binary (only it: the tests are built by scripts/test.sh)"
  BUILD_DIR=$build_dir BUILD_TYPE=${BUILD_TYPE:-Release} bash scripts/build.sh --target trainpack
else
  step "Using the trainpack binary $tp"
fi
[[ -x "$tp" ]] || die "no trainpack binary at $tp"

step "Making the base image (Debian 12 + python3, via mmdebstrap and umoci; ~15 s the first time, cached after)"
bash tests/fixtures/python-base.sh "$demo/base"
base_ref=oci:$demo/base/oci:3.11

step "Serving the trainer's requirements from a local package index (wheels built on this machine)"
bash tests/fixtures/python-index.sh start "$demo/index" "$index_port" >/dev/null
trap 'bash tests/fixtures/python-index.sh stop "$demo/index" >/dev/null 2>&1 || true' EXIT
index_url=http://127.0.0.1:$index_port/simple/

common=(--local-package-path="$trainer" --script=trainer/task.py)
# The base's Debian Python is marked EXTERNALLY-MANAGED (PEP 668): its pip, like trainpack, needs to be told.
pip_flags=(--index-url="$index_url" --break-system-packages)
show() { printf '$ trainpack %s\n' "$*" >&2; }

step "The Dockerfile gcloud ai custom-jobs local-run would generate for it"
dockerfile_args=(dockerfile --executor-image-uri="$base_name" "${common[@]}")
show "${dockerfile_args[@]}"
"$tp" "${dockerfile_args[@]}"
echo

step "Building the image without a Docker daemon"
rm -rf "$demo/image"
build_args=(build --executor-image-uri="$base_name" --base-source="$base_ref" "${common[@]}" "${pip_flags[@]}"
            --cache-dir="$demo/cache" --output="oci:$demo/image:latest")
show "${build_args[@]}"
"$tp" "${build_args[@]}"
echo "image: oci:$demo/image:latest" >&2
# The layout is checked by clients that know image-spec 1.1 (its index also lists the SBOM and provenance manifests,
# untagged), and every blob's name is its content's sha256.
skopeo inspect --raw "oci:$demo/image:latest" >/dev/null
umoci stat --image "$demo/image:latest" >&2
(cd "$demo/image/blobs/sha256" && for blob in *; do echo "$blob  $blob"; done | sha256sum --check --quiet) ||
  die "a blob of $demo/image does not match its digest"

step "Running it as gcloud ai custom-jobs local-run does (built from the cache, run with runc)"
run_args=(local-run --executor-image-uri="$base_name" --base-source="$base_ref" "${common[@]}" "${pip_flags[@]}"
          --cache-dir="$demo/cache" --engine=runc -- --epochs 2)
show "${run_args[@]}"
"$tp" "${run_args[@]}" || die "the trainer exited with status $?"
printf '\n==> Done in %ds. Image: oci:%s/image:latest\n' "$((SECONDS - started))" "$demo" >&2
