"""The path rule of a device directory on the Python side: tools/export_dir.confined,
which tools/torch_runner.py applies to every file it reads, removes or writes, refuses an empty,
absolute or '..' path, a symlink leaving the directory (to a file or to /dev/zero), and a FIFO,
a socket or a directory in place of a file; then, where torch is present, the runner itself on an
export whose manifest names paths outside it: it exits 0, writes nothing outside the directory
and still writes the cases whose paths keep the rule.

usage: python3 tests/python/test_manifest_paths.py [build/conform]"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from export_dir import confined  # noqa: E402

CONFORM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CONFORM", "build/conform"))


def refused(root, rel, words):
    try:
        confined(root, rel)
    except ValueError as e:
        assert words in str(e), "%r: %s (wanted %r)" % (rel, e, words)
        return
    raise AssertionError("%r was accepted" % rel)


def check_rule(tmp):
    d = os.path.join(tmp, "dir")
    os.makedirs(os.path.join(d, "sub"))
    with open(os.path.join(tmp, "outside.npy"), "w") as f:
        f.write("x")
    with open(os.path.join(d, "sub", "ok.npy"), "w") as f:
        f.write("x")
    os.symlink(os.path.join(tmp, "outside.npy"), os.path.join(d, "escape.npy"))
    os.symlink("/dev/zero", os.path.join(d, "zero.npy"))
    os.symlink(tmp, os.path.join(d, "up"))
    os.mkfifo(os.path.join(d, "fifo.npy"))
    os.mkdir(os.path.join(d, "dir.npy"))
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(d, "sock.npy"))
    try:
        assert confined(d, "sub/ok.npy") == os.path.join(d, "sub/ok.npy")
        assert confined(d, "sub/new.npy") == os.path.join(d, "sub/new.npy")   # to be written
        refused(d, "", "empty")
        refused(d, "/etc/passwd", "absolute")
        refused(d, "../outside.npy", "'..'")
        refused(d, "sub/../../outside.npy", "'..'")
        refused(d, "escape.npy", "outside")
        refused(d, "zero.npy", "outside")
        refused(d, "up/outside.npy", "outside")
        refused(d, "up/new.npy", "outside")              # a write through a symlinked folder
        refused(d, "fifo.npy", "not a regular file")
        refused(d, "sock.npy", "not a regular file")
        refused(d, "dir.npy", "not a regular file")
    finally:
        s.close()
    print("confined: 2 paths kept, 11 refused")


def check_runner(tmp):
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        print("SKIPPED the torch runner on a hostile manifest: no numpy, torch and torchvision here")
        return
    exp = os.path.join(tmp, "box", "exp")
    subprocess.run([CONFORM, "export", "cases/smoke.json", "--filter", "smoke/fwd_grid", "--out", exp],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    mpath = os.path.join(exp, "manifest.json")
    with open(mpath) as f:
        m = json.load(f)
    hostile = ["../escape_dotdot.npy", os.path.join(tmp, "escape_abs.npy"), "up/escape_link.npy"]
    os.symlink(tmp, os.path.join(exp, "up"))
    for case, path in zip(m["cases"], hostile):
        case["outputs"]["output"]["path"] = path
    kept = m["cases"][len(hostile)]["outputs"]["output"]["path"]
    with open(mpath, "w") as f:
        json.dump(m, f)
    r = subprocess.run([sys.executable, "tools/torch_runner.py", exp, "--quiet"], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout
    outside = [n for n in os.listdir(tmp) if n.startswith("escape")] + \
        [n for n in os.listdir(os.path.join(tmp, "box")) if n != "exp"]
    assert not outside, "written outside the export: %s" % outside
    assert os.path.isfile(os.path.join(exp, kept)), "a case whose paths keep the rule is still run"
    print("torch runner: 3 hostile output paths refused, nothing written outside the export")


def main():
    tmp = tempfile.mkdtemp(prefix="conform_manifest_paths_")
    try:
        check_rule(tmp)
        check_runner(tmp)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
