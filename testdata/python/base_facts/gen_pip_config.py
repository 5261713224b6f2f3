#!/usr/bin/python3
"""Pip-configuration vectors from the real pip: each case's config files and PIP_* variables are given to Debian's
pip 23.0.1 (`/usr/bin/python3`), redirected into a temp dir (XDG_CONFIG_DIRS, HOME, PIP_CONFIG_FILE), and the
`pip install` option values it ends up with are recorded. Image paths: /etc/xdg/pip/pip.conf, /root/.pip/pip.conf,
/root/.config/pip/pip.conf, /cfg/pip.conf (PIP_CONFIG_FILE). Run: /usr/bin/python3 gen_pip_config.py
"""
import json
import os
import subprocess
import tempfile

CASES = [
    {"files": {}, "env": {}},
    {"files": {"/etc/xdg/pip/pip.conf": "[global]\nindex-url = https://corp.example/simple\ntimeout = 60\n"},
     "env": {}},
    {"files": {"/etc/xdg/pip/pip.conf": "[global]\nindex-url = https://a/simple\n",
               "/root/.pip/pip.conf": "[global]\nindex_url = https://legacy/simple\nextra-index-url = https://x/simple\n",
               "/root/.config/pip/pip.conf": "[global]\nINDEX-URL = https://new/simple\n"},
     "env": {}},
    {"files": {"/root/.config/pip/pip.conf": "[global]\nindex-url = https://g/simple\n[install]\nindex-url = https://i/simple\n"
                                             "no-compile = yes\n"},
     "env": {"PIP_INDEX_URL": "https://env/simple"}},
    {"files": {"/root/.config/pip/pip.conf": "[install]\nindex-url = https://i/simple\n",
               "/cfg/pip.conf": "[global]\nextra-index-url =\n    https://one/simple\n    https://two/simple\n"
                                "break-system-packages = true\n"},
     "env": {"PIP_CONFIG_FILE": "/cfg/pip.conf"}},
    {"files": {"/cfg/pip.conf": "[global]\nfind-links = /wheels\n"},
     "env": {"PIP_CONFIG_FILE": "/cfg/pip.conf", "PIP_FIND_LINKS": "/a /b", "PIP_NO_INDEX": "1", "PIP_PRE": "on"}},
    {"files": {}, "env": {"PIP_NO_COMPILE": "1"}},
    {"files": {}, "env": {"PIP_NO_COMPILE": "0", "PIP_BREAK_SYSTEM_PACKAGES": "TRUE", "PIP_PREFER_BINARY": "y"}},
    {"files": {"/etc/xdg/pip/pip.conf": "[global]\nonly-binary = :all:\n"},
     "env": {"PIP_NO_BINARY": "Foo_Bar,baz", "PIP_ONLY_BINARY": ":all:,:none:,numpy"}},
    {"files": {}, "env": {"PIP_ONLY_BINARY": ":all:", "PIP_NO_BINARY": ":none:,Some.Pkg"}},
    {"files": {"/root/.config/pip/pip.conf": "[global]\n# a comment\n; another\nindex-url = https://x/simple\n"
                                             "trusted-host = x y\n[freeze]\nindex-url = https://ignored/simple\n"},
     "env": {"PIP_EXTRA_INDEX_URL": "https://e1/simple  https://e2/simple", "PIP_TRUSTED_HOST": ""}},
    {"files": {"/root/.config/pip/pip.conf": "[global]\nno-deps = true\nupgrade-strategy = eager\n"},
     "env": {"PIP_UPGRADE": "yes", "PIP_IGNORE_INSTALLED": "false", "PIP_REQUIRE_HASHES": "1", "PIP_USER": "0",
             "PIP_TARGET": "/opt/t"}},
    {"files": {"/root/.config/pip/pip.conf": "[global]\nindex-url = https://x/simple\n"},
     "env": {"PIP_CONFIG_FILE": "/dev/null"}},
]

PROBE = r"""
import json
from pip._internal.commands import create_command
o, _ = create_command("install").parse_args([])
fc = o.format_control
print(json.dumps({
    "index_url": o.index_url, "extra_index_urls": o.extra_index_urls, "find_links": o.find_links,
    "trusted_hosts": o.trusted_hosts, "no_index": bool(o.no_index), "pre": bool(o.pre), "compile": bool(o.compile),
    "break_system_packages": bool(o.override_externally_managed), "prefer_binary": bool(o.prefer_binary),
    "require_hashes": bool(o.require_hashes), "user": bool(o.use_user_site), "no_deps": bool(o.ignore_dependencies),
    "ignore_installed": bool(o.ignore_installed), "upgrade": bool(o.upgrade), "upgrade_strategy": o.upgrade_strategy,
    "only_binary": sorted(fc.only_binary), "no_binary": sorted(fc.no_binary), "target": o.target_dir or "",
}))
"""

out = []
for case in CASES:
    with tempfile.TemporaryDirectory() as tmp:
        for path, text in case["files"].items():
            host = tmp + path
            os.makedirs(os.path.dirname(host), exist_ok=True)
            with open(host, "w") as f:
                f.write(text)
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp + "/root", "XDG_CONFIG_DIRS": tmp + "/etc/xdg"}
        for k, v in case["env"].items():
            env[k] = tmp + v if k == "PIP_CONFIG_FILE" and v != "/dev/null" else v
        res = subprocess.run(["/usr/bin/python3", "-c", PROBE], env=env, capture_output=True, text=True, check=True)
        out.append(dict(case, expected=json.loads(res.stdout)))
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pip_config.json"), "w") as f:
    json.dump({"generator": "pip 23.0.1 (Debian 12)", "cases": out}, f, indent=1)
