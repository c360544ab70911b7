"""canary_cluster/rollout.py, the I/O around the pure canary core, against a fake dynamic client: the faults the
testbed cannot produce on demand (a resourceVersion guard that keeps failing, an Event that cannot be written, an
OperatorCondition that keeps changing), the requests each path sends and in which order, and check mode.

The fake is lib.canary_cluster's cluster in lib.fakes.FakeDynamicClient (reads and the writes of a rollout; with
``dry_run`` like kubernetes.core's client in check mode). The rollouts themselves run on the testbed
(tests/integration/canary).
"""

import json
import re

import pytest
from lib.canary_cluster import (
    H1,
    H2,
    NODES,
    NS,
    ORIGINAL,
    OTHER_CONDITION,
    V1,
    V2,
    cluster,
    daemonset,
    node,
    params,
    pod,
    revision,
    template,
)
from lib.fakes import DiscoveredResource, api_exception, selected

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import condition as uc
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as ro
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster import condition as cluster_condition
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster import rollout as glue
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import GUARD_RETRIES
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError


def started_annotations(selector_nodes=()):
    """The annotations of a rollout of V2 that has started (phase canary)."""
    state = glue.canary_observe.daemonset_state(daemonset())
    patch = ro.plan_first_patch(state, glue.desired_template(template(V1), {"images": {"agent": V2}}), selector_nodes, now=1_800_000_000)
    return ro.patched_annotations(state, patch)


# ------------------------------------------------------------------------------------------- desired_template


def test_desired_template_sets_images_of_containers_and_init_containers_on_a_copy():
    live = template(V1, init="example.invalid/setup:v1")
    result = glue.desired_template(live, {"images": {"agent": V2, "setup": "example.invalid/setup:v2"}})
    assert [c["image"] for c in result["spec"]["containers"]] == [V2, "example.invalid/sidecar:v1"]
    assert result["spec"]["initContainers"][0]["image"] == "example.invalid/setup:v2"
    assert live == template(V1, init="example.invalid/setup:v1")


def test_desired_template_names_every_missing_container():
    with pytest.raises(glue.CanaryError, match="no container named ghost, phantom"):
        glue.desired_template(template(V1), {"images": {"agent": V2, "phantom": "x", "ghost": "y"}})


def test_a_whole_template_is_taken_as_given():
    given = template("example.invalid/other:v9")
    assert glue.desired_template(template(V1), {"template": given, "images": {"agent": V2}}) is given


# ------------------------------------------------------------------------------------------- _patched_view


def test_patched_view_takes_template_and_strategy_from_the_patch_only():
    ds = daemonset()
    patch = ro.json_patch(glue.canary_observe.daemonset_state(ds), template=template(V2), strategy=ro.ON_DELETE_STRATEGY, annotations={ro.PHASE: ro.CANARY})
    view = glue._patched_view(ds, patch)
    assert view == {"template": template(V2), "updateStrategy": ro.ON_DELETE_STRATEGY}
    assert ds == daemonset()
    only_strategy = glue._patched_view(ds, [{"op": "add", "path": "/spec/updateStrategy", "value": ro.CANARY_STRATEGY}])
    # as the API server stores it: maxSurge defaults to 0 (check mode's diff showed it removed)
    assert only_strategy == {"template": template(V1), "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}}
    assert ro.CANARY_STRATEGY == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
    assert glue._patched_view(ds, None) == glue._diff_view(ds)


# ------------------------------------------------------------------------------------------- missing DaemonSet


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_missing_daemonset_fails_without_writing(check_mode):
    client = cluster()
    client.objects["DaemonSet"] = []
    with pytest.raises(glue.CanaryError, match=f"DaemonSet {NS}/agent not found"):
        glue.run(client, params(), check_mode)
    assert client.writes() == []


def test_a_daemonset_deleted_during_the_watch_fails(monkeypatch):
    client = cluster()

    def observe(_client, sources, on_change, timeout, **kwargs):
        assert [s.kind for s in sources] == ["DaemonSet", "Pod", "ControllerRevision"]
        assert sources[1].label_selector == "app=agent"
        return on_change({"daemonset": {}, "pods": {}, "revisions": {}})

    monkeypatch.setattr(glue, "observe", observe)
    with pytest.raises(glue.CanaryError, match="was deleted during the rollout") as failure:
        glue.run(client, params(wait=True), False)
    assert "duration" in failure.value.result
    # the start went out from the first GET, before the watch saw the DaemonSet gone; nothing after it
    assert [write[:2] for write in client.writes()] == [("DaemonSet", "PATCH"), ("Event", "CREATE")]


@pytest.mark.parametrize(
    "extra, before_watch",
    [
        ({}, [("DaemonSet", "PATCH"), ("Event", "CREATE")]),  # the start does not depend on the pods
        ({"canary_nodes": ["n1"]}, []),  # the canary nodes are those running a pod: the watch lists them first
        ({"undo": True, "images": None}, []),  # not a start
    ],
)
def test_a_start_without_canary_nodes_goes_out_before_the_watch_lists_the_pods(monkeypatch, extra, before_watch):
    client = cluster()
    writes = {}

    def observe(_client, sources, on_change, timeout, **kwargs):
        writes["before"] = [write[:2] for write in client.writes()]
        raise glue.CanaryError("the watch was reached")

    monkeypatch.setattr(glue, "observe", observe)
    with pytest.raises(glue.CanaryError, match="the watch was reached"):
        glue.run(client, params(wait=True, **extra), False)
    assert writes["before"] == before_watch


def test_a_start_from_the_first_read_whose_guard_fails_is_left_to_the_watch(monkeypatch):
    client = cluster()
    client.failures["DaemonSet"] = [api_exception(409, "the object has been modified")]
    before_watch = []

    def observe(_client, sources, on_change, timeout, **kwargs):
        before_watch.extend(write[:2] for write in client.writes())
        on_change({"daemonset": {"agent": client.stored("DaemonSet", "agent")}, "pods": {}, "revisions": {}})
        raise glue.CanaryError("the watch decided once")

    monkeypatch.setattr(glue, "observe", observe)
    with pytest.raises(glue.CanaryError, match="the watch decided once"):
        glue.run(client, params(wait=True), False)
    assert before_watch == [("DaemonSet", "PATCH")]  # refused: no Event for it
    assert [write[:2] for write in client.writes()] == [("DaemonSet", "PATCH"), ("DaemonSet", "PATCH"), ("Event", "CREATE")]
    assert client.stored("DaemonSet", "agent")["metadata"]["annotations"][ro.PHASE] == ro.CANARY


# ------------------------------------------------------------------------------- the new revision's pods alone


def scripted_watch(client, steps, calls):
    """An ``observe`` over the fake client's objects: each call records the kinds and label selectors it watches;
    each step changes the stored objects (the controller's work), then ``on_change`` decides on what the call's
    sources show, until it returns something."""

    def observe(_client, sources, on_change, timeout, **kwargs):
        calls.append([(source.kind, source.label_selector) for source in sources])
        while steps:
            steps.pop(0)(client)
            snapshot = {
                source.key: {obj["metadata"]["name"]: obj for obj in client.objects.get(source.kind, []) if selected(obj, source.label_selector)}
                for source in sources
            }
            outcome = on_change(snapshot)
            if outcome is not None:
                return outcome
        raise AssertionError("the script ended before the rollout did")

    return observe


def canary_replaced(client):
    client.objects["ControllerRevision"].append(revision(H2, V2, 2))
    client.objects["Pod"][0] = pod("n1", H2)
    client.stored("DaemonSet", "agent")["status"]["updatedNumberScheduled"] = 1


def all_replaced(client):
    client.objects["Pod"] = [pod(n, H2) for n in NODES]
    client.stored("DaemonSet", "agent")["status"]["updatedNumberScheduled"] = 4


def second_new_pod_crashing(client):
    crashing = pod("n2", H2)
    crashing["status"] = {
        "conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [{"name": "agent", "ready": False, "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
    }
    client.objects["Pod"][1] = crashing


def nothing_new(client):
    pass


EVERY_POD = [("DaemonSet", None), ("Pod", "app=agent"), ("ControllerRevision", "app=agent")]
NEW_PODS = [("DaemonSet", None), ("Pod", f"app=agent,controller-revision-hash={H2}")]


def test_once_the_canary_passed_only_the_new_revisions_pods_are_watched(monkeypatch):
    client, calls = cluster(), []
    monkeypatch.setattr(glue, "observe", scripted_watch(client, [canary_replaced, all_replaced, nothing_new], calls))
    result = glue.run(client, params(wait=True), False)
    assert calls == [EVERY_POD, NEW_PODS]
    assert [event["reason"] for event in result["events"]] == ["CanaryStarted", "CanaryPassed", "CanaryCompleted"]
    assert result["phase"] == "done" and result["updated_number_scheduled"] == 4
    assert client.stored("DaemonSet", "agent")["spec"]["updateStrategy"] == ORIGINAL


def test_a_halt_in_the_fast_phase_brings_every_pod_back_into_view(monkeypatch):
    client, calls = cluster(), []
    monkeypatch.setattr(glue, "observe", scripted_watch(client, [canary_replaced, second_new_pod_crashing, nothing_new, nothing_new], calls))
    with pytest.raises(glue.CanaryError, match="halted: new revision .*agent-7f9-n2.* CrashLoopBackOff"):
        glue.run(client, params(wait=True), False)
    assert calls == [EVERY_POD, NEW_PODS, EVERY_POD]  # the halted phase is decided on every pod again
    assert client.stored("DaemonSet", "agent")["metadata"]["annotations"][ro.PHASE] == ro.HALTED_PHASE


# ------------------------------------------------------------------------------------------- guarded patches


def test_a_failed_guard_is_retried_with_a_fresh_read():
    client = cluster()
    client.failures["DaemonSet"] = [api_exception(409, "the object has been modified"), api_exception(422, "test failed")]
    result = glue.run(client, params(), False)
    assert result["changed"] is True and result["phase"] == ro.CANARY
    assert len(client.writes("DaemonSet")) == 3
    reads = [r for r in client.requests if r[:3] == ("DaemonSet", "GET", "agent")]
    assert len(reads) >= 1 + 3 + 1  # before, one read per attempt, the read after the step
    assert client.stored("DaemonSet", "agent")["spec"]["template"]["spec"]["containers"][0]["image"] == V2
    assert client.stored("DaemonSet", "agent")["spec"]["updateStrategy"] == ro.CANARY_STRATEGY


@pytest.mark.parametrize("status", [409, 422])
def test_a_guard_that_keeps_failing_gives_up_after_guard_retries(status):
    client = cluster()
    client.failures["DaemonSet"] = [api_exception(status, "changed meanwhile") for _attempt in range(GUARD_RETRIES)]
    with pytest.raises(glue.CanaryError, match=f"DaemonSet [^ ]+/agent kept changing while we tried to write it \\({GUARD_RETRIES} attempts\\)"):
        glue.run(client, params(), False)
    assert len(client.writes("DaemonSet")) == GUARD_RETRIES
    assert client.stored("DaemonSet", "agent") == daemonset()
    assert client.writes("Event") == []


def test_a_stale_read_fails_the_guard_of_the_fake_too():
    """The 422 of the fake comes from the patch's own ``test`` operation, as on a real API server."""
    client = cluster()
    ds = glue.canary_observe.daemonset_state(daemonset())
    stale = ro.plan_first_patch(ds._replace(generation=ds.generation - 1), template(V2))
    with pytest.raises(Exception) as failure:
        client.patch(DiscoveredResource("DaemonSet", "apps/v1"), stale, name="agent", namespace=NS, content_type="application/json-patch+json")
    assert failure.value.status == 422


def test_a_status_write_between_read_and_patch_does_not_fail_the_guard():
    """The DaemonSet controller writes the status after every pod change: only the spec (generation) and the
    rollout's annotations guard a patch, so a newer resourceVersion alone lets it through."""
    client = cluster()
    ds = glue.canary_observe.daemonset_state(daemonset())
    status_written = ro.plan_first_patch(ds._replace(resource_version="99"), template(V2))
    client.patch(DiscoveredResource("DaemonSet", "apps/v1"), status_written, name="agent", namespace=NS, content_type="application/json-patch+json")
    assert client.stored("DaemonSet", "agent")["spec"]["template"] == template(V2)


def test_other_api_errors_are_not_retried():
    client = cluster()
    client.failures["DaemonSet"] = [api_exception(500, "etcdserver: request timed out")]
    with pytest.raises(K8sError, match="request timed out") as failure:
        glue.run(client, params(), False)
    assert failure.value.status == 500
    assert len(client.writes("DaemonSet")) == 1


# ------------------------------------------------------------------------------------------- events


def test_an_event_that_cannot_be_written_is_a_warning():
    client = cluster()
    client.failures["Event"] = [api_exception(403, 'events is forbidden: User "agent" cannot create resource "events"')]
    result = glue.run(client, params(), False)
    assert result["changed"] is True and result["phase"] == ro.CANARY
    assert result["events"] == [{"type": "Normal", "reason": "CanaryStarted", "message": result["events"][0]["message"]}]
    assert len(result["warnings"]) == 1
    assert result["warnings"][0].startswith("could not record the event CanaryStarted:") and "forbidden" in result["warnings"][0]


def test_events_are_recorded_on_the_daemonset():
    client = cluster()
    glue.run(client, params(), False)
    (event,) = client.objects["Event"]
    assert event["involvedObject"] == {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "namespace": NS, "uid": "ds-uid"}
    assert (event["type"], event["reason"], event["source"]) == ("Normal", "CanaryStarted", {"component": "kubeforge.operators"})


# ------------------------------------------------------------------------------------------- check mode


def test_check_mode_predicts_the_start_and_changes_nothing():
    client = cluster(dry_run=True)
    result = glue.run(client, params(), True)
    assert result["changed"] is True and result["phase"] == ro.CANARY
    assert result["diff"]["before"] == {"template": template(V1), "updateStrategy": ORIGINAL}
    assert result["diff"]["after"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert result["diff"]["after"]["template"]["spec"]["containers"][0]["image"] == V2
    assert [r[:2] for r in client.writes()] == [("DaemonSet", "PATCH")]  # sent as a dry run, no Event
    assert client.stored("DaemonSet", "agent") == daemonset() and result["events"] == []


def test_check_mode_on_a_finished_rollout_predicts_no_change():
    client = cluster(ds=daemonset(V2), pods=[pod(n, H2) for n in NODES], revisions=[revision(H1, V1, 1), revision(H2, V2, 2)], dry_run=True)
    result = glue.run(client, params(), True)
    assert result["changed"] is False and result["phase"] == "done"
    assert client.writes() == [] and "diff" not in result


def test_check_mode_predicts_a_resumed_step():
    annotations = started_annotations()
    ds = daemonset(V2, annotations=annotations, updated=1)
    pods = [pod("n1", H2)] + [pod(n, H1) for n in NODES[1:]]
    client = cluster(ds=ds, pods=pods, revisions=[revision(H1, V1, 1), revision(H2, V2, 2)], dry_run=True)
    result = glue.run(client, params(), True)
    assert result["changed"] is True and result["phase"] == ro.FAST
    assert result["diff"]["after"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%", "maxSurge": 0}}
    assert client.stored("DaemonSet", "agent") == ds


# ------------------------------------------------------------------------------------------- node selector

LABELLED = [node("n2", {"canary": "true"}), node("n3", {"canary": "true"}), node("n9", {"canary": "true"}), node("n1", {"canary": "false"})]


def test_the_selector_is_listed_once_and_the_matching_nodes_with_pods_are_recorded():
    client = cluster(nodes=LABELLED)
    result = glue.run(client, params(canary_node_selector=" canary == true "), False)
    assert result["changed"] is True and result["phase"] == ro.CANARY
    assert [r for r in client.requests if r[0] == "Node"] == [("Node", "LIST", "canary=true", None)]
    annotations = client.stored("DaemonSet", "agent")["metadata"]["annotations"]
    assert json.loads(annotations[ro.NODES]) == ["n2", "n3"]
    assert client.stored("DaemonSet", "agent")["spec"]["updateStrategy"] == ro.ON_DELETE_STRATEGY
    assert result["canary_nodes"] == ["n2", "n3"]


def test_check_mode_reports_the_nodes_it_would_record():
    client = cluster(nodes=LABELLED, dry_run=True)
    result = glue.run(client, params(canary_node_selector="canary=true"), True)
    assert result["changed"] is True and result["canary_nodes"] == ["n2", "n3"]
    assert ro.NODES not in (client.stored("DaemonSet", "agent")["metadata"].get("annotations") or {})


def test_a_resumed_rollout_does_not_list_nodes():
    annotations = started_annotations(("n2",))
    ds = daemonset(V2, annotations=annotations, updated=0)
    client = cluster(ds=ds, revisions=[revision(H1, V1, 1), revision(H2, V2, 2)], nodes=LABELLED)
    result = glue.run(client, params(canary_node_selector="canary=true"), False)
    assert [r for r in client.requests if r[0] == "Node"] == []
    assert [r[1:3] for r in client.writes()] == [("DELETE", "agent-6d5-n2")]  # the recorded node, not n3
    assert result["canary_nodes"] == ["n2"]


@pytest.mark.parametrize(
    "selector, fragment",
    [("canary=true", "matches 1 node(s) (n9), none of which runs a pod"), ("zone=nowhere", "matches no node")],
)
def test_a_selector_without_canary_pods_fails_before_any_write(selector, fragment):
    client = cluster(nodes=[node("n9", {"canary": "true"})])
    with pytest.raises(glue.CanaryError, match=re.escape(fragment)):
        glue.run(client, params(canary_node_selector=selector), False)
    assert client.writes() == []


@pytest.mark.parametrize("selector", ["", "canary in (", "-bad=x"])
def test_a_malformed_selector_fails_before_any_request(selector):
    client = cluster(nodes=LABELLED)
    with pytest.raises(glue.CanaryError, match="canary_node_selector"):
        glue.run(client, params(canary_node_selector=selector), False)
    assert client.requests == []


def test_canary_nodes_and_a_selector_exclude_each_other():
    with pytest.raises(glue.CanaryError, match="mutually exclusive"):
        glue.run(cluster(), params(canary_nodes=["n1"], canary_node_selector="canary=true"), False)


def test_a_forbidden_node_list_fails_with_the_status():
    client = cluster(nodes=LABELLED)
    client.errors["Node"] = api_exception(403, 'nodes is forbidden: User "agent" cannot list resource "nodes"')
    with pytest.raises(K8sError, match="Failed to list Node: nodes is forbidden") as failure:
        glue.run(client, params(canary_node_selector="canary=true"), False)
    assert failure.value.status == 403
    assert client.writes() == []


# ------------------------------------------------------------------------------------------- OperatorCondition


def upgradeable_of(client):
    return uc.find(client.objects[uc.KIND][0]["spec"]["conditions"])


def test_the_operator_condition_blocks_upgrades_before_the_rollout_starts():
    client = cluster(conditions=[OTHER_CONDITION])
    result = glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    assert result["changed"] is True and result["phase"] == ro.CANARY
    assert [r[:2] for r in client.writes()] == [(uc.KIND, "PATCH"), ("DaemonSet", "PATCH"), ("Event", "CREATE")]
    condition = upgradeable_of(client)
    assert (condition["status"], condition["reason"]) == ("False", uc.IN_PROGRESS)
    assert condition["message"] == f"DaemonSet {NS}/agent: canary rollout in phase canary"
    assert client.objects[uc.KIND][0]["spec"]["conditions"][0] == OTHER_CONDITION
    assert result["operator_condition"] == {"name": "op.v1", "namespace": "operators", "changed": True, "upgradeable": uc.public(condition)}


def test_a_missing_operator_condition_fails_before_the_daemonset_changes():
    client = cluster()
    with pytest.raises(cluster_condition.OperatorConditionError, match="OperatorCondition operators/op.v1 not found"):
        glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    assert client.writes() == []


def test_the_operator_condition_guard_is_retried_then_gives_up():
    client = cluster(conditions=[])
    client.failures[uc.KIND] = [api_exception(409, "modified")]
    glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    assert len(client.writes(uc.KIND)) == 2 and upgradeable_of(client)["status"] == "False"

    client = cluster(conditions=[])
    client.failures[uc.KIND] = [api_exception(422, "test failed") for _attempt in range(GUARD_RETRIES)]
    with pytest.raises(cluster_condition.OperatorConditionError, match="kept changing"):
        glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    assert client.writes("DaemonSet") == []


def test_the_last_step_releases_the_operator_condition_after_the_daemonset_patch():
    annotations = dict(started_annotations(), **{ro.PHASE: ro.FAST})
    ds = daemonset(V2, annotations=annotations, updated=4, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}})
    mine = {
        "type": "Upgradeable",
        "status": "False",
        "reason": uc.IN_PROGRESS,
        "message": f"DaemonSet {NS}/agent: canary rollout in phase fast",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    client = cluster(ds=ds, pods=[pod(n, H2) for n in NODES], revisions=[revision(H1, V1, 1), revision(H2, V2, 2)], conditions=[mine])
    result = glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    assert result["phase"] == "done" and result["changed"] is True
    assert [r[:2] for r in client.writes()] == [("DaemonSet", "PATCH"), (uc.KIND, "PATCH"), ("Event", "CREATE")]
    condition = upgradeable_of(client)
    assert (condition["status"], condition["reason"], condition["message"]) == ("True", uc.COMPLETED, f"DaemonSet {NS}/agent: canary rollout completed")
    assert client.stored("DaemonSet", "agent")["spec"]["updateStrategy"] == ORIGINAL

    again = glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    assert again["changed"] is False and again["operator_condition"]["changed"] is False
    assert client.writes()[3:] == []


def test_a_halted_rollout_keeps_upgrades_blocked():
    annotations = dict(started_annotations(), **{ro.PHASE: ro.HALTED_PHASE, ro.FAILURE: "pod agent-x is CrashLoopBackOff"})
    client = cluster(ds=daemonset(V2, annotations=annotations, updated=1), revisions=[revision(H1, V1, 1), revision(H2, V2, 2)], conditions=[])
    with pytest.raises(glue.CanaryError, match="halted") as failure:
        glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    condition = upgradeable_of(client)
    assert (condition["status"], condition["reason"]) == ("False", uc.IN_PROGRESS)
    assert condition["message"].endswith("in phase halted: pod agent-x is CrashLoopBackOff")
    assert failure.value.result["operator_condition"]["upgradeable"]["status"] == "False"
    assert client.writes("DaemonSet") == []


def test_check_mode_predicts_the_operator_condition_without_changing_it():
    client = cluster(conditions=[OTHER_CONDITION], dry_run=True)
    result = glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), True)
    assert result["changed"] is True and result["operator_condition"]["changed"] is True
    assert result["operator_condition"]["upgradeable"]["status"] == "False"
    assert client.objects[uc.KIND][0]["spec"]["conditions"] == [OTHER_CONDITION]


def test_the_operator_namespace_defaults_to_the_pods_namespace(tmp_path, monkeypatch):
    path = tmp_path / "namespace"
    path.write_text("operators\n")
    monkeypatch.setattr(cluster_condition, "SERVICE_ACCOUNT_NAMESPACE", str(path))
    assert cluster_condition.operator_namespace({"operator_condition": "op.v1"}) == "operators"
    assert cluster_condition.operator_namespace({"operator_condition": "op.v1", "operator_condition_namespace": "elsewhere"}) == "elsewhere"
    monkeypatch.setattr(cluster_condition, "SERVICE_ACCOUNT_NAMESPACE", str(tmp_path / "absent"))
    with pytest.raises(cluster_condition.OperatorConditionError, match="needs operator_condition_namespace") as failure:
        cluster_condition.operator_namespace({"operator_condition": "op.v1"})
    assert isinstance(failure.value, KubeforgeError)


def test_without_the_operator_condition_api_the_error_says_so():
    client = cluster(conditions=[])
    client.resources.served.discard((uc.API_VERSION, uc.KIND))
    client.resources.cached.discard(uc.API_VERSION)
    with pytest.raises(cluster_condition.OperatorConditionError, match="OLM's OperatorCondition API"):
        glue.run(client, params(operator_condition="op.v1", operator_condition_namespace="operators"), False)
    assert client.writes() == []


# ------------------------------------------------------------------------------------------- single node


@pytest.mark.parametrize("check_mode", [False, True])
@pytest.mark.parametrize("nodes, warned", [(1, True), (2, False)])
def test_a_daemonset_on_a_single_node_is_warned_of_when_the_rollout_starts(check_mode, nodes, warned):
    ds = daemonset()
    ds["status"].update(desiredNumberScheduled=nodes, numberAvailable=nodes)
    client = cluster(ds=ds, pods=[pod(n, H1) for n in NODES[:nodes]], dry_run=check_mode)
    result = glue.run(client, params(wait=False), check_mode)
    assert result["changed"] is True and result["phase"] == ro.CANARY
    single = [w for w in result.get("warnings") or () if "single node" in w]
    assert bool(single) is warned, result.get("warnings")
    if warned:
        (warning,) = single
        assert warning.startswith(f"DaemonSet {NS}/agent runs on a single node: the canary is the whole DaemonSet"), warning
