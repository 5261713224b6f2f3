#!/usr/bin/python3
"""Resolver scenarios (in the spirit of astral-sh/packse) and what real pip picks for them.

Run with Debian's /usr/bin/python3 (pip 23.0.1):  /usr/bin/python3 gen_scenarios.py > scenarios.json

For every scenario it builds tiny wheels (METADATA + WHEEL + RECORD only), an HTML find-links page carrying
data-yanked / data-requires-python, a venv (--without-pip) holding the "installed" dists, and runs
`pip --python VENV install --no-index --find-links PAGE --report R ...` for real. Recorded: the install list in pip's
installation order (from "Installing collected packages:"), the report's `requested` flags, and on failure the error
class and pip's own lines. The C++ test replays the same tables through an in-memory CandidateSource.
"""
import base64
import hashlib
import html
import io
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import zipfile

PY = "/usr/bin/python3"

# packages: name -> version -> {requires, requires_python, extras: {extra: [reqs]}, yanked: reason|None,
#                               index_requires_python}
# installed: name -> {version, requires}
S = []


def scenario(name, description, packages, requirements, **kw):
    S.append(dict(name=name, description=description, packages=packages, requirements=requirements,
                  installed=kw.get("installed", {}), constraints=kw.get("constraints", []),
                  upgrade=kw.get("upgrade", False), pre=kw.get("pre", False),
                  require_hashes=kw.get("require_hashes", False)))


def v(requires=(), **kw):
    d = dict(requires=list(requires))
    d.update(kw)
    return d


scenario("transitive-simple", "a -> b -> c, newest of each",
         {"a": {"1.0": v(["b>=1"])}, "b": {"1.0": v(["c"]), "2.0": v(["c"])}, "c": {"0.9": v(), "1.1": v()}},
         ["a"])
scenario("newest-wins", "the newest final release is picked",
         {"a": {"1.0": v(), "1.5": v(), "2.0": v(), "0.1": v()}}, ["a"])
scenario("upper-bound", "a<2 picks the newest below 2",
         {"a": {"1.0": v(), "1.9.1": v(), "2.0": v()}}, ["a<2"])
scenario("extras-basic", "a[x] pulls the extra's dependency",
         {"a": {"1.0": v(["b"], extras={"x": ["c>=1"]})}, "b": {"1.0": v()}, "c": {"1.0": v(), "2.0": v()}},
         ["a[x]"])
scenario("extras-not-requested", "without [x] the extra's dependency is not installed",
         {"a": {"1.0": v(["b"], extras={"x": ["c"]})}, "b": {"1.0": v()}, "c": {"1.0": v()}}, ["a"])
scenario("extras-missing", "an extra the project does not provide is ignored with a warning",
         {"a": {"1.0": v(["b"], extras={"x": ["c"]})}, "b": {"1.0": v()}, "c": {"1.0": v()}}, ["a[y]"])
scenario("extras-two", "two extras at once",
         {"a": {"1.0": v([], extras={"x": ["c"], "y": ["d"]})}, "c": {"1.0": v()}, "d": {"1.0": v()}},
         ["a[x,y]"])
scenario("extras-transitive", "a dependency asks for an extra of another project",
         {"a": {"1.0": v(["b[z]"])}, "b": {"1.0": v([], extras={"z": ["e"]})}, "e": {"1.0": v()}}, ["a"])
scenario("extras-backtrack", "the newest a's extra cannot be satisfied, so an older a is taken",
         {"a": {"1.0": v([], extras={"x": ["c>=1"]}), "2.0": v([], extras={"x": ["c>=5"]})},
          "c": {"1.0": v(), "2.0": v()}}, ["a[x]"])
scenario("extras-same-version", "a and a[x] must end on the same version",
         {"a": {"1.0": v([], extras={"x": ["c"]}), "2.0": v([], extras={"x": ["c"]})}, "c": {"1.0": v()}},
         ["a<2", "a[x]"])
scenario("markers-platform", "sys_platform markers keep only the Linux dependency",
         {"a": {"1.0": v(['b; sys_platform == "win32"', 'c; sys_platform == "linux"'])},
          "b": {"1.0": v()}, "c": {"1.0": v()}}, ["a"])
scenario("markers-python-version", "python_version markers",
         {"a": {"1.0": v(['b; python_version < "3.8"', 'd; python_version >= "3.8"',
                          'e; python_full_version > "3.11.1" and implementation_name == "cpython"'])},
          "b": {"1.0": v()}, "d": {"1.0": v()}, "e": {"1.0": v()}}, ["a"])
scenario("markers-extra-and-platform", "an extra's dependency that is for Windows only",
         {"a": {"1.0": v([], extras={"x": ['c; extra == "x" and sys_platform == "win32"', 'd; extra == "x"']})},
          "c": {"1.0": v()}, "d": {"1.0": v()}}, ["a[x]"])
scenario("markers-root", "a root requirement whose marker is false installs nothing",
         {"a": {"1.0": v()}, "b": {"1.0": v()}}, ['a; python_version < "3"', "b"])
scenario("requires-python-older", "the newest a needs a newer Python (metadata), an older one is taken",
         {"a": {"1.0": v(requires_python=">=3.7"), "2.0": v(requires_python=">=3.99")}}, ["a"])
scenario("requires-python-index", "data-requires-python on the index hides the newest a",
         {"a": {"1.0": v(), "2.0": v(requires_python=">=3.99", index_requires_python=">=3.99")}}, ["a"])
scenario("requires-python-transitive", "a dependency's newest release needs a newer Python",
         {"a": {"1.0": v(["b"])}, "b": {"1.0": v(), "2.0": v(requires_python=">=3.99")}}, ["a"])
scenario("requires-python-impossible", "no release supports this Python",
         {"a": {"1.0": v(requires_python=">=3.99")}}, ["a"])
scenario("yanked-skipped", "a yanked newest release is skipped",
         {"a": {"1.0": v(), "2.0": v(yanked="broken")}}, ["a"])
scenario("yanked-pinned", "a yanked release pinned with == is used",
         {"a": {"1.0": v(), "2.0": v(yanked="broken")}}, ["a==2.0"])
scenario("yanked-only-unpinned", "only yanked releases match a range: nothing is found",
         {"a": {"1.0": v(yanked="bad"), "2.0": v(yanked="bad")}}, ["a>=1"])
scenario("yanked-pinned-wildcard", "a wildcard pin does not allow a yanked release",
         {"a": {"2.0": v(yanked="bad")}}, ["a==2.*"])
scenario("prerelease-excluded", "pre-releases are not picked by default",
         {"a": {"1.0": v(), "2.0b1": v()}}, ["a"])
scenario("prerelease-flag", "--pre allows pre-releases",
         {"a": {"1.0": v(), "2.0b1": v()}}, ["a"], pre=True)
scenario("prerelease-explicit", "a specifier naming a pre-release allows pre-releases",
         {"a": {"1.0": v(), "2.0b1": v(), "2.0b2": v()}}, ["a>=2.0b1"])
scenario("prerelease-only-bare", "a bare name with only pre-releases available takes one",
         {"a": {"1.0a1": v(), "1.0a2": v()}}, ["a"])
scenario("prerelease-only-specifier", "pip 23: a range only pre-releases match finds nothing",
         {"a": {"1.0a1": v()}}, ["a>=0.5"])
scenario("prerelease-transitive-explicit", "a dependency's specifier requests a pre-release",
         {"a": {"1.0": v(["b>=2.0a1"])}, "b": {"1.0": v(), "2.0a1": v()}}, ["a"])
scenario("backtrack-simple", "the newest a conflicts with b, so a is backtracked",
         {"a": {"1.0": v(["c"]), "2.0": v(["c<2"])}, "b": {"1.0": v(["c>=2"])},
          "c": {"1.0": v(), "2.0": v()}}, ["a", "b"])
scenario("backtrack-depth", "three levels of backtracking to meet c==1.0",
         {"a": {"1.0": v(["b>=1"]), "2.0": v(["b>=2"]), "3.0": v(["b>=3"])},
          "b": {"1.0": v(["c>=1"]), "2.0": v(["c>=2"]), "3.0": v(["c>=3"])},
          "c": {"1.0": v(), "2.0": v(), "3.0": v()}}, ["a", "c==1.0"])
scenario("backtrack-transitive-conflict", "x's newest needs y>=2 whose deps clash with z",
         {"x": {"1.0": v(["y"]), "2.0": v(["y>=2"])},
          "y": {"1.0": v(["w<2"]), "2.0": v(["w>=2"])},
          "z": {"1.0": v(["w<2"])}, "w": {"1.0": v(), "2.0": v()}}, ["x", "z"])
scenario("installed-kept", "a satisfying installed dependency is kept",
         {"a": {"1.0": v(["b"])}, "b": {"1.0": v(), "2.0": v()}}, ["a"],
         installed={"b": {"version": "1.0", "requires": []}})
scenario("installed-root-kept", "an installed root requirement is kept without --upgrade",
         {"a": {"1.0": v(), "2.0": v()}}, ["a"], installed={"a": {"version": "1.0", "requires": []}})
scenario("installed-upgraded", "--upgrade moves the named project to the newest",
         {"a": {"1.0": v(), "2.0": v()}}, ["a"], installed={"a": {"version": "1.0", "requires": []}},
         upgrade=True)
scenario("installed-upgrade-only-if-needed", "--upgrade leaves satisfied dependencies alone",
         {"a": {"1.0": v(["b"]), "2.0": v(["b>=1"])}, "b": {"1.0": v(), "2.0": v()}}, ["a"],
         installed={"a": {"version": "1.0", "requires": ["b"]}, "b": {"version": "1.0", "requires": []}},
         upgrade=True)
scenario("installed-unsatisfying", "an installed dependency that does not satisfy is replaced",
         {"a": {"1.0": v(["b>=2"])}, "b": {"1.0": v(), "2.0": v(), "3.0": v()}}, ["a"],
         installed={"b": {"version": "1.0", "requires": []}})
scenario("installed-prerelease", "an installed pre-release satisfies without --pre",
         {"a": {"1.0": v(["b>=1"])}, "b": {"1.0": v(), "2.0b1": v()}}, ["a"],
         installed={"b": {"version": "2.0b1", "requires": []}})
scenario("constraints-filter", "a constraint narrows a root requirement",
         {"a": {"1.0": v(), "1.5": v(), "2.0": v()}}, ["a"], constraints=["a<2"])
scenario("constraints-no-install", "a constraint alone installs nothing",
         {"a": {"1.0": v()}, "c": {"1.0": v()}}, ["a"], constraints=["c==1.0"])
scenario("constraints-transitive", "a constraint narrows a dependency",
         {"a": {"1.0": v(["b"])}, "b": {"1.0": v(), "2.0": v(), "3.0": v()}}, ["a"], constraints=["b<3", "b!=2.0"])
scenario("constraints-conflict", "a constraint that excludes every match",
         {"a": {"1.0": v(), "2.0": v()}}, ["a>=2"], constraints=["a<2"])
scenario("conflict-two-parents", "two projects need incompatible ranges of c",
         {"a": {"1.0": v(["c<2"])}, "b": {"1.0": v(["c>=2"])}, "c": {"1.0": v(), "2.0": v()}}, ["a", "b"])
scenario("conflict-user-vs-dependency", "the user asks for c>=2, a needs c<2",
         {"a": {"1.0": v(["c<2"])}, "c": {"1.0": v(), "2.0": v()}}, ["a", "c>=2"])
scenario("circular", "a and b depend on each other",
         {"a": {"1.0": v(["b"])}, "b": {"1.0": v(["a"])}}, ["a"])
scenario("circular-three", "a -> b -> c -> a, plus d",
         {"a": {"1.0": v(["b", "d"])}, "b": {"1.0": v(["c"])}, "c": {"1.0": v(["a>=1"])}, "d": {"1.0": v()}},
         ["a"])
scenario("no-matching-version", "nothing satisfies the range: pip lists the versions it saw",
         {"a": {"1.0": v(), "2.0": v(), "3.0a1": v()}}, ["a>=5"])
scenario("unknown-project", "a dependency that no index has",
         {"a": {"1.0": v(["nothere>=1"])}}, ["a"])
scenario("hash-unpinned", "--require-hashes with a range",
         {"a": {"1.0": v()}}, ["a>=1.0"], require_hashes=True)
scenario("hash-pinned", "--require-hashes with == pins",
         {"a": {"1.0": v()}, "b": {"1.0": v()}}, ["a==1.0", "b==1.0"], require_hashes=True)
scenario("install-order-chain", "dependencies install first",
         {"a": {"1.0": v(["b"])}, "b": {"1.0": v(["c"])}, "c": {"1.0": v(["d"])}, "d": {"1.0": v()},
          "e": {"1.0": v()}}, ["a", "e"])
scenario("install-order-diamond", "a diamond and an independent leaf",
         {"a": {"1.0": v(["b", "c"])}, "b": {"1.0": v(["d"])}, "c": {"1.0": v(["d", "f"])},
          "d": {"1.0": v()}, "f": {"1.0": v()}, "g": {"1.0": v(["f"])}}, ["a", "g"])
scenario("name-normalization", "names and extras are compared after PEP 503 / PEP 685 normalisation",
         {"foo-bar": {"1.0": v(["Baz_Qux>=1"], extras={"with-extra": ["zed"]})}, "baz-qux": {"1.0": v()},
          "zed": {"1.0": v()}}, ["Foo_Bar[with-extra]"])


def wheel_bytes(name, version, info):
    dist = re.sub(r"[-_.]+", "_", name)
    di = f"{dist}-{version}.dist-info"
    meta = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if info.get("requires_python"):
        meta.append(f"Requires-Python: {info['requires_python']}")
    for r in info.get("requires", []):
        meta.append(f"Requires-Dist: {r}")
    for extra, reqs in info.get("extras", {}).items():
        meta.append(f"Provides-Extra: {extra}")
        for r in reqs:
            if "extra ==" in r:
                meta.append(f"Requires-Dist: {r}")
            elif ";" in r:
                req, marker = r.split(";", 1)
                meta.append(f'Requires-Dist: {req.strip()} ; ({marker.strip()}) and extra == "{extra}"')
            else:
                meta.append(f'Requires-Dist: {r} ; extra == "{extra}"')
    files = {
        f"{di}/METADATA": ("\n".join(meta) + "\n").encode(),
        f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: gen_scenarios\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{di}/RECORD,,")
    files[f"{di}/RECORD"] = ("\n".join(record) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, data in files.items():
            zi = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            z.writestr(zi, data)
    return f"{dist}-{version}-py3-none-any.whl", buf.getvalue()


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def error_of(text):
    if "In --require-hashes mode, all requirements must have their versions pinned" in text:
        return {"kind": "hash_unpinned"}
    m = re.search(r"ERROR: Package '([^']+)' requires a different Python: (\S+) not in '([^']*)'", text)
    if m:
        return {"kind": "requires_python", "message": m.group(0)[len("ERROR: "):]}
    if "ResolutionImpossible" in text:
        lines = []
        block = text.split("The conflict is caused by:", 1)[1].split("\n\n", 1)[0]
        for line in block.strip("\n").splitlines():
            lines.append(line.strip())
        head = re.search(r"ERROR: (Cannot install .*conflicting dependencies\.)", text)
        # pip names a -r root by its file and line; keep the message stable across temp dirs.
        message = re.sub(r"-r \S+ \(line (\d+)\)", r"-r requirements.txt (line \1)", head.group(1) if head else "")
        return {"kind": "conflict", "conflict_lines": lines, "message": message}
    m = re.search(r"ERROR: No matching distribution found for (.*)", text)
    if m:
        seen = re.search(r"ERROR: Could not find a version that satisfies the requirement (.*) \(from versions: (.*)\)",
                         text)
        return {"kind": "no_matching_distribution", "requirement": m.group(1).strip(),
                "from_versions": seen.group(2) if seen else None}
    return {"kind": "unknown", "text": text[-2000:]}


def run_scenario(sc, tmp):
    root = os.path.join(tmp, sc["name"])
    wheels = os.path.join(root, "wheels")
    inst = os.path.join(root, "installed")
    os.makedirs(wheels)
    os.makedirs(inst)
    links = []
    hashes = {}
    for name, versions in sc["packages"].items():
        for version, info in versions.items():
            fn, data = wheel_bytes(name, version, info)
            with open(os.path.join(wheels, fn), "wb") as f:
                f.write(data)
            hashes[(name, version)] = hashlib.sha256(data).hexdigest()
            attrs = ""
            if info.get("yanked") is not None:
                attrs += f' data-yanked="{html.escape(info["yanked"])}"'
            if info.get("index_requires_python"):
                attrs += f' data-requires-python="{html.escape(info["index_requires_python"])}"'
            links.append(f'<a href="{fn}"{attrs}>{fn}</a><br/>')
    page = os.path.join(wheels, "index.html")
    with open(page, "w") as f:
        f.write("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    venv = os.path.join(root, "venv")
    r = run([PY, "-m", "venv", "--without-pip", venv])
    assert r.returncode == 0, r.stderr
    vpy = os.path.join(venv, "bin", "python")
    base = [PY, "-m", "pip", "--python", vpy, "--disable-pip-version-check", "install", "--no-cache-dir",
            "--no-compile", "--no-index"]
    for name, d in sc["installed"].items():
        fn, data = wheel_bytes(name, d["version"], {"requires": d["requires"]})
        with open(os.path.join(inst, fn), "wb") as f:
            f.write(data)
        r = run(base + ["--no-deps", os.path.join(inst, fn)])
        assert r.returncode == 0, r.stderr
    req = os.path.join(root, "req.txt")
    with open(req, "w") as f:
        for line in sc["requirements"]:
            if sc["require_hashes"]:
                name, version = re.split(r"[=<>!~]+", line)[0], re.split(r"[=<>!~]+", line)[-1]
                f.write(f"{line} --hash=sha256:{hashes[(name, version)]}\n")
            else:
                f.write(line + "\n")
    cmd = base + ["--find-links", "file://" + page, "--report", os.path.join(root, "report.json"), "-r", req]
    if sc["constraints"]:
        con = os.path.join(root, "constraints.txt")
        with open(con, "w") as f:
            f.write("\n".join(sc["constraints"]) + "\n")
        cmd += ["-c", con]
    if sc["upgrade"]:
        cmd.append("--upgrade")
    if sc["pre"]:
        cmd.append("--pre")
    if sc["require_hashes"]:
        cmd.append("--require-hashes")
    r = run(cmd)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        return {"error": error_of(out)}
    with open(os.path.join(root, "report.json")) as f:
        report = json.load(f)
    requested = {re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower(): i["requested"] for i in report["install"]}
    versions = {re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower(): i["metadata"]["version"]
                for i in report["install"]}
    m = re.search(r"Installing collected packages: (.*)", out)
    order = [re.sub(r"[-_.]+", "-", n.strip()).lower() for n in m.group(1).split(",")] if m else []
    assert sorted(order) == sorted(versions), (order, versions, out)
    return {"install": [[n, versions[n], requested[n]] for n in order]}


def main():
    env = {
        "python_full_version": platform.python_version(),
        "platform_machine": platform.machine(),
    }
    out = {"generator": "gen_scenarios.py with pip " + run([PY, "-m", "pip", "--version"]).stdout.split()[1],
           "environment": env, "scenarios": []}
    with tempfile.TemporaryDirectory() as tmp:
        for sc in S:
            sc = dict(sc)
            sc["expected"] = run_scenario(sc, tmp)
            print(sc["name"], json.dumps(sc["expected"]), file=sys.stderr)
            out["scenarios"].append(sc)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
