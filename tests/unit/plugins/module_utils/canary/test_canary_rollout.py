"""The pure canary DaemonSet rollout core: phases, guarded patches, batches, resuming from annotations.

Objects are literal dicts shaped like what the API server returns for a DaemonSet, its pods (labelled with
``controller-revision-hash``) and its ControllerRevisions; ``observe.observe`` turns them into the observed state.
Patches are applied with a small RFC 6902 applier so every case checks the DaemonSet the patch would produce.
"""

import copy
import json

import pytest
from kubernetes.client.rest import ApiException
from lib.fakes import apply_json_patch

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import observe as obs
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as ro

NS = "agents"
NOW = 1_800_000_000
NODES4 = ("n1", "n2", "n3", "n4")


def template(image):
    return {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": image}]}}


def live(tmpl):
    """What the API server stores: the template with defaulted fields."""
    result = copy.deepcopy(tmpl)
    result["metadata"]["creationTimestamp"] = None
    for container in result["spec"]["containers"]:
        container.update({"imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log"})
    result["spec"]["restartPolicy"] = "Always"
    return result


V1, V2, V3 = template("agent:1"), template("agent:2"), template("agent:3")
H1, H2, H3 = "6d5f8b9c4", "7f9c6d8b5", "5b8d7c6f9"
ORIGINAL = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
ORIGINAL_JSON = json.dumps(ORIGINAL, sort_keys=True, separators=(",", ":"))
ONE = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
TEN = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}


def annotations(phase, target=None, nodes=None, since=NOW - 10, failure=None, extra=True):
    target = V2 if target is None else target
    values = {ro.PHASE: phase, ro.TARGET: ro.template_hash(target), ro.ORIGINAL_STRATEGY: ORIGINAL_JSON, ro.STARTED: ro.format_time(NOW - 100)}
    if since is not None:
        values[ro.PHASE_SINCE] = ro.format_time(since)
    if nodes:
        values[ro.NODES] = json.dumps(list(nodes))
    if failure:
        values[ro.FAILURE] = failure
    if extra:
        values["deprecated.daemonset.template.generation"] = "7"
    return values


def daemonset(tmpl=None, ann=None, strategy=None, generation=7, observed=None, desired=4, updated=0, available=4, min_ready=0):
    tmpl = V2 if tmpl is None else tmpl
    meta = {"name": "agent", "namespace": NS, "uid": "ds-uid", "generation": generation, "resourceVersion": "4242"}
    if ann is not None:
        meta["annotations"] = ann
    spec = {"template": live(tmpl), "updateStrategy": strategy or ONE, "selector": {"matchLabels": {"app": "agent"}}}
    if min_ready:
        spec["minReadySeconds"] = min_ready
    status = {
        "observedGeneration": generation if observed is None else observed,
        "desiredNumberScheduled": desired,
        "updatedNumberScheduled": updated,
        "numberAvailable": available,
    }
    return {"metadata": meta, "spec": spec, "status": status}


def pod(node, revision, ready=True, restarts=0, waiting=None, terminating=False, ready_for=600, owner="ds-uid"):
    meta = {
        "name": f"agent-{revision[:3]}-{node}",
        "namespace": NS,
        "labels": {"app": "agent", "controller-revision-hash": revision},
        "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "uid": owner, "controller": True}],
    }
    if terminating:
        meta["deletionTimestamp"] = ro.format_time(NOW - 1)
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    status = {
        "conditions": [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ro.format_time(NOW - ready_for)}],
        "containerStatuses": [{"name": "agent", "ready": ready, "restartCount": restarts, "state": state}],
    }
    return {"metadata": meta, "spec": {"nodeName": node}, "status": status}


def revision(revision_hash, tmpl, number):
    data = {"spec": {"template": dict(live(tmpl), **{"$patch": "replace"})}}
    meta = {
        "name": f"agent-{revision_hash}",
        "labels": {"controller-revision-hash": revision_hash},
        "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "uid": "ds-uid", "controller": True}],
    }
    return {"metadata": meta, "revision": number, "data": data}


REVISIONS = [revision(H1, V1, 1), revision(H2, V2, 2)]


def old_pods(nodes=NODES4):
    return [pod(node, H1) for node in nodes]


def seen(ds, pods=(), revisions=None, now=NOW):
    return obs.observe(ds, list(pods), list(REVISIONS if revisions is None else revisions), now=now)


DESIRED = ro.Desired(V2)
ROLLBACK = ro.Desired(V2, on_failure=ro.ROLLBACK)
BATCH3 = ro.Desired(V2, batch=3)
PAUSE = ro.Desired(V2, pause_after_canary=True)
TIMED = ro.Desired(V2, canary_timeout=60, rollout_timeout=300)
ON_N1 = ro.Desired(V2, canary_nodes=("n1",), batch=2)
NEW_READY = [pod("n1", H2)] + old_pods(("n2", "n3", "n4"))
ALL_NEW = [pod(node, H2) for node in NODES4]

# (id, desired, observed, action kind, reason, expectations on the patched DaemonSet / action)
CASES = [
    (
        "start: template, maxUnavailable 1 and annotations in one guarded patch",
        DESIRED,
        seen(daemonset(V1, strategy=ORIGINAL, updated=4), old_pods(), REVISIONS[:1]),
        ro.PATCH,
        "CanaryStarted",
        {"template": V2, "strategy": ONE, "phase": ro.CANARY, "original": ORIGINAL, "event": ("Normal", "CanaryStarted")},
    ),
    (
        "start keeps annotations of others",
        DESIRED,
        seen(daemonset(V1, ann={"deprecated.daemonset.template.generation": "6"}, updated=4), old_pods(), REVISIONS[:1]),
        ro.PATCH,
        "CanaryStarted",
        {"template": V2, "phase": ro.CANARY, "kept": {"deprecated.daemonset.template.generation": "6"}, "original": ONE},
    ),
    (
        "canary: the new pod is not ready yet",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY)), [pod("n1", H2, ready=False, waiting="ContainerCreating")] + old_pods(("n2", "n3", "n4"))),
        ro.WAIT,
        "Canary",
        {"phase": ro.CANARY},
    ),
    (
        "canary: observedGeneration lags",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY), observed=6), NEW_READY),
        ro.WAIT,
        "ObservedGeneration",
        {},
    ),
    (
        "canary ready: widen to the batch",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY), updated=1), NEW_READY),
        ro.PATCH,
        "CanaryPassed",
        {"strategy": TEN, "phase": ro.FAST, "event": ("Normal", "CanaryPassed"), "template": live(V2)},
    ),
    (
        "canary ready: an absolute batch",
        BATCH3,
        seen(daemonset(ann=annotations(ro.CANARY), updated=1), NEW_READY),
        ro.PATCH,
        "CanaryPassed",
        {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}}, "phase": ro.FAST},
    ),
    (
        "canary: ready but not for minReadySeconds",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY), min_ready=30), [pod("n1", H2, ready_for=10)] + old_pods(("n2", "n3", "n4"))),
        ro.WAIT,
        "Canary",
        {},
    ),
    (
        # A real kubelet shows a container that exits right after it starts as Ready for a moment on every start.
        "canary: ready, but for less than canary_ready_seconds",
        ro.Desired(V2, canary_ready_seconds=5),
        seen(daemonset(ann=annotations(ro.CANARY), updated=1), [pod("n1", H2, ready_for=1)] + old_pods(("n2", "n3", "n4"))),
        ro.WAIT,
        "Canary",
        {},
    ),
    (
        "canary: ready for canary_ready_seconds",
        ro.Desired(V2, canary_ready_seconds=5),
        seen(daemonset(ann=annotations(ro.CANARY), updated=1), [pod("n1", H2, ready_for=5)] + old_pods(("n2", "n3", "n4"))),
        ro.PATCH,
        "CanaryPassed",
        {"phase": ro.FAST},
    ),
    (
        "canary: minReadySeconds longer than canary_ready_seconds",
        ro.Desired(V2, canary_ready_seconds=5),
        seen(daemonset(ann=annotations(ro.CANARY), updated=1, min_ready=30), [pod("n1", H2, ready_for=10)] + old_pods(("n2", "n3", "n4"))),
        ro.WAIT,
        "Canary",
        {},
    ),
    (
        "canary crash loop: halt keeps maxUnavailable 1",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY)), [pod("n1", H2, ready=False, restarts=3, waiting="CrashLoopBackOff")] + old_pods(("n2", "n3", "n4"))),
        ro.PATCH,
        "CanaryFailed",
        {"strategy": ONE, "phase": ro.HALTED_PHASE, "failure": "agent-7f9-n1", "event": ("Warning", "CanaryFailed"), "template": live(V2)},
    ),
    (
        "canary: a first crash is not a crash loop yet",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY)), [pod("n1", H2, ready=False, restarts=1, waiting="CrashLoopBackOff")] + old_pods(("n2", "n3", "n4"))),
        ro.WAIT,
        "Canary",
        {},
    ),
    (
        "canary: image pull failure halts at once",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY)), [pod("n1", H2, ready=False, waiting="ImagePullBackOff")] + old_pods(("n2", "n3", "n4"))),
        ro.PATCH,
        "CanaryFailed",
        {"phase": ro.HALTED_PHASE, "failure": "ImagePullBackOff"},
    ),
    (
        "canary timeout halts",
        TIMED,
        seen(daemonset(ann=annotations(ro.CANARY, since=NOW - 61)), [pod("n1", H2, ready=False)] + old_pods(("n2", "n3", "n4"))),
        ro.PATCH,
        "CanaryFailed",
        {"phase": ro.HALTED_PHASE, "failure": "canary_timeout 60s", "strategy": ONE},
    ),
    (
        "canary within the timeout waits",
        TIMED,
        seen(daemonset(ann=annotations(ro.CANARY, since=NOW - 59)), [pod("n1", H2, ready=False)] + old_pods(("n2", "n3", "n4"))),
        ro.WAIT,
        "Canary",
        {},
    ),
    (
        "canary crash loop: rollback re-applies the previous revision's template",
        ROLLBACK,
        seen(daemonset(ann=annotations(ro.CANARY)), [pod("n1", H2, ready=False, restarts=5, waiting="CrashLoopBackOff")] + old_pods(("n2", "n3", "n4"))),
        ro.PATCH,
        "CanaryFailed",
        {"template": live(V1), "strategy": ONE, "phase": ro.ROLLING_BACK, "event": ("Warning", "CanaryRollingBack"), "failure": "CrashLoopBackOff"},
    ),
    (
        "rollback without a previous revision halts",
        ROLLBACK,
        seen(daemonset(ann=annotations(ro.CANARY)), [pod("n1", H2, ready=False, restarts=5, waiting="CrashLoopBackOff")], REVISIONS[1:]),
        ro.PATCH,
        "CanaryFailed",
        {"phase": ro.HALTED_PHASE, "failure": "no previous ControllerRevision"},
    ),
    (
        "resume rollingback: waits for the old revision everywhere",
        ROLLBACK,
        seen(daemonset(V1, ann=annotations(ro.ROLLING_BACK, failure="crash"), updated=2, available=3), old_pods(("n2", "n3"))),
        ro.WAIT,
        "RollingBack",
        {},
    ),
    (
        "rollingback: the previous revision crash-loops too, the rollback cannot end by itself",
        ROLLBACK,
        seen(
            daemonset(V1, ann=annotations(ro.ROLLING_BACK, failure="crash"), updated=2, available=2),
            [pod("n1", H1, ready=False, restarts=3, waiting="CrashLoopBackOff")] + old_pods(("n2", "n3")),
            [revision(H2, V2, 2), revision(H1, V1, 3)],
        ),
        ro.FAIL,
        "RollbackStuck",
        {"message": "CrashLoopBackOff"},
    ),
    (
        "rollingback past rollout_timeout: stuck, with the progress",
        ro.Desired(V2, on_failure=ro.ROLLBACK, rollout_timeout=5),
        seen(daemonset(V1, ann=annotations(ro.ROLLING_BACK, failure="crash"), updated=2, available=3), old_pods(("n2", "n3"))),
        ro.FAIL,
        "RollbackStuck",
        {"message": "rollout_timeout 5s"},
    ),
    (
        "rollingback complete: restore the strategy, phase rolledback",
        ROLLBACK,
        seen(daemonset(V1, ann=annotations(ro.ROLLING_BACK, failure="crash"), updated=4), old_pods(), [revision(H2, V2, 2), revision(H1, V1, 3)]),
        ro.PATCH,
        "CanaryRolledBack",
        {"strategy": ORIGINAL, "phase": ro.ROLLED_BACK, "gone": (ro.ORIGINAL_STRATEGY, ro.STARTED, ro.PHASE_SINCE), "failure": "crash"},
    ),
    (
        "resume rolledback: fails again without changes",
        DESIRED,
        seen(daemonset(V1, ann={ro.PHASE: ro.ROLLED_BACK, ro.TARGET: ro.template_hash(V2), ro.FAILURE: "crash"}, strategy=ORIGINAL, updated=4), old_pods()),
        ro.FAIL,
        "RolledBack",
        {"message": "crash"},
    ),
    (
        "resume halted: stays halted",
        DESIRED,
        seen(daemonset(ann=annotations(ro.HALTED_PHASE, failure="pod agent-7f9-n1 is CrashLoopBackOff"), updated=1), NEW_READY),
        ro.HALTED,
        "Halted",
        {"message": "CrashLoopBackOff"},
    ),
    (
        "resume halted with on_failure rollback: roll back now",
        ROLLBACK,
        seen(daemonset(ann=annotations(ro.HALTED_PHASE, failure="crash")), NEW_READY),
        ro.PATCH,
        "CanaryFailed",
        {"template": live(V1), "phase": ro.ROLLING_BACK},
    ),
    (
        "resume fast: in progress",
        DESIRED,
        seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2, available=3), [pod("n1", H2), pod("n2", H2)] + old_pods(("n3",))),
        ro.WAIT,
        "Rollout",
        {"phase": ro.FAST},
    ),
    (
        "resume fast: the controller's defaulted maxSurge is no change of batch",
        DESIRED,
        seen(
            daemonset(ann=annotations(ro.FAST), strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}}, updated=2),
            [pod("n1", H2), pod("n2", H2)] + old_pods(("n3",)),
        ),
        ro.WAIT,
        "Rollout",
        {},
    ),
    (
        "fast: a batch changed since the fast phase began takes effect",
        BATCH3,
        seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2, available=3), [pod("n1", H2), pod("n2", H2)] + old_pods(("n3",))),
        ro.PATCH,
        "BatchChanged",
        {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}}, "phase": ro.FAST, "message": "maxUnavailable was 10%"},
    ),
    (
        "fast: pause_after_canary asked for after the canary passed pauses where it stands",
        PAUSE,
        seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2, available=3), [pod("n1", H2), pod("n2", H2)] + old_pods(("n3",))),
        ro.PATCH,
        "CanaryPaused",
        {"strategy": ro.ON_DELETE_STRATEGY, "phase": ro.PAUSED, "message": "pause where the rollout stands"},
    ),
    (
        "node-selective fast: a pause keeps OnDelete and deletes no more pods",
        ro.Desired(V2, canary_nodes=("n1",), batch=2, pause_after_canary=True),
        seen(daemonset(ann=annotations(ro.FAST, nodes=("n1",)), strategy=ro.ON_DELETE_STRATEGY, updated=1), NEW_READY),
        ro.PATCH,
        "CanaryPaused",
        {"no_strategy_op": True, "phase": ro.PAUSED},
    ),
    (
        "canary nodes changed mid-rollout: refused, naming both",
        ro.Desired(V2, canary_nodes=("n2",)),
        seen(daemonset(ann=annotations(ro.CANARY, nodes=("n1",)), strategy=ro.ON_DELETE_STRATEGY, updated=1), NEW_READY),
        ro.FAIL,
        "CanaryNodesChanged",
        {"message": "started with canary nodes n1; canary_nodes now names n2"},
    ),
    (
        "canary nodes given to a rollout that started without them: refused",
        ON_N1,
        seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2), [pod("n1", H2), pod("n2", H2)] + old_pods(("n3",))),
        ro.FAIL,
        "CanaryNodesChanged",
        {"message": "started without canary nodes (maxUnavailable 1)"},
    ),
    (
        "a canary node left out at the start (it ran no pod) and still without one: no change",
        ro.Desired(V2, canary_nodes=("n1", "n9"), batch=2),
        seen(daemonset(ann=annotations(ro.FAST, nodes=("n1",)), strategy=ro.ON_DELETE_STRATEGY, updated=4), ALL_NEW),
        ro.PATCH,
        "CanaryCompleted",
        {"phase": None},
    ),
    (
        "fast: crash loop halts back to maxUnavailable 1",
        DESIRED,
        seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2, available=3), [pod("n1", H2), pod("n2", H2, False, 4, "CrashLoopBackOff")]),
        ro.PATCH,
        "CanaryFailed",
        {"strategy": ONE, "phase": ro.HALTED_PHASE, "failure": "agent-7f9-n2"},
    ),
    (
        "fast: rollout timeout halts",
        TIMED,
        seen(daemonset(ann=annotations(ro.FAST, since=NOW - 301), strategy=TEN, updated=3, available=3), ALL_NEW[:3]),
        ro.PATCH,
        "CanaryFailed",
        {"phase": ro.HALTED_PHASE, "failure": "rollout_timeout 300s"},
    ),
    (
        "fast: all updated, restore the original strategy and remove the annotations",
        DESIRED,
        seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=4), ALL_NEW),
        ro.PATCH,
        "CanaryCompleted",
        {"strategy": ORIGINAL, "gone": ro.ANNOTATIONS, "kept": {"deprecated.daemonset.template.generation": "7"}, "event": ("Normal", "CanaryCompleted")},
    ),
    (
        "restored: done without a patch (defaulted fields do not matter)",
        DESIRED,
        seen(daemonset(ann={"deprecated.daemonset.template.generation": "7"}, strategy=ORIGINAL, updated=4), ALL_NEW),
        ro.DONE,
        "UpToDate",
        {"no_patch": True},
    ),
    (
        "restored: the strategy change is not observed yet",
        DESIRED,
        seen(daemonset(strategy=ORIGINAL, updated=4, generation=8, observed=7), ALL_NEW),
        ro.WAIT,
        "ObservedGeneration",
        {"no_patch": True},
    ),
    (
        "template in place by someone else's rollout: wait for it",
        DESIRED,
        seen(daemonset(strategy=ORIGINAL, updated=2, available=3), ALL_NEW[:2] + old_pods(("n3", "n4"))),
        ro.WAIT,
        "RolloutInProgress",
        {"no_patch": True},
    ),
    (
        "template changed by someone else mid-rollout: fail clearly",
        DESIRED,
        seen(daemonset(V3, ann=annotations(ro.FAST), strategy=TEN, updated=1), NEW_READY, REVISIONS + [revision(H3, V3, 3)]),
        ro.FAIL,
        "TemplateChanged",
        {"message": "changed by someone else", "no_patch": True},
    ),
    (
        "a new target replaces an unfinished rollout and keeps its original strategy",
        ro.Desired(V3),
        seen(daemonset(V2, ann=annotations(ro.FAST), strategy=TEN, updated=2), ALL_NEW[:2] + old_pods(("n3", "n4"))),
        ro.PATCH,
        "CanaryStarted",
        {"template": V3, "strategy": ONE, "phase": ro.CANARY, "original": ORIGINAL, "message": "replaces the unfinished canary rollout"},
    ),
    (
        "pause_after_canary: canary ready, stop the controller with OnDelete",
        PAUSE,
        seen(daemonset(ann=annotations(ro.CANARY), updated=1), NEW_READY),
        ro.PATCH,
        "CanaryPaused",
        {"strategy": {"type": "OnDelete"}, "phase": ro.PAUSED},
    ),
    (
        "resume paused with pause_after_canary: stays paused",
        PAUSE,
        seen(daemonset(ann=annotations(ro.PAUSED), strategy={"type": "OnDelete"}, updated=1), NEW_READY),
        ro.PAUSE,
        "Paused",
        {"no_patch": True},
    ),
    (
        "resume paused without pause_after_canary: widen",
        DESIRED,
        seen(daemonset(ann=annotations(ro.PAUSED), strategy={"type": "OnDelete"}, updated=1), NEW_READY),
        ro.PATCH,
        "CanaryResumed",
        {"strategy": TEN, "phase": ro.FAST},
    ),
    (
        "resume paused: the canary crash-looped during the pause, halt instead of widening",
        DESIRED,
        seen(
            daemonset(ann=annotations(ro.PAUSED), strategy={"type": "OnDelete"}, updated=1),
            [pod("n1", H2, ready=False, restarts=3, waiting="CrashLoopBackOff")] + old_pods(("n2", "n3", "n4")),
        ),
        ro.PATCH,
        "CanaryFailed",
        {"phase": ro.HALTED_PHASE, "failure": "CrashLoopBackOff"},
    ),
    (
        "still paused: a canary crash-looping during the pause is reported, not hidden",
        PAUSE,
        seen(
            daemonset(ann=annotations(ro.PAUSED), strategy={"type": "OnDelete"}, updated=1),
            [pod("n1", H2, ready=False, restarts=3, waiting="CrashLoopBackOff")] + old_pods(("n2", "n3", "n4")),
        ),
        ro.PATCH,
        "CanaryFailed",
        {"phase": ro.HALTED_PHASE},
    ),
    (
        "node-selective start: OnDelete and the canary nodes recorded",
        ON_N1,
        seen(daemonset(V1, strategy=ORIGINAL, updated=4), old_pods(), REVISIONS[:1]),
        ro.PATCH,
        "CanaryStarted",
        {"template": V2, "strategy": {"type": "OnDelete"}, "phase": ro.CANARY, "nodes": ["n1"]},
    ),
    (
        "node-selective start: no pod on the canary nodes",
        ro.Desired(V2, canary_nodes=("n9",)),
        seen(daemonset(V1, updated=4), old_pods(), REVISIONS[:1]),
        ro.FAIL,
        "NoCanaryPods",
        {"no_patch": True},
    ),
    (
        "node-selective canary: delete the old pod on the canary node",
        ON_N1,
        seen(daemonset(ann=annotations(ro.CANARY, nodes=["n1"]), strategy={"type": "OnDelete"}), old_pods()),
        ro.DELETE_PODS,
        "CanaryPods",
        {"pods": ["agent-6d5-n1"]},
    ),
    (
        "node-selective canary: the old pod terminates, wait",
        ON_N1,
        seen(daemonset(ann=annotations(ro.CANARY, nodes=["n1"]), strategy={"type": "OnDelete"}), [pod("n1", H1, terminating=True)] + old_pods(NODES4[1:])),
        ro.WAIT,
        "Canary",
        {},
    ),
    (
        "node-selective canary ready: fast phase stays OnDelete",
        ON_N1,
        seen(daemonset(ann=annotations(ro.CANARY, nodes=["n1"]), strategy={"type": "OnDelete"}, updated=1), NEW_READY),
        ro.PATCH,
        "CanaryPassed",
        {"strategy": {"type": "OnDelete"}, "phase": ro.FAST, "no_strategy_op": True},
    ),
    (
        "node-selective canary crash: halt without deleting more pods",
        ON_N1,
        seen(
            daemonset(ann=annotations(ro.CANARY, nodes=["n1"]), strategy={"type": "OnDelete"}),
            [pod("n1", H2, False, 3, "CrashLoopBackOff")] + old_pods(NODES4[1:]),
        ),
        ro.PATCH,
        "CanaryFailed",
        {"strategy": {"type": "OnDelete"}, "phase": ro.HALTED_PHASE, "no_strategy_op": True},
    ),
    (
        "node-selective fast: delete a batch of two",
        ON_N1,
        seen(daemonset(ann=annotations(ro.FAST, nodes=["n1"]), strategy={"type": "OnDelete"}, updated=1), NEW_READY),
        ro.DELETE_PODS,
        "Batch",
        {"pods": ["agent-6d5-n2", "agent-6d5-n3"]},
    ),
    (
        "node-selective fast: one node unavailable leaves room for one more",
        ON_N1,
        seen(
            daemonset(ann=annotations(ro.FAST, nodes=["n1"]), strategy={"type": "OnDelete"}, updated=2, available=3),
            NEW_READY[:1] + [pod("n2", H2, ready=False)] + old_pods(("n3", "n4")),
        ),
        ro.DELETE_PODS,
        "Batch",
        {"pods": ["agent-6d5-n3"]},
    ),
    (
        "node-selective fast: budget used up, an unready old pod is still replaced",
        ON_N1,
        seen(
            daemonset(ann=annotations(ro.FAST, nodes=["n1"]), strategy={"type": "OnDelete"}, updated=3, available=1),
            [pod("n1", H2, ready=False), pod("n2", H2, ready=False), pod("n3", H1, ready=False), pod("n4", H1)],
        ),
        ro.DELETE_PODS,
        "Batch",
        {"pods": ["agent-6d5-n3"]},
    ),
    (
        "node-selective fast: complete, restore the original strategy",
        ON_N1,
        seen(daemonset(ann=annotations(ro.FAST, nodes=["n1"]), strategy={"type": "OnDelete"}, updated=4), ALL_NEW),
        ro.PATCH,
        "CanaryCompleted",
        {"strategy": ORIGINAL, "gone": ro.ANNOTATIONS},
    ),
    (
        "no node runs the DaemonSet: the canary passes at once",
        DESIRED,
        seen(daemonset(ann=annotations(ro.CANARY), desired=0, available=0), []),
        ro.PATCH,
        "CanaryPassed",
        {"phase": ro.FAST},
    ),
    (
        "an unknown phase annotation fails",
        DESIRED,
        seen(daemonset(ann=dict(annotations(ro.CANARY), **{ro.PHASE: "sideways"})), NEW_READY),
        ro.FAIL,
        "UnknownPhase",
        {"no_patch": True},
    ),
]

UNDO = ro.Desired(None, undo=True)
ROLLED_BACK_RECORD = {ro.PHASE: ro.ROLLED_BACK, ro.TARGET: ro.template_hash(V2), ro.FAILURE: "crash", "deprecated.daemonset.template.generation": "7"}
RESTORED = [revision(H2, V2, 2), revision(H1, V1, 3)]
CASES += [
    (
        "undo a halted rollout: the previous template, phase rollingback",
        UNDO,
        seen(daemonset(ann=annotations(ro.HALTED_PHASE, failure="crash")), NEW_READY),
        ro.PATCH,
        "CanaryUndo",
        {"template": live(V1), "strategy": ONE, "phase": ro.ROLLING_BACK, "failure": "undo requested in phase halted (it had failed: crash)"},
    ),
    (
        "undo a running canary the same way",
        UNDO,
        seen(daemonset(ann=annotations(ro.CANARY), updated=1), NEW_READY),
        ro.PATCH,
        "CanaryUndo",
        {"template": live(V1), "phase": ro.ROLLING_BACK, "failure": "undo requested in phase canary"},
    ),
    (
        "undo waits for the previous revision everywhere",
        UNDO,
        seen(daemonset(V1, ann=annotations(ro.ROLLING_BACK, failure="undo requested"), updated=2, available=3), old_pods(("n2", "n3")), RESTORED),
        ro.WAIT,
        "RollingBack",
        {},
    ),
    (
        "undo complete: the strategy restored, no rollout annotation left",
        UNDO,
        seen(daemonset(V1, ann=annotations(ro.ROLLING_BACK, failure="undo requested"), updated=4), old_pods(), RESTORED),
        ro.PATCH,
        "CanaryUndone",
        {"strategy": ORIGINAL, "gone": ro.ANNOTATIONS, "kept": {"deprecated.daemonset.template.generation": "7"}},
    ),
    (
        "undo after on_failure rollback: only the record goes",
        UNDO,
        seen(daemonset(V1, ann=ROLLED_BACK_RECORD, strategy=ORIGINAL, updated=4), old_pods(), RESTORED),
        ro.PATCH,
        "CanaryUndone",
        {"no_strategy_op": True, "gone": ro.ANNOTATIONS, "kept": {"deprecated.daemonset.template.generation": "7"}},
    ),
    (
        "undo without a rollout: nothing to do",
        UNDO,
        seen(daemonset(V1, updated=4), old_pods(), RESTORED),
        ro.DONE,
        "NothingToUndo",
        {},
    ),
    (
        "undo right after a step waits for the controller",
        UNDO,
        seen(daemonset(ann=annotations(ro.CANARY), observed=6, updated=1), NEW_READY),
        ro.WAIT,
        "ObservedGeneration",
        {},
    ),
    (
        "undo without a previous revision: refused",
        UNDO,
        seen(daemonset(ann=annotations(ro.CANARY), updated=1), NEW_READY, [revision(H2, V2, 2)]),
        ro.FAIL,
        "NoPreviousRevision",
        {},
    ),
    (
        "the template a rollback restored: up to date, the record of the failed one stays",
        ro.Desired(V1),
        seen(daemonset(V1, ann=ROLLED_BACK_RECORD, strategy=ORIGINAL, updated=4), old_pods(), RESTORED),
        ro.DONE,
        "UpToDate",
        {},
    ),
]


@pytest.mark.parametrize("desired, observed, kind, reason, expect", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_next_step(desired, observed, kind, reason, expect):
    action = ro.next_step(desired, observed)
    assert (action.kind, action.reason) == (kind, reason), action
    if "message" in expect:
        assert expect["message"] in action.message
    if "pods" in expect:
        assert list(action.pods) == expect["pods"]
    if "event" in expect:
        assert (action.event.type, action.event.reason) == expect["event"]
        assert action.event.message
    if expect.get("no_patch") or kind != ro.PATCH:
        assert action.patch is None
        return
    raw = {
        "metadata": {"generation": observed.daemonset.generation, "annotations": observed.daemonset.annotations},
        "spec": {"template": observed.daemonset.template, "updateStrategy": observed.daemonset.strategy},
    }
    if not observed.daemonset.annotations:
        del raw["metadata"]["annotations"]
    # Guarded by the spec's generation and the annotations as read, not by the resourceVersion status writes bump.
    assert action.patch[0] == {"op": "test", "path": "/metadata/generation", "value": observed.daemonset.generation}
    if observed.daemonset.annotations:
        assert action.patch[1] == {"op": "test", "path": "/metadata/annotations", "value": observed.daemonset.annotations}
    assert not any(op["path"] == "/metadata/resourceVersion" for op in action.patch)
    after = apply_json_patch(raw, action.patch)
    after_annotations = after["metadata"].get("annotations") or {}
    assert after_annotations == ro.patched_annotations(observed.daemonset, action.patch)
    assert after_annotations.get(ro.PHASE) == action.phase
    if "phase" in expect:
        assert action.phase == expect["phase"]
    if "template" in expect:
        assert after["spec"]["template"] == expect["template"]
    if "strategy" in expect:
        assert after["spec"]["updateStrategy"] == expect["strategy"]
    if expect.get("no_strategy_op"):
        assert all(op["path"] != "/spec/updateStrategy" for op in action.patch)
    if "original" in expect:
        assert json.loads(after_annotations[ro.ORIGINAL_STRATEGY]) == expect["original"]
        assert after_annotations[ro.TARGET] == ro.template_hash(expect["template"])
        assert after_annotations[ro.STARTED] == after_annotations[ro.PHASE_SINCE] == ro.format_time(NOW)
    if "failure" in expect:
        assert expect["failure"] in after_annotations[ro.FAILURE]
    if "nodes" in expect:
        assert json.loads(after_annotations[ro.NODES]) == expect["nodes"]
    for key in expect.get("gone", ()):
        assert key not in after_annotations
    for key, value in expect.get("kept", {}).items():
        assert after_annotations[key] == value


@pytest.mark.parametrize("desired, observed, kind, reason, expect", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_start_from_the_daemonset_alone_is_the_start_next_step_makes_with_the_pods(desired, observed, kind, reason, expect):
    early = ro.start_from_daemonset(desired, observed.daemonset, observed.now)
    if reason == "CanaryStarted" and not (desired.canary_nodes or desired.canary_node_selector):
        assert early == ro.next_step(desired, observed)
    else:
        assert early is None


def test_a_start_from_the_daemonset_alone_covers_starts_and_restarts():
    """Both kinds of start are in the table above: a first one and one replacing an unfinished rollout."""
    starts = [c for c in CASES if c[4] == "CanaryStarted" and ro.start_from_daemonset(c[1], c[2].daemonset, c[2].now) is not None]
    assert any(c[2].daemonset.annotations.get(ro.PHASE) is None for c in starts)
    assert any(c[2].daemonset.annotations.get(ro.PHASE) is not None for c in starts)


def test_resume_never_depends_on_wait():
    """``wait`` only tells the caller to return after one action: the action is the same either way."""
    observed = seen(daemonset(ann=annotations(ro.CANARY), updated=1), NEW_READY)
    step_waiting = ro.next_step(DESIRED, observed)
    step_once = ro.next_step(DESIRED._replace(wait=False), observed)
    assert step_waiting == step_once
    assert ro.stop_after(DESIRED._replace(wait=False), step_once)
    assert not ro.stop_after(DESIRED, step_waiting)
    waiting = ro.next_step(DESIRED._replace(wait=False), seen(daemonset(ann=annotations(ro.CANARY)), old_pods()))
    assert waiting.kind == ro.WAIT and ro.stop_after(DESIRED._replace(wait=False), waiting)
    done = ro.next_step(DESIRED, seen(daemonset(strategy=ORIGINAL, updated=4), ALL_NEW))
    assert done.kind == ro.DONE and ro.stop_after(DESIRED, done)


class FakeController:
    """Just enough of the DaemonSet controller: generations, ControllerRevisions, rolling updates at maxUnavailable
    (new pods are ready at once) and OnDelete replacements."""

    def __init__(self, tmpl, strategy, nodes=NODES4):
        self.ds = daemonset(tmpl, strategy=strategy, updated=len(nodes), desired=len(nodes))
        self.ds["spec"]["template"] = copy.deepcopy(tmpl)
        self.nodes = nodes
        self.revisions = []
        self.pods = {}
        self.sync()
        self.pods = {node: pod(node, self.hash()) for node in nodes}
        self.sync()

    def hash(self):
        return ro.template_hash(obs.revision_template({"data": {"spec": {"template": self.ds["spec"]["template"]}}}))[:9]

    def patch(self, ops):
        before = copy.deepcopy(self.ds["spec"])
        self.ds = apply_json_patch(self.ds, ops)
        self.ds["metadata"]["resourceVersion"] = str(int(self.ds["metadata"]["resourceVersion"]) + 1)
        if self.ds["spec"] != before:
            self.ds["metadata"]["generation"] += 1

    def sync(self):
        current = self.hash()
        if all(obs._hash(rev) != current for rev in self.revisions):
            number = 1 + max([rev["revision"] for rev in self.revisions] or [0])
            rev = revision(current, V1, number)
            rev["data"]["spec"]["template"] = dict(self.ds["spec"]["template"], **{"$patch": "replace"})
            self.revisions.append(rev)
        strategy = self.ds["spec"]["updateStrategy"]
        if strategy["type"] == "RollingUpdate":
            value = strategy["rollingUpdate"].get("maxUnavailable", 1)
            limit = 1 if value in (0, "0%") else ro.batch_size(value, len(self.nodes))  # maxSurge 1: one at a time
            for node in [n for n in self.nodes if self.pods.get(n, {}).get("metadata", {}).get("labels", {}).get("controller-revision-hash") != current][
                :limit
            ]:
                self.pods[node] = pod(node, current)
        for node in self.nodes:
            if node not in self.pods:
                self.pods[node] = pod(node, current)
        updated = sum(1 for p in self.pods.values() if p["metadata"]["labels"]["controller-revision-hash"] == current)
        self.ds["status"].update(observedGeneration=self.ds["metadata"]["generation"], updatedNumberScheduled=updated, numberAvailable=len(self.pods))
        self.ds["metadata"]["resourceVersion"] = str(int(self.ds["metadata"]["resourceVersion"]) + 1)

    def delete(self, names):
        for node, item in list(self.pods.items()):
            if item["metadata"]["name"] in names:
                del self.pods[node]

    def observed(self):
        return obs.observe(self.ds, list(self.pods.values()), self.revisions, now=NOW)


@pytest.mark.parametrize("desired", [DESIRED, ON_N1, BATCH3], ids=["rolling", "node-selective", "batch-3"])
def test_full_rollout_one_step_per_run(desired):
    """Every run is a fresh ``next_step`` on a fresh observation (wait: false): the annotations carry the rollout
    from start to done, and a finished rollout is idempotent."""
    cluster = FakeController(V1, ORIGINAL)
    kinds, phases = [], []
    for _attempt in range(30):
        action = ro.next_step(desired, cluster.observed())
        kinds.append(action.reason)
        if action.kind == ro.DONE:
            break
        assert action.kind in (ro.PATCH, ro.DELETE_PODS, ro.WAIT), action
        if action.kind == ro.PATCH:
            cluster.patch(action.patch)
            phases.append(action.phase)
        elif action.kind == ro.DELETE_PODS:
            cluster.delete(action.pods)
        cluster.sync()
    assert kinds[-1] == "UpToDate", kinds
    assert phases == [ro.CANARY, ro.FAST, None]
    assert cluster.ds["spec"]["updateStrategy"] == ORIGINAL
    assert not set(ro.ANNOTATIONS) & set(cluster.ds["metadata"].get("annotations") or {})
    assert {p["spec"]["containers"][0]["image"] for p in [cluster.ds["spec"]["template"]]} == {"agent:2"}
    assert all(p["metadata"]["labels"]["controller-revision-hash"] == cluster.hash() for p in cluster.pods.values())
    assert ro.next_step(desired, cluster.observed()).kind == ro.DONE
    if desired.canary_nodes:
        assert "CanaryPods" in kinds and "Batch" in kinds


@pytest.mark.parametrize(
    "batch, desired_number, expected",
    [
        ("10%", 0, 0),
        ("10%", 1, 1),
        ("10%", 10, 1),
        ("10%", 11, 2),
        ("33%", 10, 4),
        ("1%", 250, 3),
        ("100%", 7, 7),
        (1, 5, 1),
        ("3", 5, 3),
        (8, 5, 8),
    ],
)
def test_batch_size_rounds_percentages_up(batch, desired_number, expected):
    assert ro.batch_size(batch, desired_number) == expected


@pytest.mark.parametrize("batch", [0, "0", "0%", "150%", "abc", "-1", True, "10.5%", None])
def test_bad_batches_are_refused(batch):
    with pytest.raises(ValueError, match="batch"):
        ro.max_unavailable_value(batch)


def test_a_bad_batch_is_refused_before_any_change():
    with pytest.raises(ValueError, match="batch"):
        ro.next_step(ro.Desired(V2, batch="0%"), seen(daemonset(V1, updated=4), old_pods(), REVISIONS[:1]))


def test_first_patch_without_annotations_adds_the_map_and_escapes_keys():
    state = obs.daemonset_state(daemonset(V1, strategy=ORIGINAL))
    patch = ro.plan_first_patch(state, V2, now=NOW)
    adds = [op for op in patch if op["path"].startswith("/metadata/annotations")]
    assert adds == [
        {
            "op": "add",
            "path": "/metadata/annotations",
            "value": {
                ro.PHASE: ro.CANARY,
                ro.TARGET: ro.template_hash(V2),
                ro.ORIGINAL_STRATEGY: ORIGINAL_JSON,
                ro.STARTED: ro.format_time(NOW),
                ro.PHASE_SINCE: ro.format_time(NOW),
            },
        }
    ]
    with_map = ro.plan_first_patch(state._replace(annotations={"a": "b"}), V2)
    assert {"op": "add", "path": "/metadata/annotations/operators.kubeforge.io~1canary-phase", "value": ro.CANARY} in with_map
    # A changed spec (generation) refuses the patch; a status write (only the resourceVersion moved) does not.
    with pytest.raises(ApiException):
        apply_json_patch({"metadata": {"generation": state.generation + 1, "resourceVersion": "9999"}}, patch)
    passed = apply_json_patch({"metadata": {"generation": state.generation, "resourceVersion": "9999"}, "spec": {"template": {}}}, patch)
    assert passed["metadata"]["annotations"][ro.PHASE] == ro.CANARY
    # Annotations another run moved on refuse it too.
    with pytest.raises(ApiException):
        apply_json_patch({"metadata": {"generation": state.generation, "annotations": {"a": "c"}}, "spec": {}}, with_map)


def test_observe_reads_pods_and_revisions():
    ds = daemonset(ann=annotations(ro.CANARY))
    stranger = pod("n2", H2, owner="other-uid")
    crashing = pod("n1", H2, ready=False, restarts=4, waiting="CrashLoopBackOff", terminating=True)
    observed = seen(ds, [crashing, stranger], [revision(H1, V1, 1), revision(H2, V2, 2), revision(H3, V3, 0)])
    assert observed.updated_hash == H2
    assert observed.previous_template == live(V1)
    assert observed.pods == [ro.PodState("agent-7f9-n1", "n1", False, H2, 4, "CrashLoopBackOff", True, NOW - 600)]
    assert observed.daemonset.annotations[ro.PHASE] == ro.CANARY
    assert (observed.daemonset.desired, observed.daemonset.updated, observed.daemonset.available) == (4, 0, 4)


def test_observe_waits_for_the_revision_of_a_new_template():
    ds = daemonset(V3, generation=8, observed=7)
    observed = seen(ds, [], REVISIONS)
    assert observed.updated_hash is None and observed.previous_template is None
    action = ro.next_step(ro.Desired(V3), obs.observe(daemonset(V3, ann=annotations(ro.CANARY, target=V3)), [], REVISIONS)._replace(updated_hash=None))
    assert (action.kind, action.reason) == (ro.WAIT, "ControllerRevision")


def test_contains_ignores_defaults_but_not_changes():
    assert ro.contains(live(V2), V2)
    assert not ro.contains(live(V1), V2)
    assert not ro.contains(live(V2), dict(V2, spec={"containers": V2["spec"]["containers"] * 2}))
    assert ro.contains({"a": 1}, {"b": None})
    assert not ro.contains({"a": 1, "b": 2}, {"b": None})


def test_summary_and_progress():
    observed = seen(daemonset(ann=annotations(ro.FAST, nodes=["n1"]), updated=2, available=3), NEW_READY)
    summary = ro.summary(observed)
    assert summary["phase"] == ro.FAST and summary["canary_nodes"] == ["n1"] and summary["updated_number_scheduled"] == 2
    assert "2 of 4 nodes updated, 3 available" in ro.progress(observed)


@pytest.mark.parametrize(
    "statuses, waiting",
    [
        ({"containerStatuses": [{"name": "agent", "restartCount": 3, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}, "CrashLoopBackOff"),
        ({"containerStatuses": [{"name": "agent", "restartCount": 3, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}, "CrashLoopBackOff"),
        ({"containerStatuses": [{"name": "agent", "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}, None),
        (
            {
                "initContainerStatuses": [{"name": "setup", "restartCount": 1, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
                "containerStatuses": [{"name": "agent", "restartCount": 0, "state": {"running": {}}}],
            },
            None,
        ),
    ],
    ids=["exits 0 again and again", "exits 1", "first exit", "init container done"],
)
def test_a_container_that_exits_0_again_and_again_is_a_crash_loop(statuses, waiting):
    """A real kubelet reports the last termination between the restarts of a crash loop, Completed for exit code 0."""
    item = pod("n1", H2)
    item["status"].update(statuses)
    assert obs.pod_state(item).waiting == waiting


@pytest.mark.parametrize(
    "desired, warned",
    [(0, False), (1, True), (2, False), (20, False)],
)
def test_a_rollout_that_starts_on_a_single_node_is_warned_of(desired, warned):
    ds = obs.daemonset_state(daemonset(desired=desired, available=desired))
    warnings = ro.start_warnings(ds)
    assert bool(warnings) is warned
    if warned:
        assert warnings == [
            f"DaemonSet {ds.namespace}/{ds.name} runs on a single node: the canary is the whole DaemonSet, so no node keeps running the "
            "previous revision while the canary is judged (a failure takes the DaemonSet's only pod down until on_failure=rollback or "
            "undo=true brings the previous revision back)"
        ]


@pytest.mark.parametrize(
    "observed, where",
    [
        (seen(daemonset(ann=annotations(ro.HALTED_PHASE, failure="pod agent-7f9-n1 is CrashLoopBackOff"), updated=1), NEW_READY), "At most one node"),
        (
            seen(daemonset(ann=annotations(ro.HALTED_PHASE, nodes=["n1", "n2"], failure="crash"), updated=2), NEW_READY),
            "Only the canary nodes (n1, n2) run the new revision",
        ),
    ],
    ids=["rolling update", "node-selective"],
)
def test_a_halted_rollout_offers_undo_and_rollback(observed, where):
    for action in (ro.next_step(DESIRED, observed), ro._failure(DESIRED, observed, "crash")):
        assert where in action.message, action.message
        assert "undo=true (without template or images" in action.message and "the run succeeds" in action.message, action.message
        assert "on_failure=rollback and the same template" in action.message and "phase rolledback" in action.message, action.message
        assert "Fix the template and run again" in action.message


# ------------------------------------------------------------------------------- the new revision's pods alone

MIXED = [pod("n1", H2), pod("n2", H2, ready=False), pod("n3", H1, terminating=True), pod("n4", H1, False, 9, "CrashLoopBackOff")]

# (id, desired, DaemonSet, pods): phase fast (or over) without canary nodes, where a watch may show the new revision's
# pods only; every decision must be the one made from all the pods.
NARROWED = [
    ("fast, old pods terminating and an old one crashing", DESIRED, daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2, available=2), MIXED),
    ("fast, complete", DESIRED, daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=4), ALL_NEW),
    ("fast, a new pod crashing: halt", DESIRED, daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2),
     MIXED + [pod("n5", H2, False, 4, "CrashLoopBackOff")]),
    ("fast, a new pod crashing: rollback", ROLLBACK, daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2),
     MIXED + [pod("n5", H2, False, 4, "CrashLoopBackOff")]),
    ("fast, past rollout_timeout", TIMED, daemonset(ann=annotations(ro.FAST, since=NOW - 301), strategy=TEN, updated=3), MIXED),
    ("fast, batch changed", BATCH3, daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2), MIXED),
    ("fast, generation not observed", DESIRED, daemonset(ann=annotations(ro.FAST), strategy=TEN, observed=6, updated=2), MIXED),
    ("over, complete", DESIRED, daemonset(strategy=ORIGINAL, updated=4), ALL_NEW),
    ("over, generation not observed", DESIRED, daemonset(strategy=ORIGINAL, observed=6, updated=4), ALL_NEW),
]


@pytest.mark.parametrize("desired, ds, pods", [c[1:] for c in NARROWED], ids=[c[0] for c in NARROWED])
def test_a_narrowed_view_decides_as_every_pod_does(desired, ds, pods):
    full = seen(ds, pods)
    assert ro.narrowed_view_holds(desired, full.daemonset)
    narrowed = seen(ds, [p for p in pods if p["metadata"]["labels"]["controller-revision-hash"] == H2])
    assert ro.next_step(desired, narrowed) == ro.next_step(desired, full)


@pytest.mark.parametrize(
    "ds",
    [
        daemonset(ann=annotations(ro.CANARY), updated=1),
        daemonset(ann=annotations(ro.PAUSED), strategy=ro.ON_DELETE_STRATEGY, updated=1),
        daemonset(ann=annotations(ro.HALTED_PHASE, failure="crash"), updated=1),
        daemonset(V1, ann=annotations(ro.ROLLING_BACK, failure="crash"), updated=1),
        daemonset(ann=annotations(ro.FAST, nodes=("n1",)), strategy=ro.ON_DELETE_STRATEGY, updated=1),
        daemonset(V3, ann=annotations(ro.FAST), strategy=TEN, updated=1),  # someone else's template
    ],
    ids=["canary", "paused", "halted", "rolling back", "node-selective", "template changed"],
)
def test_every_pod_comes_back_into_view_outside_the_fast_phase(ds):
    assert not ro.narrowed_view_holds(DESIRED, obs.daemonset_state(ds))


FAST_DS = daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=2)
CANARY_PASSED = seen(daemonset(ann=annotations(ro.CANARY, since=NOW - 10), updated=1), NEW_READY)


@pytest.mark.parametrize(
    "desired, observed, revision",
    [
        (DESIRED, CANARY_PASSED, H2),  # the canary passed: the patch into phase fast
        (DESIRED, seen(FAST_DS, MIXED), H2),  # waiting in phase fast
        (BATCH3, seen(FAST_DS, MIXED), H2),  # the batch changed within phase fast
        (DESIRED, seen(daemonset(ann=annotations(ro.CANARY, since=NOW - 10), updated=1), old_pods()), None),  # still the canary
        (DESIRED, seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, updated=4), ALL_NEW), None),  # the last patch: over
        (DESIRED, seen(FAST_DS, MIXED + [pod("n5", H2, False, 4, "CrashLoopBackOff")]), None),  # the halt
        (DESIRED, seen(daemonset(ann=annotations(ro.FAST), strategy=TEN, observed=6), MIXED, REVISIONS[:1]), None),  # its revision not made yet
        (ON_N1, seen(daemonset(ann=annotations(ro.FAST, nodes=("n1",)), strategy=ro.ON_DELETE_STRATEGY, updated=1), NEW_READY), None),
        (ro.Desired(V2, wait=False), seen(FAST_DS, MIXED), None),  # one step per run: no watch
        (ro.Desired(V2, undo=True), seen(FAST_DS, MIXED), None),
    ],
    ids=["canary passed", "fast", "batch changed", "canary", "completed", "halt", "no revision", "node-selective", "no wait", "undo"],
)
def test_the_watch_narrows_to_the_new_revision_once_the_canary_passed(desired, observed, revision):
    assert ro.watched_revision(desired, observed, ro.next_step(desired, observed)) == revision
