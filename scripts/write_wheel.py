#!/usr/bin/env python3
"""write_wheel.py TREE VERSION OUT.whl -- the trainpack_step wheel of scripts/self-image.sh, from TREE.

TREE holds trainpack_step.py and trainpack_step_data/. Files are stored with explicit modes (0755 for
trainpack_step_data/bin/*, else 0644) and a fixed timestamp, so the wheel does not depend on the host's umask or
file times; the dist-info declares the `trainpack` console script (trainpack_step:main).
"""
import base64
import hashlib
import os
import sys
import zipfile

tree, version, out = sys.argv[1:4]
dist_info = "trainpack_step-%s.dist-info" % version
EPOCH = (1980, 1, 1, 0, 0, 0)
records = []


def add(zf, name, data, mode):
    info = zipfile.ZipInfo(name, EPOCH)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    records.append("%s,sha256=%s,%d" % (name, digest, len(data)))


with zipfile.ZipFile(out, "w") as zf:
    for root, dirs, files in os.walk(tree):
        dirs.sort()
        for f in sorted(files):
            path = os.path.join(root, f)
            name = os.path.relpath(path, tree).replace(os.sep, "/")
            with open(path, "rb") as fh:
                add(zf, name, fh.read(), 0o755 if name.startswith("trainpack_step_data/bin/") else 0o644)
    meta = {
        "METADATA": "Metadata-Version: 2.1\nName: trainpack-step\nVersion: %s\n"
                    "Summary: trainpack (builds gcloud's trainer image without Docker) for CI steps\n" % version,
        "WHEEL": "Wheel-Version: 1.0\nGenerator: trainpack scripts/write_wheel.py\nRoot-Is-Purelib: true\n"
                 "Tag: py3-none-any\n",
        "entry_points.txt": "[console_scripts]\ntrainpack = trainpack_step:main\n",
        "top_level.txt": "trainpack_step\ntrainpack_step_data\n",
    }
    for name, text in meta.items():
        add(zf, dist_info + "/" + name, text.encode(), 0o644)
    records.append(dist_info + "/RECORD,,")
    info = zipfile.ZipInfo(dist_info + "/RECORD", EPOCH)
    info.external_attr = 0o100644 << 16
    zf.writestr(info, "\n".join(records) + "\n", zipfile.ZIP_DEFLATED)
