#!/usr/bin/env python3
"""What bounds one `make bench` problem: its memory traffic, or its own work.

The problem is timed as `make bench` times it (optimized, median of --reps calls on the same
buffers), then again at three smaller sizes whose whole working set stays in the caches across the
repeats. The smaller sizes cut the dimension along which the kernel's work units repeat the same
work, so that every unit does what it does at the bench shape (same channels per unit, same
per-unit tables); only their number, and the bytes, shrink:
  roi family: the rois K (256 -> 32, 64, 96; the first K of one fixed list of 256, so the rois of
    a small run are the bench run's own; cutting C instead changes the channels per unit from 64
    to 16, which costs 1.7x per channel at the bench shape);
  deformable_offsets(_grad): the rows H of x (64 -> 8, 16, 32; units are output rows, and
    (image, channel chunk) backward);
  grid_sampler_2d(_backward): the rows H of the input and of the grid (128 -> 4, 8, 16; units are
    (image, channel block), fixed by N and C; rows keep the bench's 128 columns: cutting the width
    instead gave 8-24 px rows, whose per-point cost was up to 1.5x lower than full rows).
t(X) = a + b X is fitted to the hot points (a: per-call cost that does not grow with X, such as
thread start, scratch, the roi_align input transpose; b: the work per row or roi) and extrapolated
to the bench's X: the time the bench shape would take if its reads came from cache. Beside it the
bench's own median and its floor (compulsory bytes over the stream rate measured in the same
conform bench call). Verdict: within 1.5x when the median is; bound by work when the hot
estimate alone is above 1.5x the floor (memory is not what keeps it from 1.5x); bound by memory
otherwise (the gap between the median and the estimate is memory stalls).

Caveats printed with the table: the kernels write their outputs with streaming stores, so the hot
runs still write to DRAM; a hot point is only as hot as the L3 the machine gives (the working sets
are printed beside the cache sizes; the fit's largest relative residual shows whether time stays
linear in X).

usage: bench_bound.py --conform EXE --threads "2 1" --rounds 3 --reps 21 --out FILE -- OP ARGS...
       bench_bound.py --summary FILE
"""
import argparse
import json
import math
import random
import statistics
import subprocess
import sys

ROI_OPS = ("roi_align", "roi_align_v2_backward", "roi_align_rotated", "roi_align_rotated_grad")
# the cut sizes: working sets of 2.1-13.2 MB, inside the L3 (a read of 1-16 MB repeated runs at one
# speed on this machine, 32 MB at half of it). Powers of two where the bench's are (its planes are
# 64 KiB apart, sharing cache sets): the grid sampler's cost per row was 10-25% lower at 12 and 24
# rows than at 8, 16 and 32
HOT = {"K": (32, 64, 96), "H": (8, 16, 32), "Hg": (4, 8, 16)}


def option_values(args, flag):
    return [args[i + 1] for i in range(len(args) - 1) if args[i] == flag]


def data_format(args):
    for a in option_values(args, "--attr"):
        if a.startswith("data_format="):
            return a.split("=", 1)[1]
    return "NCHW"


def scaled_dims(op, nhwc):
    """(dimension name, bench value, hot values, [(tensor, axis, multiple)]) of the cut."""
    if op in ROI_OPS:
        roi = "boxes" if op == "roi_align_v2_backward" else "rois"
        per_roi = {"roi_align_v2_backward": "grad_output", "roi_align_rotated_grad": "x_grad"}.get(op)
        dims = [(roi, 1 if nhwc else 0, 1)] + ([(per_roi, 0, 1)] if per_roi else [])
        return "K", 256, HOT["K"], dims
    if op == "deformable_offsets":
        return "H", 64, HOT["H"], [("x", 1, 1), ("offsets", 1, 1)]
    if op == "deformable_offsets_grad":
        return "H", 64, HOT["H"], [("grad", 1, 3), ("x", 1, 1), ("offsets", 1, 1)]
    if op == "grid_sampler_2d":
        return "H", 128, HOT["Hg"], [("input", 2, 1), ("grid", 1, 1)]
    if op == "grid_sampler_2d_backward":
        return "H", 128, HOT["Hg"], [("grad_output", 2, 1), ("input", 2, 1), ("grid", 1, 1)]
    raise SystemExit(f"bench_bound.py: no cut known for {op}")


def fixed_rois(op, nhwc, gen, K):
    """One list of K rois drawn as the op's generator draws them (batch in {0, 1}, sizes and
    centres uniform in the gen's frame, angles uniform), from a fixed seed, in the tensor's order."""
    spec = gen.get("boxes" if op == "roi_align_v2_backward" else "rois", {})
    lo, hi = spec.get("size", [8, 80])
    ih, iw = spec.get("image", [256, 256])
    alo, ahi = spec.get("angle", [-math.pi, math.pi])
    rng = random.Random(28)
    rows = []
    for _ in range(K):
        b, bw, bh = rng.randrange(2), rng.uniform(lo, hi), rng.uniform(lo, hi)
        cx, cy = rng.uniform(0, iw), rng.uniform(0, ih)
        if op.startswith("roi_align_rotated"):
            rows.append([b, cx, cy, bw, bh, rng.uniform(alo, ahi)])
        else:
            rows.append([b, cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2])
    return [list(col) for col in zip(*rows)] if nhwc else rows


def variant(op, args, x):
    """The problem's arguments with the cut dimension at x (x = bench value: the bench problem)."""
    nhwc = data_format(args) == "NHWC"
    dims = scaled_dims(op, nhwc)[3]
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a == "--impl":
            i += 2
            continue
        if a in ("--shape", "--gen") and i + 1 < len(args):
            v = args[i + 1]
            if a == "--shape":
                name, d = v.split("=", 1)
                d = [int(s) for s in d.split(",")]
                for tensor, axis, mult in dims:
                    if tensor == name:
                        d[axis] = x * mult
                v = name + "=" + ",".join(map(str, d))
            elif op in ROI_OPS:
                gen = json.loads(v)
                key = "boxes" if op == "roi_align_v2_backward" else "rois"
                gen = {key: {"data": fixed_rois(op, nhwc, gen, x)}}
                v = json.dumps(gen, separators=(",", ":"))
            out += [a, v]
            i += 2
            continue
        out.append(a)
        i += 1
    return out + ["--impl", "optimized"]


def input_bytes(args):
    """float32 bytes of the --shape inputs (every input of the bench problems is one)."""
    return sum(4 * math.prod(int(d) for d in v.split("=", 1)[1].split(",")) for v in option_values(args, "--shape"))


def bench(exe, op, args, threads, reps):
    cmd = [exe, "bench", op] + args + ["--threads", str(threads), "--repeat", str(reps)]
    line = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[0]
    return json.loads(line)


def fit(xs, ts):
    """Least squares t = a + b x, and the largest |residual| / t."""
    mx, mt = statistics.mean(xs), statistics.mean(ts)
    b = sum((x - mx) * (t - mt) for x, t in zip(xs, ts)) / sum((x - mx) ** 2 for x in xs)
    a = mt - b * mx
    return a, b, max(abs(t - (a + b * x)) / t for x, t in zip(xs, ts))


def verdict(measured, est, floor):
    if measured <= 1.5 * floor:
        return "within 1.5x"
    return "bound by work" if est > 1.5 * floor else "bound by memory"


def measure(exe, op, args, threads, rounds, reps):
    """Alternating rounds of the bench problem and its hot points; medians over the rounds."""
    name, xb, xs, _ = scaled_dims(op, data_format(args) == "NHWC")
    runs = {x: [] for x in (xb,) + xs}
    for _ in range(rounds):
        for x in runs:
            runs[x].append(bench(exe, op, variant(op, args, x), threads, reps if x == xb else 4 * reps))
    med = {x: statistics.median(r["median_s"] for r in rs) for x, rs in runs.items()}
    last = {x: rs[-1] for x, rs in runs.items()}
    a, b, resid = fit(xs, [med[x] for x in xs])
    floor = statistics.median(r["floor_s"] for r in runs[xb])
    out_bytes = last[xb]["bytes"] - input_bytes(variant(op, args, xb))
    return {"op": op, "threads": threads, "dim": name, "x": xb, "hot": xs, "bytes": last[xb]["bytes"],
            "out_bytes": out_bytes,
            "hot_bytes": [last[x]["bytes"] for x in xs], "hot_s": [med[x] for x in xs],
            "stream_gbs": statistics.median(r["stream_gbs"] for r in runs[xb]), "floor_s": floor,
            "measured_s": med[xb], "a_s": a, "b_s": b, "est_s": a + b * xb, "resid": resid}


def line(r, label):
    f, m, e = r["floor_s"], r["measured_s"], r["est_s"]
    hot = " ".join(f"{x}:{t * 1e3:.3f}" for x, t in zip(r["hot"], r["hot_s"]))
    ws = f"{min(r['hot_bytes']) / 1e6:.1f}-{max(r['hot_bytes']) / 1e6:.1f} MB"
    return (f"{label:28s} t{r['threads']}  {r['bytes'] / 1e6:5.1f} MB  floor {f * 1e3:6.3f} ms  "
            f"measured {m * 1e3:6.3f} ms ({m / f:4.2f}x)  hot-cache work estimate {e * 1e3:6.3f} ms "
            f"({e / f:4.2f}x; a {r['a_s'] * 1e3:5.3f} ms + {r['b_s'] * 1e6:6.2f} us/{r['dim']})  "
            f"hot {r['dim']}:ms {hot} ws {ws} resid {r['resid'] * 100:3.1f}%  -> {verdict(m, e, f)}")


def summary(path):
    rows = [json.loads(s) for s in open(path) if s.strip()]
    print(f"{'op':28s} {'thr':>3s} {'MB':>5s} {'floor ms':>8s} {'measured ms':>14s} {'GB/s':>5s} {'stream':>6s} "
          f"{'hot-work est ms':>16s} {'meas/est':>8s} {'out GB/s':>8s} {'resid':>5s}  verdict")
    for r in rows:
        f, m, e = r["floor_s"], r["measured_s"], r["est_s"]
        print(f"{r['label']:28s} {r['threads']:3d} {r['bytes'] / 1e6:5.1f} {f * 1e3:8.3f} "
              f"{m * 1e3:7.3f} ({m / f:4.2f}x) {r['bytes'] / m / 1e9:5.1f} {r['stream_gbs']:6.1f} "
              f"{e * 1e3:8.3f} ({e / f:4.2f}x) {m / e:8.2f} {r['out_bytes'] / e / 1e9:8.1f} {r['resid'] * 100:4.1f}%  "
              f"{verdict(m, e, f)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--threads", default="2 1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--out")
    ap.add_argument("--summary")
    ap.add_argument("problem", nargs="*")
    o = ap.parse_args()
    if o.summary:
        return summary(o.summary)
    label, op, args = o.problem[0], o.problem[1], o.problem[2:]
    for t in map(int, o.threads.split()):
        r = measure(o.conform, op, args, t, o.rounds, o.reps)
        r["label"] = label
        print(line(r, label), flush=True)
        if o.out:
            with open(o.out, "a") as f:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    sys.exit(main())
