"""canary_cluster/rollout.py while the API server is unreachable (a restart): in the watch loop, a patch or an
Event that fails for that reason is made again once it answers, within k8s.observe.TRANSIENT_SECONDS; real errors
still fail at once. The fake is lib.canary_cluster's cluster (lib.fakes.FakeDynamicClient), driven by a stand-in for
k8s.observe.observe that calls the loop's decision function with the fake's objects; the real thing runs against a restarted kube-apiserver
in tests/integration/canary/test_canary_resilience.py.
"""

import copy
import time

import pytest
from lib.canary_cluster import H1, H2, NODES, V1, V2, cluster, params, pod, revision
from lib.fakes import api_exception
from urllib3.exceptions import MaxRetryError, NewConnectionError

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as ro
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster import rollout as glue
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError

REASONS = ["CanaryStarted", "CanaryPassed", "CanaryCompleted"]


def refused():
    """What the kubernetes client raises when nothing listens on the API server's port."""
    return MaxRetryError(None, "/apis/apps/v1", reason=NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused"))


def snapshot(client):
    def by_name(kind):
        return {obj["metadata"]["name"]: copy.deepcopy(obj) for obj in client.objects.get(kind, [])}

    return {"daemonset": by_name("DaemonSet"), "pods": by_name("Pod"), "revisions": by_name("ControllerRevision")}


def driven_by(client, monkeypatch, calls=30, pause=0.0, recreate=None):
    """Replace the watch loop's observe(): call on_change with the fake's current objects until it returns. With
    ``recreate`` (a revision hash), a node whose pod was deleted gets a pod of that revision (the controller)."""

    def observe(_client, sources, on_change, timeout, **kwargs):
        for _call in range(calls):
            outcome = on_change(snapshot(client))
            if outcome is not None:
                return outcome
            if recreate:
                running = {p["spec"]["nodeName"] for p in client.objects["Pod"]}
                client.objects["Pod"].extend(pod(node, recreate) for node in NODES if node not in running)
            time.sleep(pause)
        raise AssertionError(f"no outcome after {calls} changes")

    monkeypatch.setattr(glue, "observe", observe)


def test_a_patch_refused_while_the_api_server_restarts_is_made_again(monkeypatch):
    client = cluster()
    client.failures["DaemonSet"] = [refused(), refused()]  # the first patch, then its first repetition
    driven_by(client, monkeypatch)
    result = glue.run(client, params(wait=True), False)
    assert result["phase"] == "done" and result["changed"] is True, result
    assert [e["reason"] for e in result["events"]] == REASONS
    assert [e["reason"] for e in client.objects["Event"]] == REASONS
    assert "warnings" not in result
    patches = client.writes("DaemonSet")
    assert len(patches) == 2 + 3  # two refused, then start, widen, complete
    assert patches[0] == patches[1] == patches[2]  # the same guarded patch, decided again from the same state
    assert client.stored("DaemonSet", "agent")["spec"]["template"]["spec"]["containers"][0]["image"] == V2
    assert ro.PHASE not in (client.stored("DaemonSet", "agent")["metadata"].get("annotations") or {})


def test_pod_deletions_refused_while_the_api_server_restarts_are_made_again(monkeypatch):
    client = cluster(revisions=[revision(H1, V1, 1), revision(H2, V2, 2)])
    client.failures["Pod"] = [refused()]
    driven_by(client, monkeypatch, recreate=H2)
    result = glue.run(client, params(wait=True, canary_nodes=["n2"]), False)
    assert result["phase"] == "done", result
    deletes = [w[2] for w in client.writes("Pod")]
    assert deletes == [f"agent-{H1[:3]}-n2"] * 2  # refused, then made again (the fake's status says every node is done)
    assert f"agent-{H2[:3]}-n2" in {p["metadata"]["name"] for p in client.objects["Pod"]}


def test_an_api_server_away_longer_than_transient_seconds_fails_the_run(monkeypatch):
    monkeypatch.setattr(glue, "TRANSIENT_SECONDS", 0.1)
    client = cluster()
    client.failures["DaemonSet"] = [refused() for _attempt in range(100)]
    driven_by(client, monkeypatch, calls=100, pause=0.02)
    started = time.monotonic()
    with pytest.raises(K8sError, match="Connection refused") as failure:
        glue.run(client, params(wait=True), False)
    assert failure.value.status is None
    assert 0.1 <= time.monotonic() - started < 2
    assert 3 <= len(client.writes("DaemonSet")) < 100


@pytest.mark.parametrize("status", [403, 404])
def test_real_errors_in_the_watch_loop_fail_at_once(monkeypatch, status):
    client = cluster()
    client.failures["DaemonSet"] = [api_exception(status, "no")]
    driven_by(client, monkeypatch)
    with pytest.raises(K8sError) as failure:
        glue.run(client, params(wait=True), False)
    assert failure.value.status == status
    assert len(client.writes("DaemonSet")) == 1


def test_without_wait_a_refused_patch_fails_the_run(monkeypatch):
    """One step per run (an operator reconcile): the next run tries again, so this one reports the error."""
    client = cluster()
    client.failures["DaemonSet"] = [refused()]
    with pytest.raises(K8sError, match="Connection refused"):
        glue.run(client, params(wait=False), False)


def test_an_event_refused_while_the_api_server_restarts_is_written_after_it(monkeypatch):
    client = cluster()
    client.failures["Event"] = [refused(), refused()]  # CanaryStarted, then its first repetition
    driven_by(client, monkeypatch)
    result = glue.run(client, params(wait=True), False)
    assert result["phase"] == "done" and "warnings" not in result, result
    assert [e["reason"] for e in client.objects["Event"]] == REASONS  # in order, none lost, none twice
    assert len(client.writes("Event")) == 3 + 2


def test_events_still_refused_at_the_end_become_warnings(monkeypatch):
    client = cluster()
    client.failures["Event"] = [refused() for _attempt in range(100)]
    driven_by(client, monkeypatch)
    result = glue.run(client, params(wait=True), False)
    assert result["phase"] == "done", result
    assert client.objects.get("Event", []) == []
    assert [w.split(":")[0] for w in result["warnings"]] == [f"could not record the event {reason}" for reason in REASONS]
    assert all("Connection refused" in w for w in result["warnings"])


def test_a_wait_shorter_than_the_canarys_own_timeout_is_warned_of(monkeypatch):
    client = cluster()
    driven_by(client, monkeypatch)
    result = glue.run(client, params(wait=True, wait_timeout=200), False)
    assert result["phase"] == "done", result
    assert result["warnings"] == [
        "wait_timeout (200) is shorter than canary_timeout (300): the wait may end before the canary's own timeout can halt "
        "or roll back a canary that never becomes ready"
    ]
    assert "warnings" not in glue.run(client, params(wait=True, canary_timeout=100, wait_timeout=200), False)
