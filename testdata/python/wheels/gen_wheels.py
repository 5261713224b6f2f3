#!/usr/bin/python3
"""Builds the small test wheels in this directory and records what Debian 12's pip 23.0.1 installs from them.

Run with Debian's interpreter (pip 23.0.1, setuptools 66, wheel 0.38):  /usr/bin/python3 gen_wheels.py
For every wheel, `python3 -m pip install --no-deps --no-compile --no-index --ignore-installed --root=<tmp> <whl>`
installs into an empty root (Debian's default scheme: /usr/local/lib/python3.11/dist-packages, /usr/local/bin,
/usr/local, /usr/include/python3.11/<name>); the resulting tree (path, mode, sha256, size), the directories and
the RECORD text go into expected.json, which the C++ wheel installer test compares against.
"""
import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
EPOCH = "1700000000"
STAGE = "/tmp/trainpack-wheel-oracle"  # direct_url.json names the wheel here


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    os.chmod(path, mode)


def bdist_wheel(src, out):
    env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH, PYTHONDONTWRITEBYTECODE="1")
    subprocess.run([PY, "setup.py", "-q", "bdist_wheel", "-d", out], cwd=src, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def build_demo(tmp, out):
    """Pure wheel: console/gui entry points (one with a dotted attribute and extras), scripts with #!python
    (also with interpreter arguments), a shell script, a .data script shadowed by an entry point, data, headers."""
    s = os.path.join(tmp, "demo")
    write(f"{s}/setup.py", textwrap.dedent("""\
        from setuptools import setup
        setup(name="Demo_Pkg", version="1.0", packages=["demo_pkg"],
              scripts=["scripts/demo-script", "scripts/demo-env", "scripts/demo-sh", "scripts/demo-cli"],
              data_files=[("share/demo", ["data/demo.txt"])], headers=["include/demo.h"],
              extras_require={"fancy": []},
              entry_points={"console_scripts": ["demo-cli = demo_pkg.cli:main",
                                                "demo-run = demo_pkg.cli:Main.run [fancy]"],
                            "gui_scripts": ["demo-gui = demo_pkg.gui:start"]})
        """))
    write(f"{s}/demo_pkg/__init__.py", "__version__ = '1.0'\n")
    write(f"{s}/demo_pkg/cli.py", "def main():\n    return 0\n\nclass Main:\n    @staticmethod\n    def run():\n        return 0\n")
    write(f"{s}/demo_pkg/gui.py", "def start():\n    return 0\n")
    write(f"{s}/scripts/demo-script", "#!python\nprint('hello')\n", 0o755)
    write(f"{s}/scripts/demo-env", "#!/usr/bin/env python3 -u\nimport sys\nprint(sys.argv)\n", 0o755)
    write(f"{s}/scripts/demo-sh", "#!/bin/sh\necho shell\n", 0o755)
    write(f"{s}/scripts/demo-cli", "#!python\n# a setuptools-style wrapper pip must not install\n", 0o755)
    write(f"{s}/data/demo.txt", "data file\n")
    write(f"{s}/include/demo.h", "int demo(void);\n")
    bdist_wheel(s, out)


def build_namespace(tmp, out):
    """A pkg_resources-style namespace (setuptools writes a -nspkg.pth) next to a PEP 420 namespace."""
    s = os.path.join(tmp, "ns")
    write(f"{s}/setup.py", textwrap.dedent("""\
        from setuptools import setup
        setup(name="nspkg-part", version="2.0", namespace_packages=["nsroot"],
              packages=["nsroot", "nsroot.part", "nsx.sub"])
        """))
    write(f"{s}/nsroot/__init__.py", "__import__('pkg_resources').declare_namespace(__name__)\n")
    write(f"{s}/nsroot/part/__init__.py", "PART = 1\n")
    write(f"{s}/nsx/sub/__init__.py", "SUB = 1\n")
    bdist_wheel(s, out)


def build_platlib(tmp, out):
    """Root-Is-Purelib: false (platlib) with an executable package file."""
    s = os.path.join(tmp, "plat")
    write(f"{s}/setup.py", textwrap.dedent("""\
        from setuptools import setup
        from setuptools.dist import Distribution
        class BinaryDistribution(Distribution):
            def has_ext_modules(self):
                return True
        setup(name="exec-plat", version="0.3", packages=["exec_plat"], distclass=BinaryDistribution,
              package_data={"exec_plat": ["tool.sh", "notes.txt"]})
        """))
    write(f"{s}/exec_plat/__init__.py", "")
    write(f"{s}/exec_plat/tool.sh", "#!/bin/sh\necho tool\n", 0o755)
    write(f"{s}/exec_plat/notes.txt", "not executable\n", 0o644)
    bdist_wheel(s, out)


def build_unicode(tmp, out):
    """Non-ASCII names and names that csv must quote (comma, double quote)."""
    s = os.path.join(tmp, "uni")
    write(f"{s}/setup.py", textwrap.dedent("""\
        from setuptools import setup
        setup(name="uni-names", version="0.1", packages=["uni_names"], package_data={"uni_names": ["*.txt"]})
        """))
    write(f"{s}/uni_names/__init__.py", "")
    write(f"{s}/uni_names/日本語.py", "X = '日本'\n")
    write(f"{s}/uni_names/données.txt", "é\n")
    write(f"{s}/uni_names/a,b.txt", "comma\n")
    write(f"{s}/uni_names/say \"hi\".txt", "quote\n")
    bdist_wheel(s, out)


def zinfo(name, mode):
    zi = zipfile.ZipInfo(name, date_time=(2023, 11, 14, 22, 13, 20))
    zi.external_attr = mode << 16
    zi.compress_type = zipfile.ZIP_DEFLATED
    return zi


def record_row(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\r\n"


def build_crafted(out):
    """Hand-made wheel for what setuptools never writes: directory entries, a symlink entry, __pycache__,
    .data/purelib and platlib, a #!pythonw script with arguments and CRLF and no x bit, a '-script.py'
    entry-point wrapper, a file missing from RECORD, a RECORD row for a file not in the wheel, a stale hash
    (copied, not checked), and a RECORD that does not list itself."""
    di = "crafted-1.0.dist-info"
    dd = "crafted-1.0.data"
    files = [
        ("crafted/", b"", 0o40755),
        ("crafted/__init__.py", b"", 0o100644),
        ("crafted/mod.py", b"def main():\n    return 0\n", 0o100644),
        ("crafted/run.sh", b"#!/bin/sh\nexit 0\n", 0o100775),
        ("crafted/link.py", b"mod.py", 0o120777),
        ("crafted/__pycache__/mod.cpython-311.pyc", b"\xa7\r\r\nnot really bytecode", 0o100644),
        ("crafted/unlisted.txt", b"not in RECORD\n", 0o100644),
        ("crafted/stale.txt", b"new bytes\n", 0o100644),
        (f"{dd}/purelib/crafted_pure.py", b"PURE = 1\n", 0o100644),
        (f"{dd}/platlib/crafted_plat.py", b"PLAT = 1\n", 0o100644),
        (f"{dd}/scripts/runme", b"#!pythonw -x\r\nprint('run')\r\n", 0o100644),
        (f"{dd}/scripts/tool-script.py", b"#!python\nwrapper\n", 0o100755),
        (f"{dd}/scripts/tool", b"#!python\nalso a wrapper\n", 0o100755),
        (f"{dd}/data/etc/crafted.conf", b"[crafted]\n", 0o100644),
        (f"{di}/METADATA", b"Metadata-Version: 2.1\nName: crafted\nVersion: 1.0\n\n", 0o100644),
        (f"{di}/WHEEL", b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: True\nTag: py3-none-any\n\n", 0o100644),
        (f"{di}/entry_points.txt",
         b"# comment\n[console_scripts]\ntool = crafted.mod:main\n  spaced-name   =   crafted.mod:main  \n\n"
         b"[gui_scripts]\ngtool = crafted.mod:main\n\n[other.group]\nnot-a-script = crafted.mod:main\n", 0o100644),
    ]
    record = ""
    for name, data, _ in files:
        if name.endswith("/") or name == "crafted/unlisted.txt":
            continue
        if name == "crafted/stale.txt":
            record += record_row(name, b"old bytes\n")
        else:
            record += record_row(name, data)
    record += "crafted/ghost.py,sha256=AAAA,3\r\n"
    path = os.path.join(out, "crafted-1.0-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as z:
        for name, data, mode in files:
            z.writestr(zinfo(name, mode), data)
        z.writestr(zinfo(f"{di}/RECORD", 0o100644), record.encode())
    return path


def build_fake_pip(out):
    """A wheel named pip: pip turns its `pip` entry point into pip, pip3 and pip3.11 and drops pipX.Y entries."""
    di = "pip-99.0.dist-info"
    files = [
        ("pip/__init__.py", b""),
        ("pip/_internal/__init__.py", b""),
        ("pip/_internal/cli/main.py", b"def main():\n    return 0\n"),
        (f"{di}/METADATA", b"Metadata-Version: 2.1\nName: pip\nVersion: 99.0\n\n"),
        (f"{di}/WHEEL", b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n"),
        (f"{di}/entry_points.txt",
         b"[console_scripts]\npip = pip._internal.cli.main:main\npip3 = pip._internal.cli.main:main\n"
         b"pip3.9 = pip._internal.cli.main:main\n"),
    ]
    record = "".join(record_row(n, d) for n, d in files) + f"{di}/RECORD,,\r\n"
    path = os.path.join(out, "pip-99.0-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files:
            z.writestr(zinfo(name, 0o100644), data)
        z.writestr(zinfo(f"{di}/RECORD", 0o100644), record.encode())
    return path


def build_duplicate(out):
    """Not installed by the oracle: two members with the same name (zipfile allows it, warning)."""
    import warnings
    path = os.path.join(out, "bad", "dup-1.0-py3-none-any.whl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as z:
        warnings.simplefilter("ignore")
        z.writestr(zinfo("dup/__init__.py", 0o100644), b"one")
        z.writestr(zinfo("dup/__init__.py", 0o100644), b"two")
        z.writestr(zinfo("dup-1.0.dist-info/WHEEL", 0o100644), b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\n")
        z.writestr(zinfo("dup-1.0.dist-info/RECORD", 0o100644), b"")


def pip_install(whl, root):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PIP_FIND_LINKS", None)
    subprocess.run([PY, "-m", "pip", "install", "--no-deps", "--no-compile", "--no-index", "--ignore-installed",
                    "--no-warn-script-location", "--disable-pip-version-check", "--root=" + root, whl],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def snapshot(root):
    files, dirs, record, direct_url = {}, [], None, None
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir != ".":
            dirs.append(rel_dir)
        for fn in filenames:
            p = os.path.join(dirpath, fn)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            assert stat.S_ISREG(st.st_mode), rel
            with open(p, "rb") as f:
                data = f.read()
            files[rel] = {"mode": oct(stat.S_IMODE(st.st_mode)), "sha256": hashlib.sha256(data).hexdigest(),
                          "size": len(data)}
            if rel.endswith(".dist-info/RECORD"):
                record = data.decode("utf-8")
            if rel.endswith(".dist-info/direct_url.json"):
                direct_url = json.loads(data)
    return dict(sorted(files.items())), sorted(dirs), record, direct_url


def main():
    os.umask(0o022)
    for f in os.listdir(HERE):
        if f.endswith(".whl"):
            os.remove(os.path.join(HERE, f))
    with tempfile.TemporaryDirectory() as tmp:
        build_demo(tmp, HERE)
        build_namespace(tmp, HERE)
        build_platlib(tmp, HERE)
        build_unicode(tmp, HERE)
        build_crafted(HERE)
        build_fake_pip(HERE)
        build_duplicate(HERE)
        cases = []
        for whl in sorted(f for f in os.listdir(HERE) if f.endswith(".whl")):
            # pip names the requirement after the filename with '_' → '-'; the headers dir keeps that spelling.
            name, version = whl.split("-")[:2]
            req_name = name.replace("_", "-")
            # A fixed absolute path so direct_url.json does not depend on where the checkout lives.
            stage = STAGE
            os.makedirs(stage, exist_ok=True)
            staged = os.path.join(stage, whl)
            shutil.copy(os.path.join(HERE, whl), staged)
            root = os.path.join(tmp, "root-" + name)
            pip_install(staged, root)
            files, dirs, record, direct_url = snapshot(root)
            cases.append({
                "wheel": whl, "name": name, "version": version,
                "scheme": {"purelib": "/usr/local/lib/python3.11/dist-packages",
                           "platlib": "/usr/local/lib/python3.11/dist-packages",
                           "headers": "/usr/include/python3.11/" + req_name,
                           "scripts": "/usr/local/bin", "data": "/usr/local"},
                "sys_executable": sys.executable, "pip_version": "23.0.1", "python_version": "3.11",
                "requested": True, "direct_url": direct_url,
                "files": files, "dirs": dirs, "record": record,
            })
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "pip 23.0.1 (Debian 12), /usr/bin/python3 -m pip install --root", "cases": cases},
                  f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")
    shutil.rmtree(STAGE, ignore_errors=True)


if __name__ == "__main__":
    main()
