#!/usr/bin/env python3
"""Inputs of scripts/bench.sh, made deterministically (seeded) so every run measures the same bytes.

    bench_inputs.py OUTDIR EXTRA_MB
    bench_inputs.py --index-only OUTDIR

OUTDIR/index/         a PEP 503 simple index (index/simple/NAME/index.html, links with #sha256= and, as PyPI's,
                      PEP 658 metadata files) of:
  numpy 1.24.2        a cp311 manylinux binary wheel of about 6 MB (shared objects + ~900 modules), as numpy's
  benchdata 1.0       a 148 MB pure wheel: 96 MiB of random bytes, 128 MiB of text, 400 small modules (deflated)
  benchapp 1.0        a small pure dependency tree: benchapp -> benchdep-a, benchdep-b; benchdep-a -> benchdep-c
  torchlike 2.1.0     a framework-shaped binary wheel: a 1 GiB library, a 200 MiB one and 19,000 modules, needing
  cudalike-cudnn 9.1  a CUDA-shaped dependency: three 200 MiB libraries and 1,000 headers (about 2 GB installed in all)
OUTDIR/index-plain/   the same files (files/ is a link) with pages that announce no PEP 658 metadata, as a plain
                      directory server or a private index has them
OUTDIR/projects/pip/    trainer/task.py + requirements.txt naming numpy, benchdata and benchapp
OUTDIR/projects/framework/  trainer/task.py + requirements.txt naming torchlike
OUTDIR/projects/code/   trainer/task.py only
OUTDIR/projects/extra/  trainer/task.py + data/: EXTRA_MB MiB, half one random file, half 20,000 small text files
"""
import base64
import hashlib
import io
import os
import random
import sys
import zipfile

EPOCH = (2020, 1, 1, 0, 0, 0)


_LINES = {}


def text_block(rng: random.Random, size: int) -> bytes:
    """Compressible text (lines drawn from a pool of 20,000 lines of 5,000 words), like source, vocabularies or CSV."""
    lines = _LINES.get(id(rng))
    if lines is None:
        words = [f"w{rng.randrange(5000)}" for _ in range(4096)]
        lines = _LINES[id(rng)] = [(" ".join(rng.choices(words, k=12)) + "\n").encode() for _ in range(20000)]
    picked = rng.choices(lines, k=size // 60 + 1)
    return b"".join(picked)[:size]


def write_wheel(path: str, project: str, name: str, version: str, tag: str, purelib: bool, members, requires=()):
    """members: (archive path, bytes) pairs; dist-info (METADATA, WHEEL, RECORD) is added last, as bdist_wheel does.
    METADATA names the project as its requirements spell it (as setuptools writes it): pip 23.0, Debian 12's, rejects
    PEP 658 metadata whose Name differs in spelling from the requirement that led to it."""
    dist_info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    wheel = (f"Wheel-Version: 1.0\nGenerator: trainpack-bench\nRoot-Is-Purelib: {'true' if purelib else 'false'}\n"
             f"Tag: {tag}\n")
    members = list(members) + [(f"{dist_info}/METADATA", metadata.encode()), (f"{dist_info}/WHEEL", wheel.encode())]
    records = []

    def recorded(member_path, data):
        """The member's bytes as they are written, its RECORD line appended once they all went by."""
        digest, size = hashlib.sha256(), 0
        for chunk in ([data] if isinstance(data, bytes) else data):
            digest.update(chunk)
            size += len(chunk)
            yield chunk
        b64 = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
        records.append(f"{member_path},sha256={b64},{size}")

    members = [(p, recorded(p, d)) for p, d in members]
    members.append((f"{dist_info}/RECORD", (lambda: (yield ("\n".join(records + [f"{dist_info}/RECORD,,"]) +
                                                          "\n").encode()))()))
    with zipfile.ZipFile(path, "w") as z:
        for member_path, data in members:
            info = zipfile.ZipInfo(member_path, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            info._compresslevel = 6
            # A large member comes as chunks (a generator), written as they come, its hash kept for RECORD.
            chunks = [data] if isinstance(data, bytes) else data
            with z.open(info, "w", force_zip64=True) as out:
                for chunk in chunks:
                    out.write(chunk)


def numpy_members(rng: random.Random):
    # Shared objects: machine code compresses to roughly 40 %; half random, half repetitive.
    for lib in ("_multiarray_umath", "_umath_linalg", "_pocketfft_internal", "_mt19937", "_generator"):
        size = 3 * 1024 * 1024 if lib == "_multiarray_umath" else 900 * 1024
        body = rng.randbytes(size // 2) + bytes(size // 2 - 1024) + text_block(rng, 1024)
        yield f"numpy/core/{lib}.cpython-311-x86_64-linux-gnu.so", body
    for i in range(900):
        yield f"numpy/sub{i // 60:02d}/module{i:03d}.py", text_block(rng, 3000 + rng.randrange(6000))
    yield "numpy/__init__.py", b"__version__ = '1.24.2'\n"


def benchdata_members(rng: random.Random):
    mib = 1024 * 1024
    for i in range(6):
        yield f"benchdata/weights/part{i}.bin", rng.randbytes(16 * mib)
    for i in range(8):
        yield f"benchdata/corpus/part{i}.txt", text_block(rng, 16 * mib)
    for i in range(400):
        yield f"benchdata/modules/m{i:03d}.py", text_block(rng, 200 + rng.randrange(2000))
    yield "benchdata/__init__.py", b"DATA = 'weights'\n"


def library(rng: random.Random, mib: int):
    """A shared library's bytes in 16 MiB chunks: half random, half text and zeros, so it deflates to about 55 %,
    as CUDA and framework libraries do."""
    for _ in range(mib // 16):
        yield rng.randbytes(8 << 20) + bytes(4 << 20) + text_block(rng, 4 << 20)


def torchlike_members(rng: random.Random):
    yield "torchlike/lib/libtorchlike_cuda.so", library(rng, 1024)
    yield "torchlike/lib/libtorchlike_cpu.so", library(rng, 200)
    for i in range(19000):
        yield f"torchlike/pkg{i // 500:02d}/sub{i // 50 % 10}/module{i:05d}.py", text_block(rng, 400 + rng.randrange(5000))
    yield "torchlike/__init__.py", b"__version__ = '2.1.0'\n"


def cudalike_members(rng: random.Random):
    for i in range(3):
        yield f"nvidia/cudnn/lib/libcudnn_like{i}.so.9", library(rng, 200)
    for i in range(1000):
        yield f"nvidia/cudnn/include/cudnn_like_{i:04d}.h", text_block(rng, 500 + rng.randrange(4000))


def write_metadata_file(wheel_path: str) -> str:
    """PEP 658: the wheel's METADATA beside it as WHEEL.metadata, as PyPI serves it; returns its sha256."""
    with zipfile.ZipFile(wheel_path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        data = zf.read(name)
    with open(wheel_path + ".metadata", "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def write_index(index_dir: str, wheels, metadata=True):
    """wheels: (project, filename) pairs already in index_dir/files; one PEP 503 page per project, each link with
    the PEP 658/714 metadata attributes PyPI gives every wheel (without them when `metadata` is false)."""
    projects = {}
    for project, filename in wheels:
        projects.setdefault(project, []).append(filename)
    os.makedirs(os.path.join(index_dir, "simple"), exist_ok=True)
    with open(os.path.join(index_dir, "simple", "index.html"), "w") as root_page:
        root_page.write("<!DOCTYPE html><html><body>\n")
        for project, filenames in sorted(projects.items()):
            root_page.write(f'<a href="{project}/">{project}</a>\n')
            page_dir = os.path.join(index_dir, "simple", project)
            os.makedirs(page_dir, exist_ok=True)
            with open(os.path.join(page_dir, "index.html"), "w") as page:
                page.write("<!DOCTYPE html><html><body>\n")
                for filename in filenames:
                    with open(os.path.join(index_dir, "files", filename), "rb") as f:
                        digest = hashlib.sha256(f.read()).hexdigest()
                    attrs = ""
                    if metadata:
                        meta = write_metadata_file(os.path.join(index_dir, "files", filename))
                        attrs = f' data-core-metadata="sha256={meta}" data-dist-info-metadata="sha256={meta}"'
                    page.write(f'<a href="../../files/{filename}#sha256={digest}"{attrs}>{filename}</a>\n')
                page.write("</body></html>\n")
        root_page.write("</body></html>\n")


def make_index(out: str):
    files = os.path.join(out, "index", "files")
    os.makedirs(files, exist_ok=True)
    rng = random.Random(1)
    wheels = []

    def add(project, name, version, tag, purelib, members, requires=()):
        filename = f"{name}-{version}-{tag}.whl"
        write_wheel(os.path.join(files, filename), project, name, version, tag, purelib, members, requires)
        wheels.append((project, filename))

    add("numpy", "numpy", "1.24.2", "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64", False,
        numpy_members(rng))
    add("benchdata", "benchdata", "1.0", "py3-none-any", True, benchdata_members(rng))
    tree = {"benchapp": ["benchdep-a>=1", "benchdep-b"], "benchdep-a": ["benchdep-c"], "benchdep-b": [],
            "benchdep-c": []}
    for project, requires in tree.items():
        module = project.replace("-", "_")
        add(project, module, "1.0", "py3-none-any", True,
            [(f"{module}/__init__.py", text_block(rng, 4000)), (f"{module}/core.py", text_block(rng, 20000))],
            requires)
    add("torchlike", "torchlike", "2.1.0", "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64", False,
        torchlike_members(random.Random(3)), ["cudalike-cudnn==9.1"])
    add("cudalike-cudnn", "cudalike_cudnn", "9.1", "py3-none-manylinux1_x86_64", True,
        cudalike_members(random.Random(4)))
    write_index(os.path.join(out, "index"), wheels)
    # The index without PEP 658: the same wheels (no .metadata beside them there: files/ is a link to the index's,
    # and its pages do not announce them).
    plain = os.path.join(out, "index-plain")
    os.makedirs(plain, exist_ok=True)
    os.symlink("../index/files", os.path.join(plain, "files"))
    write_index(plain, wheels, metadata=False)


def make_trainers(out: str):
    task = b"print('training')\n"
    for project in ("pip", "framework", "code", "extra"):
        os.makedirs(os.path.join(out, "projects", project, "trainer"), exist_ok=True)
        with open(os.path.join(out, "projects", project, "trainer", "task.py"), "wb") as f:
            f.write(task)
    with open(os.path.join(out, "projects", "pip", "requirements.txt"), "w") as f:
        f.write("numpy==1.24.2\nbenchdata==1.0\nbenchapp==1.0\n")
    with open(os.path.join(out, "projects", "framework", "requirements.txt"), "w") as f:
        f.write("torchlike==2.1.0\n")


def make_extra_dir(out: str, extra_mb: int):
    rng = random.Random(2)
    data = os.path.join(out, "projects", "extra", "data")
    os.makedirs(data, exist_ok=True)
    half = extra_mb * 1024 * 1024 // 2
    with open(os.path.join(data, "large.bin"), "wb") as f:
        for offset in range(0, half, 16 * 1024 * 1024):
            f.write(rng.randbytes(min(16 * 1024 * 1024, half - offset)))
    small = max(1, half // 20000)
    for i in range(20000):
        sub = os.path.join(data, "small", f"{i // 1000:02d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"f{i:05d}.txt"), "wb") as f:
            f.write(text_block(rng, small))


def main():
    if sys.argv[1] == "--index-only":  # the index again (its format changed), the extra dir kept
        make_index(sys.argv[2])
        make_trainers(sys.argv[2])
        return
    out, extra_mb = sys.argv[1], int(sys.argv[2])
    make_index(out)
    make_trainers(out)
    make_extra_dir(out, extra_mb)


if __name__ == "__main__":
    main()
