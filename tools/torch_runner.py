#!/usr/bin/env python3
"""Runs the cases of a `conform export` directory on a PyTorch device and writes their outputs,
for `conform run --impl dir:DIR` to judge (the contract: docs/runners.md). `make install` installs
it as PREFIX/bin/conform-torch.

    conform export cases/conformance.json --out /tmp/exp --dtype float32
    conform-torch /tmp/exp --device cpu      # or cuda, or npu (torch_npu); from the repository:
                                             # /usr/bin/python3 tools/torch_runner.py
    conform run cases/conformance.json --impl dir:/tmp/exp --report-dir /tmp/exp-report \
        --waivers cases/waivers_pytorch_cpu.json

One op table per device (conform.torch.TABLES: python/conform/torch.py, the library a Python test
calls): cpu and cuda run torchvision / PyTorch / mmcv; npu calls
the torch_npu functions that reach the Ascend kernels the seed documents describe (sources in
docs/devices.md and beside each entry of the npu table). An op a device's table cannot run here
(its library is missing, a release known to be wrong) is declared unsupported up front, with its
reason, in DIR/runner.json: conform reports its cases not_implemented, never failed.
DIR/runner.json also records what ran (host, device, library versions, the exact call per op)
and, per case, written or skipped with the reason. A case the device cannot take (an unsupported
dtype, an input torch would read out of bounds with, an exception, an output that is not on the
device) is skipped with its reason and left unwritten (conform reports it missing), never a
crash: the cases run in a forked child, and a kernel that kills it (a segfault) skips its case.
Exit 0 after the run whatever the cases did; 2 on misuse (no manifest, a manifest that is not
conform-export, a bad option).
"""
import argparse
import fnmatch
import json
import os
import platform
import re
import signal
import socket
import sys
import tempfile

import numpy as np
import torch

# the op tables are the conform package's: installed beside this command (PREFIX/bin/conform-torch),
# or python/ of the repository this file is in
_REPO_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
if os.path.isdir(os.path.join(_REPO_PY, "conform")):
    sys.path.insert(0, _REPO_PY)
import conform.torch as T  # noqa: E402
from conform.torch import *  # noqa: E402,F401,F403  (the tables and routes, as before the move)
from conform.torch import (DTYPES, Skip, Unsupported, DeviceError, CANNOT_RUN, mmcv,  # noqa: E402,F401
                           torchvision, cpu_name, cann_version, run_case)

SCHEMA = "conform-export"
SUPPORTED_SCHEMA_VERSIONS = (1,)


# ---- command line ---------------------------------------------------------------------------------
def die(msg):
    print("conform-torch: error: %s" % msg, file=sys.stderr)
    sys.exit(2)


def load_manifest(root):
    path = os.path.join(root, "manifest.json")
    try:
        with open(path) as f:
            m = json.load(f)
    except OSError as e:
        die("%s: %s (make it with: build/conform export ... --out %s)" % (path, e.strerror, root))
    except ValueError as e:
        die("%s: not valid JSON: %s" % (path, e))
    if not isinstance(m, dict) or m.get("schema") != SCHEMA:
        die("%s: schema must be %r" % (path, SCHEMA))
    if m.get("schema_version") not in SUPPORTED_SCHEMA_VERSIONS:
        die("%s: schema_version %r: this runner reads %s" % (path, m.get("schema_version"),
                                                             SUPPORTED_SCHEMA_VERSIONS))
    if m.get("dtype") not in DTYPES:
        die("%s: dtype %r: must be one of %s" % (path, m.get("dtype"), ", ".join(DTYPES)))
    if not isinstance(m.get("cases"), list):
        die("%s: cases must be a list" % path)
    return m




def provenance(args, m, info):
    """DIR/runner.json without its cases: what ran, where, with which libraries."""
    versions = {"python": platform.python_version(), "torch": torch.__version__,
                "torchvision": getattr(torchvision, "__version__", None), "mmcv": getattr(mmcv, "__version__", None),
                "numpy": np.__version__}
    for k in ("torch_npu", "cann"):
        if k in info:
            versions[k] = info.pop(k)
    return dict({"schema": "conform-runner", "schema_version": 1, "runner": "conform-torch (tools/torch_runner.py)",
                 "host": socket.gethostname(), "dtype": m["dtype"],
                 "compute_dtype": args.compute_dtype or m["dtype"], "versions": versions,
                 "mmcv_from_main": bool(args.mmcv_from_main)}, **info)


def write_json_atomic(path, obj):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    hunting = any(a == "--hunt" or a.startswith("--hunt=") for a in (sys.argv[1:] if argv is None else argv))
    if not hunting:   # a hunt has no directory: its rounds' are conform's
        p.add_argument("dir", help="a directory written by conform export (DIR/manifest.json)")
    p.add_argument("--hunt", metavar="OP",
                   help="run `conform hunt OP` against this device, torch imported once for all its rounds; "
                        "the options this runner does not know (--seconds, --seed, --finite, --waivers, --out, "
                        "--batch, ...) go to conform hunt (docs/hunt.md)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda", "npu"))
    p.add_argument("--compute-dtype", choices=sorted(DTYPES),
                   help="compute in this dtype and round the outputs to the manifest's "
                        "(e.g. float32 for a float16 export); default: the manifest's dtype")
    p.add_argument("--filter", default="*", help="glob over case ids")
    p.add_argument("--op", action="append", help="only this op (repeatable)")
    p.add_argument("--threads", type=int, help="torch.set_num_threads")
    p.add_argument("--quiet", action="store_true", help="no line per skipped case")
    p.add_argument("--mmcv-from-main", action="store_true",
                   help="npu: mmcv was built from main at or after 6ba6b7e6 with FORCE_NPU=1 (its version "
                        "string cannot tell; releases up to 2.2.0 pass the wrong layouts to RoiAlignRotated)")
    p.add_argument("--no-isolate", action="store_true",
                   help="run in this process (a crashing torch kernel then ends the run)")
    if not hunting:
        return p.parse_args(argv)
    args, args.hunt_args = p.parse_known_args(argv)   # the rest, in order, is conform hunt's
    args.dir = None
    return args


def selected(m, args):
    return [c for c in m["cases"]
            if fnmatch.fnmatchcase(str(c.get("id", "?")), args.filter) and (not args.op or c.get("op") in args.op)]


def run_cases(cases, args, dtype_name, report, starting=lambda i: None, opened=lambda info: None):
    """Runs cases in this process: opened(provenance) once the device is open, starting(index)
    before each case, report(index, None, or (skip reason, unsupported)) after it."""
    T.MMCV_FROM_MAIN = args.mmcv_from_main
    try:
        dev, info = T.open_device(args.device)
    except DeviceError as e:
        die(str(e))
    opened(info)
    if args.threads:
        torch.set_num_threads(args.threads)
    compute = DTYPES[args.compute_dtype][0] if args.compute_dtype else None
    for i, case in enumerate(cases):
        starting(i)
        try:
            run_case(args.dir, case, dtype_name, dev, compute)
            report(i, None)
        except Skip as e:
            report(i, (str(e), isinstance(e, Unsupported)))


def run_isolated(cases, args, dtype_name, report, opened):
    """The cases in a forked child; when a torch kernel kills it (a segfault, SIGFPE), the case it
    was running is reported skipped with the signal and a new child goes on with the next case."""
    start = 0
    while start < len(cases):
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:   # child: one line per event: "P info" once, "S i" before a case, "D i reason" after it
            os.close(rd)
            out = os.fdopen(wr, "w", buffering=1)

            def tell(i, reason):
                out.write("D %d %s\n" % (start + i, json.dumps(reason)))
            try:
                run_cases(cases[start:], args, dtype_name, tell,
                          starting=lambda i: out.write("S %d\n" % (start + i)),
                          opened=lambda info: out.write("P %s\n" % json.dumps(info)))
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 2
            out.flush()
            os._exit(code)
        os.close(wr)
        running, done_upto = None, start
        with os.fdopen(rd) as events:
            for line in events:
                kind, rest = line[0], line[2:].rstrip("\n")
                if kind == "P":
                    opened(json.loads(rest))
                elif kind == "S":
                    running = int(rest)
                else:
                    idx, reason = rest.split(" ", 1)
                    report(int(idx), json.loads(reason))
                    running, done_upto = None, int(idx) + 1
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0:
            sys.exit(os.WEXITSTATUS(status))   # misuse found in the child (e.g. no such device)
        if running is None:
            start = done_upto if os.WIFSIGNALED(status) else len(cases)
            continue
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        report(running, ("the torch kernel killed the process (signal %d, %s)"
                         % (sig, signal.Signals(sig).name if sig else "no signal"), False))
        start = running + 1


def skip_group(reason):
    """(the group a skip reason belongs to, the fix to name or None, whether conform counts the case
    as a failure): the per-case numbers of the reason dropped"""
    half = re.search(r"not implemented for '?(Half|BFloat16)\b", reason)
    if half:
        name = {"Half": "float16", "BFloat16": "bfloat16"}[half.group(1)]
        return ("torch has no %s kernel for the op on this device (not implemented for %s)" % (name, half.group(1)),
                "rerun with --compute-dtype float32: it computes in float32 and rounds the outputs to %s" % name, True)
    for r in CANNOT_RUN:
        if reason.endswith(r):
            return r, None, True
    if reason.startswith("the case expects a validation error"):
        return "the case expects a validation error: conform judges it without a kernel", None, False
    if reason.startswith("conform refuses the case"):
        return "conform refuses the case (invalid): judged without a kernel", None, False
    if reason.startswith("not applicable at"):
        return reason.split(":")[0] + ": a finite input overflows the dtype (conform: not_applicable)", None, False
    return re.sub(r"(?<![\w.])-?\d+(\.\d+)?(?![\w.])", "N", reason), None, True


def print_skip_groups(per_case, cases, args, unsupported):
    """The skipped cases grouped by reason, most first; each group says whether conform counts it
    missing (a failure) and names the fix when there is one."""
    groups = {}
    for c in cases:
        rec = per_case.get(str(c.get("id", "?")))
        if rec and rec["status"] == "skipped" and str(c.get("id", "?")) not in unsupported:
            key = skip_group(rec["reason"])
            groups[key] = groups.get(key, 0) + 1
    if not groups:
        return
    print("skipped, by reason:")
    for (group, fix, fails), n in sorted(groups.items(), key=lambda kv: (not kv[0][2], -kv[1])):
        print("  %6d  %s%s" % (n, "missing for conform (a failure unless waived): " if fails else "", group))
        if fix and not args.compute_dtype:
            print("          fix: %s" % fix)


def hunt(args):
    """--hunt OP: conform hunt through conform_hunt's relay; each round's export is run here by
    main() (its cases in forked children, as a round from a fresh runner would be), so torch and
    the device are loaded once for the whole hunt, not once per round. conform hunt's exit status."""
    import contextlib
    import io
    import conform_hunt
    own = ["--device", args.device, "--quiet"] + (["--threads", str(args.threads)] if args.threads else [])
    own += ["--compute-dtype", args.compute_dtype] if args.compute_dtype else []
    own += ["--mmcv-from-main"] if args.mmcv_from_main else []
    own += ["--no-isolate"] if args.no_isolate else []

    def serve(root):
        with contextlib.redirect_stdout(io.StringIO()):   # the per-round tables: runner.json has them
            main([root] + own)
    # conform hunt's own defaults for seconds, seed and batch hold unless the pass-through names them
    rest = args.hunt_args + (["--quiet"] if args.quiet else [])   # --quiet: this runner's and conform's
    # the repro lines name this runner on the found suite's export, not the hunt's relay
    rest += ["--runner-repro", " ".join([sys.executable, os.path.abspath(__file__), "{dir}"] + own)]
    rc, _ = conform_hunt.hunt_rounds(serve, args.hunt, seconds=None, seed=None, batch=None, out="FOUND.json",
                                     extra=rest, stream=True)
    return rc


def main(argv=None):
    args = parse_args(argv)
    if args.hunt is not None:
        return hunt(args)
    m = load_manifest(args.dir)
    cases = selected(m, args)
    record = os.path.join(args.dir, "runner.json")
    if os.path.exists(record):   # a stale record must not describe this run
        os.unlink(record)
    counts = {}   # op -> [written, skipped, unsupported]
    info, per_case, unsupported_ids = {}, {}, set()

    def opened(i):
        if not info:
            info.update(i)

    def report(i, outcome):
        cid, op = str(cases[i].get("id", "?")), cases[i].get("op", "?")
        c = counts.setdefault(op, [0, 0, 0])
        if outcome is None:
            c[0] += 1
            per_case[cid] = {"status": "written"}
            return
        reason, unsupported = outcome
        c[2 if unsupported else 1] += 1
        per_case[cid] = {"status": "skipped", "reason": reason}
        if unsupported:
            unsupported_ids.add(cid)
        if not unsupported and not args.quiet:
            print("skipped %s: %s" % (cid, reason), flush=True)

    (run_cases if args.no_isolate else run_isolated)(cases, args, m["dtype"], report, opened=opened)
    if info:
        rec = provenance(args, m, info)
        rec["cases"] = per_case
        write_json_atomic(record, rec)
        for op, o in sorted(rec["ops"].items()):
            if not o["supported"] and op in counts:
                print("%s: not run on this device: %s" % (op, o["reason"]))
    print_skip_groups(per_case, cases, args, unsupported_ids)
    print("%-26s %8s %8s %12s" % ("op", "written", "skipped", "unsupported"))
    for op, (w, sk, un) in sorted(counts.items()):
        print("%-26s %8d %8d %12d" % (op, w, sk, un))
    tot = [sum(c[k] for c in counts.values()) for k in range(3)]
    print("%-26s %8d %8d %12d   (device %s, dtype %s%s)" % (
        "total", tot[0], tot[1], tot[2], args.device, m["dtype"],
        ", computed in " + args.compute_dtype if args.compute_dtype else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())