#!/usr/bin/env python3
"""Where `make install PREFIX=...` puts conform's Python helper, and the install itself.

    python_site.py PREFIX                      prints the folder
    python_site.py PREFIX --install DESTDIR --version V [--command NAME=SCRIPT]... FILE.py|PACKAGE_DIR...

The folder is the one of PREFIX this interpreter already reads (on Debian: /usr ->
/usr/lib/python3/dist-packages, /usr/local -> /usr/local/lib/python3.X/dist-packages), so the
helper imports with no PYTHONPATH. Any other PREFIX gets PREFIX/lib/python3.X/site-packages, and
PREFIX/bin/python3 becomes that prefix's interpreter: a pyvenv.cfg beside it makes Python read that
folder, and the system's packages too (numpy, pytest), the way a virtual environment does; an
existing PREFIX/bin/python3 is left alone.

The install copies the files and packages (conform_check.py and conform/__init__.py learn where the
installed binary is), writes a dist-info whose entry points (pytest11) load conform_pytest.py and
conform.pytest_plugin as pytest plugins, and installs each --command script as PREFIX/bin/NAME with
that interpreter in its #! line (conform-torch: tools/torch_runner.py).
"""
import argparse
import os
import shutil
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
    """FILE.py files go into the site folder as modules, a folder (python/conform) as a package;
    conform_check.py and conform/__init__.py learn where the installed binary is."""
    site, read = site_dir(prefix)
    root = destdir + site
    installed = []
    conform_exe = "INSTALLED_CONFORM = %r" % os.path.join(prefix, "bin", "conform")
    for src in files:
        if os.path.isdir(src):
            pkg = os.path.basename(os.path.normpath(src))
            shutil.rmtree(os.path.join(root, pkg), ignore_errors=True)   # no module of an older install stays
            for name in sorted(os.listdir(src)):
                if not name.endswith(".py"):
                    continue
                with open(os.path.join(src, name)) as f:
                    text = f.read()
                if name == "__init__.py":
                    text = text.replace("INSTALLED_CONFORM = None", conform_exe, 1)
                write(os.path.join(root, pkg, name), text)
                installed.append(pkg + "/" + name)
            continue
        with open(src) as f:
            text = f.read()
        if os.path.basename(src) == "conform_check.py":
            text = text.replace("INSTALLED_CONFORM = None", conform_exe, 1)
        write(os.path.join(root, os.path.basename(src)), text)
        installed.append(os.path.basename(src))
    info = os.path.join(root, "conform_check-%s.dist-info" % version)
    write(os.path.join(info, "METADATA"), "Metadata-Version: 2.1\nName: conform-check\nVersion: %s\n"
          "Summary: judge a kernel's outputs with conform, from Python and pytest\n" % version)
    # two pytest plugins: the conform_check fixtures, and conform.parametrize's session report
    write(os.path.join(info, "entry_points.txt"), "[pytest11]\nconform = conform_pytest\n"
          "conform_suite = conform.pytest_plugin\n")
    write(os.path.join(info, "top_level.txt"), "".join(sorted({n.split("/")[0].replace(".py", "") + "\n"
                                                               for n in installed})))
    write(os.path.join(info, "RECORD"), "".join("%s,,\n" % n for n in
          tuple(installed) + tuple(os.path.basename(info) + "/" + f for f in
          ("METADATA", "entry_points.txt", "top_level.txt", "RECORD"))))
    py = os.path.join(prefix, "bin", "python3") if not read else os.path.realpath(sys.executable)
    return py, read


def install_command(destdir, prefix, name, script, python):
    """PREFIX/bin/NAME: script with PREFIX's interpreter in its #! line (it imports the package)."""
    with open(script) as f:
        text = f.read()
    lines = text.split("\n", 1)
    if lines[0].startswith("#!"):
        text = lines[1]
    write(destdir + os.path.join(prefix, "bin", name), "#!%s\n%s" % (python, text), 0o755)


def prefix_python(prefix, destdir, read):
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
    ap.add_argument("--command", action="append", default=[], metavar="NAME=SCRIPT",
                    help="also install SCRIPT as PREFIX/bin/NAME, run by the interpreter that reads the site folder")
    ap.add_argument("files", nargs="*")
    a = ap.parse_intermixed_args()
    if a.install is None:
        print(site_dir(a.prefix)[0])
    else:
        prefix = os.path.abspath(a.prefix)
        py, read = install(prefix, a.install, a.version, a.files)
        prefix_python(prefix, a.install, read)
        for c in a.command:
            name, script = c.split("=", 1)
            install_command(a.install, prefix, name, script, py)


if __name__ == "__main__":
    main()
