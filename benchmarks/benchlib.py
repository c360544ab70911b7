"""What the benchmarks share: paths, running a module or a command as a timed process, counting the bench user's API
requests in the testbed's audit log, machine information, number formatting and writing the results.

Imported by benchmarks/run.py (FBC engine vs opm), benchmarks/olm/run.py (olm_operator vs kubernetes.core) and
benchmarks/canary/run.py (daemonset_canary vs the DaemonSet controller's rolling update); each puts
``benchmarks/`` on ``sys.path`` first. This is benchmark tooling, not part of the collection.
"""

import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
COLLECTIONS = os.path.join(REPO, ".build", "collections")
CACHE = os.environ.get("KUBEFORGE_BENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "kubeforge-bench")
TESTS = os.path.join(REPO, "tests")  # the testbed package

# The audit log is written after each response: wait this long after a run before counting its requests.
AUDIT_SETTLE_S = 1.0
DISCOVERY_RE = re.compile(r"^/(version|openapi/.*|api|apis|api/[^/]+|apis/[^/]+|apis/[^/]+/[^/]+)$")
NAMESPACE_RE = re.compile(r"/namespaces/([^/?]+)")


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


# ----------------------------------------------------------------------------------------------- numbers


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=2):
    return "-" if value is None else ("%.*f" % (digits, value))


def mark(ok):
    return "✅" if ok else "❌"


def rel(later, earlier):
    return None if later is None or earlier is None else round(later - earlier, 3)


def stamp(text):
    """Epoch seconds of an RFC 3339 UTC timestamp with microseconds (audit events)."""
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


# ------------------------------------------------------------------------------------------- environment


def _output(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, cwd=REPO, check=False).stdout.strip()  # noqa: S603
    except OSError:
        return None


def machine(dirty_paths=("plugins",)):
    """Where and when a benchmark ran: date, host, CPU, memory, load, Python, git commit and whether ``dirty_paths``
    have uncommitted changes."""
    mem_kb = cpu = None
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": platform.node(),
        "kernel": platform.release(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "mem_gib": round(mem_kb / 2**20, 1) if mem_kb else None,
        "loadavg_start": os.getloadavg(),
        "python": platform.python_version(),
        "git_head": _output(["git", "rev-parse", "--short", "HEAD"]),
        "git_dirty": bool(_output(["git", "status", "--porcelain", "--", *dirty_paths])),
    }


def write_results(results, table, out=None, markdown=None):
    """Write the raw results (JSON) and the Markdown table where asked, and print the table."""
    if out:
        with open(out, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")
    if markdown:
        with open(markdown, "w") as f:
            f.write(table)
    print(table)


# ------------------------------------------------------------------------------------------- processes


def ensure_collection_link():
    """Make the working tree importable as ansible_collections.kubeforge.operators (as conftest.py does)."""
    link = os.path.join(COLLECTIONS, "ansible_collections", "kubeforge", "operators")
    if not os.path.islink(link) and not os.path.isdir(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(REPO, link)


def site_packages():
    return [p for p in sys.path if p.endswith("site-packages")]


def module_env(tmpdir):
    """Environment of every measured module process (ours and an anchor alike).

    TMPDIR is private to the run: kubernetes.core keeps its discovery cache in the temp dir (keyed by API host and
    OS user), so no other job's cache writes or invalidations reach the measurement. Bytecode is cached outside
    the repository (warm imports, as for an installed collection).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("K8S_AUTH_") and k not in ("KUBECONFIG", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = os.pathsep.join([COLLECTIONS] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONPYCACHEPREFIX"] = os.path.join(CACHE, "pycache")
    env["TMPDIR"] = tmpdir
    return env


# Fills kubernetes.core's discovery cache file (in $TMPDIR) for the given kinds. The file is keyed by API server and
# OS user, not by Kubernetes user, so the admin kubeconfig (not audited) serves.
WARM_DISCOVERY = """
import json, sys
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
client = get_api_client(kubeconfig=sys.argv[1])
for kind, api_version in json.loads(sys.argv[2]):
    client.resource(kind, api_version)
"""


def warm_discovery(kubeconfig, env, python, kinds):
    """Warm the bytecode (``env``'s cache) and kubernetes.core's discovery cache for ``kinds`` ((kind, apiVersion))."""
    subprocess.run([python, "-c", WARM_DISCOVERY, kubeconfig, json.dumps(list(kinds))], env=env, check=True, capture_output=True)  # noqa: S603


def timed_run(argv, env, timeout):
    """Run argv; wall time (perf_counter), start/end (epoch), CPU seconds of the process tree (wait4), load."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.time()
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, close_fds=True)  # noqa: S603
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        end = time.time()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    return {
        "wall_s": round(wall, 4),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "maxrss_mib": round(usage.ru_maxrss / 1024.0, 1),
        "start": start,
        "end": end,
        "rc": proc.returncode,
        "load1": os.getloadavg()[0],
        "stdout": stdout,
        "stderr": stderr,
    }


def run_module_subprocess_timed(module, args, workdir, env, python, timeout=900, prefix=()):
    """One module as Ansible runs it locally (args file, JSON result on stdout); returns timing and result.

    ``prefix``: interpreter options before ``-m`` (e.g. ``("-m", "cProfile", "-o", FILE)`` to profile the run).
    """
    args_file = os.path.join(workdir, "%s-args.json" % module.rsplit(".", 1)[1])
    module_args = dict(args, _ansible_check_mode=False, _ansible_diff=False, _ansible_tmpdir=workdir)
    with open(args_file, "w") as f:
        json.dump({"ANSIBLE_MODULE_ARGS": module_args}, f)
    argv = [python, *prefix, "-m", module, args_file]
    timed = timed_run(argv, env, timeout)
    try:
        result = json.loads(timed.pop("stdout"))
    except ValueError:
        result = {"failed": True, "msg": "no JSON from %s (exit %s): %s" % (module, timed["rc"], timed["stderr"][-2000:])}
    timed.pop("stderr")
    timed["result"] = result
    return timed


# --------------------------------------------------------------------------------------- audited requests


def is_discovery(uri):
    return bool(DISCOVERY_RE.match(uri.split("?")[0]))


def requests_since(bed, offset, namespace, run=None):
    """The bench user's requests after ``offset``, once the log has settled: ``(ours, foreign, timing)``.

    ``foreign`` are requests into other namespaces (someone else using the bench user at the same time); they are
    reported and left out of the count. Cluster-scoped requests (discovery among them) count as ours. ``timing``
    (with ``run``) places the requests in the run, from the audit events' microsecond timestamps.
    """
    time.sleep(AUDIT_SETTLE_S)
    requests = bed.audit_requests(offset)
    while True:  # until two reads agree
        time.sleep(0.3)
        again = bed.audit_requests(offset)
        if len(again) == len(requests):
            break
        requests = again
    ours, foreign = [], []
    for verb, uri, code in requests:
        match = NAMESPACE_RE.search(uri)
        (foreign if match and match.group(1) != namespace else ours).append([verb, uri, code])
    return ours, foreign, (request_timing(bed, offset, namespace, run) if run else None)


def request_timing(bed, offset, namespace, run):
    """When the run's requests arrived and completed at the API server, relative to the process start.

    Returns ``first_request_s`` (process start to the first request: interpreter start, imports, client set-up),
    ``after_last_response_s`` (the last non-watch response to the process end) and ``server_s`` (summed API server
    time of the non-watch requests), plus the per-request ``timeline``.
    """
    with open(bed.audit_log, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    events = {}
    for line in data[: data.rfind(b"\n") + 1].splitlines():
        event = json.loads(line)
        uri = event.get("requestURI", "")
        match = NAMESPACE_RE.search(uri)
        if match and match.group(1) != namespace:
            continue
        entry = events.setdefault(event["auditID"], {"verb": event.get("verb"), "uri": uri})
        entry["received"] = stamp(event["requestReceivedTimestamp"])
        if event.get("stage") in ("ResponseComplete", "ResponseStarted") and "done" not in entry:
            entry["done"] = stamp(event["stageTimestamp"])
    rows = sorted(events.values(), key=lambda e: e["received"])
    if not rows:
        return None
    plain = [e for e in rows if e["verb"] != "watch" and "done" in e]
    return {
        "first_request_s": rel(rows[0]["received"], run["start"]),
        "after_last_response_s": rel(run["end"], max(e["done"] for e in plain)) if plain else None,
        "server_s": round(sum(e["done"] - e["received"] for e in plain), 4),
        "timeline": [
            [rel(e["received"], run["start"]), rel(e.get("done"), run["start"]), e["verb"], e["uri"].replace("/namespaces/%s" % namespace, "/namespaces/<ns>")]
            for e in rows
        ],
    }


def brief_requests(requests, namespace):
    """``verb URI code`` lines with the namespace shortened to ``<ns>``."""
    return ["%s %s %s" % (verb, uri.replace("/namespaces/%s" % namespace, "/namespaces/<ns>"), code) for verb, uri, code in requests]
