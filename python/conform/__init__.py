"""conform from Python: a suite's cases for your kernel, and conform's verdict on what it computed.

    import conform
    suite = conform.suite("smoke", op="roi_align", dtype="float32")   # conform export, cached
    for case in suite.cases:
        if case.skip:            # expect_error, invalid, not_applicable: no kernel runs these
            continue
        case.write({"output": my_roi_align(case.inputs["input"], case.inputs["rois"], **case.attrs)})
    verdict = suite.judge()      # one `conform run --impl dir:` over what was written
    print(verdict)               # passed / counts / failed cases, each with message and repro
    assert verdict.passed, verdict

or, with a kernel of the signature of the torch library call of the op (conform.torch.SIGNATURES;
torch needed), or one on the exported layout (numpy only):

    suite.run({"roi_align": torchvision.ops.roi_align})                  # conform.torch's routes
    suite.run({"roi_align": conform.raw(lambda inputs, attrs: {...})})   # inputs as exported
    verdict = suite.judge(waivers="cases/waivers_pytorch_cpu.json")

Under pytest (the plugin conform_pytest, loaded by the installed entry point):

    @conform.parametrize("roi_align", suite="smoke", dtype="float16")
    def test_roi_align(case):                 # one test per case, the test id is the case id
        case.check(my_kernel(case))           # fails the test with conform's message and repro

and the session writes one conform report of every case it checked (--conform-report DIR,
default conform-report/ in the rootdir: report.html, report.md, junit.xml, report.json).

A search beyond the suites, shrinking each failure to its smallest case (docs/hunt.md):

    found = conform.hunt(lambda inputs, attrs: {...}, op="roi_align", seconds=30, out="FOUND.json")
    # [] when nothing was found; else the minimal cases, which `conform run FOUND.json` replays

Cases: `id`, `op`, `attrs` (typed: int, float, bool, str, list of int, from `conform list`),
`inputs` (numpy arrays in the op's documented layout, in the export's dtype: float32, float16,
float64; bfloat16 as float32 arrays holding the bfloat16 values exactly), `outputs` (name ->
Output: shape, computed; an output with computed False, e.g. masked by output_mask, is not
written), `skip` (None, or why no kernel may run the case: it expects a validation error, conform
refuses it, or it is not applicable at the dtype; conform judges those itself).

Isolation: Suite.run() runs the cases in a forked child where the device allows it (the CPU, or
any device the parent process has not initialised, e.g. CUDA before its first use); a kernel that
crashes, hangs past `timeout` or raises fails (is missing for) its case only, with the reason.
Where fork is unsafe (CUDA or another accelerator already initialised in this process) the cases
run in this process, one after another: an exception still fails only its case, but a crash ends
the process and a hang is not interrupted (`isolate=False` asks for this everywhere).

The conform binary: the `conform` argument, $CONFORM, the one `make install` installed beside this
package, build/conform of this file's repository, `conform` on PATH. Exports are cached under
`workdir` (default $CONFORM_CACHE, else ~/.cache/conform) keyed by the export's arguments and
the binary; each Suite writes its outputs into a run directory of its own beside the cache.
"""
import fcntl
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import numpy as np

from ._manifest import confined

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALLED_CONFORM = None   # `make install` writes PREFIX/bin/conform here
DTYPES = {"float32": "<f4", "float16": "<f2", "bfloat16": "<u2", "float64": "<f8"}
__all__ = ["suite", "Suite", "Case", "Output", "Verdict", "CaseResult", "raw", "parametrize", "hunt", "find_conform",
           "ConformError", "KernelSkip"]


class ConformError(Exception):
    """conform refused a command (exit 2): the message is conform's, with the command."""


class KernelSkip(Exception):
    """Raised by a kernel (or a route) for a case it cannot take: the case is left unwritten with the
    reason, which conform reports as missing."""


def find_conform(conform=None):
    """The conform binary: the argument, $CONFORM, the installed one, the repository's build, PATH."""
    named = conform or os.environ.get("CONFORM")
    if named:
        if not os.access(named, os.X_OK):
            raise FileNotFoundError("conform binary %s not found (the conform argument or $CONFORM)" % named)
        return os.path.abspath(named)
    for exe in (INSTALLED_CONFORM, os.path.join(HERE, "..", "..", "build", "conform"), shutil.which("conform")):
        if exe and os.access(exe, os.X_OK):
            return os.path.abspath(exe)
    raise FileNotFoundError("no conform binary: build it (make), install it (make install) or set CONFORM")


def _conform(cmd, ok=(0,)):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode not in ok:
        raise ConformError("%s exited %d: %s\ncommand: %s" % (os.path.basename(cmd[0]), proc.returncode,
                                                             proc.stderr.strip(), " ".join(cmd)))
    return proc


def _suite_arg(name_or_path):
    """A path to an existing file as it is (absolute); a bare name is the installed suite cases/NAME.json."""
    if os.path.exists(name_or_path):
        return os.path.abspath(name_or_path)
    if "/" not in name_or_path and not name_or_path.endswith(".json"):
        return "cases/%s.json" % name_or_path
    return name_or_path


def _ops_arg(op):
    if op is None:
        return []
    return [op] if isinstance(op, str) else list(op)


def _cache_root(workdir):
    return os.path.abspath(workdir or os.environ.get("CONFORM_CACHE") or
                           os.path.join(os.path.expanduser("~"), ".cache", "conform"))


class _Lock:
    """An exclusive flock on PATH: one export (or run directory) is made once, even by pytest-xdist
    workers starting together."""
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.f = open(self.path, "a")
        fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def _export(exe, suite_arg, ops, dtype, seed, filt, root):
    """The cached export of these arguments: (its directory, the key's name)."""
    st = os.stat(exe)
    key_args = [exe, st.st_size, int(st.st_mtime), suite_arg, sorted(ops), dtype, seed, filt]
    key = hashlib.sha1(json.dumps(key_args).encode()).hexdigest()[:12]
    name = "%s-%s-%s" % (os.path.basename(suite_arg).replace(".json", ""), dtype, key)
    out = os.path.join(root, "exports", name)
    done = os.path.join(out, "conform-python.json")
    with _Lock(out + ".lock"):
        if not os.path.exists(done):
            shutil.rmtree(out, ignore_errors=True)
            cmd = [exe, "export", suite_arg, "--out", out, "--dtype", dtype] + sum((["--op", o] for o in ops), [])
            if seed is not None:
                cmd += ["--seed", str(seed)]
            if filt:
                cmd += ["--filter", filt]
            _conform(cmd)
            ops_json = json.loads(_conform([exe, "list", "--json"]).stdout)
            with open(os.path.join(out, "ops.json"), "w") as f:
                json.dump(ops_json, f)
            with open(done, "w") as f:
                json.dump({"args": key_args, "command": cmd}, f)
    return out, name


def _link_tree(src, dst, manifest):
    """dst: a run directory holding src's manifest and inputs (hard links where the file system
    allows, else copies: the outputs written there never touch the cached export)."""
    os.makedirs(dst, exist_ok=True)
    for c in manifest["cases"]:
        for rel in c.get("inputs", {}).values():
            s, d = confined(src, rel), confined(dst, rel)
            if os.path.exists(d):
                continue
            os.makedirs(os.path.dirname(d), exist_ok=True)
            try:
                os.link(s, d)
            except OSError:
                shutil.copyfile(s, d)
    shutil.copyfile(os.path.join(src, "manifest.json"), os.path.join(dst, "manifest.json"))


def _typed(value, kind):
    """A manifest attribute as the Python value of its type in `conform list`."""
    try:
        if kind == "float":
            return float(value)
        if kind == "int":
            return int(value)
        if kind == "bool":
            return bool(value)
        if kind == "int list":
            return [int(v) for v in value]
        if kind == "string":
            return str(value)
    except (TypeError, ValueError):
        pass
    return value


def suite(name_or_path="conformance", op=None, dtype="float32", seed=None, workdir=None, filter=None,
          conform=None, run_dir=None):
    """The cases of a suite (a name of the installed suites: conformance, smoke, models; or a path),
    exported once by `conform export` with these arguments and cached under workdir. op: an op name
    or a list of them (default every op); dtype: float32, float16, bfloat16 or float64; seed: the
    run seed (default the suite's); filter: conform's --filter. Returns a Suite."""
    if dtype not in DTYPES:
        raise ValueError("dtype %r: must be one of %s" % (dtype, ", ".join(DTYPES)))
    exe = find_conform(conform)
    root = _cache_root(workdir)
    ops = _ops_arg(op)
    sarg = _suite_arg(name_or_path)
    export, name = _export(exe, sarg, ops, dtype, seed, filter, root)
    if run_dir is None:
        run_dir = os.path.join(root, "runs", "%s-%s" % (name, uuid.uuid4().hex[:8]))
    elif callable(run_dir):   # the session's: named after the export
        run_dir = run_dir(root, name)
    return Suite(exe, sarg, ops, dtype, seed, filter, export, os.path.abspath(run_dir))


class Output:
    """One output of a case: name, shape, computed (False: not asked for, e.g. by output_mask), path."""
    def __init__(self, name, entry, root):
        self.name, self.shape = name, list(entry.get("shape", []))
        self.computed = bool(entry.get("computed", True))
        self.path = confined(root, entry["path"]) if entry.get("path") else None

    def __repr__(self):
        return "Output(%s, shape %s%s)" % (self.name, self.shape, "" if self.computed else ", not computed")


def case_skip(entry):
    """Why a manifest entry must not be run (expect_error, invalid, not_applicable), or None."""
    if "expect_error" in entry:
        return "the case expects a validation error (%s); nothing to compute" % entry["expect_error"]
    if "invalid" in entry:
        return "conform refuses the case: %s" % entry["invalid"]
    if "not_applicable" in entry:
        return entry["not_applicable"]
    return None


class Case:
    """One case of a Suite (see the module's docstring)."""
    def __init__(self, suite_, entry, types):
        self.suite, self.entry = suite_, entry
        self.id, self.op = entry["id"], entry["op"]
        self.dtype = suite_.dtype
        self.attrs = {k: _typed(v, types.get(k)) for k, v in entry.get("attrs", {}).items()}
        self.outputs = {n: Output(n, o, suite_.run_dir) for n, o in entry.get("outputs", {}).items()}
        self.skip = case_skip(entry)
        self._inputs = None

    @property
    def inputs(self):
        """{name: numpy array}, loaded on first use (bfloat16 files widened to float32 exactly)."""
        if self._inputs is None:
            ins = {}
            for name, rel in self.entry.get("inputs", {}).items():
                a = np.load(confined(self.suite.run_dir, rel), allow_pickle=False)
                if self.dtype == "bfloat16":
                    a = (a.astype(np.uint32) << 16).view(np.float32)
                ins[name] = a
            self._inputs = ins
        return self._inputs

    @property
    def raw_inputs(self):
        """{name: numpy array} as the files hold them (bfloat16 as its raw '<u2' bits)."""
        return {name: np.load(confined(self.suite.run_dir, rel), allow_pickle=False)
                for name, rel in self.entry.get("inputs", {}).items()}

    def clear(self):
        """Removes this case's written outputs (a stale file must never be judged)."""
        for o in self.outputs.values():
            if o.path and os.path.lexists(o.path):
                os.unlink(o.path)

    def write(self, outputs):
        """Writes this case's computed outputs where conform reads them, cast to the export's dtype
        as a device runner does (numpy arrays or torch tensors on any device; a dict name -> array, or
        one array when the case computes one output, or a tuple in the outputs' order). An output
        the case does not compute (computed False) is dropped; a missing one is a ValueError."""
        if self.skip:
            raise ValueError("case %s must not be run by a kernel: %s" % (self.id, self.skip))
        got = _as_output_dict(self, outputs)
        arrays = {}
        for name, o in self.outputs.items():
            if not o.computed:
                continue
            if name not in got or got[name] is None:
                raise ValueError("case %s: output %r not given (outputs: %s)" % (self.id, name, ", ".join(
                    n for n, x in self.outputs.items() if x.computed)))
            arrays[name] = _as_dtype(got[name], self.dtype)
        unknown = sorted(set(got) - set(self.outputs))
        if unknown:
            raise ValueError("case %s: no output named %s (outputs of %s: %s)"
                             % (self.id, ", ".join(unknown), self.op, ", ".join(self.outputs)))
        self.clear()
        for name, a in arrays.items():
            _save_atomic(self.outputs[name].path, a)
        self.suite._record(self.id, None)

    def judge(self, report_dir=None, waivers=None):
        """conform's verdict on this case alone (from what was written): a CaseResult."""
        return self.suite._judge_ids([self.id], report_dir=report_dir, waivers=waivers)

    def check(self, outputs=None, waivers=None):
        """write(outputs) (unless None), then judge this case; AssertionError with conform's message
        and repro unless it passed or was waived. Returns the CaseResult."""
        __tracebackhide__ = True
        if getattr(self.suite, "_session", False):   # under pytest: the session report takes it too
            from . import _pytest_state
            _pytest_state.record_checked(self.suite, self.id)
            waivers = waivers or _pytest_state.STATE.get("waivers")
        if outputs is not None:
            self.write(outputs)
        r = self.judge(waivers=waivers)
        if not r.ok:
            raise AssertionError("conform: %s %s: %s\nrepro: %s" % (r.status, r.id, r.message, r.repro))
        return r

    def __repr__(self):
        return "Case(%s%s)" % (self.id, ", skip: " + self.skip if self.skip else "")


def _as_output_dict(case, outputs):
    if isinstance(outputs, dict):
        return dict(outputs)
    computed = [n for n, o in case.outputs.items() if o.computed]
    if isinstance(outputs, (tuple, list)):
        names = list(case.outputs)
        if len(outputs) == len(computed):
            names = computed
        if len(outputs) != len(names):
            raise ValueError("case %s: %d outputs given, the case has %s" % (case.id, len(outputs), ", ".join(names)))
        return dict(zip(names, outputs))
    if len(computed) != 1:
        raise ValueError("case %s computes %s: pass a dict name -> array" % (case.id, ", ".join(computed) or "nothing"))
    return {computed[0]: outputs}


def _to_numpy(a, dtype):
    """numpy array from a numpy array, a torch tensor on any device (bfloat16 kept as its bits), a list."""
    if hasattr(a, "detach") and hasattr(a, "cpu"):   # a torch tensor, without importing torch
        t = a.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            return t.contiguous().view(__import__("torch").int16).numpy().view(np.uint16), True
        if dtype == "bfloat16":
            t = t.float()
        return t.numpy(), False
    return np.asarray(a), False


def round_to_bfloat16_bits(a):
    """float32 -> bfloat16 bits, round to nearest even (NaN stays a quiet NaN)."""
    bits = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")
    nan = np.isnan(np.asarray(a, dtype="<f4"))
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype("<u2")
    return rounded


def _as_dtype(a, dtype):
    arr, is_bf16_bits = _to_numpy(a, dtype)
    if dtype == "bfloat16":
        if is_bf16_bits or arr.dtype == np.uint16:
            return np.ascontiguousarray(arr, dtype="<u2")
        return round_to_bfloat16_bits(arr.astype(np.float32))
    return np.ascontiguousarray(arr.astype(DTYPES[dtype]))


def _save_atomic(path, arr):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, arr, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class raw:
    """A kernel on the exported layout: fn(inputs, attrs) -> outputs, where inputs is the case's
    {name: numpy array} (Case.inputs: the op's documented layout, the export's dtype) and attrs its
    typed attributes; outputs as Case.write() takes them. Suite.run() calls it with numpy only."""
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, case):
        return self.fn(case.inputs, dict(case.attrs))


class CaseResult:
    """One case of a conform report: id, op, status, message, repro, outputs (the report's metrics)."""
    def __init__(self, c):
        self.id, self.op, self.status = c["id"], c.get("op"), c["status"]
        self.message, self.repro = c.get("message", ""), c.get("repro", "")
        self.outputs = c.get("outputs", [])
        self.waiver = c.get("waiver")

    @property
    def ok(self):
        return self.status in ("passed", "waived", "not_applicable", "not_implemented")

    def __repr__(self):
        return "CaseResult(%s: %s%s)" % (self.id, self.status, ": " + self.message if self.message else "")


FAILING = ("failed", "error", "crashed", "timeout", "missing")


class Verdict:
    """One `conform run`: passed (exit 0), counts {status: n}, failed [CaseResult] (failed, error,
    crashed, timeout, missing), cases {id: CaseResult}, reports {json, md, html, junit}, text (the
    console summary), command, exit code."""
    def __init__(self, report, command, rc, text, report_dir):
        self.report, self.command, self.returncode, self.text = report, command, rc, text
        self.passed = rc == 0
        statuses = ("passed", "failed", "error", "waived", "crashed", "timeout", "not_implemented", "missing",
                    "not_applicable")
        summ = report.get("summary", {})
        self.counts = {s: int(summ.get(s, 0)) for s in statuses}
        self.cases = {c["id"]: CaseResult(c) for c in report.get("cases", [])}
        self.failed = [r for r in self.cases.values() if r.status in FAILING]
        self.reports = {k: os.path.join(report_dir, f) for k, f in
                        (("json", "report.json"), ("md", "report.md"), ("html", "report.html"), ("junit", "junit.xml"))}

    def __bool__(self):
        return self.passed

    def __str__(self):
        lines = ["%s: %s" % ("PASS" if self.passed else "FAIL",
                             ", ".join("%d %s" % (n, s.replace("_", " ")) for s, n in self.counts.items() if n))]
        for r in self.failed[:20]:
            lines.append("  %s %s: %s\n    repro: %s" % (r.status, r.id, r.message, r.repro))
        if len(self.failed) > 20:
            lines.append("  ... %d more failing cases in %s" % (len(self.failed) - 20, self.reports["html"]))
        lines.append("report: %s" % self.reports["html"])
        return "\n".join(lines)

    __repr__ = __str__


class Suite:
    """The cases of one export (conform.suite() makes it): cases, by id, dtype, run_dir; write
    outputs per case (Case.write) or all at once (run), then judge."""
    def __init__(self, exe, suite_arg, ops, dtype, seed, filt, export, run_dir):
        self.conform, self.suite_arg, self.ops, self.dtype = exe, suite_arg, ops, dtype
        self.filter, self.export, self.run_dir = filt, export, run_dir
        with open(os.path.join(export, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.seed = self.manifest.get("seed") if seed is None else seed
        with _Lock(run_dir + ".lock"):
            if not os.path.exists(os.path.join(run_dir, "manifest.json")):
                _link_tree(export, run_dir, self.manifest)
        with open(os.path.join(export, "ops.json")) as f:
            self.op_info = {o["name"]: o for o in json.load(f)["ops"]}
        self.cases = []
        for entry in self.manifest["cases"]:
            types = {a["name"]: a["type"] for a in self.op_info.get(entry["op"], {}).get("attrs", [])}
            self.cases.append(Case(self, entry, types))
        self.by_id = {c.id: c for c in self.cases}
        self._runner = {"ops": {}, "cases": {}}

    def __iter__(self):
        return iter(self.cases)

    def __len__(self):
        return len(self.cases)

    def __getitem__(self, key):
        return self.by_id[key] if isinstance(key, str) else self.cases[key]

    def _selection(self):
        cmd = [self.suite_arg] + sum((["--op", o] for o in self.ops), [])
        cmd += ["--seed", str(self.seed)]
        if self.filter:
            cmd += ["--filter", self.filter]
        return cmd

    def _record(self, cid, reason):
        self._runner["cases"][cid] = {"status": "written"} if reason is None else {"status": "skipped", "reason": reason}

    def _write_runner(self):
        """DIR/runner.json (schema conform-runner 1): what ran, the ops given no kernel (conform:
        not_implemented, with the reason), each case written or skipped with its reason."""
        if not self._runner["ops"] and not self._runner["cases"]:
            return
        rec = {"schema": "conform-runner", "schema_version": 1, "runner": "conform Python package (Suite.run)",
               "dtype": self.dtype, "ops": self._runner["ops"], "cases": self._runner["cases"]}
        rec.update(self._runner.get("info", {}))
        tmp = os.path.join(self.run_dir, "runner.json.tmp%d" % os.getpid())
        with open(tmp, "w") as f:
            json.dump(rec, f, indent=1, sort_keys=True)
        os.replace(tmp, os.path.join(self.run_dir, "runner.json"))

    def run(self, kernels, device="cpu", compute_dtype=None, isolate=True, timeout=60.0, cases=None):
        """Runs each case of an op in kernels ({op: kernel}) and writes its outputs; returns
        {case id: None (written) or the reason it was not}. A kernel is conform.raw(fn) (the
        exported layout, numpy), a function of the op's torch signature (conform.torch.SIGNATURES;
        run on `device` through conform.torch's routes, computing in compute_dtype if given), or
        None for conform.torch's own library call. Ops of the suite without a kernel are declared
        unsupported in runner.json: conform reports them not_implemented. A kernel that raises,
        crashes or runs past timeout seconds leaves its case unwritten with the reason (missing)."""
        unknown = sorted(set(kernels) - set(self.op_info))
        if unknown:
            raise ValueError("no op %s (ops: %s)" % (", ".join(unknown), ", ".join(self.op_info)))
        for op in {c.op for c in self.cases}:
            if op in kernels:
                self._runner["ops"][op] = {"supported": True, "call": _describe(kernels[op], op)}
            elif op not in self._runner["ops"]:
                self._runner["ops"][op] = {"supported": False, "call": "none",
                                           "reason": "no kernel given to conform's Suite.run for %s" % op}
        todo = [c for c in (cases if cases is not None else self.cases) if c.op in kernels]
        results = {}
        runnable = []
        for c in todo:
            c.clear()
            if c.skip:
                results[c.id] = c.skip
                self._record(c.id, c.skip)
            else:
                runnable.append(c)

        def one(c):
            k = kernels[c.op]
            if isinstance(k, raw):
                c.write(k(c))
            else:
                from . import torch as ct
                try:
                    c.write(ct.call(c, k, device=device, compute_dtype=compute_dtype))
                except ct.Skip as e:
                    raise KernelSkip(str(e))

        if isolate and _fork_safe(device):
            outcome = _run_forked(runnable, one, timeout)
        else:
            outcome = {c.id: _run_here(one, c) for c in runnable}
        for c in runnable:
            results[c.id] = outcome[c.id]
            self._record(c.id, outcome[c.id])
        self._runner["info"] = {"device": str(device), "compute_dtype": compute_dtype or self.dtype}
        self._write_runner()
        return results

    def judge(self, waivers=None, report_dir=None, threads=None, extra_args=()):
        """One `conform run --impl dir:` over the suite's selection and what was written to it:
        a Verdict, and the report formats in report_dir (default RUN_DIR/report). waivers: a
        waivers file (default conform's: cases/waivers.json when present)."""
        self._write_runner()
        report_dir = os.path.abspath(report_dir or os.path.join(self.run_dir, "report"))
        cmd = [self.conform, "run"] + self._selection() + ["--impl", "dir:" + self.run_dir, "--report-dir",
                                                            report_dir, "--quiet"]
        if waivers:
            cmd += ["--waivers", waivers]
        if threads:
            cmd += ["--threads", str(threads)]
        cmd += list(extra_args)
        proc = _conform(cmd, ok=(0, 1))
        with open(os.path.join(report_dir, "report.json")) as f:
            return Verdict(json.load(f), " ".join(cmd), proc.returncode, proc.stdout, report_dir)

    def judge_ids(self, ids, waivers=None, report_dir=None):
        """judge() restricted to these case ids (conform's --rerun over a list of them): a Verdict."""
        os.makedirs(os.path.join(self.run_dir, ".select"), exist_ok=True)
        sel = os.path.join(self.run_dir, ".select", "%s.json" % uuid.uuid4().hex)
        with open(sel, "w") as f:
            json.dump({"schema": "conform-report", "cases": [{"id": i, "status": "passed"} for i in ids]}, f)
        try:
            return self.judge(waivers=waivers, report_dir=report_dir, threads=1,
                              extra_args=("--rerun", sel, "--status", "passed", "--jobs", "1"))
        finally:
            os.unlink(sel)

    def _judge_ids(self, ids, report_dir=None, waivers=None):
        rd = report_dir or os.path.join(self.run_dir, ".check", hashlib.sha1(ids[0].encode()).hexdigest()[:16])
        v = self.judge_ids(ids, waivers=waivers, report_dir=rd)
        if ids[0] not in v.cases:
            raise ConformError("conform judged no case %s: %s" % (ids[0], v.text.strip()[-400:]))
        return v.cases[ids[0]]


def _describe(kernel, op):
    if isinstance(kernel, raw):
        return "conform.raw(%s) on the exported layout" % getattr(kernel.fn, "__qualname__", repr(kernel.fn))
    if kernel is None:
        return "conform.torch's library call for %s" % op
    return "%s.%s with the signature of conform.torch.SIGNATURES[%r]" % (
        getattr(kernel, "__module__", "?"), getattr(kernel, "__qualname__", repr(kernel)), op)


def _fork_safe(device):
    """fork copies only the calling thread: safe on the CPU, and for an accelerator only while this
    process has not initialised it (CUDA refuses a forked child of an initialised parent)."""
    name = str(device).split(":")[0]
    if name == "cpu":
        return True
    import sys
    torch = sys.modules.get("torch")
    if name == "cuda" and torch is not None:
        return not torch.cuda.is_initialized()
    return False


def _reason(e):
    msg = str(e).strip().splitlines()
    if isinstance(e, KernelSkip):
        return msg[0] if msg else "skipped"
    return "%s: %s" % (type(e).__name__, msg[0] if msg else "")


def _run_here(one, c):
    try:
        one(c)
        return None
    except Exception as e:   # the kernel's exception fails its case only
        return _reason(e)


def _run_forked(cases, one, timeout):
    """Each case in a forked child (one child runs cases until one kills it or hangs; then a new
    child goes on with the next): {id: None or the reason}."""
    out, start = {}, 0
    while start < len(cases):
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:   # child: "S i" before a case, "D i reason" after it
            code = 0
            try:
                os.close(rd)
                w = os.fdopen(wr, "w", buffering=1)
                for i in range(start, len(cases)):
                    w.write("S %d\n" % i)
                    w.write("D %d %s\n" % (i, json.dumps(_run_here(one, cases[i]))))
                w.flush()
            except BaseException:
                code = 3
            finally:
                os._exit(code)
        os.close(wr)
        running, done_upto, buf, deadline, timed_out = None, start, b"", time.monotonic() + timeout, False
        while True:
            ready, _, _ = select.select([rd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:   # the case ran past its time: the child is killed
                os.kill(pid, signal.SIGKILL)
                timed_out = True
                break
            chunk = os.read(rd, 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                line = line.decode()
                if line.startswith("S "):
                    running, deadline = int(line[2:]), time.monotonic() + timeout
                elif line.startswith("D "):
                    i, reason = line[2:].split(" ", 1)
                    out[cases[int(i)].id] = json.loads(reason)
                    running, done_upto = None, int(i) + 1
        os.close(rd)
        _, status = os.waitpid(pid, 0)
        if running is None:   # the child finished (or died between cases): go on after the last case done
            start = len(cases) if not os.WIFSIGNALED(status) or done_upto == start else done_upto
            continue
        if timed_out:
            out[cases[running].id] = "the kernel ran past the timeout of %g s (its child process was killed)" % timeout
        else:
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
            out[cases[running].id] = "the kernel killed the process (signal %d, %s)" % (
                sig, signal.Signals(sig).name if sig else "exit %d" % os.WEXITSTATUS(status))
        start = running + 1
    for c in cases:
        out.setdefault(c.id, "the kernel's child process ended before the case ran")
    return out


def hunt(kernel, op, seconds=10, seed=1, out=None, conform=None, waivers=None, finite=False, batch=64, extra=()):
    """conform hunt over a Python kernel on the exported layout: kernel(inputs, attrs) -> {output
    name: array}, as conform.raw takes it (a conform.raw is taken as well). Each round conform
    exports its candidates, this process runs the kernel on them, and conform judges, shrinks and
    keeps the minimal failures (docs/hunt.md, "From Python"). Returns those cases, the entries of
    FOUND.json (written to out when given, for `conform run FOUND.json`); [] when nothing was found.
    waivers: a waiver file (a waived find is not returned). Raises ConformError on bad usage."""
    try:
        import conform_hunt
    except ImportError:  # the package imported from a directory that conform_hunt.py is not beside
        sys.path.append(os.path.dirname(HERE))
        import conform_hunt
    fn = kernel.fn if isinstance(kernel, raw) else kernel
    try:
        found = conform_hunt.hunt(lambda _op, inputs, attrs: fn(inputs, dict(attrs)), op, seconds, seed, out,
                                  find_conform(conform), batch, finite, extra, waivers)
    except RuntimeError as e:
        raise ConformError(str(e)) from None
    if found and out:  # the repro conform printed names this hunt's relay, gone when it ends
        sys.stderr.write("conform.hunt: replay in Python: s = conform.suite(%r); s.run({%r: conform.raw(kernel)}); "
                         "print(s.judge())\n" % (os.path.abspath(out), op))
    return found


def parametrize(op=None, suite="smoke", dtype="float32", seed=None, filter=None, argname="case", workdir=None,
                include_skipped=False):
    """pytest: @conform.parametrize("roi_align", suite="smoke", dtype="float16") makes a test one
    test per case of the export (test id = case id), its argument `case` a conform.Case; cases no
    kernel may run are left out (include_skipped=True gives them, marked skipped). The session
    judges every case a test checked into one conform report (the plugin conform_pytest)."""
    import pytest
    from . import _pytest_state
    s = _pytest_state.session_suite(suite, op, dtype, seed, filter, workdir)
    params = []
    for c in s.cases:
        if c.skip:
            if include_skipped:
                params.append(pytest.param(c, id=c.id, marks=pytest.mark.skip(reason=c.skip)))
            continue
        params.append(pytest.param(c, id=c.id))
    return pytest.mark.parametrize(argname, params)
