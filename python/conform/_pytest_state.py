"""The pytest session's side of conform.parametrize: one run directory per export per session
(shared by pytest-xdist workers, which inherit the session id through the environment), and the
record of every case a test checked, which the plugin (conform.pytest_plugin) judges into one
report at the end of the session."""
import json
import os
import shutil
import time
import uuid

ENV = "CONFORM_PYTEST_SESSION"
STATE = {"uid": None, "suites": {}}
KEEP_S = 2 * 86400   # run directories and session records older than this are removed


def start(worker):
    """The plugin's pytest_configure: a fresh session id (the controller, or a run without xdist),
    or the controller's (an xdist worker)."""
    uid = os.environ.get(ENV) if worker else None
    STATE["uid"] = uid or uuid.uuid4().hex[:12]
    os.environ[ENV] = STATE["uid"]
    if not worker:
        prune()
    return STATE["uid"]


def uid():
    if STATE["uid"] is None:   # parametrize used without the plugin: a session of this process
        STATE["uid"] = os.environ.get(ENV) or uuid.uuid4().hex[:12]
    return STATE["uid"]


def cache_root():
    import conform
    return conform._cache_root(None)


def session_dir(session_uid=None):
    return os.path.join(cache_root(), "sessions", session_uid or uid())


def session_suite(name, op, dtype, seed, filt, workdir):
    import conform
    key = (name, repr(op), dtype, seed, filt, workdir)
    if key not in STATE["suites"]:
        s = conform.suite(name, op=op, dtype=dtype, seed=seed, filter=filt, workdir=workdir,
                          run_dir=lambda root, export: os.path.join(root, "runs", "%s-%s" % (export, uid())))
        s._session = True
        STATE["suites"][key] = s
    return STATE["suites"][key]


def record_checked(suite_, case_id):
    """One line per case a test checked, in this session's folder (one file per process)."""
    d = session_dir()
    os.makedirs(d, exist_ok=True)
    line = {"id": case_id, "run_dir": suite_.run_dir, "conform": suite_.conform, "suite": suite_.suite_arg,
            "ops": suite_.ops, "dtype": suite_.dtype, "seed": suite_.seed, "filter": suite_.filter,
            "export": suite_.export}
    with open(os.path.join(d, "checked-%d.jsonl" % os.getpid()), "a") as f:
        f.write(json.dumps(line) + "\n")


def checked(session_uid):
    """{run_dir: (the suite's fields, [case ids in check order])} of a session."""
    d = session_dir(session_uid)
    groups = {}
    if not os.path.isdir(d):
        return groups
    for name in sorted(os.listdir(d)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(d, name)) as f:
            for line in f:
                r = json.loads(line)
                g = groups.setdefault(r["run_dir"], (r, []))
                if r["id"] not in g[1]:
                    g[1].append(r["id"])
    return groups


def prune():
    """Removes run directories and session records older than KEEP_S (never this session's)."""
    now = time.time()
    for sub in ("runs", "sessions"):
        d = os.path.join(cache_root(), sub)
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            p = os.path.join(d, name)
            try:
                if now - os.stat(p).st_mtime > KEEP_S:
                    shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.unlink(p)
            except OSError:
                pass
