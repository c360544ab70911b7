"""Fleet rollouts across real clusters: the testbed's main cluster (with the real node: the canary, where a bad release
really crash-loops) and member clusters (members.py: real API servers, controllers, KWOK nodes, OLM v0 and v1), rolled
by playbooks/fleet_rollout.yml over the kubeforge.operators.clusters inventory, on Ansible's own serial and
max_fail_percentage. Every assertion reads the clusters' API servers or the fleet report the playbook wrote."""

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib import canary_objects, fleet
from lib.doc_examples import runnable
from lib.polling import poll_until
from lib.runners import run_module_subprocess
from testbed import fleet_catalog, realnode
from testbed.cluster import API_CLIENTS
from testbed.kube import api_client

pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("fleet")]

MEMBERS = 3
CANARY = "testbed"
# The canary (the main cluster, group canary) first, then the members in inventory order.
HOSTS = "canary:clusters"
RECORD = "kubeforge-fleet-olm-" + fleet.PACKAGE


class Fleet:
    """The clusters (name -> kubeconfig), their API clients, the kube-fleet catalog's address and the inventory."""

    def __init__(self, testbed, facts, address, inventory, work):
        self.testbed, self.address, self.inventory, self.work = testbed, address, inventory, work
        self.kubeconfigs = dict({CANARY: testbed.kubeconfig}, **{m["name"]: m["kubeconfig"] for m in facts})
        self.apis = {name: api_client(path, pool=4) for name, path in self.kubeconfigs.items()}
        self.members = [m["name"] for m in facts]

    def names(self):
        return [CANARY] + self.members

    def custom(self, cluster):
        return client.CustomObjectsApi(self.apis[cluster])

    def install(self, namespace, version="0.1.0", clusters=None):
        """kube-fleet ``version`` installed through olm_operator in ``namespace`` of every cluster, side by side; in the
        main cluster the namespace puts its pods on the real node."""

        def one(cluster):
            core = client.CoreV1Api(self.apis[cluster])
            annotations = dict(realnode.NAMESPACE_ANNOTATIONS) if cluster == CANARY else {}
            core.create_namespace({"metadata": {"name": namespace, "annotations": annotations}})
            auth = {"kubeconfig": self.kubeconfigs[cluster]}
            work = directory(self.work, f"{cluster}-{namespace}")
            source = run_module_subprocess(work, "olm_catalog_source", dict(auth, name="fleet", namespace=namespace, address=self.address, wait_timeout=120))
            assert not source.get("failed"), (cluster, source)
            installed = run_module_subprocess(
                work, "olm_operator", dict(auth, package=fleet.PACKAGE, namespace=namespace, catalog="fleet", channel="stable", version=version)
            )
            assert not installed.get("failed"), (cluster, installed["msg"])
            return cluster

        with ThreadPoolExecutor(max_workers=len(self.apis)) as pool:
            list(pool.map(one, clusters or self.names()))

    def remove(self, namespace):
        for api in self.apis.values():
            try:
                client.CoreV1Api(api).delete_namespace(namespace)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise

    def installed_csv(self, cluster, namespace):
        sub = self.custom(cluster).get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "subscriptions", fleet.PACKAGE)
        return (sub.get("status") or {}).get("installedCSV")

    def csvs(self, cluster, namespace):
        listing = self.custom(cluster).list_namespaced_custom_object(
            "operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", label_selector="!olm.copiedFrom"
        )
        return {c["metadata"]["name"]: c for c in listing["items"]}

    def record(self, cluster, namespace, name=RECORD):
        try:
            return client.CoreV1Api(self.apis[cluster]).read_namespaced_config_map(name, namespace)
        except client.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def rollout(self, namespace, version, report_dir, check=False, **more):
        extra = {
            "fleet_hosts": HOSTS,
            "fleet_rollout_kind": "olm_v0",
            "fleet_rollout_name": fleet.PACKAGE,
            "fleet_rollout_namespace": namespace,
            "fleet_rollout_version": version,
            "fleet_rollout_report_dir": str(report_dir),
            "fleet_rollout_gate_timeout": 120,
        }
        extra.update(more)
        return fleet.run_rollout(self.work, self.inventory, extra, check=check, timeout=900)


@pytest.fixture(scope="module")
def fleet_bed(testbed, real_node, tmp_path_factory):
    """MEMBERS member clusters beside the main one (stopped again at the end: they load the machine), kube-fleet's
    catalog served to all of them, and an inventory of the four clusters with the main one in group canary."""
    started = time.monotonic()
    facts = testbed.ensure_members(MEMBERS)
    print(f"{MEMBERS} member clusters up in {time.monotonic() - started:.1f} s")
    work = tmp_path_factory.mktemp("fleet")
    address = testbed.fleet_catalog_address()
    inventory = fleet.inventory(work / "fleet.clusters.yml", testbed.run_dir / "fleet", canary=CANARY)
    bed = Fleet(testbed, facts, address, inventory, work)
    yield bed
    testbed.stop_members()


@pytest.fixture
def fleet_namespace(fleet_bed):
    name = "fleet-" + os.urandom(3).hex()
    yield name
    fleet_bed.remove(name)


def node_ready(node):
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def deployments_not_ready(api, namespace):
    """The Deployments in ``namespace`` whose pods are not all replaced and Ready (a pod still terminating, one not
    Ready, or a status the deployment controller has not written for them yet)."""
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace).items
    if any(p.metadata.deletion_timestamp or not any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or []) for p in pods):
        return ["pods"]
    return [
        d.metadata.name
        for d in client.AppsV1Api(api).list_namespaced_deployment(namespace).items
        if (d.status.observed_generation or 0) < d.metadata.generation
        or not d.spec.replicas == d.status.ready_replicas == d.status.available_replicas == d.status.updated_replicas == d.status.replicas
    ]


def directory(parent, name):
    """``parent/name``, made: where the parallel runs of one module keep their argument files apart."""
    path = Path(parent) / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def descendants(pid):
    """Every process below ``pid`` (read from /proc)."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid):
    """SIGKILL ``pid`` and every process below it, whatever their session: frozen first (SIGSTOP) until no new one
    appears, so that none starts another between the listing and the kill."""

    def signal_all(pids, sig):
        for victim in pids:
            try:
                os.kill(victim, sig)
            except ProcessLookupError:
                pass

    frozen = set()
    while True:
        tree = {pid, *descendants(pid)}
        if tree <= frozen:
            break
        signal_all(tree - frozen, signal.SIGSTOP)
        frozen |= tree
    signal_all(frozen, signal.SIGKILL)


def recap(output):
    """{host: {ok, changed, failed, ...}} from ansible-playbook's PLAY RECAP."""
    found = {}
    lines = output.split("PLAY RECAP", 1)[-1].splitlines()
    for line in lines:
        if ":" in line and "ok=" in line:
            host, _sep, counts = line.partition(":")
            found[host.strip()] = {k: int(v) for k, v in (item.split("=") for item in counts.split())}
    return found


def test_a_good_version_rolls_canary_first_then_the_waves_and_a_rerun_writes_nothing(fleet_bed, fleet_namespace, tmp_path):
    ns = fleet_namespace
    fleet_bed.install(ns)
    report_dir = tmp_path / "report"

    # the plan (check mode): every cluster at 0.1.0, the path to 0.2.0, nothing written anywhere
    code, output = fleet_bed.rollout(ns, "0.2.0", report_dir, check=True)
    assert code == 0, output
    for cluster in fleet_bed.names():
        assert f"{cluster} (wave " in output and "0.1.0 -> 0.2.0 (path 0.2.0)" in output, output
        assert fleet_bed.record(cluster, ns) is None
        assert fleet_bed.installed_csv(cluster, ns) == "kube-fleet.v0.1.0"
    assert not report_dir.exists()

    code, output = fleet_bed.rollout(ns, "0.2.0", report_dir, fleet_waves=[1, "100%"], fleet_rollout_soak_seconds=3)
    assert code == 0, output
    doc, rows = fleet.report(report_dir)
    assert {c: (r["wave"], r["from"], r["to"], r["result"]) for c, r in rows.items()} == dict(
        {CANARY: (1, "0.1.0", "0.2.0", "succeeded")}, **{m: (2, "0.1.0", "0.2.0", "succeeded") for m in fleet_bed.members}
    )
    assert not doc["halted"] and (report_dir / "report.md").read_text().startswith("# Fleet rollout kube-fleet@0.2.0: 4 succeeded")
    # the canary was done (its gate and soak passed) before any member's upgrade began: its record's end and the
    # members' new CSVs, each read from its own API server
    canary_done = fleet_bed.record(CANARY, ns).data
    canary_finished = json.loads(canary_done["rollout.json"])["finished"]
    for cluster in fleet_bed.names():
        csv = fleet_bed.csvs(cluster, ns)["kube-fleet.v0.2.0"]
        assert csv["status"]["phase"] == "Succeeded" and fleet_bed.installed_csv(cluster, ns) == "kube-fleet.v0.2.0"
        if cluster != CANARY:
            assert csv["metadata"]["creationTimestamp"] >= canary_finished, (cluster, csv["metadata"]["creationTimestamp"], canary_finished)

    # a rerun: every cluster skipped, no write (the records' resourceVersions stay)
    versions = {c: fleet_bed.record(c, ns).metadata.resource_version for c in fleet_bed.names()}
    code, output = fleet_bed.rollout(ns, "0.2.0", report_dir, fleet_waves=[1, "100%"])
    assert code == 0, output
    assert all(counts["changed"] == 0 and counts["failed"] == 0 for counts in recap(output).values() if counts), recap(output)
    assert {c: fleet_bed.record(c, ns).metadata.resource_version for c in fleet_bed.names()} == versions
    assert {r["result"] for r in fleet.report(report_dir)[1].values()} == {"skipped"}


def test_a_crash_looping_version_halts_after_the_canary_and_a_rerun_refuses_until_acknowledged(fleet_bed, fleet_namespace, tmp_path):
    ns = fleet_namespace
    fleet_bed.install(ns, version="0.2.0")
    report_dir = tmp_path / "report"
    before = {m: (fleet_bed.installed_csv(m, ns), sorted(fleet_bed.csvs(m, ns))) for m in fleet_bed.members}

    # The crash image exits at once, yet its pod can be Ready for a moment first (the kubelet reports the container
    # running before it reports the exit): OLM then marks the CSV Succeeded, and a gate without a soak, which reads
    # once, passes it (stop 37's CI, 10 s into the run on a loaded machine). The soak is the window in which the
    # gate must see what the kubelet reports next - the exit, the restart, the crash loop - and fail at once; a
    # release that stayed healthy would wait it out.
    code, output = fleet_bed.rollout(ns, fleet.BAD, report_dir, fleet_max_fail_percentage=50, fleet_rollout_soak_seconds=60)
    assert code != 0, output
    doc, rows = fleet.report(report_dir)
    # the real node's crash image exits 1: the gate names that exit whether it sees the first restart or, later, the
    # crash loop (CI ci8 saw the restart)
    assert rows[CANARY]["result"] == "failed" and "code 1 (Error)" in rows[CANARY]["cause"], rows[CANARY]
    assert doc["halted"] and doc["failed_clusters"] == [CANARY]
    assert {rows[m]["result"] for m in fleet_bed.members} == {"not_reached"}
    # the other clusters untouched: read from each API server
    assert {m: (fleet_bed.installed_csv(m, ns), sorted(fleet_bed.csvs(m, ns))) for m in fleet_bed.members} == before
    assert all(fleet_bed.record(m, ns) is None for m in fleet_bed.members)
    # the real node ran the bad release
    pods = client.CoreV1Api(fleet_bed.apis[CANARY]).list_namespaced_pod(ns).items
    assert any(p.spec.node_name == realnode.NODE_NAME and "crash" in p.spec.containers[0].image for p in pods), [p.spec.node_name for p in pods]
    # OLM keeps 0.2.0 (Replacing) beside the failing 0.3.0 until 0.3.0 succeeds - which a crash-looping release does
    # for a moment between its restarts, and OLM then deletes 0.2.0 (CI ci9). While 0.2.0 is there, olm_upgrade_plan
    # plans it - it allows OpenShift up to 4.21 - from the Subscription that names 0.3.0 (the demo's readiness act)
    plan = run_module_subprocess(
        directory(fleet_bed.work, f"plan-{ns}"),
        "olm_upgrade_plan",
        {
            "kubeconfig": fleet_bed.kubeconfigs[CANARY],
            "openshift_version": "4.22",
            "packages": [fleet.PACKAGE],
            "catalogs": [{"source": "fleet", "dir": str(Path(fleet_bed.testbed.run_dir) / fleet_catalog.CATALOG_DIR)}],
        },
    )
    planned = {op["name"]: op for op in plan.get("operators", []) if op["namespace"] == ns}
    assert "kube-fleet.v0.3.0" in planned and set(planned) <= {"kube-fleet.v0.2.0", "kube-fleet.v0.3.0"}, plan
    assert (planned["kube-fleet.v0.3.0"]["blocks_upgrade"], planned["kube-fleet.v0.3.0"]["action"]["kind"]) == (False, "none"), planned
    replaced = planned.get("kube-fleet.v0.2.0")
    if replaced is not None:
        assert (replaced["source"], replaced["channel"], replaced["max_openshift_version"]) == ("fleet", "stable", "4.21"), replaced
        assert replaced["blocks_upgrade"], replaced
        assert (replaced["action"]["kind"], replaced["path"]) == ("upgrade", ["0.2.0", "0.3.0"]), replaced

    # a rerun without acknowledgement: refused before any cluster is touched, naming the cluster and the cause
    code, output = fleet_bed.rollout(ns, fleet.BAD, report_dir)
    assert code != 0 and "Fleet rollout stopped before any cluster was touched" in output, output
    assert f"{CANARY}: rollout kube-fleet@{fleet.BAD} halted here: it failed at step" in output and "code 1 (Error)" in output, output
    assert all(fleet_bed.record(m, ns) is None for m in fleet_bed.members)

    # acknowledged: the canary is recorded so and left as it is; the rollout goes on (and the bad release fails in wave 2)
    code, output = fleet_bed.rollout(ns, fleet.BAD, report_dir, fleet_rollout_acknowledge=[CANARY], fleet_waves=[1, "100%"])
    doc, rows = fleet.report(report_dir)
    assert rows[CANARY]["result"] == "acknowledged", rows[CANARY]
    assert {rows[m]["result"] for m in fleet_bed.members} == {"failed"}, rows
    assert code != 0, output


def test_the_failure_budget_decides_whether_a_wave_with_a_stopped_api_server_goes_on(fleet_bed, fleet_namespace, tmp_path):
    """member-2's API server stopped: the plan shows it unreachable, its turn fails at once (connection refused, no
    hang), and the wave [member-1, member-2] goes on to wave 3 (member-3) exactly when the budget allows 1 of 2."""
    ns = fleet_namespace
    fleet_bed.install(ns)
    waves = [1, 2, 1]  # testbed | member-1, member-2 | member-3
    member = fleet_bed.testbed.member("member-2")
    # member-2's OLM stays stopped until its operator's pods are Ready again (below): started earlier, it read the CSV
    # Succeeded from before the outage, then moved it to Installing as it checked the pods the outage left not Ready,
    # after this test had seen Succeeded (CI ci3)
    with member.stopped("olm"):
        with member.stopped("kube-apiserver"):
            report_dir = tmp_path / "budget-0"
            started = time.monotonic()
            code, output = fleet_bed.rollout(ns, "0.2.0", report_dir, fleet_waves=waves, fleet_max_fail_percentage=0)
            assert code != 0, output
            assert "member-2 (wave 2): unreachable - the API server is unreachable" in output, output
            _doc, rows = fleet.report(report_dir)
            assert {c: r["result"] for c, r in rows.items()} == {
                CANARY: "succeeded",
                "member-1": "succeeded",
                "member-2": "unreachable",
                "member-3": "not_reached",
            }, rows
            assert rows["member-2"]["duration_s"] < 30, rows["member-2"]
            assert fleet_bed.installed_csv("member-3", ns) == "kube-fleet.v0.1.0"

            report_dir = tmp_path / "budget-50"
            code, output = fleet_bed.rollout(ns, "0.2.0", report_dir, fleet_waves=waves, fleet_max_fail_percentage=50)
            assert code != 0, output  # member-2 failed (within the budget): the run still reports a failed host
            _doc, rows = fleet.report(report_dir)
            assert {c: r["result"] for c, r in rows.items()} == {
                CANARY: "skipped",
                "member-1": "skipped",
                "member-2": "unreachable",
                "member-3": "succeeded",
            }, rows
            assert fleet_bed.installed_csv("member-3", ns) == "kube-fleet.v0.2.0"
            print(f"both budget runs with member-2 down: {time.monotonic() - started:.1f} s")
        # back up (its controllers restarted, as after any API server restart: see Testbed.restart_api_clients)
        member.restart_api_clients(tuple(c for c in API_CLIENTS if c != "olm"))
        # Down for longer than the node lease, member-2's KWOK nodes went NotReady and the node controller marked their
        # pods not Ready; a kubelet reports its pods again once it reaches the API server, KWOK's stages do not (they
        # start pods, they do not re-read them). New pods stand in for that: the operator's Deployment makes them, KWOK
        # readies them.
        member_2 = client.CoreV1Api(fleet_bed.apis["member-2"])
        poll_until(
            lambda: [n.metadata.name for n in member_2.list_node().items if not node_ready(n)], 120, 0.5, "member-2's nodes Ready again", until=lambda x: not x
        )
        member_2.delete_collection_namespaced_pod(ns)
        poll_until(lambda: deployments_not_ready(fleet_bed.apis["member-2"], ns), 120, 0.5, "member-2's operator Ready again", until=lambda x: not x)
    # OLM started again on a healthy operator: the CSV it reports from now on is its verdict on these pods
    poll_until(
        lambda: fleet_bed.csvs("member-2", ns)["kube-fleet.v0.1.0"]["status"]["phase"],
        120,
        0.5,
        "member-2's CSV Succeeded",
        until=lambda phase: phase == "Succeeded",
    )
    code, output = fleet_bed.rollout(ns, "0.2.0", tmp_path / "after", fleet_waves=waves)
    assert code == 0, output
    assert fleet_bed.installed_csv("member-2", ns) == "kube-fleet.v0.2.0"


def test_a_rollout_killed_mid_wave_completes_on_rerun_without_writing_to_the_done_clusters(fleet_bed, fleet_namespace, tmp_path):
    ns = fleet_namespace
    fleet_bed.install(ns)
    report_dir = tmp_path / "report"
    extra = {
        "fleet_hosts": HOSTS,
        "fleet_waves": [1, "100%"],
        "fleet_rollout_kind": "olm_v0",
        "fleet_rollout_name": fleet.PACKAGE,
        "fleet_rollout_namespace": ns,
        "fleet_rollout_version": "0.2.0",
        "fleet_rollout_report_dir": str(report_dir),
        "fleet_rollout_soak_seconds": 20,
    }
    proc = fleet.run_rollout(tmp_path, fleet_bed.inventory, extra, popen=True)
    try:
        # SIGKILL the playbook and every process of its job once the members' turns started: its workers (ansible-core
        # starts each in a session of its own) and the modules they run, as when the controller's machine goes down
        poll_until(lambda: [m for m in fleet_bed.members if fleet_bed.record(m, ns) is not None], 300, 0.2, "the members' turns to start", until=len)
        kill_tree(proc.pid)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            kill_tree(proc.pid)
    records = {c: fleet_bed.record(c, ns) for c in fleet_bed.names()}
    assert json.loads(records[CANARY].data["rollout.json"])["result"] == "succeeded"
    interrupted = [m for m in fleet_bed.members if records[m] is not None and json.loads(records[m].data["rollout.json"])["result"] == "in_progress"]
    assert interrupted, {c: r and r.data for c, r in records.items()}

    code, output = fleet_bed.rollout(ns, "0.2.0", report_dir, fleet_waves=[1, "100%"], fleet_rollout_soak_seconds=2)
    assert code == 0, output
    assert recap(output)[CANARY]["changed"] == 0, recap(output)
    assert fleet_bed.record(CANARY, ns).metadata.resource_version == records[CANARY].metadata.resource_version
    _doc, rows = fleet.report(report_dir)
    assert rows[CANARY]["result"] == "skipped" and all(rows[m]["result"] == "succeeded" for m in fleet_bed.members), rows
    assert all(fleet_bed.installed_csv(c, ns) == "kube-fleet.v0.2.0" for c in fleet_bed.names())


def test_bad_input_is_refused_before_any_cluster_is_touched(fleet_bed, fleet_namespace, tmp_path):
    ns = fleet_namespace
    fleet_bed.install(ns)
    # a version no catalog has
    code, output = fleet_bed.rollout(ns, "9.9.9", tmp_path / "r1")
    assert code != 0 and "Fleet rollout stopped before any cluster was touched" in output, output
    assert "version 9.9.9 is not offered by this cluster's catalog (versions: 0.1.0, 0.2.0, 0.3.0)" in output, output
    # a cluster where the operator is not installed (a namespace without it)
    code, output = fleet_bed.rollout(ns + "-none", "0.2.0", tmp_path / "r2")
    assert code != 0 and "the operator is not installed here" in output, output
    # an unknown context: that cluster's kubeconfig does not have it
    inventory = fleet.inventory(
        tmp_path / "bad.clusters.yml",
        fleet_bed.testbed.run_dir / "fleet",
        canary=CANARY,
        extra={"compose": {"context": "'nope' if inventory_hostname == 'member-3' else context"}},
    )
    extra = {
        "fleet_hosts": HOSTS,
        "fleet_rollout_kind": "olm_v0",
        "fleet_rollout_name": fleet.PACKAGE,
        "fleet_rollout_namespace": ns,
        "fleet_rollout_version": "0.2.0",
        "fleet_rollout_report_dir": str(tmp_path / "r3"),
    }
    code, output = fleet.run_rollout(tmp_path, inventory, extra)
    assert code != 0 and "nope" in output, output
    # a cluster without OLM v1 for an OLM v1 rollout
    extra.update(fleet_rollout_kind="olm_v1", fleet_rollout_report_dir=str(tmp_path / "r4"))
    code, output = fleet.run_rollout(tmp_path, fleet_bed.inventory, dict(extra, fleet_hosts="member-1"))
    assert code != 0 and "OLM v1 is not installed on this cluster" in output, output
    # nothing was touched anywhere
    for cluster in fleet_bed.names():
        assert fleet_bed.record(cluster, ns) is None
        assert fleet_bed.installed_csv(cluster, ns) == "kube-fleet.v0.1.0"


def test_a_daemonset_image_across_the_fleet_through_a_canary_node_of_each_cluster(fleet_bed, fleet_namespace, tmp_path):
    """daemonset_canary in every cluster, the canary cluster first; a crash-looping image halts on the canary
    cluster's canary node and is rolled back there (daemonset_canary's own rollback), the others untouched."""
    ns = fleet_namespace
    for api in fleet_bed.apis.values():
        client.CoreV1Api(api).create_namespace({"metadata": {"name": ns}})
        client.AppsV1Api(api).create_namespaced_daemon_set(ns, canary_objects.daemonset("agent"))

    def images(cluster):
        ds = client.AppsV1Api(fleet_bed.apis[cluster]).read_namespaced_daemon_set("agent", ns)
        return ds.spec.template.spec.containers[0].image, ds.status.updated_number_scheduled, ds.status.desired_number_scheduled

    for cluster in fleet_bed.names():
        poll_until(
            lambda cluster=cluster: images(cluster), 60, 0.5, f"DaemonSet agent of {cluster} rolled out", until=lambda seen: seen[2] and seen[1] == seen[2]
        )
    extra = {
        "fleet_hosts": HOSTS,
        "fleet_waves": [1, "100%"],
        "fleet_rollout_kind": "daemonset",
        "fleet_rollout_name": "agent",
        "fleet_rollout_namespace": ns,
        "fleet_rollout_canary": {"batch": "50%"},
    }

    code, output = fleet.run_rollout(
        tmp_path, fleet_bed.inventory, dict(extra, fleet_rollout_images={"agent": canary_objects.V2}, fleet_rollout_report_dir=str(tmp_path / "good"))
    )
    assert code == 0, output
    assert {c: images(c)[0] for c in fleet_bed.names()} == {c: canary_objects.V2 for c in fleet_bed.names()}
    assert {r["result"] for r in fleet.report(tmp_path / "good")[1].values()} == {"succeeded"}

    bad = {"agent": canary_objects.CRASHLOOP}
    code, output = fleet.run_rollout(
        tmp_path,
        fleet_bed.inventory,
        dict(extra, fleet_rollout_images=bad, fleet_rollout_on_failure="rollback", fleet_rollout_report_dir=str(tmp_path / "bad")),
    )
    assert code != 0, output
    _doc, rows = fleet.report(tmp_path / "bad")
    # the real node's crash image exits 1: the gate names that exit whether it sees the first restart or, later, the
    # crash loop (CI ci8 saw the restart)
    assert rows[CANARY]["result"] == "failed" and "code 1 (Error)" in rows[CANARY]["cause"], rows[CANARY]
    assert rows[CANARY]["rolled_back_to"] == f"agent={canary_objects.V2}", rows[CANARY]
    assert {rows[m]["result"] for m in fleet_bed.members} == {"not_reached"}
    assert {c: images(c)[0] for c in fleet_bed.names()} == {c: canary_objects.V2 for c in fleet_bed.names()}


@pytest.fixture(scope="module")
def fleet_v1(fleet_bed, real_node, tmp_path_factory):
    """OLM v1 in every member, kube-fleetv1's bundle and catalog images pushed to the testbed registry (built by the
    collection's own modules), and a ClusterCatalog serving them in each member."""
    bed = fleet_bed.testbed
    bed.ensure_members(MEMBERS, olmv1=True)
    registry = bed.state["registry"]
    auth = {"registry_username": registry["username"], "registry_password": Path(registry["password_file"]).read_text().strip(), "ca_file": registry["ca_file"]}
    work = tmp_path_factory.mktemp("fleet-v1")
    bundles = fleet.write_bundles(work / "bundles", real_node["images"], renames=fleet.V1_RENAMES)
    entries, channel = [{"schema": "olm.package", "name": fleet.V1_PACKAGE, "defaultChannel": "stable"}], []
    images = []
    for version, (_source, replaces) in fleet.VERSIONS.items():
        ref = f"{registry['host']}/kubeforge-fleet/{fleet.V1_PACKAGE}-bundle:v{version}"
        pushed = run_module_subprocess(work, "bundle_image", dict(auth, path=str(bundles / version), image=ref, push=True))
        assert not pushed.get("failed"), pushed
        channel.append(dict({"name": f"{fleet.V1_PACKAGE}.v{version}"}, **({"replaces": f"{fleet.V1_PACKAGE}.v{replaces}"} if replaces else {})))
        images.append({"schema": "olm.bundle", "image": ref})
    entries += [{"schema": "olm.channel", "package": fleet.V1_PACKAGE, "name": "stable", "entries": channel}] + images
    template = work / "template.yaml"
    template.write_text(yaml.safe_dump({"schema": "olm.template.basic", "entries": entries}, sort_keys=False))
    rendered = run_module_subprocess(
        work, "catalog_render", dict(auth, template=str(template), dest=str(work / "catalog") + "/", migrate_level="bundle-object-to-csv-metadata")
    )
    assert not rendered.get("failed"), rendered
    image = f"{registry['host']}/kubeforge-fleet/catalog:v1"
    pushed = run_module_subprocess(work, "catalog_image", dict(auth, path=str(work / "catalog"), image=image, push=True))
    assert not pushed.get("failed"), pushed

    def serve(member):
        # a directory per member: the module's argument file is named after the module
        served = run_module_subprocess(
            directory(work, member),
            "olm_cluster_catalog",
            {"kubeconfig": fleet_bed.kubeconfigs[member], "name": "kubeforge-fleet", "image": image, "wait": True, "wait_timeout": 180},
        )
        assert not served.get("failed"), (member, served)

    with ThreadPoolExecutor(max_workers=MEMBERS) as pool:
        list(pool.map(serve, fleet_bed.members))
    return {
        "registry_auth": {"username": auth["registry_username"], "password": auth["registry_password"], "ca_file": auth["ca_file"]},
        "catalogd_ca_cert": str(bed.pki.path("ca.crt")),
        "work": work,
    }


def test_olm_v1_fleet_moves_a_version_range_and_rolls_a_gate_failure_back_by_pinning(fleet_bed, fleet_v1, tmp_path):
    name = "fleetv1-" + os.urandom(3).hex()
    members = fleet_bed.members

    def install(member):
        done = run_module_subprocess(
            directory(tmp_path, member),
            "olm_cluster_extension",
            {
                "kubeconfig": fleet_bed.kubeconfigs[member],
                "name": name,
                "namespace": name,
                "package": fleet.V1_PACKAGE,
                "version": "0.1.0",
                "create_service_account": True,
                "registry_auth": fleet_v1["registry_auth"],
                "wait_timeout": 180,
            },
        )
        assert not done.get("failed"), (member, done.get("msg"))

    def extension(member):
        return fleet_bed.custom(member).get_cluster_custom_object("olm.operatorframework.io", "v1", "clusterextensions", name)

    try:
        with ThreadPoolExecutor(max_workers=MEMBERS) as pool:
            list(pool.map(install, members))
        extra = {
            "fleet_hosts": ":".join(members),
            "fleet_waves": [1, "100%"],
            "fleet_rollout_kind": "olm_v1",
            "fleet_rollout_name": name,
            "fleet_rollout_catalogd_ca_cert": fleet_v1["catalogd_ca_cert"],
            "fleet_rollout_registry_auth": fleet_v1["registry_auth"],
            "fleet_rollout_soak_seconds": 3,
        }
        # a range: each member moves to the newest version inside it
        code, output = fleet.run_rollout(
            tmp_path, fleet_bed.inventory, dict(extra, fleet_rollout_version=">=0.1.0 <0.3.0", fleet_rollout_report_dir=str(tmp_path / "range"))
        )
        assert code == 0, output
        _doc, rows = fleet.report(tmp_path / "range")
        assert {m: (rows[m]["from"], rows[m]["to"], rows[m]["result"]) for m in members} == {m: ("0.1.0", "0.2.0", "succeeded") for m in members}
        for member in members:
            ext = extension(member)
            assert ext["spec"]["source"]["catalog"]["version"] == ">=0.1.0 <0.3.0" and ext["status"]["install"]["bundle"]["version"] == "0.2.0"

        # the crash-looping release fails the canary member's gate: pinned back to 0.2.0 there, the others untouched
        code, output = fleet.run_rollout(
            tmp_path,
            fleet_bed.inventory,
            dict(extra, fleet_rollout_version=fleet.BAD, fleet_rollout_on_failure="rollback", fleet_rollout_report_dir=str(tmp_path / "bad")),
        )
        assert code != 0, output
        _doc, rows = fleet.report(tmp_path / "bad")
        canary = members[0]
        assert rows[canary]["result"] == "failed" and rows[canary]["rolled_back_to"] == "0.2.0", rows[canary]
        assert "CrashLoopBackOff" in rows[canary]["cause"], rows[canary]
        assert {rows[m]["result"] for m in members[1:]} == {"not_reached"}
        pinned = extension(canary)
        assert pinned["spec"]["source"]["catalog"]["version"] == "0.2.0" and pinned["status"]["install"]["bundle"]["version"] == "0.2.0", pinned
        assert pinned["spec"]["source"]["catalog"].get("upgradeConstraintPolicy", "CatalogProvided") == "CatalogProvided", pinned["spec"]
        for member in members[1:]:
            assert extension(member)["spec"]["source"]["catalog"]["version"] == ">=0.1.0 <0.3.0"
    finally:
        for member in members:
            run_module_subprocess(
                tmp_path,
                "olm_cluster_extension",
                {"kubeconfig": fleet_bed.kubeconfigs[member], "name": name, "state": "absent", "delete_crds_and_data": True, "wait_timeout": 120},
            )


# The kube-fleet catalog address docs/fleet.md shows; the testbed serves it on a free port.
DOCUMENTED_FLEET_CATALOG = "127.0.0.1:50052"


def test_the_fleet_guides_example_runs_as_written(fleet_bed, tmp_path):
    """docs/fleet.md's "On the testbed": its inventory, its install play and its rollout variables, with the command it
    shows, in a directory laid out as it says (a link `fleet` to the testbed's kubeconfigs)."""
    guide = runnable()
    work = directory(tmp_path, "guide")
    (work / "fleet").symlink_to(fleet_bed.testbed.run_dir / "fleet")
    (work / "fleet.clusters.yml").write_text(guide["fleet-inventory"].body)
    (work / "install.yml").write_text(guide["fleet-install"].body.replace(DOCUMENTED_FLEET_CATALOG, fleet_bed.address))
    (work / "rollout.yml").write_text(guide["fleet-rollout"].body)
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    env = fleet.playbook_env(tmp_path)
    try:
        for argv in (["-i", "fleet.clusters.yml", "install.yml"], ["-i", "fleet.clusters.yml", "-e", "@rollout.yml", "kubeforge.operators.fleet_rollout"]):
            done = subprocess.run([playbook, *argv], cwd=work, env=env, capture_output=True, text=True, timeout=900, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
        doc, rows = fleet.report(work / "fleet-report")
        assert {c: r["result"] for c, r in rows.items()} == {c: "succeeded" for c in fleet_bed.names()}
        assert all(fleet_bed.installed_csv(c, "kube-fleet") == "kube-fleet.v0.2.0" for c in fleet_bed.names())
    finally:
        fleet_bed.remove("kube-fleet")
