"""Fleet rollout benchmark (issue #32 "Speed"): playbooks/fleet_rollout.yml against a kubernetes.core loop, on the
testbed's member clusters, in one run.

Both sides move kube-fleet 0.1.0 -> 0.2.0 (OLM v0) on M member clusters (``--members``, default 6; started with
``Testbed().ensure_members(M)`` when they do not run, and left running), alternating, ``--runs`` pairs (default 2),
each run in a fresh namespace of its own on every member:

- set-up, not timed, on every member side by side (admin kubeconfig, not audited): the namespace, a CatalogSource
  ``fleet`` for the testbed's kube-fleet catalog (``Testbed().fleet_catalog_address()``), waited for until it is READY
  and its PackageManifest is served, kube-fleet 0.1.0 installed by the olm_operator module (Manual approval, pinned),
  and then until OLM has proposed 0.2.0 (the Subscription's state ``UpgradePending``: the same start for both);
- ours: ``ansible-playbook playbooks/fleet_rollout.yml`` over a kubeforge.operators.clusters inventory of a directory
  holding the members' bench kubeconfigs (context = member name; member-1 in group ``canary``, ``fleet_hosts:
  canary:clusters``), ``fleet_waves: [1, "50%", "100%"]``, ``fleet_rollout_kind: olm_v0``, ANSIBLE_FORKS = M (>= the
  largest wave);
- anchor: ``ansible-playbook anchor-rollout.yml``: a loop over the same kubeconfigs/contexts on localhost, one cluster
  after the other, kubernetes.core modules only (anchor-cluster.yml: Subscription to Manual if needed, k8s_info
  ``until`` the InstallPlan of kube-fleet.v0.2.0, approve it, k8s_info ``until`` the CSV Succeeded; delay 2 s).

Measured: the playbook's wall and CPU time; for ours the plays' times (the ansible.posix.json stdout callback's
timestamps: plan play, each wave of the rollout play, report play), each cluster's turn (``duration_s`` and ``wave``
of the fleet report's rows), the **ideal** (the canary's turn + the slowest turn of each later wave) and wall / ideal;
the API requests of each member from its own audit log of the bench user, by verb and resource, ours split by when
they came (the plan play; then in the turn: preflight reads, the record ConfigMap, the change, the health gate); the
requests of one olm_operator run doing the same upgrade on one member (``version: 0.2.0``, bench kubeconfig, a fresh
namespace at 0.1.0), measured once, for the issue's target "requests per cluster equal a single olm_operator run's".
After each run every member is read (Subscription installedCSV, CSV phase, InstallPlans, once OLM settled) and the
states of both sides compared. Also each member cluster's processes: CPU seconds used during each run, RSS at its end.

    .venv/bin/python benchmarks/fleet/run.py [--members 6] [--runs 2] [--out r.json] [--markdown r.md] [--keep]
    .venv/bin/python benchmarks/fleet/run.py --report r.json

This is a benchmark, not a test: nothing here asserts on timings. The member clusters stay running
(``PYTHONPATH=tests .venv/bin/python -m testbed members-stop`` stops them); the namespaces are deleted at the end.
"""

import argparse
import collections
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import (  # noqa: E402
    COLLECTIONS,
    NAMESPACE_RE,
    REPO,
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

GROUP, V1ALPHA1 = "operators.coreos.com", "v1alpha1"
PACKAGE, CHANNEL, FROM, TO = "kube-fleet", "stable", "0.1.0", "0.2.0"
FROM_CSV, TO_CSV = "%s.v%s" % (PACKAGE, FROM), "%s.v%s" % (PACKAGE, TO)
CATALOG = "fleet"
CANARY = "member-1"
WAVES = [1, "50%", "100%"]
OURS_PLAYBOOK = os.path.join(REPO, "playbooks", "fleet_rollout.yml")
ANCHOR_PLAYBOOK = os.path.join(HERE, "anchor-rollout.yml")
OLM_MODULE = "ansible_collections.kubeforge.operators.plugins.modules.olm_operator"
RECORD = "kubeforge-fleet-olm-" + PACKAGE
WALL_IDEAL_TARGET = 1.3
# Every API group/version either side uses (kubernetes.core's discovery cache of each member is filled before measuring).
DISCOVERY_KINDS = [
    ("Namespace", "v1"),
    ("ConfigMap", "v1"),
    ("Pod", "v1"),
    ("Event", "v1"),
    ("ReplicaSet", "apps/v1"),
    ("Deployment", "apps/v1"),
    ("Subscription", "operators.coreos.com/v1alpha1"),
    ("OperatorGroup", "operators.coreos.com/v1"),
    ("PackageManifest", "packages.operators.coreos.com/v1"),
    ("APIService", "apiregistration.k8s.io/v1"),
]
# The order segments of ours' requests are shown in.
SEGMENTS = ("plan", "preflight", "record", "change", "gate")


def waves_of(clusters, serial):
    """The batches Ansible's ``serial`` makes (the fleet report's own function)."""
    if COLLECTIONS not in sys.path:
        sys.path.insert(0, COLLECTIONS)
    from ansible_collections.kubeforge.operators.plugins.module_utils.fleet.report import waves

    return waves(clusters, serial)


def ansible_env(tmpdir, forks):
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
            "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
            "ANSIBLE_FORKS": str(forks),
        }
    )
    # AnsiballZ payloads are never bytecode-cached; ansible-core itself uses its installed bytecode.
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONPATH", None)
    return env


def iso_stamp(text):
    """Epoch seconds of the json callback's timestamps (``...T10:00:00.123456Z``; no fraction on a whole second)."""
    if not text:
        return None
    return stamp(text if "." in text else text[:-1] + ".0Z")


# ------------------------------------------------------------------------------------------------ clusters


class Member:
    """One member cluster: set-up and inspection through its admin kubeconfig (not in its audit log)."""

    def __init__(self, bed):
        from kubernetes import client
        from testbed.kube import api_client

        self.bed = bed
        self.name = bed.name
        self.server = "https://127.0.0.1:%s" % bed.state["ports"]["apiserver"]
        self.api = api_client(bed.kubeconfig, pool=4)
        self.core = client.CoreV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)

    def close(self):
        self.api.close()

    def get(self, namespace, plural, name):
        from kubernetes.client.rest import ApiException

        try:
            return self.custom.get_namespaced_custom_object(GROUP, V1ALPHA1, namespace, plural, name)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def prepare(self, namespace, address, workdir, env, timeout=300):
        """``namespace`` with kube-fleet 0.1.0 installed and 0.2.0 proposed (not approved); returns seconds taken."""
        started = time.monotonic()
        self.core.create_namespace({"metadata": {"name": namespace, "labels": {"kubeforge.io/benchmark": "fleet"}}})
        body = {
            "apiVersion": "%s/%s" % (GROUP, V1ALPHA1),
            "kind": "CatalogSource",
            "metadata": {"name": CATALOG, "namespace": namespace},
            "spec": {"sourceType": "grpc", "address": address, "displayName": "kubeforge fleet benchmark"},
        }
        self.custom.create_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "catalogsources", body)
        deadline = started + timeout
        while True:
            source = self.get(namespace, "catalogsources", CATALOG) or {}
            state = ((source.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
            if state == "READY" and self.package_served(namespace):
                break
            if time.monotonic() > deadline:
                raise SystemExit("%s: CatalogSource %s/%s not ready after %ss (state %s)" % (self.name, namespace, CATALOG, timeout, state))
            time.sleep(0.5)
        work = os.path.join(workdir, "setup-%s-%s" % (self.name, namespace))
        os.makedirs(work, exist_ok=True)
        installed = run_module_subprocess_timed(OLM_MODULE, olm_args(self.bed.kubeconfig, namespace, FROM), work, env, sys.executable)
        result = installed["result"]
        if result.get("failed") or result.get("phase") != "Succeeded":
            raise SystemExit("%s: installing %s in %s failed: %s" % (self.name, FROM_CSV, namespace, result.get("msg", result)))
        self.wait_proposed(namespace, max(10, deadline - time.monotonic()))
        return round(time.monotonic() - started, 2)

    def package_served(self, namespace):
        try:
            items = self.custom.list_namespaced_custom_object(
                "packages.operators.coreos.com", "v1", namespace, "packagemanifests", label_selector="catalog=%s,catalog-namespace=%s" % (CATALOG, namespace)
            )["items"]
        except Exception:  # noqa: BLE001 - the PackageManifest API may lag behind; keep waiting
            return False
        return any(i["metadata"]["name"] == PACKAGE for i in items)

    def wait_proposed(self, namespace, timeout):
        """Until OLM proposed the upgrade (Subscription ``UpgradePending``, an unapproved InstallPlan of 0.2.0)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            sub = self.get(namespace, "subscriptions", PACKAGE) or {}
            plans = self.custom.list_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "installplans")["items"]
            pending = any(TO_CSV in (p["spec"].get("clusterServiceVersionNames") or []) and not p["spec"].get("approved") for p in plans)
            if (sub.get("status") or {}).get("state") == "UpgradePending" and pending:
                return
            time.sleep(0.5)
        raise SystemExit("%s: OLM did not propose %s in %s within %ss" % (self.name, TO_CSV, namespace, int(timeout)))

    def state(self, namespace):
        """What a side left in ``namespace``: installed CSV, the target CSV's phase, the InstallPlans, the record."""
        sub = self.get(namespace, "subscriptions", PACKAGE) or {}
        csv = self.get(namespace, "clusterserviceversions", TO_CSV) or {}
        plans = self.custom.list_namespaced_custom_object(GROUP, V1ALPHA1, namespace, "installplans")["items"]
        return {
            "installed_csv": (sub.get("status") or {}).get("installedCSV"),
            "current_csv": (sub.get("status") or {}).get("currentCSV"),
            "approval": (sub.get("spec") or {}).get("installPlanApproval"),
            "csv_phase": (csv.get("status") or {}).get("phase"),
            "approved_plans": sorted(p["spec"]["clusterServiceVersionNames"] for p in plans if p["spec"].get("approved")),
            "unapproved_plans": sorted(p["spec"]["clusterServiceVersionNames"] for p in plans if not p["spec"].get("approved")),
            "record": self.has_record(namespace),
        }

    def has_record(self, namespace):
        from kubernetes.client.rest import ApiException

        try:
            data = self.core.read_namespaced_config_map(RECORD, namespace).data or {}
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return json.loads(data.get("rollout.json") or "{}").get("result")

    def settled_state(self, namespace, timeout=60):
        """The state once OLM proposed the next upgrade (0.3.0) after 0.2.0 (or after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            sub = self.get(namespace, "subscriptions", PACKAGE) or {}
            if (sub.get("status") or {}).get("installedCSV") == TO_CSV and (sub.get("status") or {}).get("state") == "UpgradePending":
                break
            time.sleep(0.5)
        return self.state(namespace)

    def delete_namespaces(self, names):
        from kubernetes.client.rest import ApiException

        for name in names:
            try:
                self.core.delete_namespace(name)
            except ApiException as exc:
                if exc.status != 404:
                    log("!! %s: deleting namespace %s: %s" % (self.name, name, exc.reason))

    def cpu_seconds(self):
        """CPU seconds (user+sys) used so far by the member's processes, by component."""
        tick = os.sysconf("SC_CLK_TCK")
        found = {}
        for record in self.bed.processes():
            try:
                with open("/proc/%d/stat" % record["pid"]) as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                found[record["name"]] = (int(fields[11]) + int(fields[12])) / tick
            except (OSError, IndexError, ValueError):
                continue
        return found


def olm_args(kubeconfig, namespace, version):
    return {
        "kubeconfig": str(kubeconfig),
        "package": PACKAGE,
        "namespace": namespace,
        "channel": CHANNEL,
        "catalog": CATALOG,
        "version": version,
        "approval": "Manual",
        "wait_timeout": 300,
    }


class Fleet:
    """The M members, the inventory over their bench kubeconfigs and the kube-fleet catalog's address."""

    def __init__(self, bed, count, workdir, env):
        self.bed, self.count, self.workdir, self.env = bed, count, workdir, env
        self.members = []
        self.warmed = {}
        self.address = None
        self.namespaces = []  # every namespace made on every member (deleted at the end)

    def ensure(self):
        """Members running (started when they are not: a member started again is empty, on a new port), caches warm,
        the inventory. Returns the members that were (re)started since the last call."""
        facts = self.bed.ensure_members(self.count)
        for member in self.members:
            member.close()
        self.members = [Member(self.bed.member(f["name"])) for f in facts]
        self.address = self.bed.fleet_catalog_address()
        started = []
        for member in self.members:
            if self.warmed.get(member.name) != member.server:
                started.append(member.name)
                warm_discovery(member.bed.kubeconfig, self.env, sys.executable, DISCOVERY_KINDS)
                self.warmed[member.name] = member.server
        fleet_dir = os.path.join(self.workdir, "fleet")
        shutil.rmtree(fleet_dir, ignore_errors=True)
        os.makedirs(fleet_dir, mode=0o700)
        for member in self.members:
            target = os.path.join(fleet_dir, "%s.kubeconfig" % member.name)
            shutil.copyfile(member.bed.bench_kubeconfig, target)
            os.chmod(target, 0o600)
        self.fleet_dir = fleet_dir
        self.inventory = os.path.join(self.workdir, "fleet.clusters.yml")
        with open(self.inventory, "w") as f:
            yaml.safe_dump(
                {"plugin": "kubeforge.operators.clusters", "kubeconfigs": [fleet_dir], "groups": {"canary": "context == %r" % CANARY}}, f, sort_keys=False
            )
        return started

    def names(self):
        return [m.name for m in self.members]

    def by_name(self, name):
        return next(m for m in self.members if m.name == name)

    def play_order(self):
        """The order of ``canary:clusters``: the canary, then the rest in inventory order (kubeconfig file names)."""
        rest = sorted((n for n in self.names() if n != CANARY), key=lambda n: n + ".kubeconfig")
        return [CANARY] + rest

    def prepare(self, namespace):
        """Every member side by side: the namespace at 0.1.0 with 0.2.0 proposed. Returns {member: seconds}."""
        self.namespaces.append(namespace)
        with ThreadPoolExecutor(max_workers=len(self.members)) as pool:
            took = list(pool.map(lambda m: m.prepare(namespace, self.address, self.workdir, self.env), self.members))
        return dict(zip(self.names(), took))

    def offsets(self):
        return {m.name: m.bed.audit_offset() for m in self.members}

    def cpu(self):
        return {m.name: m.cpu_seconds() for m in self.members}

    def states(self, namespace, settled=False):
        with ThreadPoolExecutor(max_workers=len(self.members)) as pool:
            states = list(pool.map(lambda m: m.settled_state(namespace) if settled else m.state(namespace), self.members))
        return dict(zip(self.names(), states))

    def close(self, keep):
        if not keep and self.namespaces:
            log("deleting the namespaces %s on every member (the deletion goes on in the background)" % ", ".join(self.namespaces))
        for member in self.members:
            if not keep:
                member.delete_namespaces(self.namespaces)
            member.close()


# ------------------------------------------------------------------------------------------------ requests


def resource_of(uri):
    """``pods``, ``subscriptions``, ... of a request URI; discovery paths as they are (``/apis``)."""
    path = uri.split("?")[0]
    if is_discovery(uri):
        return path
    parts = path.strip("/").split("/")
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    resource = rest[0] if rest else path
    if len(rest) >= 3:
        resource += "/" + rest[2]  # a subresource
    return resource


def request_key(verb, uri, code):
    key = "%s %s" % (verb, resource_of(uri))
    return key + (" (%s)" % code if code and code >= 400 else "")


def count_keys(requests):
    """``{"get subscriptions": 2, ...}`` in first-seen order."""
    counts = collections.OrderedDict()
    for verb, uri, code in requests:
        key = request_key(verb, uri, code)
        counts[key] = counts.get(key, 0) + 1
    return dict(counts)


def verbs_of(requests):
    counts = collections.Counter(verb for verb, _uri, _code in requests)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def summarize_requests(requests, foreign, namespace):
    return {
        "count": len(requests),
        "verbs": verbs_of(requests),
        "by_resource": count_keys(requests),
        "discovery": sum(1 for r in requests if is_discovery(r[1])),
        "list": brief_requests(requests, namespace),
        "foreign": len(foreign),
    }


def audit_events(bed, offset, namespace, run):
    """The bench user's requests after ``offset`` in ``namespace`` (and cluster-scoped ones), in the order the API
    server received them: ``[received (s after the run's start), verb, URI, code]``; a watch counts when it started."""
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
        entry = events.setdefault(event["auditID"], {"verb": event.get("verb"), "uri": uri, "code": None})
        entry["received"] = stamp(event["requestReceivedTimestamp"])
        if event.get("stage") in ("ResponseComplete", "ResponseStarted") and entry["code"] is None:
            entry["code"] = (event.get("responseStatus") or {}).get("code")
    rows = sorted(events.values(), key=lambda e: e["received"])
    return [[rel(e["received"], run["start"]), e["verb"], e["uri"], e["code"]] for e in rows]


def segment_ours(timeline, plan_end_rel):
    """Ours' requests on one member by when they came: in the plan play, then in the turn - the preflight reads
    before the first write of the record, the record ConfigMap's own requests, the change (after the record's first
    write, up to its second: step ``gate``), the health gate (after that; a watch of the gate may open only after
    the verdict, the record's last write).

    ``timeline``: audit_events' rows; ``plan_end_rel``: the plan play's end, relative to the run's start."""
    segments = {name: [] for name in SEGMENTS}
    writes = 0
    for received, verb, uri, code in timeline:
        entry = [verb, uri, code]
        if plan_end_rel is not None and received is not None and received <= plan_end_rel:
            segments["plan"].append(entry)
            continue
        if "/configmaps" in uri:
            segments["record"].append(entry)
            if verb in ("create", "patch", "update"):
                writes += 1
            continue
        segments[("preflight", "change")[writes] if writes < 2 else "gate"].append(entry)
    return {name: count_keys(entries) for name, entries in segments.items()}, {name: len(entries) for name, entries in segments.items()}


# ------------------------------------------------------------------------------------------------ playbooks


def run_playbook(argv, env, save, timeout=1800):
    """ansible-playbook with the json stdout callback; its output is kept in ``save`` (in the work directory)."""
    timed = timed_run(argv, env, timeout)
    stdout, stderr = timed.pop("stdout"), timed.pop("stderr")
    with open(save, "w") as f:
        f.write(stdout + "\n" + stderr)
    try:
        timed["report"] = json.loads(stdout[stdout.index("{") :])
    except ValueError:
        timed["report"] = None
    if timed["rc"] != 0 or timed["report"] is None:
        timed["output"] = (stdout[-4000:] + stderr[-3000:]).strip()
    return timed


def plays_of(report, run):
    """Each play's name and start/end relative to the run's start (a play with serial shows once per batch)."""
    plays = []
    for play in (report or {}).get("plays", []):
        duration = play["play"].get("duration") or {}
        start, end = iso_stamp(duration.get("start")), iso_stamp(duration.get("end"))
        plays.append({"name": play["play"]["name"], "start": rel(start, run["start"]), "end": rel(end, run["start"]), "seconds": rel(end, start)})
    return plays


def run_ours(fleet, namespace, workdir, env, index):
    report_dir = os.path.join(workdir, "report-%d" % index)
    extra = {
        "fleet_hosts": "canary:clusters",
        "fleet_waves": WAVES,
        "fleet_rollout_kind": "olm_v0",
        "fleet_rollout_name": PACKAGE,
        "fleet_rollout_namespace": namespace,
        "fleet_rollout_version": TO,
        "fleet_rollout_report_dir": report_dir,
    }
    vars_file = os.path.join(workdir, "ours-vars-%d.json" % index)
    with open(vars_file, "w") as f:
        json.dump(extra, f)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", fleet.inventory, "-e", "@" + vars_file, OURS_PLAYBOOK]
    run = run_playbook(argv, env, os.path.join(workdir, "ours-%d.out" % index))
    try:
        with open(os.path.join(report_dir, "report.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = {"clusters": []}
    run["rows"] = [{k: row.get(k) for k in ("cluster", "wave", "from", "to", "result", "duration_s", "cause")} for row in doc.get("clusters", [])]
    return run


def run_anchor(fleet, namespace, workdir, env, index):
    clusters = [{"name": n, "kubeconfig": os.path.join(fleet.fleet_dir, "%s.kubeconfig" % n), "context": n} for n in fleet.play_order()]
    extra = {
        "fleet_namespace": namespace,
        "fleet_package": PACKAGE,
        "fleet_target_csv": TO_CSV,
        "fleet_clusters": clusters,
        "ansible_python_interpreter": sys.executable,
    }
    vars_file = os.path.join(workdir, "anchor-vars-%d.json" % index)
    with open(vars_file, "w") as f:
        json.dump(extra, f)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@" + vars_file, ANCHOR_PLAYBOOK]
    return run_playbook(argv, env, os.path.join(workdir, "anchor-%d.out" % index))


def anchor_turns(report, run):
    """Each cluster's time in the anchor, from the start of its first task to the end of its last (anchor-cluster.yml
    names its tasks ``<cluster>: ...``), and the attempts of its ``until`` tasks."""
    turns = {}
    for play in (report or {}).get("plays", []):
        for task in play.get("tasks", []):
            name = task["task"]["name"]
            cluster, sep, what = name.partition(": ")
            if not sep or not cluster.startswith("member-"):
                continue
            duration = task["task"].get("duration") or {}
            turn = turns.setdefault(cluster, {"start": iso_stamp(duration.get("start")), "end": None, "attempts": {}})
            turn["end"] = iso_stamp(duration.get("end")) or turn["end"]
            attempts = ((task.get("hosts") or {}).get("localhost") or {}).get("attempts")
            if attempts:
                turn["attempts"][what] = attempts
    return {name: {"seconds": rel(t["end"], t["start"]), "start": rel(t["start"], run["start"]), "attempts": t["attempts"]} for name, t in turns.items()}


# ------------------------------------------------------------------------------------------------ one run


def measure(fleet, tool, namespace, workdir, env, index):
    offsets = fleet.offsets()
    cpu_before = fleet.cpu()
    run = (run_ours if tool == "ours" else run_anchor)(fleet, namespace, workdir, env, index)
    cpu_after = fleet.cpu()
    run.update({"tool": tool, "namespace": namespace, "plays": plays_of(run.get("report"), run)})
    run["state_at_end"] = fleet.states(namespace)
    run["members"] = {}
    for member in fleet.members:
        requests, foreign, timing = requests_since(member.bed, offsets[member.name], namespace, run)
        entry = summarize_requests(requests, foreign, namespace)
        entry["first_request_s"] = (timing or {}).get("first_request_s")
        entry["timeline"] = audit_events(member.bed, offsets[member.name], namespace, run)
        entry["cpu_s"] = round(sum(cpu_after[member.name].get(k, 0) - v for k, v in cpu_before[member.name].items()), 2)
        entry["rss_mib"] = round(sum(member.bed.rss_mib().values()), 1)
        run["members"][member.name] = entry
    run["state"] = fleet.states(namespace, settled=True)
    run["ok"] = run["rc"] == 0 and all(s["installed_csv"] == TO_CSV and s["csv_phase"] == "Succeeded" for s in run["state"].values())
    if tool == "ours":
        figures_ours(run)
    else:
        run["turns"] = anchor_turns(run.get("report"), run)
    run.pop("report", None)
    return run


def figures_ours(run):
    """The plays' times, the turns, the ideal and wall / ideal, and the requests by segment."""
    plays = run["plays"]
    plan = next((p for p in plays if p["name"].startswith("Plan")), None)
    waves = [p for p in plays if p["name"].startswith("Roll")]
    shown = next((p for p in plays if p["name"].startswith("Show")), None)
    run["plan_s"] = plan["seconds"] if plan else None
    run["wave_plays_s"] = [p["seconds"] for p in waves]
    run["rollout_play_s"] = rel(waves[-1]["end"], waves[0]["start"]) if waves else None
    run["report_s"] = shown["seconds"] if shown else None
    run["startup_s"] = plays[0]["start"] if plays else None
    run["after_last_play_s"] = rel(run["wall_s"], plays[-1]["end"]) if plays else None
    by_wave = collections.defaultdict(list)
    for row in run["rows"]:
        if row.get("duration_s") is not None and row.get("wave") is not None:
            by_wave[row["wave"]].append(row["duration_s"])
    slowest = [max(by_wave[w]) for w in sorted(by_wave)]
    run["slowest_turn_per_wave_s"] = slowest
    # what each wave's play took beyond its slowest turn: include_role, the role's argument check, the module's start
    run["wave_overhead_s"] = [rel(p, t) for p, t in zip(run["wave_plays_s"], slowest)]
    run["ideal_s"] = round(sum(slowest), 3) if slowest else None
    run["wall_over_ideal"] = round(run["wall_s"] / run["ideal_s"], 3) if run["ideal_s"] else None
    run["rollout_play_over_ideal"] = round(run["rollout_play_s"] / run["ideal_s"], 3) if run["ideal_s"] and run["rollout_play_s"] else None
    plan_end = plan["end"] if plan else None
    waves_of_rows = {row["cluster"]: row.get("wave") for row in run["rows"]}
    for name, entry in run["members"].items():
        timeline = entry.get("timeline") or []
        entry["segments"], entry["segment_counts"] = segment_ours(timeline, plan_end)
        # from the play's start to this cluster's first request: include_role, the role's argument check, the
        # assert, the module's process start (AnsiballZ) and imports
        planned = [t[0] for t in timeline if plan_end is not None and t[0] <= plan_end]
        turned = [t[0] for t in timeline if plan_end is None or t[0] > plan_end]
        wave = waves_of_rows.get(name)
        entry["plan_first_request_s"] = rel(planned[0], plan["start"]) if planned and plan else None
        entry["turn_first_request_s"] = rel(turned[0], waves[wave - 1]["start"]) if turned and wave and wave <= len(waves) else None
        entry["turn_requests_s"] = rel(turned[-1], turned[0]) if turned else None
    run["plan_first_request_s"] = median([e["plan_first_request_s"] for e in run["members"].values()])
    run["turn_first_request_s"] = median([e["turn_first_request_s"] for e in run["members"].values()])


def single_olm_operator(fleet, workdir, env):
    """olm_operator with version 0.2.0 once, on a fresh namespace of the canary member at 0.1.0 (bench kubeconfig)."""
    member = fleet.by_name(CANARY)
    namespace = "bench-fleet-olm-%s" % os.urandom(3).hex()
    fleet.namespaces.append(namespace)
    setup_s = member.prepare(namespace, fleet.address, workdir, env)
    work = os.path.join(workdir, "single")
    os.makedirs(work, exist_ok=True)
    offset = member.bed.audit_offset()
    run = run_module_subprocess_timed(OLM_MODULE, olm_args(member.bed.bench_kubeconfig, namespace, TO), work, env, sys.executable)
    requests, foreign, timing = requests_since(member.bed, offset, namespace, run)
    result = run.pop("result")
    run.update(summarize_requests(requests, foreign, namespace))
    run.update(
        {
            "member": member.name,
            "namespace": namespace,
            "setup_s": setup_s,
            "first_request_s": (timing or {}).get("first_request_s"),
            "output": {k: result.get(k) for k in ("failed", "msg", "changed", "installed_csv", "version", "phase", "approved_install_plans", "duration")},
            "state": member.settled_state(namespace),
        }
    )
    run["ok"] = not result.get("failed") and run["state"]["installed_csv"] == TO_CSV and run["state"]["csv_phase"] == "Succeeded"
    return run


def comparable(states):
    """The members' states without what only ours writes (the record)."""
    return {name: {k: v for k, v in s.items() if k != "record"} for name, s in states.items()}


def summarize(results):
    measured = results["measured"]

    def med(tool, key):
        return median([r.get(key) for r in measured[tool]])

    per_member = {}
    for tool in ("ours", "anchor"):
        counts = collections.defaultdict(list)
        for run in measured[tool]:
            for name, entry in run["members"].items():
                counts[name].append(entry["count"])
        per_member[tool] = {name: median(values) for name, values in sorted(counts.items())}
    states = {json.dumps(comparable(r["state"]), sort_keys=True) for tool in measured for r in measured[tool]}
    turns = collections.defaultdict(list)
    for run in measured["ours"]:
        for row in run["rows"]:
            turns[row["cluster"]].append(row["duration_s"])
    anchor_turn = collections.defaultdict(list)
    for run in measured["anchor"]:
        for name, turn in (run.get("turns") or {}).items():
            anchor_turn[name].append(turn["seconds"])
    keys = (
        "wall_s",
        "cpu_s",
        "plan_s",
        "rollout_play_s",
        "report_s",
        "startup_s",
        "after_last_play_s",
        "ideal_s",
        "wall_over_ideal",
        "rollout_play_over_ideal",
        "plan_first_request_s",
        "turn_first_request_s",
    )
    summary = {
        "medians": {key: {tool: med(tool, key) for tool in measured} for key in keys},
        "requests_per_member": per_member,
        "requests_per_member_median": {tool: median(list(per_member[tool].values())) for tool in per_member},
        "turns_ours_s": {name: median(values) for name, values in turns.items()},
        "turns_anchor_s": {name: median(values) for name, values in anchor_turn.items()},
        "all_ok": all(r["ok"] for tool in measured for r in measured[tool]),
        "same_state": len(states) == 1,
        "pair_ratios": [round(o["wall_s"] / a["wall_s"], 3) for o, a in zip(measured["ours"], measured["anchor"])],
    }
    m = summary["medians"]["wall_s"]
    summary["wall_ratio"] = m["ours"] / m["anchor"] if m.get("ours") and m.get("anchor") else None
    return summary


# ------------------------------------------------------------------------------------------------ markdown


def _keys_line(counts):
    return ", ".join("%s%s" % (key, " ×%d" % n if n > 1 else "") for key, n in counts.items()) or "-"


def markdown(results):
    env, s = results["environment"], results["summary"]
    measured = results["measured"]
    m = s["medians"]
    members = results["members"]
    lines = [
        "## Fleet rollout benchmark (%s, %s CPUs, load average %.1f at the start, %.1f at the end; git %s%s)\n"
        % (
            env["date_utc"],
            env["cpus"],
            env["loadavg_start"][0],
            env.get("loadavg_end", [0])[0],
            env["git_head"],
            " + uncommitted plugins/ or playbooks/ or roles/" if env["git_dirty"] else "",
        ),
        "%d member clusters (%s), kube-fleet %s -> %s (OLM v0), waves %s (%s), forks %d; %d alternating run%s per side, "
        "each in a fresh namespace; medians. Member clusters left running (`python -m testbed members-stop` stops them)."
        % (
            len(members),
            ", ".join(members),
            FROM,
            TO,
            json.dumps(WAVES),
            " | ".join(", ".join(w) for w in results["waves"]),
            results["forks"],
            results["runs"],
            "" if results["runs"] == 1 else "s",
        ),
        "",
        "| | ours (fleet_rollout.yml) | anchor (kubernetes.core loop) | ours/anchor |",
        "|---|---:|---:|---:|",
    ]

    def row(label, key, digits=2, ratio=False):
        o, a = m[key].get("ours"), m[key].get("anchor")
        return "| %s | %s | %s | %s |" % (label, fmt(o, digits), fmt(a, digits), fmt(o / a) if ratio and o and a else "")

    lines += [
        row("playbook wall s", "wall_s", ratio=True),
        row("CPU s (ansible-playbook and its workers)", "cpu_s", ratio=True),
        row("start to the first play s", "startup_s"),
        row("plan play s", "plan_s"),
        row("  of which play start to the first request (module start, median over clusters)", "plan_first_request_s"),
        row("rollout play s (all waves)", "rollout_play_s"),
        row("  wave play start to the cluster's first request (median)", "turn_first_request_s"),
        row("report play s", "report_s"),
        row("last play end to exit s", "after_last_play_s"),
        "| API requests per cluster (median over clusters) | %s | %s | %s |"
        % (
            fmt(s["requests_per_member_median"]["ours"], 0),
            fmt(s["requests_per_member_median"]["anchor"], 0),
            fmt(s["requests_per_member_median"]["ours"] / s["requests_per_member_median"]["anchor"]) if s["requests_per_member_median"]["anchor"] else "",
        ),
        "",
        "Ours' **ideal** (the canary's turn + the slowest turn of each later wave, turns from the fleet report): "
        "%s s; **wall / ideal %s** %s (target <= %.1f), rollout play / ideal %s. Pairs ours/anchor: %s."
        % (
            fmt(m["ideal_s"]["ours"]),
            fmt(m["wall_over_ideal"]["ours"]),
            mark(m["wall_over_ideal"]["ours"] is not None and m["wall_over_ideal"]["ours"] <= WALL_IDEAL_TARGET),
            WALL_IDEAL_TARGET,
            fmt(m["rollout_play_over_ideal"]["ours"]),
            ", ".join(fmt(x) for x in s["pair_ratios"]),
        ),
        "",
        "| run | side | wall s | plan s | wave plays s | report s | turns s (wave) | ideal s | wall/ideal | requests per cluster | ok |",
        "|---|---|---:|---:|---|---:|---|---:|---:|---|---|",
    ]
    for i in range(results["runs"]):
        for tool in results["order"][i]:
            r = measured[tool][i]
            counts = ", ".join("%s %d" % (n, e["count"]) for n, e in sorted(r["members"].items()))
            if tool == "ours":
                turns = ", ".join("%s %s (%s)" % (row_["cluster"], fmt(row_["duration_s"], 1), row_["wave"]) for row_ in r["rows"])
                lines.append(
                    "| %d | ours | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
                    % (
                        i + 1,
                        fmt(r["wall_s"]),
                        fmt(r["plan_s"]),
                        " + ".join(fmt(x) for x in r["wave_plays_s"]),
                        fmt(r["report_s"]),
                        turns,
                        fmt(r["ideal_s"]),
                        fmt(r["wall_over_ideal"]),
                        counts,
                        mark(r["ok"]),
                    )
                )
            else:
                turns = ", ".join(
                    "%s %s (polls %s)" % (n, fmt(t["seconds"], 1), "/".join(str(x) for x in t["attempts"].values()) or "-")
                    for n, t in sorted((r.get("turns") or {}).items())
                )
                lines.append("| %d | anchor | %s | | | | %s | | | %s | %s |" % (i + 1, fmt(r["wall_s"]), turns, counts, mark(r["ok"])))
    lines += [
        "",
        "Outputs: %s."
        % (
            "every run of both sides ended with %s Succeeded on every cluster, and both left the same state once OLM "
            "settled (installedCSV, CSV phase, approved and pending InstallPlans; ours also leaves its record ConfigMap)" % TO_CSV
            if s["all_ok"] and s["same_state"]
            else "**differ or failed** (see the JSON)"
        ),
        "",
    ]
    lines += md_requests(results)
    lines += md_members(results)
    return "\n".join(lines) + "\n"


def md_requests(results):
    measured, single = results["measured"], results.get("single")
    last_ours = measured["ours"][-1]
    last_anchor = measured["anchor"][-1]
    lines = ["### API requests per cluster (each member's audit log of the bench user)", ""]
    if single:
        lines.append(
            "One `olm_operator` run (`version: %s`, bench kubeconfig, %s at %s in a fresh namespace of %s): **%d requests** "
            "in %s s (%s): %s."
            % (
                TO,
                PACKAGE,
                FROM,
                single["member"],
                single["count"],
                fmt(single["wall_s"]),
                "ok" if single["ok"] else "FAILED",
                _keys_line(single["by_resource"]),
            )
        )
        lines.append("")
    lines += [
        "| cluster | ours | of which plan / preflight / record / change / gate | anchor | olm_operator alone | ours - olm_operator |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for name in sorted(last_ours["members"]):
        entry = last_ours["members"][name]
        seg = entry.get("segment_counts") or {}
        anchor = last_anchor["members"].get(name, {}).get("count")
        lines.append(
            "| %s | %d | %s | %s | %s | %s |"
            % (
                name,
                entry["count"],
                " / ".join(str(seg.get(k, 0)) for k in SEGMENTS),
                anchor,
                single["count"] if single else "-",
                "%+d" % (entry["count"] - single["count"]) if single else "-",
            )
        )
    canary = last_ours["members"].get(CANARY) or next(iter(last_ours["members"].values()))
    lines += ["", "Ours on %s (last run), by segment:" % CANARY, ""]
    for key in SEGMENTS:
        counts = (canary.get("segments") or {}).get(key) or {}
        if counts:
            lines.append("- %s (%d): %s" % (key, sum(counts.values()), _keys_line(counts)))
    if single:
        change = collections.Counter((canary.get("segments") or {}).get("change") or {})
        alone = collections.Counter(single["by_resource"])
        more, fewer = change - alone, alone - change
        lines += [
            "",
            "The change step against olm_operator alone: %s."
            % (
                "the same requests"
                if not more and not fewer
                else "more: %s; fewer: %s" % (_keys_line(dict(more)) if more else "none", _keys_line(dict(fewer)) if fewer else "none")
            ),
        ]
    lines += [
        "",
        "Verbs, last run, %s: ours %s; anchor %s%s."
        % (
            CANARY,
            json.dumps(canary["verbs"]),
            json.dumps(last_anchor["members"].get(CANARY, {}).get("verbs")),
            "; olm_operator alone %s" % json.dumps(single["verbs"]) if single else "",
        ),
    ]
    lines += ["", "Anchor on %s (last run): %s." % (CANARY, _keys_line(last_anchor["members"].get(CANARY, {}).get("by_resource") or {})), ""]
    return lines


def md_members(results):
    measured = results["measured"]
    lines = [
        "### Member clusters during the runs",
        "",
        "| cluster | CPU s during ours (runs) | CPU s during anchor (runs) | RSS MiB at the end of the last run |",
        "|---|---|---|---:|",
    ]
    for name in results["members"]:
        o = [r["members"][name]["cpu_s"] for r in measured["ours"] if name in r["members"]]
        a = [r["members"][name]["cpu_s"] for r in measured["anchor"] if name in r["members"]]
        last = measured[results["order"][-1][-1]][-1]["members"].get(name, {})
        lines.append("| %s | %s | %s | %s |" % (name, ", ".join(fmt(x, 1) for x in o), ", ".join(fmt(x, 1) for x in a), fmt(last.get("rss_mib"), 0)))
    return lines + [""]


# ------------------------------------------------------------------------------------------------ main


def environment(bed):
    env = machine(("plugins", "playbooks", "roles"))
    env.update({"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "testbed_versions": bed.state.get("versions")})
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--members", type=int, default=6, help="member clusters in the fleet (default 6)")
    ap.add_argument("--runs", type=int, default=2, help="alternating runs per side (default 2)")
    ap.add_argument("--forks", type=int, help="ANSIBLE_FORKS of ours (default: the number of members, >= the largest wave)")
    ap.add_argument("--out", help="write all raw results as JSON here")
    ap.add_argument("--markdown", help="write the Markdown tables here")
    ap.add_argument("--keep", action="store_true", help="keep the benchmark namespaces (default: delete them at the end)")
    ap.add_argument("--report", help="re-print the tables of a JSON written by --out and exit")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            print(markdown(json.load(f)))
        return
    if args.members < 1:
        ap.error("--members must be 1 or more")

    from testbed import Testbed

    ensure_collection_link()
    bed = Testbed()
    if not bed.is_running():
        log("testbed not running: bringing it up")
        bed.up()
    else:
        log("reusing the running testbed (%s)" % bed.kubeconfig)
    workdir = tempfile.mkdtemp(prefix="kubeforge-bench-fleet-")
    tmp = os.path.join(workdir, "tmp")
    os.makedirs(tmp)
    mod_env = module_env(tmp)
    fleet = Fleet(bed, args.members, workdir, mod_env)
    log("member clusters: %d wanted (started where they do not run; they are left running)" % args.members)
    started = time.monotonic()
    fleet.ensure()
    log("members %s ready in %.1f s; kube-fleet catalog at %s" % (", ".join(fleet.names()), time.monotonic() - started, fleet.address))
    waves = waves_of(fleet.play_order(), WAVES)
    forks = args.forks or max(args.members, max(len(w) for w in waves))
    play_env = ansible_env(tmp, forks)
    results = {
        "environment": environment(bed),
        "members": fleet.names(),
        "waves": waves,
        "forks": forks,
        "runs": args.runs,
        "order": [],
        "measured": {"ours": [], "anchor": []},
    }
    try:
        log("one olm_operator run: %s -> %s on %s" % (FROM, TO, CANARY))
        results["single"] = single_olm_operator(fleet, workdir, mod_env)
        log("  olm_operator %.2fs, %d requests%s" % (results["single"]["wall_s"], results["single"]["count"], "" if results["single"]["ok"] else "  FAILED"))
        for i in range(args.runs):
            order = ("ours", "anchor") if i % 2 == 0 else ("anchor", "ours")
            results["order"].append(order)
            for tool in order:
                restarted = fleet.ensure()
                if restarted:
                    log("  member clusters %s were started again (someone stopped them)" % ", ".join(restarted))
                namespace = "bench-fleet-%s-%s" % (tool, os.urandom(3).hex())
                setup = fleet.prepare(namespace)
                log("run %d %s: %s at %s on %d members (set-up %s s)" % (i + 1, tool, namespace, FROM, len(setup), max(setup.values())))
                run = measure(fleet, tool, namespace, workdir, play_env, i)
                run["setup_s"] = setup
                results["measured"][tool].append(run)
                log(
                    "  %-6s %6.2fs rc=%s  requests per cluster %s%s%s"
                    % (
                        tool,
                        run["wall_s"],
                        run["rc"],
                        {n: e["count"] for n, e in run["members"].items()},
                        "  ideal %ss, wall/ideal %s" % (run["ideal_s"], run["wall_over_ideal"]) if tool == "ours" else "",
                        "" if run["ok"] else "  FAILED: %s" % (run.get("output") or "")[-1500:],
                    )
                )
    finally:
        fleet.close(args.keep)
        if not os.environ.get("KUBEFORGE_BENCH_KEEP_WORKDIR"):
            shutil.rmtree(workdir, ignore_errors=True)
    results["environment"]["loadavg_end"] = os.getloadavg()
    results["summary"] = summarize(results)
    log("member clusters %s left running: `PYTHONPATH=tests .venv/bin/python -m testbed members-stop` stops them" % ", ".join(fleet.names()))
    write_results(results, markdown(results), args.out, args.markdown)


if __name__ == "__main__":
    main()
