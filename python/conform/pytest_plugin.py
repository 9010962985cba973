"""pytest plugin of the conform package (loaded by the installed entry point, pytest11): the
session side of @conform.parametrize. Every case a test checked (case.check) is judged again, at
the end of the session, in one `conform run --impl dir:` per export, into one report (report.html,
report.md, junit.xml, report.json) under --conform-report DIR (default: conform-report/ in the
rootdir; one subfolder per export when the session used several). With pytest-xdist the
controller writes it, from what every worker checked. From a checkout without the install:
`python3 -m pytest -p conform.pytest_plugin` with python/ on PYTHONPATH."""
import os

from . import _pytest_state as state


def pytest_addoption(parser):
    g = parser.getgroup("conform")
    g.addoption("--conform-report", metavar="DIR", default=None,
                help="where the session's conform report goes (default: conform-report/ in the rootdir)")
    g.addoption("--conform-waivers", metavar="FILE", default=None,
                help="waivers for case.check and the session report (default: conform's)")


def pytest_configure(config):
    state.start(worker=hasattr(config, "workerinput"))
    state.STATE["waivers"] = config.getoption("conform_waivers")


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput"):   # an xdist worker: the controller judges
        return
    import conform
    groups = state.checked(state.STATE["uid"])
    if not groups:
        return
    top = config.getoption("conform_report") or os.path.join(str(config.rootdir), "conform-report")
    results = []
    for run_dir, (r, ids) in sorted(groups.items()):
        rd = top if len(groups) == 1 else os.path.join(top, os.path.basename(run_dir))
        s = conform.Suite(r["conform"], r["suite"], r["ops"], r["dtype"], r["seed"], r["filter"], r["export"], run_dir)
        try:
            v = s.judge_ids(ids, waivers=state.STATE.get("waivers"), report_dir=rd)
        except conform.ConformError as e:
            results.append("conform: the session report of %s failed: %s" % (r["suite"], e))
            continue
        results.append("conform report of %d checked cases (%s, %s): %s\n  %s"
                       % (len(ids), r["suite"], r["dtype"], str(v).splitlines()[0], v.reports["html"]))
    config._conform_results = results


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for line in getattr(config, "_conform_results", []):
        terminalreporter.write_line(line)
