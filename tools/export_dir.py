"""What the tools that read a `conform export` directory share: a fresh copy of the directory
with its manifest, and the deformable ops' geometry from a case's attributes."""
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


def deform_geometry(a):
    """(kh, kw, sh, sw, dh, dw, pads, dg) of spec 5 from a case's attrs: strides and dilations
    are the two entries data_format selects; pads are [top, bottom, left, right]"""
    kh, kw = a["ksize"]
    hw = (2, 3) if a.get("data_format", "NHWC") == "NCHW" else (1, 2)
    s, d = a.get("strides", [1, 1, 1, 1]), a.get("dilations", [1, 1, 1, 1])
    return kh, kw, s[hw[0]], s[hw[1]], d[hw[0]], d[hw[1]], a.get("pads", [0, 0, 0, 0]), int(a.get("deformable_groups", 1))
