#!/usr/bin/python3
"""Collects the Debian 12 system-Python files trainpack's base-facts reader looks at, from this host, into
debian12/rootfs/ (regular files, some as excerpts) plus debian12/manifest.json (symlinks, modes) and
debian12/expected.json (what the live interpreter and pip report). Run with Debian's /usr/bin/python3 on a
bookworm host: /usr/bin/python3 testdata/python/base_facts/collect_debian12.py
"""
import configparser
import importlib.metadata
import json
import os
import platform
import re
import shutil
import site
import struct
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "debian12")
ROOT = os.path.join(OUT, "rootfs")
SITE = "/usr/lib/python3/dist-packages"

assert sys.executable == "/usr/bin/python3", "run with Debian's /usr/bin/python3"
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(ROOT)
manifest = {"symlinks": {}, "files": {}}


def put(path, data, mode=0o644):
    dest = os.path.join(ROOT, path.lstrip("/"))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "wb") as f:
        f.write(data)
    manifest["files"][path.lstrip("/")] = mode


def copy(path):
    with open(path, "rb") as f:
        put(path, f.read(), os.stat(path).st_mode & 0o7777)


def link(path):
    manifest["symlinks"][path.lstrip("/")] = os.readlink(path)


def elf_head(path):
    """ELF header, program headers and the PT_INTERP string: all the reader needs of a multi-MB binary."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    end = phoff + phentsize * phnum
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 3:
            end = max(end, p_offset + p_filesz)
    return data[:end]


# Commands and the interpreter.
for p in ("/usr/bin/pip", "/usr/bin/pip3"):
    copy(p)
link("/usr/bin/python3")
put("/usr/bin/python3.11", elf_head("/usr/bin/python3.11"), 0o755)
# usrmerge and the dynamic loader (absolute symlink, re-rooted by the reader).
for p in ("/lib", "/lib64", "/usr/lib64/ld-linux-x86-64.so.2", "/etc/os-release"):
    link(p)
copy("/usr/lib/os-release")
put("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", elf_head("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")[:64], 0o755)
# The glibc banner with some bytes around it.
with open("/usr/lib/x86_64-linux-gnu/libc.so.6", "rb") as f:
    libc = f.read()
at = libc.index(b"GNU C Library")
put("/usr/lib/x86_64-linux-gnu/libc.so.6", b"\x7fELF" + b"\0" * 60 + libc[at - 64: at + 256], 0o755)
# stdlib files.
for p in ("/usr/lib/python3.11/_sysconfigdata__x86_64-linux-gnu.py", "/usr/lib/python3.11/EXTERNALLY-MANAGED",
          "/usr/lib/python3.11/sysconfig.py", "/usr/include/python3.11/patchlevel.h"):
    copy(p)
link("/usr/lib/python3.11/_sysconfigdata__linux_x86_64-linux-gnu.py")
# dpkg status: only the stanzas the reader uses.
with open("/var/lib/dpkg/status", encoding="utf-8") as f:
    stanzas = f.read().split("\n\n")
keep = [s for s in stanzas if re.match(r"Package: (python3\.11|python3\.11-minimal|libc6)\n", s)]
put("/var/lib/dpkg/status", ("\n\n".join(keep) + "\n").encode())
# A few installed distributions (dist-info and egg-info).
DISTS = ["pip-23.0.1.dist-info", "packaging-23.0.dist-info", "six-1.16.0.egg-info", "wheel-0.38.4.egg-info",
         "setuptools-66.1.1.egg-info", "PyYAML-6.0.dist-info"]
for d in DISTS:
    for name in ("METADATA", "RECORD", "PKG-INFO", "installed-files.txt"):
        p = os.path.join(SITE, d, name)
        if os.path.exists(p):
            copy(p)

with open("/usr/lib/python3.11/EXTERNALLY-MANAGED", encoding="utf-8") as f:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(f.read())
paths = sysconfig.get_paths(sysconfig.get_preferred_scheme("prefix"))
dists = {}
for dist in importlib.metadata.distributions(path=[SITE]):
    if os.path.basename(str(dist._path)) in DISTS:
        dists[dist.metadata["Name"]] = dist.version
expected = {
    "python_full_version": platform.python_version(),
    "python_version": sysconfig.get_python_version(),
    "soabi": sysconfig.get_config_var("SOABI"),
    "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
    "multiarch": sysconfig.get_config_var("MULTIARCH"),
    "abiflags": sysconfig.get_config_var("ABIFLAGS"),
    "prefix": sysconfig.get_config_var("prefix"),
    "libdir": sysconfig.get_config_var("LIBDIR"),
    "scheme": {k: paths[k] for k in ("purelib", "platlib", "scripts", "data", "include", "stdlib")},
    "site_dirs": site.getsitepackages(),
    "externally_managed_error": parser.get("externally-managed", "Error"),
    "glibc": os.confstr("CS_GNU_LIBC_VERSION").split()[1],
    "machine": platform.machine(),
    "pip_version": importlib.metadata.version("pip"),
    "dists": dists,
}
with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1, sort_keys=True)
with open(os.path.join(OUT, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
