#!/usr/bin/python3
"""Regenerate the metadata vectors: real METADATA / PKG-INFO / WHEEL / entry_points.txt files and Python's parse.

Run with Debian's /usr/bin/python3 (setuptools 66, wheel 0.38, build, packaging 23.0). It builds a few small
projects in a temp dir (setup.py bdist_wheel and `python3 -m build --no-isolation`), copies the resulting
dist-info files under built/, writes hand-written edge cases under cases/, and records how Python reads each file
in expected.json:
  - METADATA / PKG-INFO / WHEEL: email.parser.Parser (compat32, what importlib.metadata and pip use): header items
    in order, the payload (body), plus packaging.requirements.Requirement for every Requires-Dist.
  - entry_points.txt: importlib.metadata.EntryPoints (group, name, value, module, attr, extras).
"""
import email.parser
import glob
import importlib.metadata as im
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from packaging.requirements import InvalidRequirement, Requirement

HERE = os.path.dirname(os.path.abspath(__file__))

PROJECTS = {
    "demo_pkg": {
        "setup.py": '''
from setuptools import setup
setup(
    name="Demo_Pkg",
    version="1.2.3",
    description="A demo package",
    long_description="# Demo\\n\\nFirst paragraph.\\n\\n    indented line\\nLast line: with colon\\n",
    long_description_content_type="text/markdown",
    author="A. Person",
    author_email="a@example.com",
    license="MIT",
    keywords=["demo", "test"],
    classifiers=["Programming Language :: Python :: 3", "License :: OSI Approved :: MIT License"],
    packages=["demo_pkg"],
    python_requires=">=3.7, !=3.8.*",
    install_requires=[
        "requests>=2.0,<3",
        'numpy; python_version>="3.8"',
        'Foo_Bar[baz,Quux] ~= 1.4 ; sys_platform == "linux"',
        "torch @ https://example.com/torch-2.0-cp311-cp311-linux_x86_64.whl",
    ],
    extras_require={
        "test": ["pytest>=7", 'mock; python_version<"3.3"'],
        "Docs_Extra": ["sphinx"],
    },
    entry_points={
        "console_scripts": ["demo = demo_pkg.cli:main", "demo-extra = demo_pkg.cli:main [test]"],
        "gui_scripts": ["demo-gui = demo_pkg.gui:App.run"],
        "demo.plugins": ["x = demo_pkg"],
    },
)
''',
        "demo_pkg/__init__.py": "",
        "build": "setup.py",
    },
    "cext": {
        "setup.py": '''
from setuptools import setup, Extension
setup(
    name="cext",
    version="0.1",
    ext_modules=[Extension("cext._speed", ["speed.c"])],
    packages=["cext"],
    entry_points={"console_scripts": ["cext-tool=cext:main"]},
)
''',
        "speed.c": '''#include <Python.h>
static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&m); }
''',
        "cext/__init__.py": "def main():\n    pass\n",
        "build": "setup.py",
    },
    "pep621": {
        "pyproject.toml": '''
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "pep621.project"
version = "2024.1.0rc1"
description = "PEP 621 metadata"
readme = {text = "Line one\\nLine two\\n", content-type = "text/plain"}
requires-python = ">=3.9"
dependencies = ["attrs>=22.1", "typing-extensions; python_version < '3.11'"]

[project.optional-dependencies]
all = ["rich[jupyter]>=13; platform_machine == 'x86_64'", "click"]

[project.scripts]
p621 = "pep621_project.main:run"

[project.gui-scripts]
p621-gui = "pep621_project.gui:run [all]"

[tool.setuptools]
packages = ["pep621_project"]
''',
        "pep621_project/__init__.py": "",
        "build": "build",
    },
}

# Hand-written METADATA edge cases.
CASES = {
    "continuations.METADATA": (
        "Metadata-Version: 2.1\n"
        "Name: cont\n"
        "Version: 1.0\n"
        "Summary: a summary that\n"
        "  continues here\n"
        "\tand with a tab\n"
        "Requires-Dist: alpha\n"
        "Requires-Dist: beta[x,y] (>=1.0) ; extra == 'x'\n"
        "requires-dist: Gamma>=2; python_version >= \"3.8\" and platform_system == \"Linux\"\n"
        "REQUIRES-DIST: delta @ https://example.com/delta.zip ; os_name == \"posix\"\n"
        "Provides-Extra: x\n"
        "Provides-Extra: Y_Z\n"
        "Requires-Python: >=3.8,<4\n"
        "Description: old style description\n"
        "        |  with pipe continuation\n"
        "\n"
        "Body line 1\n"
        "\n"
        "Name: not a header, this is the body\n"
    ),
    "dynamic.PKG-INFO": (
        "Metadata-Version: 2.2\n"
        "Name: dyn\n"
        "Version: 0.1\n"
        "Dynamic: Requires-Dist\n"
        "Dynamic: provides-extra\n"
        "Requires-Python: >=3.10\n"
    ),
    "missing.METADATA": (
        "Metadata-Version: 2.1\n"
        "Summary: no name, no version\n"
    ),
    "crlf.METADATA": (
        "Metadata-Version: 2.3\r\n"
        "Name: crlf\r\n"
        "Version: 3\r\n"
        "Requires-Dist: one\r\n"
        "  ; extra == 'a'\r\n"
        "\r\n"
        "Body\r\n"
        "text\r\n"
    ),
    "no_blank_line.METADATA": (
        "Metadata-Version: 2.1\n"
        "Name: nb\n"
        "Version: 1\n"
        "this line has no colon so the body starts here\n"
        "Version: 2\n"
    ),
    "leading_continuation.METADATA": (
        " leading continuation is dropped\n"
        "Metadata-Version: 2.4\n"
        "Name:  spaced  \n"
        "Version:\t1.0 \n"
        "Empty:\n"
        ":no-name\n"
        "License-Expression: MIT\n"
    ),
    "future.METADATA": (
        "Metadata-Version: 2.9\n"
        "Name: future\n"
        "Version: 1.0\n"
    ),
    "future_major.METADATA": (
        "Metadata-Version: 3.0\n"
        "Name: future\n"
        "Version: 1.0\n"
    ),
    "utf8.METADATA": (
        "Metadata-Version: 2.1\n"
        "Name: utf8\n"
        "Version: 1.0\n"
        "Author: Zoë Ünicode\n"
        "\n"
        "Dëscription ✓\n"
    ),
    "bad_requirement.METADATA": (
        "Metadata-Version: 2.1\n"
        "Name: bad\n"
        "Version: 1.0\n"
        "Requires-Dist: foo >= \n"
    ),
}

WHEEL_CASES = {
    "purelib_mixed_case.WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: TRUE\nTag: py2-none-any\nTag: py3-none-any\n",
    "platlib.WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\nBuild: 2\n",
    "no_purelib.WHEEL": "Wheel-Version: 1.0\nTag: py3-none-any\n",
    "newer_minor.WHEEL": "Wheel-Version: 1.9\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "newer_major.WHEEL": "Wheel-Version: 2.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "missing_version.WHEEL": "Root-Is-Purelib: true\nTag: py3-none-any\n",
    "bad_version.WHEEL": "Wheel-Version: one\nRoot-Is-Purelib: true\n",
    "purelib_padded.WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib:  true \nTag: py3-none-any\n",
}

ENTRY_POINT_CASES = {
    "edge.entry_points.txt": (
        "# comment line\n"
        "[console_scripts]\n"
        "  spaced-name   =   pkg.mod : func   \n"
        "Case = pkg:Main\n"
        "case = pkg:main\n"
        "with-extras = pkg.cli:run [extra1, extra2]\n"
        "nodots=pkg\n"
        "eq = pkg:f ; x=1\n"
        "\n"
        "; semicolon line is a pair without '=' handled below\n"
        "[gui_scripts]\n"
        "g = pkg.gui:App.start\n"
        "[other]\n"
        "o = other:thing\n"
    ),
}


def parse_email(text):
    msg = email.parser.Parser().parsestr(text)
    return msg


def requirement_json(text):
    try:
        r = Requirement(text)
    except InvalidRequirement as e:
        return {"text": text, "error": str(e).splitlines()[0]}
    return {"text": text, "name": r.name, "extras": sorted(r.extras), "specifier": str(r.specifier),
            "url": r.url or "", "marker": str(r.marker) if r.marker else None}


def metadata_json(text):
    msg = parse_email(text)
    return {
        "headers": [[k, v] for k, v in msg.items()],
        "body": msg.get_payload(),
        "requires_dist": [requirement_json(v) for v in (msg.get_all("Requires-Dist") or [])],
    }


def wheel_json(text):
    msg = parse_email(text)
    version = msg["Wheel-Version"]
    parsed = None
    if version is not None:
        try:
            parsed = [int(x) for x in version.strip().split(".")]
        except ValueError:
            parsed = "invalid"
    return {
        "headers": [[k, v] for k, v in msg.items()],
        "wheel_version": parsed,
        # pip's wheel_root_is_purelib
        "root_is_purelib": msg.get("Root-Is-Purelib", "").lower() == "true",
        "tags": msg.get_all("Tag") or [],
    }


def entry_points_json(text):
    out = []
    for ep in im.EntryPoints._from_text(text):
        m = ep.pattern.match(ep.value)
        out.append({"group": ep.group, "name": ep.name, "value": ep.value,
                    "module": m.group("module") if m else None, "attr": m.group("attr") if m else None,
                    "extras": ep.extras if m else None})
    return out


def build(tmp, project, spec):
    src = os.path.join(tmp, project)
    for rel, text in spec.items():
        if rel == "build":
            continue
        path = os.path.join(src, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    env = dict(os.environ, SOURCE_DATE_EPOCH="315532800")
    if spec["build"] == "setup.py":
        subprocess.run([sys.executable, "setup.py", "-q", "bdist_wheel", "sdist"], cwd=src, check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--sdist"], cwd=src, check=True,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (whl,) = glob.glob(os.path.join(src, "dist", "*.whl"))
    (sdist,) = glob.glob(os.path.join(src, "dist", "*.tar.gz"))
    out = os.path.join(HERE, "built", project)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    files = {}
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            base = name.rsplit("/", 1)[-1]
            if ".dist-info/" in name and base in ("METADATA", "WHEEL", "entry_points.txt"):
                files[base] = z.read(name)
    import tarfile
    with tarfile.open(sdist) as t:
        for m in t.getmembers():
            if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"):
                files["PKG-INFO"] = t.extractfile(m).read()
    for base, data in files.items():
        with open(os.path.join(out, base), "wb") as f:
            f.write(data)
    return {base: os.path.join("built", project, base) for base in files}


def main():
    expected = {"metadata": [], "wheel": [], "entry_points": []}
    with tempfile.TemporaryDirectory() as tmp:
        for project, spec in PROJECTS.items():
            for base, rel in sorted(build(tmp, project, spec).items()):
                with open(os.path.join(HERE, rel), encoding="utf-8") as f:
                    text = f.read()
                if base in ("METADATA", "PKG-INFO"):
                    expected["metadata"].append(dict(file=rel, **metadata_json(text)))
                elif base == "WHEEL":
                    expected["wheel"].append(dict(file=rel, **wheel_json(text)))
                else:
                    expected["entry_points"].append({"file": rel, "entries": entry_points_json(text)})
    cases = os.path.join(HERE, "cases")
    shutil.rmtree(cases, ignore_errors=True)
    os.makedirs(cases)
    for group, kind in ((CASES, "metadata"), (WHEEL_CASES, "wheel"), (ENTRY_POINT_CASES, "entry_points")):
        for base, text in group.items():
            rel = os.path.join("cases", base)
            with open(os.path.join(HERE, rel), "w", encoding="utf-8", newline="") as f:
                f.write(text)
            if kind == "metadata":
                expected[kind].append(dict(file=rel, **metadata_json(text)))
            elif kind == "wheel":
                expected[kind].append(dict(file=rel, **wheel_json(text)))
            else:
                expected[kind].append({"file": rel, "entries": entry_points_json(text)})
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print({k: len(v) for k, v in expected.items()})


if __name__ == "__main__":
    main()
