"""Shared by the tools that write a device's outputs into an export directory (numpy-only
emulations, output fix-ups): a fresh copy of the directory and its manifest."""
import json
import os
import shutil
import sys


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
