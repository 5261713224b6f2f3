#!/usr/bin/python3
"""Regenerate filenames.json: packaging 23.0's parse_wheel_filename / parse_sdist_filename over hand-picked names.

Run with Debian's /usr/bin/python3 (packaging 23.0). Tags are written sorted (packaging returns a frozenset).
"""
import json
import os

import packaging
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion

assert packaging.__version__ == "23.0", packaging.__version__

WHEELS = [
    "foo-1.0-py3-none-any.whl",
    "Foo_Bar-1.0-py3-none-any.whl",
    "foo.bar-2.0.post1-py2.py3-none-any.whl",
    "numpy-1.26.4-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "torch-2.1.0-cp311-cp311-manylinux1_x86_64.whl",
    "pkg-1.0-1-py3-none-any.whl",
    "pkg-1.0-12abc-py3-none-any.whl",
    "pkg-1.0-007-py3-none-any.whl",
    "pkg-1.0-0_x-py3-none-any.whl",
    "pkg-1.0-abc-py3-none-any.whl",
    "pkg-1.0-a1-py3-none-any.whl",
    "pkg-1.0--py3-none-any.whl",
    "pkg-1.0-py3-none-any.zip",
    "pkg-1.0-py3-none-any.WHL",
    "pkg-1.0-none-any.whl",
    "pkg-1.0-1-2-py3-none-any.whl",
    "pkg-py3-none-any.whl",
    "pkg-1.0.whl",
    ".whl",
    "pkg__x-1.0-py3-none-any.whl",
    "pkg_x-1.0-py3-none-any.whl",
    "pkg.x-1.0-py3-none-any.whl",
    "pkg..x-1.0-py3-none-any.whl",
    "_pkg_-1.0-py3-none-any.whl",
    "pkg+x-1.0-py3-none-any.whl",
    "pkg x-1.0-py3-none-any.whl",
    "-1.0-py3-none-any.whl",
    "pkg-1.0_beta1-py3-none-any.whl",
    "pkg-1.0b1-py3-none-any.whl",
    "pkg-1!2.0rc1.post2.dev3+local.7-py3-none-any.whl",
    "pkg-1.0+Ubuntu_1-py3-none-any.whl",
    "pkg-v1.0-py3-none-any.whl",
    "pkg-1.0.x-py3-none-any.whl",
    "pkg-latest-py3-none-any.whl",
    "pkg-1.0-cp39.cp310.cp311-abi3-manylinux_2_28_aarch64.musllinux_1_2_aarch64.whl",
    "pkg-1.0-py2.py3-none.abi3-any.whl",
    "pkg-1.0-PY3-None-Any.whl",
    "pkg-1.0-py3-none-linux_x86_64.whl",
    "pkg-1.0-py3.py3-none-any.whl",
    "pkg-1.0-99999999999999999999-py3-none-any.whl",
    "pkg-1.0-1.2-py3-none-any.whl",
    "PKG_Name-01.02.00-py3-none-any.whl",
    "pkg-1.0-cp27-cp27mu-linux_x86_64.whl",
    "a-1-py3-none-any.whl",
    "pkg-1.0-1_-py3-none-any.whl",
]

SDISTS = [
    "foo-1.0.tar.gz",
    "Foo_Bar-1.0.tar.gz",
    "foo.bar-2.0.post1.zip",
    "foo-bar-1.0.tar.gz",
    "foo-bar-baz-1.0rc1.tar.gz",
    "foo-1.0.tgz",
    "foo-1.0.tar.bz2",
    "foo-1.0.TAR.GZ",
    "foo1.0.tar.gz",
    "foo-.tar.gz",
    "-1.0.tar.gz",
    "foo-1.0-2.tar.gz",
    "foo-1.0_beta.tar.gz",
    "foo-v1.0.tar.gz",
    "foo-1!1.0+local.tar.gz",
    "foo__bar-1.0.zip",
    "foo-bar.tar.gz",
    "foo-1.0.zip",
    ".tar.gz",
    "foo--1.0.tar.gz",
]


def wheel_case(filename):
    try:
        name, version, build, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename as e:
        return {"filename": filename, "error": "InvalidWheelFilename", "message": str(e)}
    except InvalidVersion as e:
        return {"filename": filename, "error": "InvalidVersion", "message": str(e)}
    return {
        "filename": filename, "name": name, "version": str(version),
        "build": [str(build[0]), build[1]] if build else None,  # str: Python ints are unbounded
        "tags": sorted(str(t) for t in tags),
    }


def sdist_case(filename):
    try:
        name, version = parse_sdist_filename(filename)
    except InvalidSdistFilename as e:
        return {"filename": filename, "error": "InvalidSdistFilename", "message": str(e)}
    except InvalidVersion as e:
        return {"filename": filename, "error": "InvalidVersion", "message": str(e)}
    return {"filename": filename, "name": name, "version": str(version)}


def main():
    data = {
        "generator": "packaging " + packaging.__version__,
        "wheels": [wheel_case(f) for f in WHEELS],
        "sdists": [sdist_case(f) for f in SDISTS],
    }
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "filenames.json")
    with open(out, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(out, len(data["wheels"]), "wheels", len(data["sdists"]), "sdists")


if __name__ == "__main__":
    main()
