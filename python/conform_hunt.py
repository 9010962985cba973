"""conform hunt over a Python kernel: hunt(kernel, op=..., seconds=...).

The kernel is any callable kernel(op, inputs, attrs) -> {output name: array}, with inputs a dict of
float32 numpy arrays by the op's input names and attrs the case's attributes (`conform list`). The
hunt runs `conform hunt OP --impl dir:WORK --runner ...`: each round conform exports its
candidates, and the runner (this file with --relay) hands the round's directory to the Python
process that called hunt(), which runs the kernel on every case and writes its outputs where the
manifest says; conform then judges, shrinks and writes the minimal failures to FOUND.json.

    from conform_hunt import hunt
    found = hunt(my_roi_align, op="roi_align", seconds=30)   # [] when nothing was found

numpy only. `conform` is found as $CONFORM, on PATH, or build/conform beside python/.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


def _conform_binary(conform):
    if conform:
        return conform
    if os.environ.get("CONFORM"):
        return os.environ["CONFORM"]
    built = os.path.join(HERE, "..", "build", "conform")
    if os.path.exists(built):
        return os.path.abspath(built)
    found = shutil.which("conform")
    if not found:
        raise FileNotFoundError("conform not found: set $CONFORM, put conform on PATH or build it (make)")
    return found


def _save(path, arr):
    import numpy as np
    tmp = path + ".tmp.npy"
    np.save(tmp, np.ascontiguousarray(arr, dtype=np.float32))
    os.replace(tmp, path)


def _kernel_name(kernel):
    return "%s.%s" % (getattr(kernel, "__module__", "?"), getattr(kernel, "__qualname__", repr(kernel)))


def _write_runner(root, record):
    """root/runner.json (docs/runners.md, schema conform-runner 1), atomically: what ran (the
    callable, for the reports) and each case it wrote."""
    tmp = os.path.join(root, "runner.json.tmp%d" % os.getpid())
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(root, "runner.json"))


def run_round(kernel, root):
    """Runs kernel on every case of the export in root and records it in root/runner.json; a case
    the kernel raises on writes nothing (conform reports its outputs missing, a finding)."""
    import numpy as np
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    name = _kernel_name(kernel)
    record = {"schema": "conform-runner", "schema_version": 1, "runner": "conform_hunt (a Python callable over the relay)",
              "ops": {}, "cases": {}}
    for case in manifest.get("cases", []):
        if "expect_error" in case or "not_applicable" in case or "invalid" in case:
            continue
        record["ops"][case["op"]] = {"supported": True, "call": name}
        inputs = {n: np.load(os.path.join(root, rel)) for n, rel in case.get("inputs", {}).items()}
        try:
            got = kernel(case["op"], inputs, case.get("attrs", {}))
        except Exception as e:  # the kernel's own failure: reported by conform as missing outputs
            # not declared skipped: a skip is a case the runner declines (not counted), a raise is a find
            sys.stderr.write("conform_hunt: %s: %s: %s\n" % (case.get("id"), type(e).__name__, e))
            continue
        for oname, o in case.get("outputs", {}).items():
            if o.get("computed", True) and oname in got:
                _save(os.path.join(root, o["path"]), got[oname])
        record["cases"][case["id"]] = {"status": "written"}
    _write_runner(root, record)


def _serve(serve_round, sock, proc, errors):
    sock.settimeout(0.2)
    while proc.poll() is None:
        try:
            conn, _ = sock.accept()
        except socket.timeout:
            continue
        with conn:
            root = conn.makefile("r").readline().strip()
            try:
                serve_round(root)
                conn.sendall(b"0\n")
            except Exception as e:  # a broken round ends the hunt with the reason
                errors.append("%s: %s" % (type(e).__name__, e))
                conn.sendall(b"1\n")


def hunt_rounds(serve_round, op, seconds=10, seed=1, out=None, conform=None, batch=64, finite=False, extra=(),
                waivers=None, stream=False):
    """The hunt loop of hunt() for any round server: serve_round(root) runs every case of the export
    in root and writes its outputs (a runner in this process, so whatever it imports is imported
    once); seconds, seed or batch None: conform hunt's default (or one extra names). Returns
    (conform's exit status, the found cases). stream: conform's progress and findings
    go to this process's stderr as they come (else they are printed at the end, with --quiet)."""
    work = tempfile.mkdtemp(prefix="conform_hunt_")
    extra = list(extra)
    if "--out" in extra[:-1]:   # the caller's --out among conform's options
        out = extra.pop(extra.index("--out") + 1)
        extra.remove("--out")
    out = out or os.path.join(work, "FOUND.json")
    path = os.path.join(work, "relay.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(1)
    runner = "%s %s --relay %s {dir}" % (sys.executable, os.path.abspath(__file__), path)
    cmd = [_conform_binary(conform), "hunt", op, "--impl", "dir:" + os.path.join(work, "rounds"), "--runner", runner,
           "--out", out]
    for opt, v in (("--seconds", seconds), ("--seed", seed), ("--batch", batch)):   # None: conform's default
        cmd += [opt, str(v)] if v is not None else []
    cmd += [] if stream else ["--quiet"]
    cmd += ["--finite"] if finite else []
    cmd += ["--waivers", waivers] if waivers else []
    cmd += list(extra)
    proc = subprocess.Popen(cmd, stderr=None if stream else subprocess.PIPE, text=True)
    errors = []
    server = threading.Thread(target=_serve, args=(serve_round, sock, proc, errors), daemon=True)
    server.start()
    _, err = proc.communicate()
    server.join()
    sock.close()
    if err:
        sys.stderr.write(err)
    if errors:
        raise RuntimeError("conform hunt failed: %s" % "; ".join(errors))
    found = []
    if proc.returncode == 1 and os.path.exists(out):
        with open(out) as f:
            found = json.load(f)["cases"]
    if not out.startswith(work):
        shutil.rmtree(work, ignore_errors=True)
    return proc.returncode, found


def hunt(kernel, op, seconds=10, seed=1, out=None, conform=None, batch=64, finite=False, extra=(), waivers=None):
    """Hunts kernel over op for seconds; returns the minimal failing cases (the suite entries of
    FOUND.json, written to out when given). waivers: a waiver file (docs/hunt.md, "Waivers"); a
    waived find is not returned. Raises RuntimeError on bad usage of conform."""
    rc, found = hunt_rounds(lambda root: run_round(kernel, root), op, seconds, seed, out, conform, batch, finite,
                            extra, waivers)
    if rc == 2:
        raise RuntimeError("conform hunt failed: bad usage (its message is above)")
    return found


def _relay(path, root):
    """--relay SOCKET DIR: the runner conform starts each round; waits for the hunting process."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall((root + "\n").encode())
    reply = s.makefile("r").readline().strip()
    return 0 if reply == "0" else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--relay":
        sys.exit(_relay(sys.argv[2], sys.argv[3]))
    sys.stderr.write("usage: conform_hunt.py --relay SOCKET DIR (started by conform hunt; use hunt() from Python)\n")
    sys.exit(2)
