#!/usr/bin/env python3
"""Inputs of scripts/bench.sh, made deterministically (seeded) so every run measures the same bytes.

    bench_inputs.py OUTDIR EXTRA_MB
    bench_inputs.py --index-only OUTDIR

OUTDIR/index/         a PEP 503 simple index (index/simple/NAME/index.html, links with #sha256= and, as PyPI's,
                      PEP 658 metadata files) of:
  numpy 1.24.2        a cp311 manylinux binary wheel of about 6 MB (shared objects + ~900 modules), as numpy's
  benchdata 1.0       a 148 MB pure wheel: 96 MiB of random bytes, 128 MiB of text, 400 small modules (deflated)
  benchapp 1.0        a small pure dependency tree: benchapp -> benchdep-a, benchdep-b; benchdep-a -> benchdep-c
OUTDIR/projects/pip/    trainer/task.py + requirements.txt naming numpy, benchdata and benchapp
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


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


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
    records = [f"{p},{record_hash(d)},{len(d)}" for p, d in members] + [f"{dist_info}/RECORD,,"]
    members.append((f"{dist_info}/RECORD", ("\n".join(records) + "\n").encode()))
    with zipfile.ZipFile(path, "w") as z:
        for member_path, data in members:
            info = zipfile.ZipInfo(member_path, EPOCH)
            info.external_attr = 0o644 << 16
            z.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)


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


def write_metadata_file(wheel_path: str) -> str:
    """PEP 658: the wheel's METADATA beside it as WHEEL.metadata, as PyPI serves it; returns its sha256."""
    with zipfile.ZipFile(wheel_path) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        data = zf.read(name)
    with open(wheel_path + ".metadata", "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def write_index(index_dir: str, wheels):
    """wheels: (project, filename) pairs already in index_dir/files; one PEP 503 page per project, each link with
    the PEP 658/714 metadata attributes PyPI gives every wheel."""
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
                    meta = write_metadata_file(os.path.join(index_dir, "files", filename))
                    page.write(f'<a href="../../files/{filename}#sha256={digest}" data-core-metadata="sha256={meta}"'
                               f' data-dist-info-metadata="sha256={meta}">{filename}</a>\n')
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
    write_index(os.path.join(out, "index"), wheels)


def make_projects(out: str, extra_mb: int):
    rng = random.Random(2)
    task = b"print('training')\n"
    for project in ("pip", "code", "extra"):
        os.makedirs(os.path.join(out, "projects", project, "trainer"), exist_ok=True)
        with open(os.path.join(out, "projects", project, "trainer", "task.py"), "wb") as f:
            f.write(task)
    with open(os.path.join(out, "projects", "pip", "requirements.txt"), "w") as f:
        f.write("numpy==1.24.2\nbenchdata==1.0\nbenchapp==1.0\n")
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
    if sys.argv[1] == "--index-only":  # the index again (its format changed), the projects kept
        make_index(sys.argv[2])
        return
    out, extra_mb = sys.argv[1], int(sys.argv[2])
    make_index(out)
    make_projects(out, extra_mb)


if __name__ == "__main__":
    main()
