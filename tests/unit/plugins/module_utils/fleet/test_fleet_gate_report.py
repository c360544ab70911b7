"""The fleet rollout's health gate (pure verdicts over snapshots) and its report (waves as Ansible makes them, rows,
the document and its table)."""

import json
import subprocess
import sys

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import gate, report

SELECTOR = {"matchLabels": {"app": "op"}}


def csv(version="0.2.0", phase="Succeeded"):
    return {"metadata": {"name": f"op.v{version}"}, "spec": {"version": version}, "status": {"phase": phase, "reason": "X", "message": "m"}}


def deployment(available=1, replicas=1, generation=1, observed=1):
    return {
        "metadata": {"name": "op", "generation": generation},
        "spec": {"replicas": replicas, "selector": SELECTOR},
        "status": {"observedGeneration": observed, "replicas": replicas, "updatedReplicas": replicas, "availableReplicas": available},
    }


def pod(name="op-1", restarts=0, waiting=None, labels=None, uid=None, last_exit=None):
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    container = {"name": "manager", "restartCount": restarts, "state": state}
    if last_exit is not None:
        container["lastState"] = {"terminated": {"exitCode": last_exit, "reason": "Error"}}
    return {
        "metadata": {"name": name, "uid": uid or name, "labels": labels if labels is not None else {"app": "op"}},
        "spec": {"restartPolicy": "Always"},
        "status": {"phase": "Running", "containerStatuses": [container]},
    }


def snap(owner=None, pods=(), deployments=None, extra=None):
    return gate.Snapshot(owner or csv(), {"op": deployment()} if deployments is None else deployments, {p["metadata"]["name"]: p for p in pods}, extra or {})


V0 = gate.Gate("olm_v0", "0.2.0", ["op"], 0)


@pytest.mark.parametrize(
    "the_gate, snapshot, verdict, part",
    [
        (V0, snap(pods=[pod()]), gate.PASSED, "healthy"),
        (V0, snap(owner=csv(version="0.1.0")), gate.WAITING, "is version 0.1.0, not 0.2.0 yet"),
        (V0, snap(owner=csv(phase="Installing")), gate.WAITING, "is Installing"),
        (V0, snap(owner=csv(phase="Failed")), gate.FAILED, "is Failed (X): m"),
        (V0, snap(deployments={"op": deployment(available=0)}), gate.WAITING, "0 of 1 available"),
        (V0, snap(deployments={"op": deployment(observed=0)}), gate.WAITING, "Deployment op"),
        (V0, snap(deployments={}), gate.WAITING, "Deployment op is not there"),
        (V0, snap(pods=[pod(restarts=5, waiting="CrashLoopBackOff")]), gate.FAILED, "CrashLoopBackOff"),
        (V0, snap(pods=[pod(waiting="ImagePullBackOff")]), gate.FAILED, "ImagePullBackOff"),
        # a pod the Deployments do not select is not the gate's business
        (V0, snap(pods=[pod(waiting="ImagePullBackOff", labels={"app": "other"})]), gate.PASSED, "healthy"),
        (gate.Gate("olm_v0", "0.2.0", ["op"], 30), snap(pods=[pod()]), gate.WAITING, "healthy for 0 of 30 s"),
        (
            gate.Gate("olm_v1", "0.2.0", None, 0),
            snap(
                owner={
                    "metadata": {"name": "ext"},
                    "status": {"install": {"bundle": {"version": "0.2.0"}}, "conditions": [{"type": "Installed", "status": "True", "reason": "Succeeded"}]},
                }
            ),
            gate.PASSED,
            "healthy",
        ),
        (
            gate.Gate("olm_v1", "0.3.0", None, 0),
            snap(owner={"metadata": {"name": "ext"}, "status": {"install": {"bundle": {"version": "0.2.0"}}}}),
            gate.WAITING,
            "has 0.2.0 installed, not 0.3.0 yet",
        ),
        (
            gate.Gate("olm_v0", "0.2.0", ["op"], 0, [{"key": "cr", "type": "Ready", "status": "True"}]),
            snap(extra={"cr": {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}}),
            gate.WAITING,
            "cr has Ready=False (wanted True)",
        ),
        (gate.Gate("olm_v0", "0.2.0", ["op"], 0, [{"key": "cr", "type": "Ready", "status": "True"}]), snap(extra={}), gate.WAITING, "cr is not there"),
    ],
)
def test_gate_verdicts(the_gate, snapshot, verdict, part):
    got, message = gate.verdict(the_gate, snapshot, gate.GateState(), 100.0)
    assert got == verdict, message
    assert part in message


def test_a_restart_during_the_gate_fails_it_and_the_soak_restarts_when_not_ready():
    the_gate, state = gate.Gate("olm_v0", "0.2.0", ["op"], 30), gate.GateState()
    assert gate.verdict(the_gate, snap(pods=[pod(restarts=1)]), state, 100.0) == (gate.WAITING, "healthy for 0 of 30 s")
    assert gate.verdict(the_gate, snap(pods=[pod(restarts=1)]), state, 120.0) == (gate.WAITING, "healthy for 20 of 30 s")
    # not ready for a moment: the soak starts again
    assert gate.verdict(the_gate, snap(pods=[pod(restarts=1)], deployments={"op": deployment(available=0)}), state, 125.0)[0] == gate.WAITING
    assert gate.verdict(the_gate, snap(pods=[pod(restarts=1)]), state, 126.0) == (gate.WAITING, "healthy for 0 of 30 s")
    assert gate.verdict(the_gate, snap(pods=[pod(restarts=1)]), state, 156.0) == (gate.PASSED, "healthy for 30 s")
    # one more restart of the pod seen with 1: fails, naming it; a new pod starts from its own count
    verdict, message = gate.verdict(the_gate, snap(pods=[pod(restarts=2, last_exit=1)]), state, 157.0)
    assert (verdict, message) == (gate.FAILED, "pod op-1 restarted during the health gate (restarts: 1 -> 2): container manager exit code 1 (Error)")
    assert gate.verdict(the_gate, snap(pods=[pod(name="op-2", restarts=4)]), state, 158.0)[0] == gate.PASSED


def test_daemonset_owner():
    ds = {
        "metadata": {"name": "agent", "generation": 2},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {"spec": {"containers": [{"name": "agent", "image": "v2"}]}}},
        "status": {"observedGeneration": 2, "desiredNumberScheduled": 3, "updatedNumberScheduled": 3, "numberAvailable": 3},
    }
    the_gate = gate.Gate("daemonset", {"agent": "v2"}, [], 0)
    assert gate.verdict(the_gate, gate.Snapshot(ds, {}, {}, {}), gate.GateState(), 0)[0] == gate.PASSED
    crashing = pod(name="agent-x", restarts=4, waiting="CrashLoopBackOff", labels={"app": "agent"})
    assert gate.verdict(the_gate, gate.Snapshot(ds, {}, {"agent-x": crashing}, {}), gate.GateState(), 0)[0] == gate.FAILED
    old = dict(ds, spec=dict(ds["spec"], template={"spec": {"containers": [{"name": "agent", "image": "v1"}]}}))
    assert "does not run the new image of agent" in gate.verdict(the_gate, gate.Snapshot(old, {}, {}, {}), gate.GateState(), 0)[1]


@pytest.mark.parametrize(
    "selector, labels, matches",
    [
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {}, True),
        ({}, {"a": "1"}, False),
        (None, {"a": "1"}, False),
    ],
)
def test_selector_matches(selector, labels, matches):
    assert gate.selector_matches(selector, labels) is matches


HOSTS = [f"c{i}" for i in range(1, 9)]


@pytest.mark.parametrize(
    "serial, batches",
    [
        (None, [HOSTS]),
        (0, [HOSTS]),
        (3, [HOSTS[0:3], HOSTS[3:6], HOSTS[6:8]]),
        ([1, "25%", "100%"], [HOSTS[0:1], HOSTS[1:3], HOSTS[3:8]]),
        (["1", "50%"], [HOSTS[0:1], HOSTS[1:5], HOSTS[5:8]]),
        # a percentage under one host is one host
        (["5%"], [[h] for h in HOSTS]),
    ],
)
def test_waves_are_ansibles_batches(serial, batches):
    assert report.waves(HOSTS, serial) == batches
    assert report.wave_of(batches[-1][-1], HOSTS, serial) == len(batches)
    assert report.wave_of("nope", HOSTS, serial) is None


def test_waves_match_ansible_core():
    """The same batches as ansible-core's own PlaybookExecutor._get_serialized_batches (in a process of its own: the
    controller code must not be imported into the unit tests' process, whose module runs refuse it)."""
    script = """
import json, sys
from ansible.executor.playbook_executor import PlaybookExecutor
from ansible.playbook.play import Play
hosts, serials = json.loads(sys.argv[1])
class Inventory:
    def get_hosts(self, pattern, order=None):
        return list(hosts)
out = []
for serial in serials:
    executor = PlaybookExecutor.__new__(PlaybookExecutor)
    executor._inventory = Inventory()
    out.append(executor._get_serialized_batches(Play.load({"hosts": "all", "serial": serial}, variable_manager=None, loader=None)))
print(json.dumps(out))
"""
    serials = [[1, "25%", "100%"], [3], ["1", "50%"], ["5%"], [2, "10%"]]
    done = subprocess.run([sys.executable, "-c", script, json.dumps([HOSTS, serials])], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [report.waves(HOSTS, serial) for serial in serials]


def test_bad_serial_item():
    with pytest.raises(ValueError, match="serial items are counts or percentages"):
        report.waves(HOSTS, ["one"])


def test_document_lists_every_cluster_and_names_the_halt():
    rollout = {"id": "op@0.3.0", "kind": "olm_v0", "name": "op", "target": "0.3.0"}
    rows = [
        report.row("c1", 1, "failed", record={"from": "0.2.0", "target": "0.3.0", "cause": "CrashLoopBackOff | x", "step": "gate"}, duration=12.5),
    ]
    doc = report.document(rollout, rows, HOSTS[:4], [1, "100%"], generated="2026-11-29T00:00:00Z")
    assert [r["cluster"] for r in doc["clusters"]] == ["c1", "c2", "c3", "c4"]
    assert [r["result"] for r in doc["clusters"]] == ["failed", "not_reached", "not_reached", "not_reached"]
    assert [r["wave"] for r in doc["clusters"]] == [1, 2, 2, 2]
    assert doc["halted"] and doc["failed_clusters"] == ["c1"] and doc["counts"] == {"failed": 1, "not_reached": 3} and doc["waves"] == 2
    text = report.table(doc)
    assert text.splitlines()[0] == "# Fleet rollout op@0.3.0: 1 failed, 3 not_reached; HALTED by c1"
    assert "| c1 | 1 | 0.2.0 | 0.3.0 | failed | 12.5 | CrashLoopBackOff \\| x |" in text
    assert "| c4 | 2 | - | 0.3.0 | not_reached | - | - |" in text
