"""What the first screen of each report says, rendered by headless Chromium (Debian's chromium).

Three runs of the smoke suite's RoIAlign families: one that passes (our optimized path), one that
fails (the faulty plugin that scales the RoIAlign backward's outputs), and one judged from a device directory where every
rotated RoIAlign output is missing. For each, report.html is rendered at 1280x800: a screenshot
goes to OUT/<run>.png, and a copy of the page with a probe script appended gives the text laid out
inside the first screen and the page's width. Then the first lines of report.md, junit.xml, the
console's last line and report.json's summary are checked the same way.

Standard library only. Skipped, saying so, where chromium is absent (make test-browser installs it).
usage: /usr/bin/python3 tests/reports_browser.py build/conform OUT
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

CONFORM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/conform")
OUT = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "build/browser")
BUILD = os.path.dirname(CONFORM)
W, H = 1280, 800
SELECT = ["cases/smoke.json", "--threads", "2", "--quiet"]
OPS = ["--op", "roi_align", "--op", "roi_align_rotated"]

STATUSES = ["passed", "failed", "error", "waived", "crashed", "timeout", "not_implemented", "missing"]

PROBE = """<script>
window.addEventListener('load', function () {
  var seen = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (var n = walk.nextNode(); n; n = walk.nextNode()) {
    var r = document.createRange(); r.selectNodeContents(n);
    var b = r.getBoundingClientRect(), t = n.textContent.trim();
    var hidden = n.parentElement && n.parentElement.closest('details:not([open]) > :not(summary)');
    if (t && !hidden && b.height > 0 && b.top < %d && b.bottom > 0) seen.push(t);
  }
  var pre = document.createElement('pre'); pre.id = 'first-screen-probe';
  pre.textContent = JSON.stringify({text: seen.join(' | '), width: document.documentElement.scrollWidth});
  document.body.appendChild(pre);
});
</script>""" % H


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(exe, *args):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--allow-file-access-from-files",
           "--window-size=%d,%d" % (W, H)] + list(args)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, timeout=120)


def first_screen(exe, html):
    """(text within the first 1280x800, page width in px) of a copy of html with the probe appended"""
    probe = html[:-5] + "_probe.html"
    with open(html) as f, open(probe, "w") as g:
        g.write(f.read().replace("</body>", PROBE + "</body>"))
    dom = browser(exe, "--virtual-time-budget=5000", "--dump-dom", "file://" + probe).stdout
    m = re.search(r'<pre id="first-screen-probe">(.*?)</pre>', dom, re.S)
    if not m:
        raise AssertionError("the probe did not run in %s" % probe)
    got = json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    return got["text"], got["width"]


def run(name, *extra):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    ops = [] if "--op" in extra else OPS
    p = subprocess.run([CONFORM, "run"] + SELECT + ops + ["--report-dir", d] + list(extra), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return d, p.returncode, p.stdout.strip().splitlines()[-1]


def device_dir_with_missing_outputs():
    d = os.path.join(OUT, "export")
    shutil.rmtree(d, ignore_errors=True)
    subprocess.run([CONFORM, "export", "cases/smoke.json", "--op", "roi_align", "--op", "roi_align_rotated",
                    "--out", d, "--outputs", "optimized", "--threads", "2"], check=True, stdout=subprocess.DEVNULL)
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    removed = 0
    for c in manifest["cases"]:
        if c["op"] == "roi_align_rotated":
            for o in c.get("outputs", {}).values():
                p = os.path.join(d, o["path"])
                if os.path.exists(p):
                    os.remove(p)
                    removed += 1
    assert removed > 0, "no rotated output to remove"
    return d


def expect(cond, what, seen):
    if not cond:
        raise AssertionError("%s\n  first screen: %s" % (what, seen[:1500]))


def main():
    exe = chromium()
    if not exe:
        print("SKIPPED report rendering test (tests/reports_browser.py): no chromium (make test-browser installs it)")
        return 0
    os.makedirs(OUT, exist_ok=True)
    runs = {"passing": run("passing"),
            # the faulty plugin scales every RoIAlign backward output by 1.001
            "failing": run("failing", "--op", "roi_align", "--op", "roi_align_v2_backward",
                           "--impl", "plugin:" + os.path.join(BUILD, "plugins", "faulty_wrong.so")),
            "missing": run("missing", "--impl", "dir:" + device_dir_with_missing_outputs())}
    for name, (d, rc, last) in runs.items():
        html = os.path.join(d, "report.html")
        browser(exe, "--screenshot=" + os.path.join(OUT, name + ".png"), "file://" + html)
        text, width = first_screen(exe, html)
        md = open(os.path.join(d, "report.md")).read().splitlines()[:8]
        junit = open(os.path.join(d, "junit.xml")).read()
        summary = json.load(open(os.path.join(d, "report.json")))["summary"]
        print("%s run (exit %d): %s\n  first screen: %s\n  width %d px; report.md: %s" % (name, rc, last, text[:600], width, md[4:6]))
        expect(width <= W, "%s: the page is %d px wide, more than %d" % (name, width, W), text)
        expect("conform report" in text, "%s: no title on the first screen" % name, text)
        if name == "passing":
            expect(rc == 0 and "PASS" in text, "passing: no PASS on the first screen", text)
            expect("standards that say otherwise" not in text, "passing: the standards-disagreement table is open on the first screen", text)
        if name == "failing":
            expect(rc == 1 and "FAIL" in text and "failed" in text, "failing: no FAIL and failed count", text)
            expect("Failures" in text, "failing: the failures do not start on the first screen", text)
        if name == "missing":
            n = int(summary["missing"])
            expect(rc == 1 and n > 0, "missing: exit %d, %d missing" % (rc, n), text)
            expect(re.search(r"%d missing" % n, text), "missing: the first screen does not say %d missing" % n, text)
            expect(any("%d missing" % n in l for l in md), "missing: report.md's first lines do not say it", md)
            expect(re.search(r'<testsuites[^>]*failures="%d"' % (int(summary["failed"]) + n), junit) or
                   ('missing="%d"' % n) in junit, "missing: junit.xml does not count the missing outputs", junit[:400])
            expect(re.search(r"roi_align_rotated[^|]*\|[^|]*\|", text), "missing: no roi_align_rotated row on the first screen", text)
        want = "%d passed, %d failed" % (summary["passed"], summary["failed"]) + "".join(
            ", %d %s" % (summary[k], k.replace("_", " ")) for k in STATUSES[2:] if summary[k])
        expect(last == want, "%s: the console's last line is '%s', not '%s'" % (name, last, want), last)
    print("screenshots: " + ", ".join(sorted(glob.glob(os.path.join(OUT, "*.png")))))
    print("rendered: a passing, a failing and a missing-output run; first screens, widths and every format's first lines checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
