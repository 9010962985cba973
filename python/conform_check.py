"""Judge outputs computed by your own kernel against conform's golden reference, from Python tests.

    from conform_check import check
    check("roi_align", {"pooled_h": 7, "pooled_w": 7, "spatial_scale": 0.25, "sampling_ratio": 2,
                        "aligned": True},
          inputs={"input": x, "rois": rois}, actual={"output": my_output}, dtype="float16")

`check` writes the arrays to a temporary folder, runs `conform check` on them and returns a
`Verdict` (status, message, per-output numbers: max_abs_err, max_ulp, max_err_over_tol, worst
element, ...); when the outputs do not conform it raises AssertionError with the summary and the
command that reproduces it (the folder is then kept, so the command works; `workdir` puts it
under a folder of yours instead of the system's temporary one). `judge` is the same without the
assertion. Needs numpy only. The binary is the `conform` argument, else $CONFORM, else the one
`make install` installed beside this file, else build/conform of this file's repository, else
`conform` on PATH. Under pytest, the `conform_check` fixture (conform_pytest.py) does the same with
pytest's tmp_path.

Arrays: inputs in float32 or float64 (float16 is widened exactly); actual outputs in the dtype
under test: float32, float16, or bfloat16 as raw uint16 bits (a float array is rounded to
bfloat16, to nearest even, for you).
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALLED_CONFORM = None   # `make install` writes PREFIX/bin/conform here
DTYPES = ("float32", "float16", "bfloat16")


def find_conform(conform=None):
    """The conform binary: the argument, $CONFORM, the installed one, the repository's build, PATH."""
    named = conform or os.environ.get("CONFORM")
    if named:
        if not os.access(named, os.X_OK):
            raise FileNotFoundError("conform binary %s not found" % named)
        return os.path.abspath(named)
    for exe in (INSTALLED_CONFORM, os.path.join(HERE, "..", "build", "conform"), shutil.which("conform")):
        if exe and os.access(exe, os.X_OK):
            return os.path.abspath(exe)
    raise FileNotFoundError("no conform binary: build it (make), install it (make install) or set CONFORM")
class Verdict:
    """One `conform check`: status ("passed" or "failed"), message, outputs (name -> the metrics
    of report.json), command (the repro line) and report (the whole report.json)."""

    def __init__(self, report, command):
        case = report["cases"][0]
        self.report = report
        self.status = case["status"]
        self.message = case.get("message", "")
        self.outputs = {o["name"]: o for o in case.get("outputs", [])}
        self.command = command

    @property
    def passed(self):
        return self.status == "passed"

    def summary(self):
        lines = ["%s: %s" % (self.status, self.message)]
        for name, o in self.outputs.items():
            if "max_abs_err" not in o:  # not computed (output_mask) or not compared
                lines.append("  %s: %s" % (name, o.get("status", "not compared")))
                continue
            # report.json spells an infinity or NaN as a string ("inf"): float() reads both
            lines.append("  %s: max_abs_err %.3g, max_ulp %.3g, worst err/tol %.3g, %d over tolerance"
                         % (name, float(o["max_abs_err"]), float(o["max_ulp"]), float(o["max_err_over_tol"]),
                            o["n_over_tol"]))
        lines.append("repro: " + self.command)
        return "\n".join(lines)

    def __repr__(self):
        return "Verdict(%s)" % self.summary().replace("\n", "; ")


def attr_text(value):
    """A manifest/suite attribute value as the command line spells it."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(attr_text(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))   # shortest text that reads back to the same double
    return str(value)


def round_to_bfloat16_bits(a):
    """float32 -> bfloat16 bits, round to nearest even (NaN stays a quiet NaN)."""
    bits = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")
    nan = np.isnan(np.asarray(a, dtype="<f4"))
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype("<u2")
    return rounded


def as_input(a):
    a = np.asarray(a)
    if a.dtype in (np.float64, np.float32):
        return a.astype(a.dtype.newbyteorder("<"))
    if a.dtype == np.float16 or np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_:
        return a.astype("<f4")   # exact for float16 and for integers below 2^24
    raise TypeError("input of dtype %s: pass float32 or float64" % a.dtype)


def as_actual(a, dtype):
    a = np.asarray(a)
    if dtype == "bfloat16":
        return a.astype("<u2") if a.dtype == np.uint16 else round_to_bfloat16_bits(a)
    return a.astype({"float32": "<f4", "float16": "<f2"}[dtype])


def judge(op, attrs, inputs, actual, dtype="float32", conform=None, keep=False, workdir=None):
    """Runs `conform check`; returns a Verdict. Bad usage (unknown op, wrong shape, bad attribute)
    raises ValueError with conform's message. The files go to a new folder under `workdir` (default:
    the system's temporary folder), removed unless the outputs fail or `keep`."""
    if dtype not in DTYPES:
        raise ValueError("dtype %r: must be one of %s" % (dtype, ", ".join(DTYPES)))
    exe = find_conform(conform)
    tmp = tempfile.mkdtemp(prefix="conform_check_%s_" % op, dir=workdir)
    cmd = [exe, "check", op]
    for name, value in attrs.items():
        cmd += ["--attr", "%s=%s" % (name, attr_text(value))]
    for flag, arrays, convert in (("--input", inputs, as_input),
                                  ("--actual", actual, lambda a: as_actual(a, dtype))):
        for name, a in arrays.items():
            path = os.path.join(tmp, "%s%s.npy" % ("actual_" if flag == "--actual" else "", name))
            np.save(path, convert(a), allow_pickle=False)
            cmd += [flag, "%s=%s" % (name, path)]
    cmd += ["--dtype", dtype, "--report-dir", os.path.join(tmp, "report")]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    command = " ".join(cmd)
    if proc.returncode not in (0, 1):
        shutil.rmtree(tmp, ignore_errors=True)
        raise ValueError("conform check exited %d: %s\ncommand: %s"
                         % (proc.returncode, proc.stderr.strip(), command))
    with open(os.path.join(tmp, "report", "report.json")) as f:
        verdict = Verdict(json.load(f), command)
    if verdict.passed and not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return verdict


def check(op, attrs, inputs, actual, dtype="float32", conform=None, workdir=None):
    """judge(), then AssertionError with the summary and the repro command unless it passed."""
    verdict = judge(op, attrs, inputs, actual, dtype=dtype, conform=conform, workdir=workdir)
    if not verdict.passed:
        raise AssertionError("conform check %s (%s) %s" % (op, dtype, verdict.summary()))
    return verdict
