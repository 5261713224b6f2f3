#!/usr/bin/env bash
# The main demo: build trainpack, make a real Debian 12 Python base image, then turn the bundled example trainer
# (testdata/example-trainer) into a container image without any Docker daemon and run it.
#
#   1. install missing build deps + mmdebstrap/umoci/skopeo/runc (scripts/install-deps.sh --demo)
#   2. build trainpack (scripts/build.sh)
#   3. base image: tests/fixtures/python-base.sh .cache/demo/base   (OCI layout, tag 3.11; cached after the first run)
#   4. print the Dockerfile gcloud would generate:   trainpack dockerfile ...
#   5. build the image:                               trainpack build ... --output=oci:.cache/demo/image:latest
#   6. unpack with umoci and run the image's ENTRYPOINT with runc (the trainer's output)
# Everything it writes is under .cache/demo/ (gitignored). TRAINPACK_BIN=/path/to/trainpack skips step 2.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

step() { printf '\n==> %s\n' "$*" >&2; }
die() { printf '\ndemo.sh: %s\n' "$*" >&2; exit 1; }

# Paths relative to the repository root (the working directory from here on), so the commands shown read well.
demo=.cache/demo
trainer=testdata/example-trainer
build_dir=${BUILD_DIR:-build}
[[ "$build_dir" == /* ]] || build_dir=$root/$build_dir
tp=${TRAINPACK_BIN:-$build_dir/trainpack}   # TRAINPACK_BIN=/path/to/trainpack: use that binary, skip the build
base_name=trainpack-test/python:3.11
mkdir -p "$demo"

step "Installing missing packages (build + mmdebstrap, umoci, skopeo, runc)"
bash scripts/install-deps.sh --demo

if [[ -z "${TRAINPACK_BIN:-}" ]]; then
  step "Building trainpack"
  bash scripts/build.sh
fi
[[ -x "$tp" ]] || die "no trainpack binary at $tp"

step "Making the base image (Debian 12 + python3, via mmdebstrap and umoci; ~15 s the first time, cached after)"
bash tests/fixtures/python-base.sh "$demo/base"
base_ref=oci:$demo/base/oci:3.11

common=(--local-package-path="$trainer" --script=trainer/task.py --extra-dirs=config)
show() { printf '$ trainpack %s\n' "$*" >&2; }

step "The Dockerfile gcloud ai custom-jobs local-run would generate for it"
dockerfile_args=(dockerfile --executor-image-uri="$base_name" "${common[@]}")
show "${dockerfile_args[@]}"
"$tp" "${dockerfile_args[@]}"
echo

step "Building the image without a Docker daemon"
rm -rf "$demo/image"
build_args=(build --executor-image-uri="$base_name" --base-source="$base_ref" "${common[@]}"
            --cache-dir="$demo/cache" --output="oci:$demo/image:latest")
show "${build_args[@]}"
"$tp" "${build_args[@]}"
echo "image: oci:$demo/image:latest" >&2
oci-image-tool validate --type image --ref name=latest "$demo/image" >&2
umoci stat --image "$demo/image:latest" >&2

step "Running the image's ENTRYPOINT with runc (what 'docker run IMAGE' would print)"
bundle=$demo/bundle
rm -rf "$bundle"
unpack_opts=()
((EUID == 0)) || unpack_opts=(--rootless)
umoci unpack "${unpack_opts[@]}" --image "$demo/image:latest" "$bundle" >/dev/null
# No TTY here: runc must not try to allocate one. (umoci writes the config pretty-printed, one key per line.)
sed -i 's/"terminal": true/"terminal": false/' "$bundle/config.json"
grep -q '"terminal": false' "$bundle/config.json" || die "could not set process.terminal=false in $bundle/config.json"
rc=0
runc --root "$root/$demo/runc-state" run --bundle "$bundle" "trainpack-demo-$$" || rc=$?
((rc == 0)) || die "the image's entrypoint exited with status $rc"
step "Done. Image: oci:$demo/image:latest"
