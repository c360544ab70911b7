"""canary.observe.pod_states with a cache: each pod object is read once per resourceVersion, results equal the
uncached ones, changed, recreated, foreign and vanished pods are handled, and the cache does not grow."""

import json

import pytest
from lib.samples import real_kubelet_crash_loop_pod

from ansible_collections.kubeforge.operators.plugins.module_utils import podstatus
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import observe as obs
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout

NS = "agents"


def daemonset(uid="ds-uid"):
    return {"metadata": {"name": "agent", "namespace": NS, "uid": uid, "generation": 3}, "spec": {}, "status": {}}


def pod(node, version, revision="h1", ready=True, owner="ds-uid", uid=None, restarts=0):
    return {
        "metadata": {
            "name": f"agent-{node}",
            "namespace": NS,
            "uid": uid or f"uid-{node}",
            "resourceVersion": str(version),
            "labels": {"controller-revision-hash": revision},
            "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "uid": owner, "controller": True}],
        },
        "spec": {"nodeName": node},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": "2026-11-23T10:00:00Z"}],
            "containerStatuses": [{"name": "agent", "restartCount": restarts, "state": {"running": {}}}],
        },
    }


@pytest.fixture
def counted(monkeypatch):
    """Counts the calls of observe.pod_state (the per-pod work the cache saves)."""
    calls = []
    original = obs.pod_state

    def pod_state(value):
        calls.append(value["metadata"]["name"])
        return original(value)

    monkeypatch.setattr(obs, "pod_state", pod_state)
    return calls


def test_cached_states_equal_uncached_and_unchanged_pods_are_read_once(counted):
    ds = daemonset()
    pods = [pod(f"n{i}", 10 + i) for i in range(50)] + [pod("x", 99, owner="other-uid")]
    cache = {}
    first = obs.pod_states(ds, pods, cache)
    assert first == obs.pod_states(ds, pods)  # no cache: the same states
    assert len(first) == 50 and "agent-x" not in {s.name for s in first}
    counted.clear()
    for _round in range(5):
        assert obs.pod_states(ds, pods, cache) == first
    assert counted == []  # nothing read again


def test_a_changed_pod_is_read_again_and_its_new_state_used(counted):
    ds = daemonset()
    pods = [pod("n1", 1, revision="h1"), pod("n2", 2, revision="h1")]
    cache = {}
    obs.pod_states(ds, pods, cache)
    counted.clear()
    pods[1] = pod("n2", 3, revision="h2", ready=False, restarts=4)
    states = {s.node: s for s in obs.pod_states(ds, pods, cache)}
    assert counted == ["agent-n2"]
    assert states["n2"].hash == "h2" and states["n2"].ready is False and states["n2"].restarts == 4
    assert states["n1"].hash == "h1" and states["n1"].ready is True


def test_a_recreated_pod_with_an_equal_resource_version_is_not_confused():
    ds = daemonset()
    cache = {}
    obs.pod_states(ds, [pod("n1", 5, revision="h1", uid="old")], cache)
    states = obs.pod_states(ds, [pod("n1", 5, revision="h2", uid="new")], cache)
    assert [s.hash for s in states] == ["h2"]


def test_ownership_follows_the_daemonset_identity():
    cache = {}
    pods = [pod("n1", 1, owner="ds-uid")]
    assert len(obs.pod_states(daemonset("ds-uid"), pods, cache)) == 1
    # the DaemonSet was deleted and created again under the same name: the old pod is no longer its own
    assert obs.pod_states(daemonset("new-uid"), pods, cache) == []


def test_a_pod_changed_in_place_with_a_new_resource_version_is_read_again(counted):
    ds = daemonset()
    same = pod("n1", 1, revision="h1")
    cache = {}
    obs.pod_states(ds, [same], cache)
    same["metadata"]["resourceVersion"] = "2"
    same["metadata"]["labels"]["controller-revision-hash"] = "h2"
    counted.clear()
    assert [s.hash for s in obs.pod_states(ds, [same], cache)] == ["h2"]
    assert counted == ["agent-n1"]


def test_the_cache_holds_only_the_pods_of_the_last_observation():
    ds = daemonset()
    cache = {}
    for version in range(100):  # one pod changing 100 times, as in a long watch
        obs.pod_states(ds, [pod("n1", version), pod("n2", 1)], cache)
    assert len(cache) == 2
    obs.pod_states(ds, [], cache)
    assert cache == {}


def test_observe_with_a_cache_gives_the_same_observation():
    ds = daemonset()
    ds["spec"] = {"template": {"spec": {"containers": [{"name": "agent", "image": "a:2"}]}}}
    pods = [pod(f"n{i}", i, revision="h2" if i % 2 else "h1") for i in range(10)]
    cache = {}
    assert obs.observe(ds, pods, [], now=1.0, cache=cache) == obs.observe(ds, pods, [], now=1.0)
    assert obs.observe(ds, pods, [], now=1.0, cache=cache) == obs.observe(ds, pods, [], now=1.0)


def test_a_real_kubelets_crash_loop_counts_as_crash_loop_back_off():
    """Between restarts a real kubelet reports terminated/Error, never waiting/CrashLoopBackOff."""
    state = obs.pod_state(real_kubelet_crash_loop_pod())
    assert state.waiting == "CrashLoopBackOff" and state.restarts == 3 and state.ready is False
    assert rollout.crashing(state, 3) == "CrashLoopBackOff"
    assert rollout.crashing(state, 4) is None


def test_a_crash_loop_names_the_last_exit_whichever_way_the_kubelet_shows_it():
    """Between restarts (terminated) or backing off (waiting, the last exit in lastState): the same last exit, so a
    failure message does not depend on the moment it was read (CI ci9 met the waiting form on the real node)."""
    between = obs.pod_state(real_kubelet_crash_loop_pod())
    backing_off = real_kubelet_crash_loop_pod()
    container = backing_off["status"]["containerStatuses"][0]
    container["lastState"] = {"terminated": container["state"]["terminated"]}
    container["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container"}}
    waiting = obs.pod_state(backing_off)
    exited = podstatus.describe_exit(container["lastState"]["terminated"])
    assert exited.startswith("exit code ") and between.last_exit == waiting.last_exit == exited
    assert between.waiting == waiting.waiting == "CrashLoopBackOff"
    assert f"last exit: {exited}, waiting: CrashLoopBackOff" in rollout.describe_pod(waiting)
    assert obs.pod_state(pod("n1", 1)).last_exit is None


def test_an_unschedulable_pod_carries_the_schedulers_reason():
    """A new pod the scheduler cannot place is not failed on by itself (a node may free up), but its state names the
    scheduler's message, so a canary_timeout failure says why."""
    pod = {
        "metadata": {"name": "agent-x"},
        "spec": {},
        "status": {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/4 nodes are available: 4 Insufficient cpu."}],
        },
    }
    state = obs.pod_state(pod)
    assert state.waiting == "Unschedulable: 0/4 nodes are available: 4 Insufficient cpu." and state.node is None
    assert "waiting: Unschedulable: 0/4 nodes" in rollout.describe_pod(state)
    assert rollout.crashing(state, 3) is None


KWOK_POD = {
    "metadata": {
        "name": "agent-7xk2p",
        "generateName": "agent-",
        "namespace": NS,
        "uid": "uid-n9",
        "resourceVersion": "4711",
        "creationTimestamp": "2026-11-23T10:00:00Z",
        "labels": {"app": "agent", "controller-revision-hash": "h2", "pod-template-generation": "2"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "ds-uid", "controller": True, "blockOwnerDeletion": True}],
        "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}],
    },
    "spec": {
        "nodeName": "n9",
        "containers": [{"name": "agent", "image": "example.invalid/agent:2"}],
        "tolerations": [{"operator": "Exists"}],
        "affinity": {"nodeAffinity": {}},
    },
    "status": {
        "phase": "Running",
        "hostIP": "10.0.0.9",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-23T10:00:05Z"}],
        "containerStatuses": [{"name": "agent", "ready": True, "restartCount": 0, "state": {"running": {"startedAt": "2026-11-23T10:00:04Z"}}}],
    },
}
UNSCHEDULED = {
    "metadata": {"name": "agent-x"},
    "status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/4 nodes are available."}]},
}
TERMINATING = dict(pod("n3", 3, restarts=2, ready=False), metadata=dict(pod("n3", 3)["metadata"], deletionTimestamp="2026-11-23T10:01:00Z"))


@pytest.mark.parametrize(
    "value",
    [KWOK_POD, real_kubelet_crash_loop_pod(), UNSCHEDULED, TERMINATING, pod("n1", 1), pod("n2", 2, owner="other-uid"), {}],
    ids=["kwok", "crash-loop", "unschedulable", "terminating", "ready", "foreign", "empty"],
)
def test_the_fields_kept_of_a_pod_give_the_same_state_and_owner(value):
    kept = obs.pod_fields(value)
    assert obs.pod_state(kept) == obs.pod_state(value)
    assert obs.owned_by(kept, daemonset()) == obs.owned_by(value, daemonset())
    assert kept["metadata"].get("resourceVersion") == (value.get("metadata") or {}).get("resourceVersion")  # pod_states' cache key


def test_the_fields_kept_of_a_pod_leave_out_managed_fields_and_the_spec():
    kept = obs.pod_fields(KWOK_POD)
    assert "managedFields" not in kept["metadata"] and kept["spec"] == {"nodeName": "n9"} and "hostIP" not in kept["status"]
    assert len(json.dumps(kept)) < len(json.dumps(KWOK_POD))
