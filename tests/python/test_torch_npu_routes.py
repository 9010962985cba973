"""The runner's npu table without an NPU (needs numpy, torch and torchvision; tests/python/run.sh
skips it, saying so, where they are missing).

tools/torch_runner.py --device npu runs the smoke suite with tests/python/torch_npu_standin.py, a
RECORDING STAND-IN for torch_npu that checks each call against the documented signature and
computes the documented contract on the CPU. Asserts:
  * conform judges every case the runner wrote passed or waived, every op but the rotated ones has
    passing cases, the rotated ops are declared unsupported (no mmcv) and runner.json names the
    stand-in;
  * the recorded calls carry the documented marshalling: npu_roi_alignbk gets pooled width before
    height, roi_end_mode 2 / 0 for aligned true / false when the manifest gives none, the
    deformable calls get NCHW tensors, stride / dilation [1, 1, h, w] and 4 pads;
  * each planted marshalling fault (pooled sizes swapped, roi_end_mode 3 -> 0, NHWC sent as NCHW,
    pads as [left, right, top, bottom]) makes the stand-in refuse the call or changes the output.

usage: python3 tests/python/test_torch_npu_routes.py [build/conform]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CONFORM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CONFORM", "build/conform"))
STANDIN = os.path.join(ROOT, "tests", "python", "torch_npu_standin.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import torch_runner as R  # noqa: E402


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, **kw)


def end_to_end(tmp):
    exp, rep, log = os.path.join(tmp, "exp"), os.path.join(tmp, "rep"), os.path.join(tmp, "calls.jsonl")
    run([CONFORM, "export", "cases/smoke.json", "--out", exp, "--dtype", "float32"], check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, CONFORM_TORCH_NPU_STANDIN=STANDIN, CONFORM_STANDIN_LOG=log)
    runner = run([sys.executable, "tools/torch_runner.py", exp, "--device", "npu", "--threads", "2", "--quiet"],
                 env=env, stdout=subprocess.PIPE, universal_newlines=True)
    print(runner.stdout)
    assert runner.returncode == 0
    with open(os.path.join(exp, "runner.json")) as f:
        rec = json.load(f)
    assert rec["device"] == "npu" and "stand-in" in rec["versions"]["torch_npu"], rec["versions"]
    assert "NOT an NPU" in rec["device_name"]
    for op in ("roi_align_rotated", "roi_align_rotated_grad"):
        assert not rec["ops"][op]["supported"] and "mmcv" in rec["ops"][op]["reason"], rec["ops"][op]
    assert rec["ops"]["roi_align_v2_backward"]["call"].startswith("torch_npu.npu_roi_alignbk(")
    run([CONFORM, "run", "cases/smoke.json", "--impl", "dir:" + exp, "--waivers", "cases/waivers_pytorch_cpu.json",
         "--quiet", "--threads", "2", "--report-dir", rep], stdout=subprocess.DEVNULL)
    with open(os.path.join(rep, "report.json")) as f:
        cases = json.load(f)["cases"]
    passed, bad = {}, []
    for c in cases:
        if c["status"] == "passed" and not c["id"].startswith("smoke/rot"):
            passed[c["op"]] = passed.get(c["op"], 0) + 1
        written = rec["cases"].get(c["id"], {}).get("status") == "written"
        if written and c["status"] not in ("passed", "waived"):
            bad.append("%s %s: %s" % (c["status"], c["id"], c["message"]))
    assert not bad, "cases the npu table wrote through the stand-in must pass:\n" + "\n".join(bad)
    want = {"roi_align", "roi_align_v2_backward", "grid_sampler_2d", "grid_sampler_2d_backward",
            "deformable_offsets", "deformable_offsets_grad"}
    assert want <= set(passed), "every op but the rotated ones must pass through the npu table: %s" % passed
    with open(log) as f:
        return [json.loads(line) for line in f], passed


def check_recorded(calls):
    seen = {c["fn"] for c in calls}
    assert {"npu_roi_align", "npu_roi_alignbk", "npu_deformable_conv2d", "npu_deformable_conv2dbk"} <= seen, seen
    nonsquare = 0
    for c in calls:
        a = c["args"]
        if c["fn"] == "npu_roi_alignbk":   # (grad [K, C, PH, PW], rois, shape, pooled_width, pooled_height, ...)
            assert [a[4], a[3]] == a[0]["shape"][2:], c
            nonsquare += a[3] != a[4]
            assert a[7] in (0, 1, 2, 3), c
        elif c["fn"] == "npu_roi_align":
            assert a[6] in (0, 1, 2, 3), c
        elif c["fn"].startswith("npu_deformable_conv2d"):
            stride, pads, dil = (a[5], a[6], a[7]) if c["fn"] == "npu_deformable_conv2d" else (a[6], a[7], a[8])
            assert stride[:2] == [1, 1] and dil[:2] == [1, 1] and len(pads) == 4, c
    assert nonsquare, "the smoke suite must exercise npu_roi_alignbk with pooled_h != pooled_w"


def planted_faults():
    """Each fault in the marshalling must be refused by the documented signature or change the result."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("torch_npu_standin", STANDIN)
    sd = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sd)
    R.T.NPU = sd
    g = torch.Generator().manual_seed(26)
    x = torch.rand((2, 3, 9, 11), generator=g)
    rois = torch.tensor([[0, 1.2, 0.7, 7.9, 6.1], [1, 0.3, 2.2, 9.5, 8.4]])
    a = {"pooled_h": 2, "pooled_w": 3, "spatial_scale": 1.0, "sampling_ratio": 2, "aligned": True}
    good = R.npu_roi_align({"input": x, "rois": rois}, a)["output"]
    faults = {}

    def differs(name, fn):
        try:
            got = fn()
        except Exception as e:   # refused by the stand-in's signature check
            faults[name] = "refused: %s" % e
            return
        faults[name] = "changed" if got.shape != good_ref[name].shape or not torch.allclose(got, good_ref[name]) \
            else "NOT DETECTED"

    good_ref = {"roi_end_mode 0 for aligned": good}
    differs("roi_end_mode 0 for aligned", lambda: sd.npu_roi_align(x, rois, 1.0, 2, 3, 2, 0))
    go = torch.rand((2, 3, 2, 3), generator=g)
    shape = list(x.shape)
    good_ref["pooled swapped"] = R.npu_roi_align_v2_backward(
        {"grad_output": go, "boxes": rois}, dict(a, pooled_height=2, pooled_width=3, input_shape=shape))["grad_input"]
    differs("pooled swapped", lambda: sd.npu_roi_alignbk(go, rois, shape, 2, 3, 1.0, 2, 2))
    # deformable: x NHWC [1, 5, 6, 2], 3x3 kernel, stride 2, pads [2, 0, 0, 2]: the same output size
    # whichever pair is read as (top, bottom), so only the values can tell
    xd = torch.rand((1, 5, 6, 2), generator=g)
    off = torch.rand((1, 3, 3, 27), generator=g) * 2 - 0.5
    ad = {"ksize": [3, 3], "strides": [1, 2, 2, 1], "pads": [2, 0, 0, 2], "dilations": [1, 1, 1, 1],
          "deformable_groups": 1, "data_format": "NHWC", "modulated": True}
    yd = R.npu_deformable_offsets({"x": xd, "offsets": off}, ad)["y"]
    w = torch.zeros((1, 2, 3, 3))
    good_ref["NHWC sent as NCHW"] = good_ref["pads as [left, right, top, bottom]"] = yd
    differs("NHWC sent as NCHW", lambda: sd.npu_deformable_conv2d(
        xd, w, off.permute(0, 3, 1, 2), None, [3, 3], [1, 1, 2, 2], [2, 0, 0, 2], [1, 1, 1, 1], 1, 1, True)[1]
        .permute(0, 2, 3, 1))
    differs("pads as [left, right, top, bottom]", lambda: sd.npu_deformable_conv2d(
        xd.permute(0, 3, 1, 2), w, off.permute(0, 3, 1, 2), None, [3, 3], [1, 1, 2, 2], [0, 2, 2, 0], [1, 1, 1, 1],
        1, 1, True)[1].permute(0, 2, 3, 1))
    print("planted faults:", json.dumps(faults, indent=1))
    missed = [k for k, v in faults.items() if v == "NOT DETECTED"]
    assert not missed, "planted marshalling faults not detected: %s" % missed


def main():
    tmp = tempfile.mkdtemp(prefix="conform_npu_routes_")
    calls, passed = end_to_end(tmp)
    check_recorded(calls)
    planted_faults()
    print("npu routes test passed: %d recorded calls, passed per op %s" % (len(calls), passed))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
