#!/usr/bin/python3
"""Regenerate tags.json: ordered sys_tags() lists from Debian's packaging 23.0 for Linux CPython targets.

Run with Debian's /usr/bin/python3 (packaging 23.0). The host is never consulted: glibc/musl versions,
sysconfig.get_platform(), the 32-bit flag, the ELF ABI check and the abi config vars are all patched.
packaging 23.0 is the "linux_<arch> last" ordering (packaging <= 26.2).
"""
import json
import os
import sysconfig

import packaging
from packaging import _manylinux, _musllinux, tags

assert packaging.__version__ == "23.0", packaging.__version__


def linux_platforms(libc, libc_version, arch, is_32bit=False, elf_abi_ok=True):
    """packaging.tags._linux_platforms() for the described target."""
    saved = (_manylinux._get_glibc_version, _musllinux._get_musl_version,
             sysconfig.get_platform, _manylinux._have_compatible_abi)
    try:
        glibc = tuple(libc_version) if libc == "glibc" else (-1, -1)
        musl = _musllinux._MuslVersion(*libc_version) if libc == "musl" else None
        _manylinux._get_glibc_version = lambda: glibc
        _musllinux._get_musl_version = lambda executable: musl
        sysconfig.get_platform = lambda: "linux-" + arch
        if arch in ("i686", "armv7l") or is_32bit:
            # The ELF header check of the running interpreter, described by data instead.
            orig = saved[3]
            _manylinux._have_compatible_abi = (
                lambda executable, a: elf_abi_ok if a in ("i686", "armv7l") else orig(executable, a))
        return list(tags._linux_platforms(is_32bit=is_32bit))
    finally:
        (_manylinux._get_glibc_version, _musllinux._get_musl_version,
         sysconfig.get_platform, _manylinux._have_compatible_abi) = saved


def cpython_abis(version, debug, pymalloc):
    saved = tags._get_config_var
    try:
        values = {"Py_DEBUG": 1 if debug else 0, "WITH_PYMALLOC": 1 if pymalloc else 0, "Py_UNICODE_SIZE": 4}
        tags._get_config_var = lambda name, warn=False: values.get(name)
        return tags._cpython_abis(tuple(version))
    finally:
        tags._get_config_var = saved


def sys_tags(version, abis, platforms):
    interpreter = "cp" + "".join(map(str, version))
    out = list(tags.cpython_tags(python_version=tuple(version), abis=abis, platforms=platforms))
    out += list(tags.compatible_tags(python_version=tuple(version), interpreter=interpreter, platforms=platforms))
    return [str(t) for t in out]


TARGETS = [
    # (libc, libc_version, arch, is_32bit, elf_abi_ok)
    ("glibc", [2, 17], "x86_64", False, True),
    ("glibc", [2, 28], "x86_64", False, True),
    ("glibc", [2, 31], "x86_64", False, True),
    ("glibc", [2, 36], "x86_64", False, True),
    ("glibc", [2, 17], "aarch64", False, True),
    ("glibc", [2, 28], "aarch64", False, True),
    ("glibc", [2, 31], "aarch64", False, True),
    ("glibc", [2, 36], "aarch64", False, True),
    ("musl", [1, 1], "x86_64", False, True),
    ("musl", [1, 2], "x86_64", False, True),
    ("musl", [1, 1], "aarch64", False, True),
    ("musl", [1, 2], "aarch64", False, True),
    ("none", None, "x86_64", False, True),
    ("glibc", [2, 4], "x86_64", False, True),
    ("glibc", [2, 16], "aarch64", False, True),
    ("glibc", [3, 2], "x86_64", False, True),
    ("glibc", [2, 36], "ppc64le", False, True),
    ("glibc", [2, 36], "s390x", False, True),
    ("glibc", [2, 31], "x86_64", True, True),    # 32-bit interpreter on x86_64 -> i686
    ("glibc", [2, 31], "x86_64", True, False),   # ... whose ELF is not i386: no manylinux
    ("glibc", [2, 31], "armv7l", False, True),
    ("glibc", [2, 31], "armv7l", False, False),  # soft-float
]

# (python version, debug, pymalloc): the full tag list of every target for one version, plus a few versions on
# two targets.
PYTHONS_FULL = [((3, 10), False, True)]
PYTHONS_SOME = [((3, 7), False, True), ((3, 7), False, False), ((3, 8), True, True), ((3, 11), False, True),
                ((3, 12), True, True), ((3, 13), False, True), ((3, 2), False, True), ((3, 1), False, True),
                ((3, 0), False, True)]


def case(version, debug, pymalloc, target):
    libc, libc_version, arch, is_32bit, elf_abi_ok = target
    platforms = linux_platforms(libc, libc_version, arch, is_32bit, elf_abi_ok)
    abis = cpython_abis(version, debug, pymalloc)
    return {
        "python": list(version), "debug": debug, "pymalloc": pymalloc,
        "libc": libc, "libc_version": libc_version, "arch": arch, "is_32bit": is_32bit, "elf_abi_ok": elf_abi_ok,
        "abis": abis, "platforms": platforms, "tags": sys_tags(version, abis, platforms),
    }


def main():
    cases = []
    for version, debug, pymalloc in PYTHONS_FULL:
        for target in TARGETS:
            cases.append(case(version, debug, pymalloc, target))
    for version, debug, pymalloc in PYTHONS_SOME:
        for target in (TARGETS[2], TARGETS[9]):
            cases.append(case(version, debug, pymalloc, target))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tags.json")
    with open(out, "w") as f:
        json.dump({"generator": "packaging " + packaging.__version__, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")
    print(out, len(cases), "cases")


if __name__ == "__main__":
    main()
