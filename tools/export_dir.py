"""What the tools that read a `conform export` directory share: a fresh copy of the directory
with its manifest, the rule every path of a manifest keeps, and the deformable ops' geometry from
a case's attributes."""
import json
import os
import shutil
import sys

# the path rule and the geometry live in the conform package (python/conform/_manifest.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from conform._manifest import confined, deform_geometry  # noqa: E402,F401


def copy_export(argv, usage, n_extra=0):
    """argv = DIR COPY [n_extra more]: copies DIR (outputs included) to COPY, a fresh directory;
    returns (COPY, manifest, the extra arguments). Exits with usage on a wrong argument count."""
    if len(argv) != 2 + n_extra:
        sys.exit(usage)
    src, dst = argv[0], argv[1]
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    with open(os.path.join(dst, "manifest.json")) as f:
        return dst, json.load(f), argv[2:]
