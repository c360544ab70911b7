"""OLM benchmarks (issue #8): kubeforge.operators.olm_operator against kubernetes.core, on the testbed, in one run.

Three benchmarks, each printed as a Markdown table (and all raw runs as JSON):

1. ``noop``: kube-demo 0.0.1 is installed (Manual, pinned); ``olm_operator`` with the same options against
   ``kubernetes.core.k8s`` applying the same Subscription (``state: present``, the stored object's name, labels and
   spec: an existing object, so no change). Both run directly as module processes (``python -m <module> args.json``,
   the way Ansible runs a module locally, without a playbook), alternating, after one warm-up run each. Wall time
   and the API requests each run makes, from the testbed's audit log of the ``kubeforge-bench`` user.
   Targets: ours/anchor wall time <= 0.8 (medians; issue #22), ours <= 5 API requests.
2. ``latency``: installs kube-demo 0.0.1 with ``olm_operator`` in a fresh namespace (``--latency-runs`` times) while
   this process watches the CSV; latency = the module process's end - the moment the watch event with phase
   ``Succeeded`` arrived here (also given: the end - the CSV's ``status.lastTransitionTime``, whole seconds).
   Target: <= 1 s (median).
3. ``install``: the whole install through ``ansible-playbook``, ours (``ours-install.yml``: one olm_operator task)
   against the demo's old kubernetes.core steps (``anchor-install.yml``: OperatorGroup, Subscription, k8s_info
   ``until`` the InstallPlan exists, approve it, k8s_info ``until`` the CSV succeeded), alternating, each in a
   fresh namespace. Wall time, requests, Succeeded-to-end latency, and the resulting cluster state compared.

Every namespace gets its own CatalogSource pointing at the testbed's ``opm serve``, made (and waited for until it
is READY and its PackageManifest is served) before the timed part, and is deleted at the end. The testbed is
brought up when it is not running, and never restarted.

    .venv/bin/python benchmarks/olm/run.py [--only noop,latency,install] [--noop-runs 9] [--out r.json] [--markdown r.md]

This is a benchmark, not a test: nothing here asserts on timings.
"""

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import (  # noqa: E402
    COLLECTIONS,
    TESTS,
    brief_requests,
    ensure_collection_link,
    fmt,
    is_discovery,
    log,
    machine,
    mark,
    median,
    module_env,
    rel,
    requests_since,
    run_module_subprocess_timed,
    site_packages,
    stamp,
    timed_run,
    warm_discovery,
    write_results,
)

sys.path.insert(0, TESTS)  # the testbed package

GROUP, V1ALPHA1, V1 = "operators.coreos.com", "v1alpha1", "v1"
PACKAGE, CHANNEL, VERSION = "kube-demo", "stable", "0.0.1"
CSV = "kube-demo.v0.0.1"
CATALOG = "bench-catalog"
OURS_MODULE = "ansible_collections.kubeforge.operators.plugins.modules.olm_operator"
ANCHOR_MODULE = "ansible_collections.kubernetes.core.plugins.modules.k8s"
OURS_PLAYBOOK = os.path.join(HERE, "ours-install.yml")
ANCHOR_PLAYBOOK = os.path.join(HERE, "anchor-install.yml")

NOOP_WALL_TARGET = 0.8  # issue #22
NOOP_REQUEST_TARGET = 5
LATENCY_TARGET = 1.0


def ansible_env(tmpdir):
    env = module_env(tmpdir)
    env.update(
        {
            "ANSIBLE_COLLECTIONS_PATH": os.pathsep.join([COLLECTIONS] + site_packages()),
            "ANSIBLE_LOCAL_TEMP": os.path.join(tmpdir, "ansible-local"),
            "ANSIBLE_REMOTE_TEMP": os.path.join(tmpdir, "ansible-remote"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
            "ANSIBLE_STDOUT_CALLBACK": "json",
        }
    )
    # AnsiballZ payloads are never bytecode-cached; ansible-core itself uses its installed bytecode.
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONPATH", None)
    return env


class Cluster:
    """Set-up and inspection through the admin kubeconfig (not in the audit log, so never counted)."""

    def __init__(self, bed):
        from kubernetes import client
        from testbed.kube import api_client

        self.bed = bed
        self.api = api_client(bed.kubeconfig, pool=8)
        self.core = client.CoreV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.namespaces = []

    def new_namespace(self, what):
        name = "bench-olm-%s-%s" % (what, os.urandom(3).hex())
        self.core.create_namespace({"metadata": {"name": name, "labels": {"kubeforge.io/benchmark": "olm"}}})
        self.namespaces.append(name)
        return name

    def catalog(self, namespace, timeout=180):
        """A CatalogSource of the testbed catalog in ``namespace``; returns once it is READY and lists kube-demo."""
        started = time.monotonic()
        body = {
            "apiVersion": "%s/%s" % (GROUP, V1ALPHA1),
            "kind": "CatalogSource",
            "metadata": {"name": CATALOG, "namespace": namespace},
            "spec": {"sourceType": "grpc", "address": self.bed.catalog_address, "displayName": "kubeforge benchmark"},
        }
        self.custom.create_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "catalogsources", body)
        deadline = started + timeout
        while True:
            source = self.custom.get_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "catalogsources", CATALOG)
            state = ((source.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
            if state == "READY" and self.package_served(namespace):
                return round(time.monotonic() - started, 2)
            if time.monotonic() > deadline:
                raise SystemExit("CatalogSource %s/%s not ready after %ss (state %s)" % (namespace, CATALOG, timeout, state))
            time.sleep(0.5)

    def package_served(self, namespace):
        try:
            items = self.custom.list_namespaced_custom_object(
                "packages.operators.coreos.com",
                "v1",
                namespace,
                "packagemanifests",
                label_selector="catalog=%s,catalog-namespace=%s" % (CATALOG, namespace),
            )["items"]
        except Exception:  # noqa: BLE001 - the PackageManifest API may lag behind; keep waiting
            return False
        return any(i["metadata"]["name"] == PACKAGE for i in items)

    def get(self, namespace, plural, name, version=V1ALPHA1):
        from kubernetes.client.rest import ApiException

        try:
            return self.custom.get_namespaced_custom_object(GROUP, version, namespace, plural, name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def items(self, namespace, plural, version=V1ALPHA1):
        return self.custom.list_namespaced_custom_object(GROUP, version, namespace, plural)["items"]

    def install_state(self, namespace):
        """What an install left in ``namespace``, comparable between ours and the anchor."""
        sub = self.get(namespace, "subscriptions", PACKAGE) or {}
        csv = self.get(namespace, "clusterserviceversions", CSV) or {}
        plans = self.items(namespace, "installplans")
        groups = self.items(namespace, "operatorgroups", V1)
        return {
            "subscription_spec": sub.get("spec"),
            "installed_csv": (sub.get("status") or {}).get("installedCSV"),
            "csv_phase": (csv.get("status") or {}).get("phase"),
            "csv_version": (csv.get("spec") or {}).get("version"),
            "approved_plans": sorted(tuple(p["spec"]["clusterServiceVersionNames"]) for p in plans if p["spec"].get("approved")),
            "unapproved_plans": sorted(tuple(p["spec"]["clusterServiceVersionNames"]) for p in plans if not p["spec"].get("approved")),
            "operator_groups": sorted((g["metadata"]["name"], tuple((g.get("spec") or {}).get("targetNamespaces") or ())) for g in groups),
            "deployments": sorted(d.metadata.name for d in self.apps.list_namespaced_deployment(namespace).items),
        }

    def wait_subscription_settled(self, namespace, timeout=60):
        """After a pinned install OLM proposes 0.0.2 (state UpgradePending); wait for that so no-op runs see one state."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            sub = self.get(namespace, "subscriptions", PACKAGE) or {}
            if (sub.get("status") or {}).get("state") == "UpgradePending":
                break
            time.sleep(0.5)
        time.sleep(2)
        return self.get(namespace, "subscriptions", PACKAGE)

    def delete_namespaces(self, wait=120):
        from kubernetes.client.rest import ApiException

        names, self.namespaces = self.namespaces, []
        for name in names:
            try:
                self.core.delete_namespace(name)
            except ApiException as exc:
                if exc.status != 404:
                    log("!! deleting namespace %s: %s" % (name, exc.reason))
        deadline = time.monotonic() + wait
        left = list(names)
        while left and time.monotonic() < deadline:
            time.sleep(1)
            left = [n for n in left if self._exists(n)]
        if left:
            log("namespaces still terminating after %ss (deletion goes on): %s" % (wait, ", ".join(left)))

    def _exists(self, name):
        from kubernetes.client.rest import ApiException

        try:
            self.core.read_namespace(name)
            return True
        except ApiException as exc:
            return exc.status != 404


class Watch:
    """Watches one object from this process and timestamps (``time.time()``) every event as it arrives.

    The watch request is open (response headers received) before ``start`` returns, and it starts at the listed
    resourceVersion, so no change is missed. ``marks`` maps a name to a predicate on the object: ``first[name]`` is
    the arrival time of the first event for which it held (and ``objects[name]`` that object).
    """

    def __init__(self, cluster, namespace, plural, name, marks):
        self.cluster, self.namespace, self.plural, self.name, self.marks = cluster, namespace, plural, name, marks
        self.events = []  # (time, type, summary)
        self.first = {}
        self.objects = {}
        self._resp = None
        self._thread = None

    def start(self):
        selector = "metadata.name=%s" % self.name
        listing = self.cluster.custom.list_namespaced_custom_object(GROUP, V1ALPHA1, self.namespace, self.plural, field_selector=selector)
        for item in listing["items"]:
            self._seen(time.time(), "LISTED", item)
        self._resp = self.cluster.custom.list_namespaced_custom_object(
            GROUP,
            V1ALPHA1,
            self.namespace,
            self.plural,
            field_selector=selector,
            watch=True,
            resource_version=listing["metadata"]["resourceVersion"],
            timeout_seconds=1800,
            _preload_content=False,
        )
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _seen(self, when, kind, obj):
        status = obj.get("status") or {}
        self.events.append((when, kind, status.get("phase") or status.get("state")))
        for name, holds in self.marks.items():
            if name not in self.first and holds(obj):
                self.first[name] = when
                self.objects[name] = obj

    def _read(self):
        from kubernetes.watch.watch import iter_resp_lines

        try:
            for line in iter_resp_lines(self._resp):
                when = time.time()
                event = json.loads(line)
                if event.get("type") in ("ADDED", "MODIFIED"):
                    self._seen(when, event["type"], event["object"])
        except Exception:  # noqa: BLE001, S110 - the stream is closed by stop()
            pass

    def stop(self):
        if self._resp is not None:
            try:
                self._resp.shutdown()
            except Exception:  # noqa: BLE001, S110
                pass
            self._resp.release_conn()
        if self._thread is not None:
            self._thread.join(5)

    def timeline(self, since):
        return [[round(t - since, 3), kind, summary] for t, kind, summary in self.events]


def csv_succeeded(obj):
    return (obj.get("status") or {}).get("phase") == "Succeeded"


def sub_installed(obj):
    return (obj.get("status") or {}).get("installedCSV") == CSV


class InstallWatch:
    """The CSV (phase Succeeded) and the Subscription (``status.installedCSV`` set) of one install, watched."""

    def __init__(self, cluster, namespace):
        self.csv = Watch(cluster, namespace, "clusterserviceversions", CSV, {"succeeded": csv_succeeded})
        self.sub = Watch(cluster, namespace, "subscriptions", PACKAGE, {"installed": sub_installed})

    def __enter__(self):
        self.csv.start()
        self.sub.start()
        return self

    def __exit__(self, *exc):
        self.csv.stop()
        self.sub.stop()

    def figures(self, run):
        """Times relative to the run: when the CSV succeeded and the Subscription showed it, and the latencies."""
        succeeded = self.csv.first.get("succeeded")
        installed = self.sub.first.get("installed")
        transition = ((self.csv.objects.get("succeeded") or {}).get("status") or {}).get("lastTransitionTime")
        status_time = None
        if transition:
            status_time = datetime.datetime.strptime(transition, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()
        return {
            "succeeded_after_start_s": rel(succeeded, run["start"]),
            "sub_installed_after_start_s": rel(installed, run["start"]),
            "latency_s": rel(run["end"], succeeded),
            "latency_status_s": rel(run["end"], status_time),
            "latency_from_sub_installed_s": rel(run["end"], installed),
            "csv_events": self.csv.timeline(run["start"]),
            "sub_events": self.sub.timeline(run["start"]),
        }


# Every API group/version an install uses (kubernetes.core's discovery cache is filled with them before measuring).
DISCOVERY_KINDS = [
    ("Namespace", "v1"),
    ("Pod", "v1"),
    ("ReplicaSet", "apps/v1"),
    ("Deployment", "apps/v1"),
    ("Subscription", "operators.coreos.com/v1alpha1"),
    ("OperatorGroup", "operators.coreos.com/v1"),
    ("PackageManifest", "packages.operators.coreos.com/v1"),
]


def run_playbook(playbook, extra_vars, workdir, env, timeout=900):
    vars_file = os.path.join(workdir, "vars.json")
    with open(vars_file, "w") as f:
        json.dump(dict(extra_vars, ansible_python_interpreter=sys.executable), f)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@" + vars_file, playbook]
    timed = timed_run(argv, env, timeout)
    stdout, stderr = timed.pop("stdout"), timed.pop("stderr")
    tasks = []
    try:
        report = json.loads(stdout)
        for play in report.get("plays", []):
            for task in play.get("tasks", []):
                host = task.get("hosts", {}).get("localhost", {})
                duration = task.get("task", {}).get("duration", {})
                tasks.append(
                    {
                        "name": task["task"]["name"],
                        "failed": bool(host.get("failed")),
                        "attempts": host.get("attempts"),
                        "start": duration.get("start"),
                        "end": duration.get("end"),
                    }
                )
    except (ValueError, KeyError):
        pass
    timed["tasks"] = tasks
    if timed["rc"] != 0:
        timed["output"] = (stdout[-3000:] + stderr[-2000:]).strip()
    return timed


# ----------------------------------------------------------------------------------------------- 1. no-op


def operator_args(bed, namespace, kubeconfig=None):
    return {
        "kubeconfig": kubeconfig or bed.state["bench_kubeconfig"],
        "package": PACKAGE,
        "namespace": namespace,
        "channel": CHANNEL,
        "catalog": CATALOG,
        "version": VERSION,
        "approval": "Manual",
        "target_namespaces": [namespace],
        "wait_timeout": 300,
    }


def bench_noop(bed, cluster, runs, workdir, python):
    env = module_env(os.path.join(workdir, "tmp"))
    ns = cluster.new_namespace("noop")
    setup_s = cluster.catalog(ns)
    log("noop: installing %s in %s (set-up; catalog ready after %ss)" % (CSV, ns, setup_s))
    installed = run_module_subprocess_timed(OURS_MODULE, operator_args(bed, ns, bed.kubeconfig), workdir, env, python)
    if installed["result"].get("failed") or installed["result"].get("phase") != "Succeeded":
        raise SystemExit("set-up install failed: %s" % installed["result"].get("msg", installed["result"]))
    sub = cluster.wait_subscription_settled(ns)
    meta = sub["metadata"]
    definition = {
        "apiVersion": sub["apiVersion"],
        "kind": sub["kind"],
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "labels": meta.get("labels") or {}},
        "spec": sub["spec"],
    }
    commands = {
        "ours": (OURS_MODULE, operator_args(bed, ns)),
        "anchor": (ANCHOR_MODULE, {"kubeconfig": bed.state["bench_kubeconfig"], "state": "present", "definition": definition}),
    }
    rv_before = meta["resourceVersion"]

    def once(tool, run_env=env):
        module, args = commands[tool]
        offset = bed.audit_offset()
        run = run_module_subprocess_timed(module, args, workdir, run_env, python)
        run["requests"], run["foreign_requests"], run["timing"] = requests_since(bed, offset, ns, run)
        res = run.pop("result")
        if tool == "ours":
            keys = ("failed", "msg", "changed", "installed_csv", "version", "phase", "approved_install_plans", "duration")
            returned = res.get("subscription") or {}
        else:
            keys = ("failed", "msg", "changed")
            returned = res.get("result") or {}
        run["output"] = {k: res.get(k) for k in keys}
        run["output"]["subscription_resource_version"] = (returned.get("metadata") or {}).get("resourceVersion")
        run["output"]["subscription_spec"] = returned.get("spec")
        run["discovery_requests"] = sum(1 for r in run["requests"] if is_discovery(r[1]))
        log(
            "  noop %-6s %6.3fs (cpu %.2fs, first request at +%ss)  %2d requests (%d discovery)  changed=%s%s"
            % (
                tool,
                run["wall_s"],
                run["cpu_s"],
                (run["timing"] or {}).get("first_request_s"),
                len(run["requests"]),
                run["discovery_requests"],
                res.get("changed"),
                "  FAILED: %s" % res.get("msg") if res.get("failed") else "",
            )
        )
        return run

    # The set-up install filled the discovery cache of the measured runs' TMPDIR; each warm-up run gets an empty
    # TMPDIR of its own instead, to show what a cold discovery cache costs.
    log("noop: warm-up, one run each with an empty discovery cache")
    warmup = {}
    for tool in ("ours", "anchor"):
        cold = module_env(os.path.join(workdir, "tmp-cold-" + tool))
        os.makedirs(cold["TMPDIR"], exist_ok=True)
        warmup[tool] = once(tool, cold)
    measured = {"ours": [], "anchor": []}
    for i in range(runs):
        for tool in ("ours", "anchor") if i % 2 == 0 else ("anchor", "ours"):
            measured[tool].append(once(tool))
    rv_after = cluster.get(ns, "subscriptions", PACKAGE)["metadata"]["resourceVersion"]

    def med(tool, get):
        return median([get(r) for r in measured[tool]])

    wall = {tool: med(tool, lambda r: r["wall_s"]) for tool in measured}
    cpu = {tool: med(tool, lambda r: r["cpu_s"]) for tool in measured}
    ours_ok = all(
        r["output"]["installed_csv"] == CSV
        and r["output"]["phase"] == "Succeeded"
        and r["output"]["version"] == VERSION
        and not r["output"]["approved_install_plans"]
        for r in measured["ours"]
    )
    every = [r for tool in measured for r in measured[tool]]
    outputs_ok = (
        ours_ok
        and all(not r["output"]["failed"] and r["output"]["changed"] is False for r in every)
        and len({json.dumps(r["output"]["subscription_spec"], sort_keys=True) for r in every}) == 1
        and {r["output"]["subscription_resource_version"] for r in every} == {rv_before}
        and rv_after == rv_before
    )
    return {
        "namespace": ns,
        "runs": runs,
        "subscription": definition,
        "subscription_resource_version": {"before": rv_before, "after": rv_after},
        "warmup": warmup,
        "measured": measured,
        "median_wall_s": wall,
        "wall_ratio": wall["ours"] / wall["anchor"],
        "median_pair_ratio": median([o["wall_s"] / a["wall_s"] for o, a in zip(measured["ours"], measured["anchor"])]),
        "median_cpu_s": cpu,
        "cpu_ratio": cpu["ours"] / cpu["anchor"],
        "median_requests": {tool: med(tool, lambda r: len(r["requests"])) for tool in measured},
        "median_first_request_s": {tool: med(tool, lambda r: (r["timing"] or {}).get("first_request_s")) for tool in measured},
        "median_after_last_response_s": {tool: med(tool, lambda r: (r["timing"] or {}).get("after_last_response_s")) for tool in measured},
        "median_server_s": {tool: med(tool, lambda r: (r["timing"] or {}).get("server_s")) for tool in measured},
        "max_requests_ours": max(len(r["requests"]) for r in measured["ours"]),
        "discovery_requests_measured": {tool: sum(r["discovery_requests"] for r in measured[tool]) for tool in measured},
        "outputs_ok": outputs_ok,
        "ours_request_list": brief_requests(measured["ours"][0]["requests"], ns),
        "anchor_request_list": brief_requests(measured["anchor"][0]["requests"], ns),
        "warmup_request_lists": {tool: brief_requests(warmup[tool]["requests"], ns) for tool in warmup},
    }


def _row(label, r, key, digits=3, ratio=False):
    values = r[key]
    cells = [fmt(values["anchor"], digits), fmt(values["ours"], digits)]
    cells.append(fmt(values["ours"] / values["anchor"]) if ratio and values["anchor"] else "")
    return "| %s | %s | %s | %s | | |" % (label, cells[0], cells[1], cells[2])


def md_noop(r):
    wall_ok = r["wall_ratio"] <= NOOP_WALL_TARGET
    req_ok = r["max_requests_ours"] <= NOOP_REQUEST_TARGET
    lines = [
        "### 1. No-op run (kube-demo 0.0.1 installed, Manual, pinned): `olm_operator` vs `kubernetes.core.k8s`",
        "",
        "Direct module processes (`python -m <module> args.json`, bench kubeconfig), %d alternating runs each after one warm-up run each; medians." % r["runs"],
        "",
        "| | anchor (k8s, state present) | ours (olm_operator) | ours/anchor | target | |",
        "|---|---:|---:|---:|---|---|",
        "| wall s | %s | %s | %s | <= %.1f | %s |"
        % (fmt(r["median_wall_s"]["anchor"], 3), fmt(r["median_wall_s"]["ours"], 3), fmt(r["wall_ratio"]), NOOP_WALL_TARGET, mark(wall_ok)),
        _row("CPU s (user+sys)", r, "median_cpu_s", ratio=True),
        "| API requests | %s | %s | | ours <= %d (max %d) | %s |"
        % (fmt(r["median_requests"]["anchor"], 0), fmt(r["median_requests"]["ours"], 0), NOOP_REQUEST_TARGET, r["max_requests_ours"], mark(req_ok)),
        "| discovery requests (all measured runs) | %d | %d | | | |" % (r["discovery_requests_measured"]["anchor"], r["discovery_requests_measured"]["ours"]),
        "| warm-up run, empty discovery cache: requests (discovery) | %d (%d) | %d (%d) | | | |"
        % (
            len(r["warmup"]["anchor"]["requests"]),
            r["warmup"]["anchor"]["discovery_requests"],
            len(r["warmup"]["ours"]["requests"]),
            r["warmup"]["ours"]["discovery_requests"],
        ),
        _row("process start to first API request s", r, "median_first_request_s"),
        _row("API server time s (sum)", r, "median_server_s"),
        _row("last API response to process end s", r, "median_after_last_response_s"),
        "",
        "Median of the per-pair ratios: %s. Outputs: %s."
        % (
            fmt(r["median_pair_ratio"]),
            "both unchanged (`changed: false`) in every run, same Subscription spec and resourceVersion %s before and after"
            % r["subscription_resource_version"]["before"]
            if r["outputs_ok"]
            else "**differ or changed** (see the JSON)",
        ),
        "",
        "Ours' requests (one measured run): " + ", ".join("`%s`" % x for x in r["ours_request_list"]) + ".",
        "Anchor's: " + ", ".join("`%s`" % x for x in r["anchor_request_list"]) + ".",
        "",
        "Warm-up runs (empty discovery cache), ours: " + ", ".join("`%s`" % x for x in r["warmup_request_lists"]["ours"]) + ".",
        "Anchor's: " + ", ".join("`%s`" % x for x in r["warmup_request_lists"]["anchor"]) + ".",
        "",
        "Wall s per run, anchor: %s; ours: %s."
        % (", ".join(fmt(x["wall_s"]) for x in r["measured"]["anchor"]), ", ".join(fmt(x["wall_s"]) for x in r["measured"]["ours"])),
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------- 2. latency


def bench_latency(bed, cluster, runs, workdir, python):
    env = module_env(os.path.join(workdir, "tmp"))
    results = []
    for i in range(runs):
        ns = cluster.new_namespace("latency")
        setup_s = cluster.catalog(ns)
        with InstallWatch(cluster, ns) as watch:
            offset = bed.audit_offset()
            run = run_module_subprocess_timed(OURS_MODULE, operator_args(bed, ns), workdir, env, python)
        requests, foreign, timing = requests_since(bed, offset, ns, run)
        res = run.pop("result")
        entry = dict(watch.figures(run), namespace=ns, catalog_ready_s=setup_s, wall_s=run["wall_s"], cpu_s=run["cpu_s"])
        entry.update(
            {
                "ok": not res.get("failed") and res.get("phase") == "Succeeded" and res.get("installed_csv") == CSV,
                "msg": res.get("msg"),
                "module_duration": res.get("duration"),
                "requests": len(requests),
                "discovery_requests": sum(1 for r in requests if is_discovery(r[1])),
                "request_list": brief_requests(requests, ns),
                "foreign_requests": foreign,
                "timing": timing,
            }
        )
        results.append(entry)
        log(
            "  latency run %d: wall %.2fs, CSV Succeeded at +%ss, Subscription installedCSV at +%ss, latency %ss "
            "(status-based %ss), %d requests%s"
            % (
                i + 1,
                run["wall_s"],
                entry["succeeded_after_start_s"],
                entry["sub_installed_after_start_s"],
                entry["latency_s"],
                entry["latency_status_s"],
                len(requests),
                "" if entry["ok"] else "  FAILED: %s" % res.get("msg"),
            )
        )

    def med(key):
        return median([r[key] for r in results])

    return {
        "runs": results,
        "median_latency_s": med("latency_s"),
        "median_latency_status_s": med("latency_status_s"),
        "median_latency_from_sub_installed_s": med("latency_from_sub_installed_s"),
        "median_wall_s": med("wall_s"),
        "median_succeeded_after_start_s": med("succeeded_after_start_s"),
        "median_sub_installed_after_start_s": med("sub_installed_after_start_s"),
        "all_ok": all(r["ok"] for r in results),
    }


def md_latency(r):
    lines = [
        "### 2. Latency from CSV `Succeeded` to the module's return (olm_operator, fresh namespace each run)",
        "",
        "Times in seconds after the module process started; the CSV and the Subscription are watched from the benchmark "
        "process. Latency = process end - arrival of the CSV's `Succeeded` watch event; the status-based figure uses "
        "the CSV's `status.lastTransitionTime` (whole seconds, so up to 1 s more).",
        "",
        "| run | module wall s | CSV Succeeded at | Subscription installedCSV at | latency s | latency s (status time) | API requests (discovery) | result |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for i, x in enumerate(r["runs"], 1):
        lines.append(
            "| %d | %s | %s | %s | %s | %s | %d (%d) | %s |"
            % (
                i,
                fmt(x["wall_s"]),
                fmt(x["succeeded_after_start_s"]),
                fmt(x["sub_installed_after_start_s"]),
                fmt(x["latency_s"], 3),
                fmt(x["latency_status_s"], 3),
                x["requests"],
                x["discovery_requests"],
                CSV + " Succeeded" if x["ok"] else "failed",
            )
        )
    med = r["median_latency_s"]
    lines.append(
        "| **median** | %s | %s | %s | **%s** %s | %s | | |"
        % (
            fmt(r["median_wall_s"]),
            fmt(r["median_succeeded_after_start_s"]),
            fmt(r["median_sub_installed_after_start_s"]),
            fmt(med, 3),
            mark(med is not None and med <= LATENCY_TARGET),
            fmt(r["median_latency_status_s"], 3),
        )
    )
    lines += [
        "",
        "Target: latency <= %.1f s (median). From the Subscription's `installedCSV` to the process end: %s s (median)."
        % (LATENCY_TARGET, fmt(r["median_latency_from_sub_installed_s"], 3)),
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------- 3. install


def _task_offsets(run):
    """Seconds from the playbook's start to its first task's start, and from its last task's end to its exit."""
    stamps = [(t.get("start"), t.get("end")) for t in run.get("tasks") or []]
    if not stamps or not stamps[0][0] or not stamps[-1][1]:
        return None, None
    return rel(stamp(stamps[0][0]), run["start"]), rel(run["end"], stamp(stamps[-1][1]))


def bench_install(bed, cluster, runs, workdir):
    env = ansible_env(os.path.join(workdir, "tmp"))
    playbooks = {"ours": OURS_PLAYBOOK, "anchor": ANCHOR_PLAYBOOK}
    measured = {"ours": [], "anchor": []}
    for i in range(runs):
        for tool in ("ours", "anchor") if i % 2 == 0 else ("anchor", "ours"):
            ns = cluster.new_namespace("install-" + tool)
            setup_s = cluster.catalog(ns)
            extra = {"testbed_kubeconfig": bed.state["bench_kubeconfig"], "demo_namespace": ns, "demo_catalog": CATALOG}
            with InstallWatch(cluster, ns) as watch:
                offset = bed.audit_offset()
                run = run_playbook(playbooks[tool], extra, workdir, env)
            state_at_end = cluster.install_state(ns)
            requests, foreign, timing = requests_since(bed, offset, ns, run)
            cluster.wait_subscription_settled(ns)
            state = cluster.install_state(ns)
            first_task, after_last_task = _task_offsets(run)
            run.update(watch.figures(run))
            run.update(
                {
                    "namespace": ns,
                    "catalog_ready_s": setup_s,
                    "first_task_start_s": first_task,
                    "after_last_task_s": after_last_task,
                    "requests": len(requests),
                    "request_list": brief_requests(requests, ns),
                    "foreign_requests": foreign,
                    "timing": timing,
                    "state_at_end": state_at_end,
                    "state": state,
                    "ok": run["rc"] == 0 and state["installed_csv"] == CSV and state["csv_phase"] == "Succeeded",
                }
            )
            measured[tool].append(run)
            log(
                "  install %-6s %6.2fs  CSV Succeeded at +%ss, end %ss after it, %d requests%s"
                % (
                    tool,
                    run["wall_s"],
                    run["succeeded_after_start_s"],
                    run["latency_s"],
                    len(requests),
                    "" if run["ok"] else "  FAILED: %s" % run.get("output", "")[-800:],
                )
            )

    def med(tool, key):
        return median([r[key] for r in measured[tool]])

    keys = ("wall_s", "cpu_s", "latency_s", "succeeded_after_start_s", "requests", "first_task_start_s", "after_last_task_s")
    medians = {key: {tool: med(tool, key) for tool in measured} for key in keys}
    states = {json.dumps(comparable(r["state"]), sort_keys=True) for tool in measured for r in measured[tool]}
    return {
        "runs": runs,
        "measured": measured,
        "medians": medians,
        "wall_ratio": medians["wall_s"]["ours"] / medians["wall_s"]["anchor"],
        "median_pair_ratio": median([o["wall_s"] / a["wall_s"] for o, a in zip(measured["ours"], measured["anchor"])]),
        "all_ok": all(r["ok"] for tool in measured for r in measured[tool]),
        "same_state": len(states) == 1,
        "state": json.loads(sorted(states)[0]) if states else None,
        "subscription_installed_at_end": {tool: [r["state_at_end"]["installed_csv"] == CSV for r in measured[tool]] for tool in measured},
    }


def comparable(state):
    """An install's state without the namespace-specific parts (namespace names in spec and OperatorGroup)."""
    out = dict(state)
    out["subscription_spec"] = {k: v for k, v in (state.get("subscription_spec") or {}).items() if k != "sourceNamespace"}
    out["operator_groups"] = [[name, len(targets)] for name, targets in state.get("operator_groups") or []]
    return out


def md_install(r):
    m = r["medians"]

    def row(label, key, digits=2, ratio=False):
        a, o = m[key]["anchor"], m[key]["ours"]
        return "| %s | %s | %s | %s |" % (label, fmt(a, digits), fmt(o, digits), fmt(o / a) if ratio and a else "")

    at_end = r["subscription_installed_at_end"]
    lines = [
        "### 3. Install kube-demo 0.0.1 end to end (ansible-playbook): one `olm_operator` task vs the demo's old k8s + k8s_info `until` tasks",
        "",
        "%d alternating runs each, each in a fresh namespace with its own READY CatalogSource; medians; times in seconds "
        "after the playbook started." % r["runs"],
        "",
        "| | anchor (anchor-install.yml) | ours (ours-install.yml) | ours/anchor |",
        "|---|---:|---:|---:|",
        row("playbook wall s", "wall_s", ratio=True),
        row("CPU s (user+sys, ansible-playbook and its workers)", "cpu_s", ratio=True),
        row("first task starts at", "first_task_start_s"),
        row("CSV Succeeded at (watch event)", "succeeded_after_start_s"),
        row("CSV Succeeded to playbook end s", "latency_s"),
        row("last task end to playbook end s", "after_last_task_s"),
        row("API requests", "requests", 0),
        "",
        "Runs (wall s): anchor %s; ours %s. Median of the per-pair ratios: %s."
        % (
            ", ".join(fmt(x["wall_s"]) for x in r["measured"]["anchor"]),
            ", ".join(fmt(x["wall_s"]) for x in r["measured"]["ours"]),
            fmt(r["median_pair_ratio"]),
        ),
        "Outputs: %s. The Subscription showed `installedCSV` when the playbook ended in %d/%d anchor and %d/%d ours runs."
        % (
            "every run ended with %s Succeeded, and ours and the anchor left the same state once OLM settled "
            "(Subscription spec, approved and pending InstallPlans, OperatorGroup, Deployments)" % CSV
            if r["all_ok"] and r["same_state"]
            else "**differ or failed** (see the JSON)",
            sum(at_end["anchor"]),
            len(at_end["anchor"]),
            sum(at_end["ours"]),
            len(at_end["ours"]),
        ),
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------- main


def environment(bed):
    env = machine(("plugins",))
    env.update(
        {
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "testbed_versions": bed.state.get("versions"),
            "git": env["git_head"],
        }
    )
    return env


def markdown(results):
    env = results["environment"]
    parts = [
        "## OLM benchmarks (%s, %s CPUs, load average %.1f at the start, %.1f at the end; git %s%s)\n"
        % (
            env["date_utc"],
            env["cpus"],
            env["loadavg_start"][0],
            env.get("loadavg_end", [0])[0],
            env["git"],
            " + uncommitted plugins/" if env["git_dirty"] else "",
        )
    ]
    if "noop" in results:
        parts.append(md_noop(results["noop"]))
    if "latency" in results:
        parts.append(md_latency(results["latency"]))
    if "install" in results:
        parts.append(md_install(results["install"]))
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--only", default="noop,latency,install", help="comma-separated: noop, latency, install (default: all)")
    ap.add_argument("--noop-runs", type=int, default=9, help="alternating runs per side in the no-op benchmark (default 9)")
    ap.add_argument("--latency-runs", type=int, default=5, help="installs in the latency benchmark (default 5)")
    ap.add_argument("--install-runs", type=int, default=3, help="alternating installs per side (default 3)")
    ap.add_argument("--out", help="write all raw results as JSON here")
    ap.add_argument("--markdown", help="write the Markdown tables here")
    ap.add_argument("--keep", action="store_true", help="keep the benchmark namespaces (default: delete them)")
    ap.add_argument("--report", help="re-print the tables of a JSON written by --out and exit")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            print(markdown(json.load(f)))
        return
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = set(only) - {"noop", "latency", "install"}
    if unknown:
        ap.error("unknown benchmark(s): %s" % ", ".join(sorted(unknown)))

    from testbed import Testbed

    ensure_collection_link()
    bed = Testbed()
    if not bed.is_running():
        log("testbed not running: bringing it up")
        bed.up()
    else:
        log("reusing the running testbed (%s)" % bed.kubeconfig)
    cluster = Cluster(bed)
    workdir = tempfile.mkdtemp(prefix="kubeforge-bench-olm-")
    os.makedirs(os.path.join(workdir, "tmp"))
    results = {"environment": environment(bed)}
    # Bytecode and discovery caches warm before anything is measured (the no-op benchmark measures a cold discovery
    # cache separately, in warm-up runs of their own).
    warm_discovery(bed.kubeconfig, module_env(os.path.join(workdir, "tmp")), sys.executable, DISCOVERY_KINDS)
    try:
        if "noop" in only:
            log("1. no-op: olm_operator vs kubernetes.core.k8s, %d runs each" % args.noop_runs)
            results["noop"] = bench_noop(bed, cluster, args.noop_runs, workdir, sys.executable)
            if not args.keep:
                cluster.delete_namespaces()
        if "latency" in only:
            log("2. latency: %d installs" % args.latency_runs)
            results["latency"] = bench_latency(bed, cluster, args.latency_runs, workdir, sys.executable)
            if not args.keep:
                cluster.delete_namespaces()
        if "install" in only:
            log("3. install: ansible-playbook, %d runs each" % args.install_runs)
            results["install"] = bench_install(bed, cluster, args.install_runs, workdir)
    finally:
        if not args.keep:
            cluster.delete_namespaces()
        cluster.api.close()
        shutil.rmtree(workdir, ignore_errors=True)
    results["environment"]["loadavg_end"] = os.getloadavg()
    write_results(results, markdown(results), args.out, args.markdown)


if __name__ == "__main__":
    main()
