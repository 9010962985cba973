#!/usr/bin/env python3
"""Where `make install PREFIX=...` puts conform's Python helper, and the install itself.

    python_site.py PREFIX                      prints the folder
    python_site.py PREFIX --install DESTDIR --version V FILE.py...

The folder is the one of PREFIX this interpreter already reads (on Debian: /usr ->
/usr/lib/python3/dist-packages, /usr/local -> /usr/local/lib/python3.X/dist-packages), so the
helper imports with no PYTHONPATH. Any other PREFIX gets PREFIX/lib/python3.X/site-packages, and
PREFIX/bin/python3 becomes that prefix's interpreter: a pyvenv.cfg beside it makes Python read that
folder, and the system's packages too (numpy, pytest), the way a virtual environment does; an
existing PREFIX/bin/python3 is left alone.

The install copies the files (conform_check.py learns where the installed binary is) and writes a
dist-info whose entry point (pytest11) loads conform_pytest.py as a pytest plugin.
"""
import argparse
import os
import sys
import sysconfig


def site_dir(prefix):
    prefix = os.path.abspath(prefix).rstrip("/")
    for p in sys.path:
        if p.startswith(prefix + "/lib/") and os.path.basename(p) in ("dist-packages", "site-packages"):
            return p, True
    return sysconfig.get_path("purelib", "posix_prefix", {"base": prefix, "platbase": prefix}), False


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def install(prefix, destdir, version, files):
    site, read = site_dir(prefix)
    root = destdir + site
    for src in files:
        with open(src) as f:
            text = f.read()
        if os.path.basename(src) == "conform_check.py":
            text = text.replace("INSTALLED_CONFORM = None", "INSTALLED_CONFORM = %r" % os.path.join(prefix, "bin", "conform"), 1)
        write(os.path.join(root, os.path.basename(src)), text)
    info = os.path.join(root, "conform_check-%s.dist-info" % version)
    write(os.path.join(info, "METADATA"), "Metadata-Version: 2.1\nName: conform-check\nVersion: %s\n"
          "Summary: judge a kernel's outputs with conform check, from Python and pytest\n" % version)
    write(os.path.join(info, "entry_points.txt"), "[pytest11]\nconform = conform_pytest\n")
    write(os.path.join(info, "top_level.txt"), "conform_check\nconform_pytest\n")
    write(os.path.join(info, "RECORD"), "".join("%s,,\n" % n for n in
          ("conform_check.py", "conform_pytest.py") + tuple(os.path.basename(info) + "/" + f for f in
          ("METADATA", "entry_points.txt", "top_level.txt", "RECORD"))))
    if not read:   # a prefix of its own: its bin/python3 reads its site folder
        py = destdir + os.path.join(prefix, "bin", "python3")
        if not os.path.lexists(py):
            os.makedirs(os.path.dirname(py), exist_ok=True)
            os.symlink(os.path.realpath(sys.executable), py)
            write(destdir + os.path.join(prefix, "pyvenv.cfg"),
                  "home = %s\ninclude-system-site-packages = true\nversion = %s\n"
                  % (os.path.dirname(os.path.realpath(sys.executable)), ".".join(map(str, sys.version_info[:3]))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefix")
    ap.add_argument("--install", metavar="DESTDIR", help="install FILE... (DESTDIR may be empty)")
    ap.add_argument("--version", default="0")
    ap.add_argument("files", nargs="*")
    a = ap.parse_intermixed_args()
    if a.install is None:
        print(site_dir(a.prefix)[0])
    else:
        install(os.path.abspath(a.prefix), a.install, a.version, a.files)


if __name__ == "__main__":
    main()
