"""conform-torch --hunt (tools/torch_runner.py): a hunt of PyTorch CPU whose rounds reach one
runner process over conform_hunt's relay, so torch is imported once for all of them (needs numpy,
torch and torchvision; tests/python/run.sh skips it where they are missing).

Asserts that a short finite grid_sampler_2d hunt with the PyTorch waivers runs several rounds
and finds nothing, that the runner's own options and conform hunt's mix in any order, and that a
misspelt conform option is conform's usage error (exit 2).

usage: python3 tests/python/test_torch_hunt.py [build/conform]"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CONFORM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CONFORM", "build/conform"))
RUNNER = [sys.executable, os.path.join(ROOT, "tools", "torch_runner.py")]


def hunt(*args):
    env = dict(os.environ, CONFORM=CONFORM)
    p = subprocess.run(RUNNER + ["--hunt"] + list(args), cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stderr


def main():
    out = os.path.join(tempfile.mkdtemp(prefix="test_torch_hunt_"), "FOUND.json")
    rc, err = hunt("grid_sampler_2d", "--cases", "48", "--batch", "16", "--device", "cpu", "--finite",
                   "--threads", "1", "--waivers", "cases/waivers_pytorch_cpu.json", "--out", out, "--quiet")
    summary = [l for l in err.splitlines() if l.startswith("hunt grid_sampler_2d on dir:")]
    assert rc == 0, "exit %d, expected 0 (nothing found):\n%s" % (rc, err)
    assert summary and ": 48 cases in" in summary[0], err   # three rounds of 16, one process
    assert "1 waivers of cases/waivers_pytorch_cpu.json apply to grid_sampler_2d" in summary[0], summary[0]
    rc, err = hunt("grid_sampler_2d", "--cases", "4", "--no-such-option", "1")
    assert rc == 2 and "no-such-option" in err, "exit %d, expected 2:\n%s" % (rc, err)
    print("torch hunt test: ok (48 cases in 3 rounds through one runner process; bad option exit 2)")


if __name__ == "__main__":
    main()
