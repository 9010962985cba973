"""The rule every path of a `conform export` manifest keeps, and the deformable ops' geometry from a
case's attributes: shared by conform's Python package and the tools that read an export."""
import os


def confined(root, rel):
    """root/rel, if rel keeps the rule conform applies to a device directory (harness/impl/impl_dir.c):
    relative, no '..' component, resolving inside root with symlinks followed, and a regular file if
    anything is there. Otherwise ValueError naming the path and the rule: a manifest from elsewhere
    must never make a tool read or write outside its directory."""
    if not isinstance(rel, str) or not rel:
        raise ValueError("path %r in %s/manifest.json is empty or not a string" % (rel, root))
    if os.path.isabs(rel):
        raise ValueError("path %r in %s/manifest.json is absolute (paths in a manifest are relative "
                         "to its directory)" % (rel, root))
    if ".." in rel.split("/"):
        raise ValueError("path %r in %s/manifest.json has a '..' component (paths in a manifest stay "
                         "inside its directory)" % (rel, root))
    path = os.path.join(root, rel)
    real, top = os.path.realpath(path), os.path.realpath(root)
    if os.path.commonpath([real, top]) != top:
        raise ValueError("%s resolves to %s, outside %s (symlinks followed): a device directory's "
                         "files must stay inside it" % (path, real, root))
    if os.path.lexists(path) and not os.path.isfile(path):
        raise ValueError("%s is there but is not a regular file" % path)
    return path


def deform_geometry(a):
    """(kh, kw, sh, sw, dh, dw, pads, dg) of spec 5 from a case's attrs: strides and dilations
    are the two entries data_format selects; pads are [top, bottom, left, right]"""
    kh, kw = a["ksize"]
    hw = (2, 3) if a.get("data_format", "NHWC") == "NCHW" else (1, 2)
    s, d = a.get("strides", [1, 1, 1, 1]), a.get("dilations", [1, 1, 1, 1])
    return kh, kw, s[hw[0]], s[hw[1]], d[hw[0]], d[hw[1]], a.get("pads", [0, 0, 0, 0]), int(a.get("deformable_groups", 1))
