#!/usr/bin/python3
"""Records how pip (Debian's /usr/bin/python3, pip 23.0.1) parses the pages in pages/ into expected.json.

Run from anywhere: /usr/bin/python3 testdata/python/index/gen_expected.py
Every page is parsed as served from PAGE_URL; HTML pages as text/html, JSON ones as
application/vnd.pypi.simple.v1+json. The C++ tests compare trainpack's parser with this output and list the
places where trainpack deliberately differs. Core-metadata attributes are not recorded: pip 23.0 predates PEP 714
(data-core-metadata) and mishandles JSON dist-info-metadata objects; the tests assert them directly.
"""
import json
import os
import sys

import pip
from pip._internal.index.collector import IndexContent, parse_links

PAGE_URL = "https://index.example.org/simple/pkg/"
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out = {"pip": pip.__version__, "page_url": PAGE_URL, "pages": {}}
    pages = os.path.join(HERE, "pages")
    for name in sorted(os.listdir(pages)):
        if "version-" in name:
            continue  # repository-version handling is not pip 23's; asserted in the tests directly
        with open(os.path.join(pages, name), "rb") as f:
            body = f.read()
        ctype = "application/vnd.pypi.simple.v1+json" if name.endswith(".json") else "text/html"
        page = IndexContent(body, ctype, encoding=None, url=PAGE_URL, cache_link_parsing=False)
        files = []
        for link in parse_links(page):
            files.append({
                "filename": link.filename,
                "url": link.url_without_fragment,
                "hashes": {k: v.lower() for k, v in (link._hashes or {}).items()},
                "requires_python": link.requires_python or None,
                "yanked": link.yanked_reason,
                "egg": link.egg_fragment or "",
                "subdirectory": link.subdirectory_fragment or "",
            })
        out["pages"][name] = files
    json.dump(out, sys.stdout if len(sys.argv) < 2 else open(sys.argv[1], "w"), indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
