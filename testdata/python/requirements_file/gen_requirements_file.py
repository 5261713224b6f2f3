#!/usr/bin/python3
"""Regenerates expected.json: what Debian's pip 23.0.1 makes of each cases/*.txt.

Run with Debian's interpreter (it bundles pip 23.0.1):  /usr/bin/python3 gen_requirements_file.py
pip runs with cases/ as its working directory (local paths on requirement lines resolve there, like /usr/app
in an image); absolute paths under it are written as /usr/app in the output.
"""
import glob
import json
import logging
import optparse
import os
import sys

import pip
from pip._internal.index.collector import LinkCollector
from pip._internal.index.package_finder import PackageFinder
from pip._internal.models.format_control import FormatControl
from pip._internal.models.search_scope import SearchScope
from pip._internal.models.selection_prefs import SelectionPreferences
from pip._internal.network.session import PipSession
from pip._internal.req.constructors import install_req_from_parsed_requirement
from pip._internal.req.req_file import parse_requirements
from pip._internal.vcs import is_url

logging.disable(logging.CRITICAL)
sys.setrecursionlimit(200)

ENV = {
    "INDEX_USER": "user",
    "INDEX_TOKEN": "s3cr3t",
    "INDEX_HOST": "pypi.internal.example",
    "PKG_VERSION": "1.2.3",
    "PKG_NAME": "envpkg",
    "EMPTY_TRAINPACK_VAR": "",
}
CLI_INDEX = "https://pypi.org/simple"

here = os.path.dirname(os.path.abspath(__file__))
cases_dir = os.path.join(here, "cases")


def scrub(s):
    return s.replace(cases_dir, "/usr/app") if isinstance(s, str) else s


def run(name):
    session = PipSession()
    trusted = []
    session.add_trusted_host = lambda host, source=None, suppress_logging=False: trusted.append(host)
    scope = SearchScope.create(find_links=[], index_urls=[CLI_INDEX], no_index=False)
    finder = PackageFinder.create(
        LinkCollector(session, scope),
        SelectionPreferences(allow_yanked=True, format_control=FormatControl(set(), set())),
    )
    options = optparse.Values({"require_hashes": False, "features_enabled": []})
    lines = []
    result = {"file": name, "lines": lines}
    try:
        for pr in parse_requirements(name, session, finder=finder, options=options):
            filename, lineno = pr.comes_from[3:].rsplit(" (line ", 1)
            opts = pr.options or {}
            entry = {
                "file": filename,
                "line": int(lineno.rstrip(")")),
                "requirement": pr.requirement,
                "editable": pr.is_editable,
                "constraint": pr.constraint,
                "hashes": opts.get("hashes", {}),
                "global_options": opts.get("global_options", []),
            }
            ireq = install_req_from_parsed_requirement(pr)
            link = ireq.link
            # Our classification: a PEP 508 "name @ url" stays named unless the URL is a VCS one.
            if link is None:
                kind = "named"
            elif link.is_vcs:
                kind = "vcs"
            elif ireq.req is not None and ireq.req.url:
                kind = "named"
            elif is_url(pr.requirement):
                kind = "url"
            else:
                kind = "path"
            entry.update(
                kind=kind,
                req=str(ireq.req) if ireq.req is not None else None,
                marker=str(ireq.markers) if ireq.markers is not None else None,
                extras=sorted(ireq.extras),
                link=scrub(link.url) if link is not None else None,
            )
            lines.append(entry)
    except RecursionError:
        result["error"] = "RecursionError"
        del lines[:]
    except Exception as e:  # pip's InstallationError, RequirementsFileParseError, CommandError, InvalidMarker...
        result["error"] = scrub(f"{type(e).__name__}: {e}")
    fc = finder.format_control
    result["options"] = {
        "index_urls": finder.index_urls,
        "no_index": finder.search_scope.no_index,
        "find_links": [scrub(f) for f in finder.find_links],
        "no_binary": sorted(fc.no_binary),
        "only_binary": sorted(fc.only_binary),
        "prefer_binary": finder._candidate_prefs.prefer_binary,
        "pre": finder._candidate_prefs.allow_all_prereleases,
        "require_hashes": bool(options.require_hashes),
        "trusted_hosts": trusted,
    }
    return result


def main():
    os.environ.update(ENV)
    for var in list(os.environ):
        if var.startswith("UNSET_TRAINPACK"):
            del os.environ[var]
    os.chdir(cases_dir)
    names = sorted(os.path.relpath(p) for p in glob.glob("*.txt"))
    out = {
        "generator": f"pip {pip.__version__}, Python {sys.version.split()[0]}",
        "env": ENV,
        "cli_index_url": CLI_INDEX,
        "cases": [run(n) for n in names],
    }
    with open(os.path.join(here, "expected.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
