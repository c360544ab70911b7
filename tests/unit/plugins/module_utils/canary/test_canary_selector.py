"""Node-selective canaries chosen by a label selector: the selector grammar checked before any request, and the
pure core's choice of canary nodes (matching nodes that run a pod of the DaemonSet), made once when the rollout
starts and read back from the annotation afterwards."""

import json

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import observe as obs
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as ro
from ansible_collections.kubeforge.operators.plugins.module_utils.canary.selector import SelectorError, parse_label_selector

NS = "agents"
NOW = 1_800_000_000
V1 = {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}
V2 = {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}
H1, H2 = "6d5f8b9c4", "7f9c6d8b5"


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("zone=a", "zone=a"),
        (" zone == a , canary=true ", "zone=a,canary=true"),
        ("zone!=a", "zone!=a"),
        ("canary", "canary"),
        ("!draining", "!draining"),
        ("! draining", "!draining"),
        ("zone in (b, a,a)", "zone in (a,b)"),
        ("zone notin (a),canary", "zone notin (a),canary"),
        ("topology.kubernetes.io/zone=eu-1a", "topology.kubernetes.io/zone=eu-1a"),
        ("node-role.kubernetes.io/worker=", "node-role.kubernetes.io/worker="),
        ("cpu>4,cpu<64", "cpu>4,cpu<64"),
        ("a.b_c-d=X.y_z-9", "a.b_c-d=X.y_z-9"),
    ],
)
def test_valid_selectors_in_canonical_form(text, canonical):
    assert parse_label_selector(text) == canonical


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty"),
        ("   ", "empty"),
        ("zone=a,", "empty requirement"),
        (",zone=a", "empty requirement"),
        ("zone=a,,canary", "empty requirement"),
        ("-zone=a", "not a valid label key"),
        ("zone-=a", "not a valid label key"),
        ("x" * 64 + "=a", "not a valid label key"),
        ("Example.com/zone=a", "prefix"),
        ("/zone=a", "prefix"),
        ("zone=" + "v" * 64, "not a valid value"),
        ("zone=a b", "not a valid value"),
        ("zone=-a", "not a valid value"),
        ("zone in ()", "at least one value"),
        ("zone in (a", "unbalanced"),
        ("zone in a)", "unbalanced"),
        ("zone within (a)", "cannot read"),
        ("cpu>four", "integer"),
        ("zone=a=b", "cannot read"),
        ("zone a", "cannot read"),
    ],
)
def test_invalid_selectors_are_refused_with_the_reason(text, fragment):
    with pytest.raises(SelectorError, match=fragment):
        parse_label_selector(text)


def test_a_selector_is_a_string():
    with pytest.raises(SelectorError, match="string"):
        parse_label_selector(["zone=a"])
    assert issubclass(SelectorError, ValueError)


def daemonset(tmpl, annotations=None, desired=4, updated=4):
    meta = {"name": "agent", "namespace": NS, "uid": "ds-uid", "generation": 3, "resourceVersion": "77"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "metadata": meta,
        "spec": {"template": tmpl, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}},
        "status": {"observedGeneration": 3, "desiredNumberScheduled": desired, "updatedNumberScheduled": updated, "numberAvailable": desired},
    }


def pod(node, revision, terminating=False):
    meta = {
        "name": f"agent-{node}",
        "namespace": NS,
        "labels": {"app": "agent", "controller-revision-hash": revision},
        "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "uid": "ds-uid", "controller": True}],
    }
    if terminating:
        meta["deletionTimestamp"] = ro.format_time(NOW)
    return {
        "metadata": meta,
        "spec": {"nodeName": node},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "containerStatuses": [{"name": "agent", "ready": True, "restartCount": 0}]},
    }


def revision(revision_hash, tmpl, number):
    return {
        "metadata": {
            "name": f"agent-{revision_hash}",
            "labels": {"controller-revision-hash": revision_hash},
            "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "uid": "ds-uid", "controller": True}],
        },
        "revision": number,
        "data": {"spec": {"template": dict(tmpl, **{"$patch": "replace"})}},
    }


PODS = (pod("n1", H1), pod("n2", H1), pod("n3", H1), pod("n4", H1, terminating=True))
FIRST = (revision(H1, V1, 1),)
SELECTIVE = ro.Desired(V2, canary_node_selector="canary=true")


def seen(ds, pods=PODS, revisions=FIRST, selected=None):
    return obs.observe(ds, list(pods), list(revisions), now=NOW)._replace(selected_nodes=selected)


def test_the_nodes_are_needed_only_when_the_rollout_starts():
    fresh = seen(daemonset(V1))
    assert ro.starting(SELECTIVE, fresh) and ro.needs_selected_nodes(SELECTIVE, fresh)
    assert not ro.needs_selected_nodes(SELECTIVE, fresh._replace(selected_nodes=("n1",)))
    assert not ro.needs_selected_nodes(ro.Desired(V2, canary_nodes=("n1",)), fresh)
    settled = seen(daemonset(V2))
    assert not ro.starting(SELECTIVE, settled) and not ro.needs_selected_nodes(SELECTIVE, settled)
    started = ro.next_step(SELECTIVE, fresh._replace(selected_nodes=("n1", "n2")))
    annotations = ro.patched_annotations(fresh.daemonset, started.patch)
    running = seen(daemonset(V2, annotations=annotations), revisions=(revision(H1, V1, 1), revision(H2, V2, 2)))
    assert not ro.starting(SELECTIVE, running) and not ro.needs_selected_nodes(SELECTIVE, running)
    other_target = ro.Desired(dict(V2, spec={"containers": [{"name": "agent", "image": "agent:3"}]}), canary_node_selector="canary=true")
    assert ro.starting(other_target, running) and ro.needs_selected_nodes(other_target, running)


def test_the_canary_nodes_are_the_selected_nodes_that_run_a_pod():
    observed = seen(daemonset(V1), selected=("n2", "n4", "n9", "n1"))
    assert ro.selected_canary_nodes(SELECTIVE, observed) == ("n1", "n2")  # n4's pod is terminating, n9 runs none
    action = ro.next_step(SELECTIVE, observed)
    assert (action.kind, action.reason, action.phase) == (ro.PATCH, "CanaryStarted", ro.CANARY)
    annotations = ro.patched_annotations(observed.daemonset, action.patch)
    assert json.loads(annotations[ro.NODES]) == ["n1", "n2"]
    assert {"op": "add", "path": "/spec/updateStrategy", "value": ro.ON_DELETE_STRATEGY} in action.patch
    assert "canary nodes n1, n2" in action.message


@pytest.mark.parametrize(
    "selected, fragment",
    [
        ((), "matches no node, so no node runs a pod of DaemonSet agents/agent"),
        (("n4", "n9"), "matches 2 node(s) (n4, n9), none of which runs a pod"),
        (tuple(f"x{i:02d}" for i in range(12)), "(x00, x01, x02, x03, x04, x05, x06, x07, x08, x09 and 2 more)"),
    ],
)
def test_a_selector_without_a_canary_pod_fails_before_any_change(selected, fragment):
    action = ro.next_step(SELECTIVE, seen(daemonset(V1), selected=selected))
    assert (action.kind, action.reason, action.patch) == (ro.FAIL, "NoCanaryPods", None)
    assert fragment in action.message and "'canary=true'" in action.message


def test_nodes_not_listed_or_given_twice_fail():
    unlisted = ro.next_step(SELECTIVE, seen(daemonset(V1)))
    assert (unlisted.kind, unlisted.reason) == (ro.FAIL, "NodesNotListed")
    twice = ro.next_step(SELECTIVE._replace(canary_nodes=("n1",)), seen(daemonset(V1), selected=("n1",)))
    assert (twice.kind, twice.reason) == (ro.FAIL, "CanaryNodesTwice")


def test_a_running_rollout_keeps_its_recorded_nodes():
    """Once started, the rollout reads its canary nodes from the annotation, whatever the selector matches now."""
    start = ro.next_step(SELECTIVE, seen(daemonset(V1), selected=("n1",)))
    annotations = ro.patched_annotations(obs.daemonset_state(daemonset(V1)), start.patch)
    ds = daemonset(V2, annotations=annotations, updated=0)
    revisions = (revision(H1, V1, 1), revision(H2, V2, 2))
    action = ro.next_step(SELECTIVE, seen(ds, revisions=revisions, selected=("n2", "n3")))
    assert (action.kind, action.reason, list(action.pods)) == (ro.DELETE_PODS, "CanaryPods", ["agent-n1"])
    assert ro.summary(seen(ds, revisions=revisions))["canary_nodes"] == ["n1"]


def new_pod(node, ready=True):
    result = pod(node, H2)
    result["status"]["conditions"][0]["status"] = "True" if ready else "False"
    return result


def canary_phase(pods, since=NOW - 10):
    start = ro.next_step(SELECTIVE, seen(daemonset(V1), selected=("n1", "n2")))
    annotations = ro.patched_annotations(obs.daemonset_state(daemonset(V1)), start.patch)
    annotations[ro.PHASE_SINCE] = ro.format_time(since)
    ds = daemonset(V2, annotations=annotations, updated=1)
    return seen(ds, pods=pods, revisions=(revision(H1, V1, 1), revision(H2, V2, 2)))


@pytest.mark.parametrize(
    "pods, waiting",
    [
        ([new_pod("n1"), pod("n3", H1)], "n2"),  # n2's old pod is gone, its new one not created yet
        ([pod("n3", H1)], "n1, n2"),  # neither replacement exists yet
        ([new_pod("n1"), new_pod("n2", ready=False), pod("n3", H1)], "n2"),
    ],
    ids=["one replacement missing", "both replacements missing", "one replacement not ready"],
)
def test_the_canary_passes_only_when_every_canary_node_runs_an_available_new_pod(pods, waiting):
    action = ro.next_step(SELECTIVE, canary_phase(pods))
    assert (action.kind, action.reason, action.phase) == (ro.WAIT, "Canary", ro.CANARY), action
    assert f"on the canary nodes {waiting} (" in action.message
    timed_out = ro.next_step(SELECTIVE._replace(canary_timeout=60), canary_phase(pods, since=NOW - 61))
    assert (timed_out.kind, timed_out.reason, timed_out.phase) == (ro.PATCH, "CanaryFailed", ro.HALTED_PHASE)
    assert f"canary nodes without an available pod of revision {H2} after canary_timeout 60s: {waiting};" in timed_out.message


def test_the_canary_passes_when_every_canary_node_runs_an_available_new_pod():
    action = ro.next_step(SELECTIVE, canary_phase([new_pod("n1"), new_pod("n2"), pod("n3", H1)]))
    assert (action.kind, action.reason, action.phase) == (ro.PATCH, "CanaryPassed", ro.FAST)


def test_given_canary_nodes_without_a_pod_are_left_out_and_named():
    """Named canary nodes are recorded only when they run a pod: the canary gate waits for a new pod on each one."""
    desired = ro.Desired(V2, canary_nodes=("n9", "n2", "n4"))
    action = ro.next_step(desired, seen(daemonset(V1)))
    assert (action.kind, action.reason) == (ro.PATCH, "CanaryStarted")
    assert json.loads(ro.patched_annotations(obs.daemonset_state(daemonset(V1)), action.patch)[ro.NODES]) == ["n2"]
    assert "canary nodes n2; left out, running no pod of it: n4, n9" in action.message
    none = ro.next_step(ro.Desired(V2, canary_nodes=("n9", "n4")), seen(daemonset(V1)))
    assert (none.kind, none.reason, none.patch) == (ro.FAIL, "NoCanaryPods", None)
    assert "none of the canary nodes (n4, n9) runs a pod of DaemonSet agent" in none.message
