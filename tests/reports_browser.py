"""What the first screen of each report says, rendered by headless Chromium (Debian's chromium).

Three runs of the smoke suite's RoIAlign families: one that passes (our optimized path), one that
fails (the faulty plugin that scales the RoIAlign backward's outputs), and one judged from a device directory where every
rotated RoIAlign output is missing. For each, report.html is rendered at 1280x800: a screenshot
goes to OUT/<run>.png, and a copy of the page with a probe script appended gives the text laid out
inside the first screen and the page's width. Then the first lines of report.md, junit.xml, the
console's last line and report.json's summary are checked the same way. A fourth run holds every
kind of failure (a wrong output, an edited input, missing outputs): its failing rows must come
failed first, then error, then missing, every case must have one anchor, and a link to a missing
case (inside a collapsed group) and to the failed one must show its row.

Standard library only. Skipped, saying so, where chromium is absent (make test-browser installs it).
usage: /usr/bin/python3 tests/reports_browser.py build/conform OUT
"""
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import urllib.parse

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


# the order and the anchors of the failures: the statuses of the anchored failing rows in page
# order, every anchor once, and where the row a link points to is once the page has followed it
ANCHOR_PROBE = """<script>
window.addEventListener('load', function () {
  var failing = ['failed', 'crashed', 'timeout', 'error', 'missing'], order = [], ids = {}, dup = 0, n = 0;
  document.querySelectorAll('tr[id]').forEach(function (tr) {
    n++; if (ids[tr.id]) dup++; ids[tr.id] = 1;
    if (failing.indexOf(tr.className) >= 0) order.push(tr.className);
  });
  var t = document.getElementById(decodeURIComponent(location.hash.slice(1))), r = t && t.getBoundingClientRect();
  var d = t && t.closest('details');
  var pre = document.createElement('pre'); pre.id = 'anchor-probe';
  pre.textContent = JSON.stringify({order: order, anchors: n, duplicates: dup, found: !!t,
                                    closed_group: !!(d && !d.open), top: r ? r.top : -1, height: r ? r.height : 0});
  document.body.appendChild(pre);
});
</script>"""


def anchors(exe, html, case_id):
    """what ANCHOR_PROBE saw in a copy of html opened at #case_id"""
    probe = html[:-5] + "_anchors.html"
    with open(html) as f, open(probe, "w") as g:
        g.write(f.read().replace("</body>", ANCHOR_PROBE + "</body>"))
    url = "file://" + probe + "#" + urllib.parse.quote(case_id, safe="/=,")
    dom = browser(exe, "--virtual-time-budget=5000", "--dump-dom", url).stdout
    m = re.search(r'<pre id="anchor-probe">(.*?)</pre>', dom, re.S)
    if not m:
        raise AssertionError("the anchor probe did not run in %s" % probe)
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))


def npy_bump(path):
    """the first element of a little-endian float32 .npy plus one (standard library only)"""
    data = bytearray(open(path, "rb").read())
    start = 10 + struct.unpack_from("<H", data, 8)[0]
    struct.pack_into("<f", data, start, struct.unpack_from("<f", data, start)[0] + 1.0)
    open(path, "wb").write(bytes(data))


def device_dir_with_every_failure():
    """RoIAlign's smoke cases with one wrong output (failed), one input edited since the export
    (error) and the rotated ones' outputs removed (missing): (dir, the failed id, a missing id)"""
    d = device_dir_with_missing_outputs()
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    plain = [c for c in manifest["cases"] if c["op"] == "roi_align" and "outputs" in c and "expect_error" not in c]
    wrong, edited = plain[0], plain[1]
    npy_bump(os.path.join(d, wrong["outputs"]["output"]["path"]))
    with open(os.path.join(d, edited["inputs"]["input"]), "ab") as f:
        f.write(b"\0")
    lost = [c for c in manifest["cases"] if c["op"] == "roi_align_rotated" and "outputs" in c]
    return d, wrong["id"], lost[-1]["id"]


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
    # every kind of failure: wrong answers first, one anchor per case, a link opens its group
    ex, failed_id, missing_id = device_dir_with_every_failure()
    d, rc, last = run("mixed", "--impl", "dir:" + ex)
    html = os.path.join(d, "report.html")
    report = json.load(open(os.path.join(d, "report.json")))
    text, width = first_screen(exe, html)
    expect(width <= W, "mixed: the page is %d px wide, more than %d" % (width, W), text)
    got = anchors(exe, html, missing_id)
    ranks = {"failed": 0, "crashed": 1, "timeout": 2, "error": 3, "missing": 4}
    order = got["order"]
    print("mixed run (exit %d): %s\n  failing rows in page order: %s ... %s; %d anchors, %d repeated; #%s: found %s, top %.0f" %
          (rc, last, order[:3], order[-2:], got["anchors"], got["duplicates"], missing_id, got["found"], got["top"]))
    expect(rc == 1 and order and order[0] == "failed" and "error" in order and "missing" in order,
           "mixed: the failures are not failed first, then error and missing: %s" % order, last)
    expect(all(ranks[a] <= ranks[b] for a, b in zip(order, order[1:])), "mixed: failures out of order: %s" % order, last)
    expect(got["anchors"] == len(report["cases"]) and got["duplicates"] == 0,
           "mixed: %d anchors (%d repeated) for %d cases" % (got["anchors"], got["duplicates"], len(report["cases"])), last)
    on_screen = lambda a: a["found"] and not a["closed_group"] and a["height"] > 0 and a["top"] < H and a["top"] + a["height"] > 0
    expect(on_screen(got),
           "mixed: the link to %s does not show its row (inside a closed group, or off screen): %s" % (missing_id, got), last)
    failed_at = anchors(exe, html, failed_id)
    expect(on_screen(failed_at), "mixed: the link to %s does not show its row: top %.1f" % (failed_id, failed_at["top"]), last)
    browser(exe, "--screenshot=" + os.path.join(OUT, "mixed.png"), "file://" + html)
    print("screenshots: " + ", ".join(sorted(glob.glob(os.path.join(OUT, "*.png")))))
    print("rendered: a passing, a failing and a missing-output run; first screens, widths and every format's first lines "
          "checked; a run with every kind of failure: failures first, one anchor per case, links that open their group")
    return 0


if __name__ == "__main__":
    sys.exit(main())
