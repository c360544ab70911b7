"""Canary DaemonSet benchmark (issue #9): daemonset_canary against the DaemonSet controller's own rolling update.

On N KWOK nodes of its own (default 100 and 1000), for each N: two DaemonSets with the same spec (RollingUpdate,
``maxUnavailable: 10%``), settled on every node; then, alternating, ``--runs`` times each:

- native: ``kubectl set image`` followed by ``kubectl rollout status`` (the controller's rolling update at 10%);
- ours: the ``daemonset_canary`` module as a module process (``python -m <module> args.json``, the way Ansible runs
  a module locally), ``images`` and ``batch: 10%``: one canary node at ``maxUnavailable: 1``, then 10% batches, then
  the original strategy back.

Both authenticate as the testbed's audited bench user, so the audit log gives every request each side issued (by
verb and resource). The benchmark process watches both DaemonSets and timestamps when the new template was
applied, when the canary phase ended and when the rollout was complete. After every run the DaemonSet and its pods
are compared: every node on the new image, updated == available == desired, the strategy the original one, no
canary annotation left. Targets: ours/native wall time <= 1.10 (medians) and ours' API requests independent of N.

The nodes are ``bench-node-<run id>-<i>`` (new names in every run), labelled and tainted
``kubeforge.io/bench=canary`` (NoSchedule): only the benchmark's DaemonSets (nodeSelector + toleration) run there,
and no other workload on the shared testbed lands on them. They, the namespace and the DaemonSets are deleted at
the end (``--keep`` keeps them). The testbed is brought up when it is not running, and never restarted.

    .venv/bin/python benchmarks/canary/run.py [--nodes 100:3,1000:2] [--out r.json] [--markdown r.md]

This is a benchmark, not a test: nothing here asserts on timings.
"""

import argparse
import collections
import json
import os
import pstats
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import (  # noqa: E402
    TESTS,
    brief_requests,
    ensure_collection_link,
    fmt,
    log,
    machine,
    mark,
    median,
    module_env,
    rel,
    requests_since,
    run_module_subprocess_timed,
    timed_run,
    warm_discovery,
    write_results,
)

sys.path.insert(0, TESTS)  # the testbed package

MODULE = "ansible_collections.kubeforge.operators.plugins.modules.daemonset_canary"
# New node names in every run. KWOK v0.8.0 takes a node made again under the name of one just deleted, whose Lease
# the garbage collector has not removed yet, for the old one: its Lease update conflicts in a tight loop and the other
# nodes' Leases are no longer renewed, so the node lifecycle controller marks their pods not Ready every minute and
# a second run on the same testbed never settled.
NODE_PREFIX = "bench-node-%s" % secrets.token_hex(3)
BENCH_LABEL, BENCH_VALUE = "kubeforge.io/bench", "canary"
TAINT = {"key": BENCH_LABEL, "value": BENCH_VALUE, "effect": "NoSchedule"}
IMAGE = "example.invalid/kubeforge/agent:%s"
CONTAINER = "agent"
BATCH = "10%"
STRATEGY = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": BATCH}}
CANARY_PREFIX = "operators.kubeforge.io/canary-"
SIDES = ("native", "ours")
DISCOVERY_KINDS = [("DaemonSet", "apps/v1"), ("Pod", "v1"), ("ControllerRevision", "apps/v1"), ("Event", "v1")]

WALL_TARGET = 1.10
# Functions in which a profiled run waits (for events, responses, other threads) rather than computes.
WAITING = ("acquire' of '_thread.lock", "read' of '_ssl._SSLSocket", "time.sleep", "select.", "recv_into", "'wait' of")
RUN_TIMEOUT = 1800


# ------------------------------------------------------------------------------------------------- cluster


def pids(bed):
    """Process id of each testbed component, read afresh from state.json (a restart by someone else changes one)."""
    try:
        with open(bed.state_file) as f:
            return {name: record.get("pid") for name, record in json.load(f).get("processes", {}).items()}
    except (OSError, ValueError):
        return {}


def wait_for_api(bed, timeout=900):
    """Wait until the testbed serves again (another job may be restarting a component)."""
    deadline = time.monotonic() + timeout
    while not bed._apiserver_ready():  # noqa: SLF001 - the API server is what the benchmark needs
        if time.monotonic() > deadline:
            raise SystemExit("the testbed is not running (waited %ss)" % timeout)
        time.sleep(2)


def retrying(bed, what, call, attempts=5):
    """``call()``, again after the API server is back when it fails on the way (connection refused, 5xx)."""
    for attempt in range(attempts):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - reported, and raised after the last attempt
            if attempt == attempts - 1:
                raise
            log("!! %s failed (%s: %s); waiting for the testbed and retrying" % (what, type(exc).__name__, str(exc)[:200]))
            time.sleep(2)
            wait_for_api(bed)
    return None


class Cluster:
    """Set-up, inspection and clean-up through the admin kubeconfig (not in the audit log, so never counted)."""

    def __init__(self, bed):
        from kubernetes import client
        from testbed.kube import api_client

        self.bed = bed
        self.api = api_client(bed.kubeconfig, pool=8)
        self.core = client.CoreV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)
        self.coordination = client.CoordinationV1Api(self.api)
        self.namespace = None
        self.strategies = {}  # DaemonSet name -> its updateStrategy as stored when created

    def nodes(self, count):
        """At least ``count`` benchmark nodes, Ready; returns the seconds it took."""
        started = time.monotonic()
        self.bed.scale_nodes(count, prefix=NODE_PREFIX, labels={BENCH_LABEL: BENCH_VALUE}, taints=[TAINT])
        return round(time.monotonic() - started, 1)

    def new_namespace(self):
        if self.namespace:  # made by an attempt that failed on the way (retrying)
            return self.namespace
        name = "bench-canary-%s" % os.urandom(3).hex()
        self.core.create_namespace({"metadata": {"name": name, "labels": {"kubeforge.io/benchmark": "canary"}}})
        self.namespace = name
        return name

    def create_daemonset(self, name, image):
        labels = {"app": name}
        body = {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": name, "labels": {"kubeforge.io/benchmark": "canary"}},
            "spec": {
                "selector": {"matchLabels": labels},
                "updateStrategy": STRATEGY,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": {BENCH_LABEL: BENCH_VALUE},
                        "tolerations": [dict(TAINT, operator="Equal")],
                        "containers": [{"name": CONTAINER, "image": image}],
                    },
                },
            },
        }
        from kubernetes.client.rest import ApiException

        try:
            self.apps.create_namespaced_daemon_set(self.namespace, body)
        except ApiException as exc:
            if exc.status != 409:  # 409: made by an attempt that failed on the way (retrying)
                raise

    def daemonset(self, name):
        return json.loads(self.apps.read_namespaced_daemon_set(name, self.namespace, _preload_content=False).data)

    def pods(self, name):
        return json.loads(self.core.list_namespaced_pod(self.namespace, label_selector="app=%s" % name, _preload_content=False).data)["items"]

    def wait_settled(self, name, nodes, timeout=900, stale_after=30):
        """Until the controller observed the DaemonSet and all ``nodes`` run an available pod of its template.

        When the node lifecycle controller missed KWOK's Lease renewals (the API server down for a while, or the
        KWOK Lease bug NODE_PREFIX avoids), it marks the nodes' pods not Ready, and nothing makes them Ready again
        (KWOK only readies new pods): after ``stale_after`` seconds such pods are deleted, and the controller
        replaces them.
        """
        started = time.monotonic()
        while True:
            ds = self.daemonset(name)
            if complete(ds) and (ds.get("status") or {}).get("desiredNumberScheduled") == nodes:
                return round(time.monotonic() - started, 1)
            if time.monotonic() - started > timeout:
                raise SystemExit("DaemonSet %s/%s did not settle on %d nodes in %ss: %s" % (self.namespace, name, nodes, timeout, ds.get("status")))
            if time.monotonic() - started > stale_after:
                stale = [p["metadata"]["name"] for p in self.pods(name) if stale_pod(p)]
                if stale:
                    log("!! %d pods of %s marked not Ready by the node lifecycle controller: deleting them" % (len(stale), name))
                    for pod in stale:
                        self.core.delete_namespaced_pod(pod, self.namespace)
                    started = time.monotonic() - stale_after / 2
            time.sleep(0.5)

    def state(self, name):
        """What a rollout left, comparable between the two sides."""
        ds = self.daemonset(name)
        spec, status = ds["spec"], ds.get("status") or {}
        pods = [p for p in self.pods(name) if not p["metadata"].get("deletionTimestamp")]
        images = collections.Counter(c["image"] for p in pods for c in p["spec"]["containers"])
        return {
            "images": [c["image"] for c in spec["template"]["spec"]["containers"]],
            "strategy": spec.get("updateStrategy"),
            "canary_annotations": sorted(k for k in (ds["metadata"].get("annotations") or {}) if k.startswith(CANARY_PREFIX)),
            "generation_observed": status.get("observedGeneration", 0) >= ds["metadata"]["generation"],
            "desired": status.get("desiredNumberScheduled"),
            "updated": status.get("updatedNumberScheduled"),
            "available": status.get("numberAvailable"),
            "pods": len(pods),
            "pod_images": dict(images),
            "nodes_with_pod": len({p["spec"].get("nodeName") for p in pods}),
        }

    def delete_namespace(self, wait=600):
        """Delete the namespace and wait until its pods are gone (before their nodes go)."""
        from kubernetes.client.rest import ApiException

        name = self.namespace
        if not name:
            return
        try:
            self.core.delete_namespace(name)
        except ApiException as exc:
            if exc.status != 404:
                log("!! deleting namespace %s: %s" % (name, exc.reason))
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                self.core.read_namespace(name)
            except ApiException as exc:
                if exc.status == 404:
                    self.namespace = None
                    return
            time.sleep(1)
        self.namespace = None
        log("!! namespace %s still terminating after %ss (deletion goes on)" % (name, wait))

    def delete_nodes(self, wait=300):
        selector = "%s=%s" % (BENCH_LABEL, BENCH_VALUE)
        self.core.delete_collection_node(label_selector=selector)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            left = json.loads(self.core.list_node(label_selector=selector, _preload_content=False).data)["items"]
            leases = json.loads(self.coordination.list_namespaced_lease("kube-node-lease", _preload_content=False).data)["items"]
            left += [lease for lease in leases if lease["metadata"]["name"].startswith(NODE_PREFIX + "-")]
            if not left:
                return
            time.sleep(1)
        log("!! %d benchmark nodes or their Leases still there after %ss" % (len(left), wait))


def stale_pod(pod):
    """Running with ready containers, but not Ready: marked so by the node lifecycle controller (see wait_settled)."""
    status = pod.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return status.get("phase") == "Running" and conditions.get("ContainersReady") == "True" and conditions.get("Ready") == "False"


def complete(ds):
    """``kubectl rollout status`` for a DaemonSet (dict): status observed, every node updated and available."""
    meta, status = ds.get("metadata") or {}, ds.get("status") or {}
    desired = status.get("desiredNumberScheduled", 0)
    return (
        status.get("observedGeneration", 0) >= meta.get("generation", 0)
        and status.get("updatedNumberScheduled", 0) >= desired
        and status.get("numberAvailable", 0) >= desired
    )


class DaemonSetWatch:
    """Watches one DaemonSet from this process (admin) and timestamps (``time.time()``) what each event shows.

    ``first`` maps a mark to the arrival time of the first event where it held: ``template`` (the new image is in
    the template), ``canary`` (phase annotation ``canary``), ``fast`` (phase ``fast``), ``first_updated`` (the new
    template observed and a node updated), ``complete`` (the new template rolled out, kubectl's condition) and
    ``restored`` (complete and no canary annotation left).
    """

    def __init__(self, cluster, name, image):
        self.cluster, self.name, self.image = cluster, name, image
        self.first = {}
        self.events = 0
        self._resp = None
        self._thread = None

    def __enter__(self):
        listing = json.loads(
            self.cluster.apps.list_namespaced_daemon_set(self.cluster.namespace, field_selector="metadata.name=%s" % self.name, _preload_content=False).data
        )
        for item in listing["items"]:
            self._seen(time.time(), item)
        self._resp = self.cluster.apps.list_namespaced_daemon_set(
            self.cluster.namespace,
            field_selector="metadata.name=%s" % self.name,
            watch=True,
            resource_version=listing["metadata"]["resourceVersion"],
            timeout_seconds=RUN_TIMEOUT,
            _preload_content=False,
        )
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _seen(self, when, ds):
        self.events += 1
        spec, status = ds.get("spec") or {}, ds.get("status") or {}
        phase = (ds["metadata"].get("annotations") or {}).get(CANARY_PREFIX + "phase")
        new = any(c.get("image") == self.image for c in spec["template"]["spec"]["containers"])
        observed = status.get("observedGeneration", 0) >= ds["metadata"]["generation"]
        marks = {
            "template": new,
            "canary": phase == "canary",
            "fast": phase == "fast",
            "first_updated": new and observed and status.get("updatedNumberScheduled", 0) >= 1,
            "complete": new and complete(ds),
            "restored": new and complete(ds) and phase is None,
        }
        for name, holds in marks.items():
            if holds and name not in self.first:
                self.first[name] = when

    def _read(self):
        from kubernetes.watch.watch import iter_resp_lines

        try:
            for line in iter_resp_lines(self._resp):
                when = time.time()
                event = json.loads(line)
                if event.get("type") in ("ADDED", "MODIFIED"):
                    self._seen(when, event["object"])
        except Exception:  # noqa: BLE001, S110 - the stream is closed by __exit__
            pass

    def __exit__(self, *exc):
        time.sleep(0.2)  # the last events of the run
        if self._resp is not None:
            try:
                self._resp.shutdown()
            except Exception:  # noqa: BLE001, S110
                pass
            self._resp.release_conn()
        if self._thread is not None:
            self._thread.join(5)

    def figures(self, run):
        return {"%s_at_s" % name: rel(when, run["start"]) for name, when in self.first.items()}


# ------------------------------------------------------------------------------------------------- running


def resource_of(uri):
    """``pods``, ``daemonsets``, ``daemonsets/status``... of a request URI (namespace and name left out)."""
    parts = uri.split("?")[0].strip("/").split("/")
    rest = parts[2:] if parts[:1] == ["api"] else parts[3:]
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]
    if not rest:
        return "/" + "/".join(parts)
    return rest[0] + ("/" + rest[2] if len(rest) >= 3 else "")


def by_resource(requests):
    counts = collections.Counter("%s %s" % (verb, resource_of(uri)) for verb, uri, _code in requests)
    return dict(sorted(counts.items()))


def kubectl_env(workdir):
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["HOME"] = os.path.join(workdir, "home")  # kubectl's own config and caches, private to this run
    return env


def run_native(bed, cluster, name, image, workdir):
    """``kubectl set image`` + ``kubectl rollout status`` as the bench user; one timed run."""
    kubectl = os.path.join(bed.state["bin"], "kubectl")
    base = [kubectl, "--kubeconfig", str(bed.bench_kubeconfig), "--cache-dir", os.path.join(workdir, "kube-cache"), "-n", cluster.namespace]
    env = kubectl_env(workdir)
    start, t0 = time.time(), time.perf_counter()
    patched = timed_run(base + ["set", "image", "daemonset/%s" % name, "%s=%s" % (CONTAINER, image)], env, 120)
    status = timed_run(base + ["rollout", "status", "daemonset/%s" % name, "--timeout=%ds" % RUN_TIMEOUT], env, RUN_TIMEOUT + 60)
    wall = time.perf_counter() - t0
    ok = patched["rc"] == 0 and status["rc"] == 0
    return {
        "wall_s": round(wall, 4),
        "cpu_s": round(patched["cpu_s"] + status["cpu_s"], 3),
        "maxrss_mib": max(patched["maxrss_mib"], status["maxrss_mib"]),
        "start": start,
        "end": time.time(),
        "load1": os.getloadavg()[0],
        "ok": ok,
        "output": (patched["stdout"] + status["stdout"][-500:] + ("" if ok else patched["stderr"] + status["stderr"])).strip(),
    }


def module_args(bed, cluster, name, image):
    return {
        "kubeconfig": str(bed.bench_kubeconfig),
        "name": name,
        "namespace": cluster.namespace,
        "images": {CONTAINER: image},
        "batch": BATCH,
        # The controller's own rollout waits for no soak: the machinery is compared, not the 5 s default policy wait
        # (KWOK pods never crash, so the soak could only add its 5 s).
        "canary_ready_seconds": 0,
        "wait_timeout": RUN_TIMEOUT,
    }


def run_ours(bed, cluster, name, image, workdir, env, prefix=()):
    run = run_module_subprocess_timed(MODULE, module_args(bed, cluster, name, image), workdir, env, sys.executable, timeout=RUN_TIMEOUT + 60, prefix=prefix)
    res = run.pop("result")
    run["ok"] = not res.get("failed") and res.get("phase") == "done" and res.get("changed") is True
    run["output"] = {k: res.get(k) for k in ("failed", "msg", "changed", "phase", "duration", "message", "desired_number_scheduled")}
    run["output"]["events"] = [e.get("reason") for e in res.get("events") or []]
    return run


def one_run(side, bed, cluster, nodes, index, workdir, env):
    name = "agent-%s" % side
    image = IMAGE % ("r%d" % (index + 1))
    before = cluster.state(name)
    offset = bed.audit_offset()
    with DaemonSetWatch(cluster, name, image) as watch:
        if side == "native":
            run = run_native(bed, cluster, name, image, workdir)
        else:
            run = run_ours(bed, cluster, name, image, workdir, env)
    requests, foreign, timing = requests_since(bed, offset, cluster.namespace, run)
    state = cluster.state(name)
    expected = dict(before, images=[image], pod_images={image: nodes}, strategy=cluster.strategies[name], canary_annotations=[])
    run.update(watch.figures(run))
    run.update(
        {
            "image": image,
            "requests": len(requests),
            # a JSON patch whose resourceVersion test failed (the DaemonSet's status moved on): read and patched again
            "guard_failures": sum(1 for verb, _uri, code in requests if verb == "patch" and code in (409, 422)),
            "requests_by_resource": by_resource(requests),
            "request_list": brief_requests(requests, cluster.namespace),
            "foreign_requests": foreign,
            "timing": timing,
            "state": state,
            "state_ok": state == expected and state["desired"] == state["updated"] == state["available"] == state["pods"] == state["nodes_with_pod"] == nodes,
            "watch_events": watch.events,
        }
    )
    log(
        "  N=%d %-6s run %d: %7.2fs wall, %6.2fs CPU, %3d requests; template at +%ss, canary passed +%ss, complete +%ss%s%s"
        % (
            nodes,
            side,
            index + 1,
            run["wall_s"],
            run["cpu_s"],
            len(requests),
            run.get("template_at_s"),
            run.get("fast_at_s"),
            run.get("complete_at_s"),
            "" if run["ok"] else "  FAILED: %s" % run["output"],
            "" if run["state_ok"] else "  STATE: %s (expected %s)" % (state, expected),
        )
    )
    return run


def profile_ours(bed, cluster, nodes, workdir, env, index, out_dir):
    """One extra, unmeasured ours run under cProfile (main thread only: the decisions, not the watch threads)."""
    name = "agent-ours"
    image = IMAGE % ("p%d" % index)
    path = os.path.join(out_dir, "canary-ours-%d.pstats" % nodes)
    run = run_ours(bed, cluster, name, image, workdir, env, prefix=("-m", "cProfile", "-o", path))
    stats = pstats.Stats(path)
    rows = []
    for (filename, line, func), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():
        if any(wait in func for wait in WAITING):
            continue
        rows.append(
            {"function": "%s:%d(%s)" % (filename.rsplit("/", 1)[-1], line, func), "calls": calls, "tottime": round(tottime, 3), "cumtime": round(cumtime, 3)}
        )
    top = sorted(rows, key=lambda r: r["tottime"], reverse=True)[:25]
    log("  profile N=%d: wall %.2fs, CPU %.2fs, %s; pstats in %s" % (nodes, run["wall_s"], run["cpu_s"], "ok" if run["ok"] else "FAILED", path))
    for row in top[:10]:
        log("    %8.3fs %8d  %s" % (row["tottime"], row["calls"], row["function"]))
    return {"wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "ok": run["ok"], "pstats": path, "top_tottime": top}


def bench_n(bed, cluster, nodes, runs, workdir, env, profile_dir=None):
    started = time.monotonic()
    setup = {"nodes_s": retrying(bed, "creating the nodes", lambda: cluster.nodes(nodes))}
    retrying(bed, "creating the namespace", cluster.new_namespace)
    for side in SIDES:
        retrying(bed, "creating a DaemonSet", lambda side=side: cluster.create_daemonset("agent-%s" % side, IMAGE % "r0"))
    setup["settle_s"] = {side: retrying(bed, "waiting for a DaemonSet", lambda side=side: cluster.wait_settled("agent-%s" % side, nodes)) for side in SIDES}
    for side in SIDES:
        name = "agent-%s" % side
        cluster.strategies[name] = retrying(bed, "reading a DaemonSet", lambda name=name: cluster.daemonset(name))["spec"]["updateStrategy"]
    log("N=%d: nodes ready after %ss, DaemonSets settled after %s s (namespace %s)" % (nodes, setup["nodes_s"], setup["settle_s"], cluster.namespace))
    measured = {side: [] for side in SIDES}
    discarded = []
    for i in range(runs):
        for side in SIDES if i % 2 == 0 else tuple(reversed(SIDES)):
            for _attempt in range(3):
                before = pids(bed)
                try:
                    run = one_run(side, bed, cluster, nodes, i, workdir, env)
                except Exception as exc:  # noqa: BLE001 - a restart of the testbed by someone else, mostly
                    run = {"side": side, "error": "%s: %s" % (type(exc).__name__, str(exc)[:500])}
                restarted = sorted(name for name, pid in pids(bed).items() if before.get(name) != pid)
                if "error" not in run and not restarted:
                    measured[side].append(run)
                    break
                run["restarted"] = restarted
                discarded.append(run)
                log("  N=%d %s run %d discarded (%s); repeating it" % (nodes, side, i + 1, run.get("error") or "restarted: " + ", ".join(restarted)))
                wait_for_api(bed)
                retrying(bed, "waiting for the DaemonSet to settle", lambda side=side: cluster.wait_settled("agent-%s" % side, nodes))
    profile = profile_ours(bed, cluster, nodes, workdir, env, runs, profile_dir) if profile_dir else None
    rss = bed.rss_mib()
    cluster.delete_namespace()

    return summarize(
        {
            "nodes": nodes,
            "runs": runs,
            "setup": setup,
            "measured": measured,
            "discarded": discarded,
            "testbed_rss_mib": rss,
            "profile": profile,
            "duration_s": round(time.monotonic() - started, 1),
        }
    )


MEDIANS = (
    "wall_s",
    "cpu_s",
    "requests",
    "guard_failures",
    "template_at_s",
    "canary_at_s",
    "fast_at_s",
    "first_updated_at_s",
    "complete_at_s",
    "restored_at_s",
)


def summarize(size):
    """Medians, ratios and comparisons of one size from its runs (also for --report)."""
    measured = size["measured"]
    for side in SIDES:
        for r in measured[side]:
            if "guard_failures" not in r:
                r["guard_failures"] = sum(1 for line in r["request_list"] if line.startswith("patch ") and line.endswith((" 409", " 422")))

    def med(side, key):
        return median([r.get(key) for r in measured[side]])

    medians = {key: {side: med(side, key) for side in SIDES} for key in MEDIANS}
    states = {json.dumps(comparable(r["state"]), sort_keys=True) for side in SIDES for r in measured[side]}
    size.update(
        {
            "medians": medians,
            "wall_ratio": medians["wall_s"]["ours"] / medians["wall_s"]["native"],
            "median_pair_ratio": median([o["wall_s"] / a["wall_s"] for o, a in zip(measured["ours"], measured["native"])]),
            "all_ok": all(r["ok"] and r["state_ok"] for side in SIDES for r in measured[side]),
            "same_state": len(states) == 1,
            "requests_by_resource": {side: measured[side][0]["requests_by_resource"] for side in SIDES},
            "request_counts": {side: [r["requests"] for r in measured[side]] for side in SIDES},
            "guard_failures": {side: [r["guard_failures"] for r in measured[side]] for side in SIDES},
            "module_maxrss_mib": max(r["maxrss_mib"] for r in measured["ours"]),
            "decomposition": decomposition(measured),
        }
    )
    return size


def decomposition(measured):
    """Where ours' wall time beyond native's goes, medians over the pairs (None where a run lacks a timestamp):
    ``start_up_s``, how much later ours' template lands (a Python module's start against kubectl's);
    ``canary_s``, the canary phase (template to phase fast), which native has no counterpart of;
    ``after_canary_ratio``, ours from the canary to the complete rollout against native from its template to the
    complete rollout: the same controller work at the same maxUnavailable, the part of the ratio that ours' watching
    and deciding can change;
    ``floor_ratio``, (native wall + start_up_s + canary_s) / native wall: ours' ratio were that part exactly 1.0."""
    rows = []
    for o, a in zip(measured["ours"], measured["native"]):
        try:
            start_up = o["template_at_s"] - a["template_at_s"]
            canary = o["fast_at_s"] - o["template_at_s"]
            after = (o["complete_at_s"] - o["fast_at_s"]) / (a["complete_at_s"] - a["template_at_s"])
        except (KeyError, TypeError, ZeroDivisionError):
            continue
        rows.append({"start_up_s": start_up, "canary_s": canary, "after_canary_ratio": after, "floor_ratio": (a["wall_s"] + start_up + canary) / a["wall_s"]})
    return {key: median([row[key] for row in rows]) if rows else None for key in ("start_up_s", "canary_s", "after_canary_ratio", "floor_ratio")}


def comparable(state):
    """A run's final state without the image tag (each run rolls out its own)."""
    return dict(state, images=len(state["images"]), pod_images=sorted(state["pod_images"].values()))


# ------------------------------------------------------------------------------------------------ report


def md_n(r):
    m = r["medians"]

    def row(label, key, digits=2, ratio=False):
        a, o = m[key]["native"], m[key]["ours"]
        return "| %s | %s | %s | %s |" % (label, fmt(a, digits), fmt(o, digits), fmt(o / a) if ratio and a else "")

    ok = r["wall_ratio"] <= WALL_TARGET
    lines = [
        "### %d nodes (%d alternating runs each, medians)" % (r["nodes"], r["runs"]),
        "",
        "| | native (kubectl set image + rollout status) | ours (daemonset_canary) | ours/native |",
        "|---|---:|---:|---:|",
        "| wall s | %s | %s | **%s** %s |" % (fmt(m["wall_s"]["native"]), fmt(m["wall_s"]["ours"]), fmt(r["wall_ratio"]), mark(ok)),
        row("CPU s of the client process(es)", "cpu_s", ratio=True),
        row("new template in the DaemonSet at s", "template_at_s"),
        row("first node updated at s", "first_updated_at_s"),
        row("canary passed (phase fast) at s", "fast_at_s"),
        row("rollout complete (kubectl's condition) at s", "complete_at_s"),
        row("original strategy back at s", "restored_at_s"),
        row("API requests", "requests", 0),
        row("of which failed guards (409/422 patch + its re-read)", "guard_failures", 0),
        "",
        "Runs (wall s): native %s; ours %s. Median of the per-pair ratios: %s."
        % (
            ", ".join(fmt(x["wall_s"]) for x in r["measured"]["native"]),
            ", ".join(fmt(x["wall_s"]) for x in r["measured"]["ours"]),
            fmt(r["median_pair_ratio"]),
        ),
        "Where ours' extra time goes (medians of the pairs): its template lands %s s later than native's (start-up), "
        "the canary takes %s s, and from the canary to the complete rollout ours takes %sx native's time from its template "
        "to the complete rollout (the same controller work). With that last part at exactly 1.0x ours would be at %sx: the "
        "floor that start-up and the canary set."
        % tuple(fmt((r.get("decomposition") or {}).get(key)) for key in ("start_up_s", "canary_s", "after_canary_ratio", "floor_ratio")),
        "Requests by verb and resource (first run): native %s; ours %s."
        % tuple(", ".join("`%s` %d" % kv for kv in r["requests_by_resource"][side].items()) for side in SIDES),
        "Outputs: %s. Module peak RSS %.0f MiB; testbed RSS after the runs: %s."
        % (
            "every run ended with every node on the new image, updated == available == desired == %d, the original "
            "strategy and no canary annotation, the same state on both sides" % r["nodes"]
            if r["all_ok"] and r["same_state"]
            else "**differ or failed** (see the JSON)",
            r["module_maxrss_mib"],
            ", ".join("%s %.0f MiB" % kv for kv in sorted(r["testbed_rss_mib"].items())),
        ),
    ]
    if r.get("profile"):
        p = r["profile"]
        lines += [
            "",
            "Profile of one more ours run (cProfile, main thread; wall %s s, CPU %s s), top by own time: %s."
            % (
                fmt(p["wall_s"]),
                fmt(p["cpu_s"]),
                "; ".join("`%s` %s s (%d calls)" % (x["function"], fmt(x["tottime"], 3), x["calls"]) for x in p["top_tottime"][:6]),
            ),
        ]
    return "\n".join(lines) + "\n"


def markdown(results):
    env = results["environment"]
    parts = [
        "## Canary DaemonSet benchmark (%s, %s CPUs, load average %.1f at the start, %.1f at the end; git %s%s)\n"
        % (
            env["date_utc"],
            env["cpus"],
            env["loadavg_start"][0],
            env.get("loadavg_end", [0])[0],
            env["git_head"],
            " + uncommitted plugins/" if env["git_dirty"] else "",
        )
    ]
    if env.get("ours_collections"):
        parts.append("Ours ran from the collections tree `%s`, not the working tree.\n" % env["ours_collections"])
    for r in results["sizes"]:
        parts.append(md_n(r))
    if len(results["sizes"]) > 1:
        counts = "; ".join(
            "%d nodes: %s (failed guards %s)"
            % (r["nodes"], ", ".join(str(c) for c in r["request_counts"]["ours"]), ", ".join(str(c) for c in r["guard_failures"]["ours"]))
            for r in results["sizes"]
        )
        base = {r["nodes"]: sorted({c - 2 * g for c, g in zip(r["request_counts"]["ours"], r["guard_failures"]["ours"])}) for r in results["sizes"]}
        same = len({json.dumps(v) for v in base.values()}) == 1 and all(len(v) == 1 for v in base.values())
        parts.append(
            "API requests of ours in every run by size: %s. Without the failed guards (a 409/422 patch and the GET "
            "before it, each) every run made %s requests %s.\n"
            % (counts, " and ".join("%s at %d nodes" % ("/".join(map(str, v)), n) for n, v in base.items()), mark(same))
        )
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------------- main


def clean_up(bed, cluster, keep):
    """Delete the namespace (its pods first) and the benchmark nodes; never raises, says what is left."""
    started = time.monotonic()
    namespace = cluster.namespace
    try:
        retrying(bed, "deleting the namespace", cluster.delete_namespace, attempts=10)
        if not keep:
            retrying(bed, "deleting the benchmark nodes", cluster.delete_nodes, attempts=10)
            log("benchmark namespace and nodes deleted in %.1fs" % (time.monotonic() - started))
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the results still get written
        log(
            "!! clean-up incomplete (%s: %s): run `kubectl delete namespace %s; kubectl delete nodes -l %s=%s`"
            % (type(exc).__name__, str(exc)[:200], namespace or "-l kubeforge.io/benchmark=canary", BENCH_LABEL, BENCH_VALUE)
        )


def parse_sizes(text):
    sizes = []
    for item in text.split(","):
        nodes, _sep, runs = item.strip().partition(":")
        sizes.append((int(nodes), int(runs or 3)))
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--nodes", default="100:3,1000:2", help="comma-separated NODES[:RUNS] (default %(default)s)")
    ap.add_argument("--profile", action="store_true", help="after the measured runs of each size, one more ours run under cProfile")
    ap.add_argument("--out", help="write all raw results as JSON here")
    ap.add_argument("--markdown", help="write the Markdown tables here")
    ap.add_argument("--keep", action="store_true", help="keep the benchmark nodes (default: delete them at the end)")
    ap.add_argument("--report", help="re-print the tables of a JSON written by --out and exit")
    ap.add_argument(
        "--collections",
        help="run ours from this collections tree (DIR/ansible_collections/kubeforge/operators, e.g. a copy of an older version) instead of the working tree",
    )
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            results = json.load(f)
        results["sizes"] = [summarize(size) for size in results["sizes"]]
        print(markdown(results))
        return
    sizes = parse_sizes(args.nodes)
    signal.signal(signal.SIGTERM, lambda *_args: sys.exit(143))  # clean up (finally) when stopped

    from testbed import Testbed

    ensure_collection_link()
    bed = Testbed()
    if not bed.is_running():
        log("testbed not running: bringing it up")
        bed.up()
    else:
        log("reusing the running testbed (%s)" % bed.kubeconfig)
    cluster = Cluster(bed)
    workdir = tempfile.mkdtemp(prefix="kubeforge-bench-canary-")
    os.makedirs(os.path.join(workdir, "tmp"))
    os.makedirs(os.path.join(workdir, "home"))
    env = module_env(os.path.join(workdir, "tmp"))
    if args.collections:
        env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(args.collections)] + env["PYTHONPATH"].split(os.pathsep)[1:])
    profile_dir = os.path.dirname(os.path.abspath(args.out)) if args.out and args.profile else (workdir if args.profile else None)
    results = {
        "environment": dict(machine(("plugins",)), testbed_versions=bed.state.get("versions"), ours_collections=args.collections),
        "sizes": [],
    }
    # Bytecode, kubernetes.core's discovery cache and kubectl's discovery cache warm before anything is measured.
    warm_discovery(bed.kubeconfig, env, sys.executable, DISCOVERY_KINDS)
    kubectl = os.path.join(bed.state["bin"], "kubectl")
    timed_run([kubectl, "--kubeconfig", bed.kubeconfig, "--cache-dir", os.path.join(workdir, "kube-cache"), "api-resources"], kubectl_env(workdir), 60)
    try:
        for nodes, runs in sizes:
            log("%d nodes, %d runs each" % (nodes, runs))
            results["sizes"].append(bench_n(bed, cluster, nodes, runs, workdir, env, profile_dir))
    finally:
        clean_up(bed, cluster, args.keep)
        cluster.api.close()
        if not args.profile or args.out:
            shutil.rmtree(workdir, ignore_errors=True)
    results["environment"]["loadavg_end"] = os.getloadavg()
    write_results(results, markdown(results), args.out, args.markdown)


if __name__ == "__main__":
    main()
