# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A canary rollout of a DaemonSet (KubeVirt's virt-handler upgrade), as a pure, resumable state machine.

``next_step(desired, observed) -> Action`` looks at the DaemonSet, its pods and the revision hash of its current
template and says what to do next: one guarded JSON patch, deleting some pods, waiting, or stopping (done, paused,
halted, failed). All I/O happens in the caller, which carries out the action (and emits ``action.event``) and calls
``next_step`` again with a fresh observation. Progress lives in annotations on the DaemonSet, so a rerun after an
interruption (or the next operator reconcile) resumes where the last one stopped; nothing is kept in memory.

RollingUpdate mode (canary.md section 5):

1. one patch: the new template, ``maxUnavailable: 1`` (maxSurge dropped) and the annotations (phase ``canary``);
2. ``canary``: wait until a pod of the new revision (pod label ``controller-revision-hash`` equals the hash of the
   ControllerRevision of the current template) is available; crash loops or ``canary_timeout`` fail the rollout;
3. phase ``fast`` with ``maxUnavailable: <batch>``, until ``observedGeneration`` is current and
   ``updatedNumberScheduled`` and ``numberAvailable`` reach ``desiredNumberScheduled`` (``kubectl rollout status``);
4. one patch restores the original ``updateStrategy`` and removes the annotations.

Node-selective mode (``canary_nodes``, or ``canary_node_selector``: the matching nodes that run a pod of the
DaemonSet when the rollout starts, recorded in the NODES annotation): the first patch sets ``updateStrategy:
OnDelete``; the old pods on the canary nodes are deleted, their new pods must become available, then the old pods of
the other nodes are deleted in batches (the controller's rolling-update budget, applied by us), and the original
strategy is restored.

On failure, ``halt`` keeps ``maxUnavailable: 1`` (the failing pod is unavailable, so the controller replaces no other
pod: one node is affected; in node-selective mode no more pods are deleted) and ``rollback`` re-applies the template
of the previous ControllerRevision (like ``kubectl rollout undo``), then restores the strategy.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils import podstatus
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.kubetime import format_time, parse_time

PREFIX = "operators.kubeforge.io/"
PHASE = PREFIX + "canary-phase"
TARGET = PREFIX + "canary-target-hash"
ORIGINAL_STRATEGY = PREFIX + "canary-original-strategy"
STARTED = PREFIX + "canary-started"
PHASE_SINCE = PREFIX + "canary-phase-since"
NODES = PREFIX + "canary-nodes"
FAILURE = PREFIX + "canary-failure"
ANNOTATIONS = (PHASE, TARGET, ORIGINAL_STRATEGY, STARTED, PHASE_SINCE, NODES, FAILURE)

# Values of the phase annotation (absent: no canary rollout in progress).
CANARY = "canary"
FAST = "fast"
PAUSED = "paused"
HALTED_PHASE = "halted"
ROLLING_BACK = "rollingback"
ROLLED_BACK = "rolledback"
PHASES = (CANARY, FAST, PAUSED, HALTED_PHASE, ROLLING_BACK, ROLLED_BACK)

# Action kinds.
PATCH = "patch"
DELETE_PODS = "delete_pods"
WAIT = "wait"
DONE = "done"
PAUSE = "paused"
HALTED = "halted"
FAIL = "fail"
TERMINAL = (DONE, PAUSE, HALTED, FAIL)

HALT = "halt"
ROLLBACK = "rollback"

ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"
REVISION_HASH_LABEL = "controller-revision-hash"
DEFAULT_STRATEGY = {"type": ROLLING_UPDATE, "rollingUpdate": {"maxUnavailable": 1}}
CANARY_STRATEGY = DEFAULT_STRATEGY
ON_DELETE_STRATEGY = {"type": ON_DELETE}

MAX_FAILURE_CHARS = 512
# The reason of the action (and Event) that starts a rollout: start_from_daemonset recognises the start by it.
STARTED_REASON = "CanaryStarted"

# template: the complete new pod template (spec.template); batch: maxUnavailable of the fast phase (int or "N%");
# timeouts in seconds (None: no limit), measured from the start of the phase; crash_restarts: a new pod in
# CrashLoopBackOff with at least this many restarts fails the rollout; on_failure: "halt" or "rollback";
# wait: False makes the caller return after one action; canary_nodes: node names (node-selective mode);
# pause_after_canary: stop in phase "paused" once the canary is good; canary_node_selector: a label selector
# (node-selective mode): the caller lists the matching nodes into ``Observed.selected_nodes`` when
# ``needs_selected_nodes`` says the rollout is about to start, and the canary nodes are those of them that run a pod
# of the DaemonSet. Either way the names go into the NODES annotation with the first patch, and a resumed rollout
# reads them from there (nodes labelled later do not change a rollout in progress). canary_ready_seconds: how long the
# canary pod must have been Ready without a break (at least the DaemonSet's minReadySeconds) before the canary
# passes: without a readiness probe, a container that crashes right after it starts is Ready for a moment each time
# (seen on a real kubelet). undo: roll the rollout in progress (or halted) back to the previous revision, restore the
# strategy and remove the rollout's annotations; ``template`` is then not used.
Desired = namedtuple(
    "Desired",
    [
        "template",
        "batch",
        "canary_timeout",
        "rollout_timeout",
        "crash_restarts",
        "on_failure",
        "wait",
        "canary_nodes",
        "pause_after_canary",
        "canary_node_selector",
        "canary_ready_seconds",
        "undo",
    ],
)
Desired.__new__.__defaults__ = ("10%", None, None, 3, HALT, True, (), False, None, 0, False)

# The DaemonSet fields the rollout reads (observe.daemonset_state builds it from the API object).
DaemonSetState = namedtuple(
    "DaemonSetState",
    [
        "name",
        "namespace",
        "generation",
        "observed_generation",
        "resource_version",
        "template",
        "strategy",
        "annotations",
        "desired",
        "updated",
        "available",
        "min_ready_seconds",
    ],
)

# One pod of the DaemonSet: hash is its controller-revision-hash label; ready_since the Ready condition's
# lastTransitionTime (epoch seconds); restarts the highest container restartCount; waiting the first container
# waiting reason; terminating: it has a deletionTimestamp; last_exit: that container's last exit ("exit code 1
# (Error)"), so that a crash loop reads the same whether the kubelet shows it waiting or between its restarts.
PodState = namedtuple("PodState", ["name", "node", "ready", "hash", "restarts", "waiting", "terminating", "ready_since", "last_exit"])
PodState.__new__.__defaults__ = (0, None, False, None, None)

# updated_hash: the revision hash of the current template (None until the controller made its ControllerRevision);
# previous_template: the template of the newest other ControllerRevision (for rollback); now: epoch seconds;
# selected_nodes: names of the nodes matching ``Desired.canary_node_selector`` (None: not listed).
Observed = namedtuple("Observed", ["daemonset", "pods", "updated_hash", "previous_template", "now", "selected_nodes"])
Observed.__new__.__defaults__ = (None, None, None)

Event = namedtuple("Event", ["type", "reason", "message"])

# patch: a JSON patch (RFC 6902) whose first operation tests metadata.generation: the caller sends it as
# application/json-patch+json and, when the test fails, observes again and asks next_step again.
# pods: pod names to delete; event: the Event to record on the DaemonSet once the action is carried out;
# phase: the phase the DaemonSet is in after the action.
Action = namedtuple("Action", ["kind", "message", "reason", "patch", "pods", "event", "phase"])
Action.__new__.__defaults__ = (None, None, (), None, None)


def template_hash(template):
    """A stable hash of a pod template (canonical JSON), recorded as the rollout's target."""
    text = json.dumps(template, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def contains(live, wanted):
    """True when ``live`` holds everything ``wanted`` says: fields the API server defaults are ignored.

    Dicts: every key of ``wanted`` (None meaning absent); lists: same length, element by element; else equality.
    """
    if isinstance(wanted, dict):
        if not isinstance(live, dict):
            return False
        return all((live.get(key) is None) if value is None else contains(live.get(key), value) for key, value in wanted.items())
    if isinstance(wanted, list):
        return isinstance(live, list) and len(live) == len(wanted) and all(contains(a, b) for a, b in zip(live, wanted))
    return live == wanted


def max_unavailable_value(batch):
    """``batch`` as a maxUnavailable value: an int >= 1 or a ``"N%"`` string with 1 <= N <= 100.

    Raises ``ValueError`` otherwise (the API rejects 0 when maxSurge is 0, and percentages over 100).
    """
    text = str(batch).strip()
    percent = text.endswith("%")
    digits = text[:-1] if percent else text
    if isinstance(batch, bool) or not digits.isdigit():
        raise InvalidInputError(f"batch must be a positive number of pods or a percentage such as 10%, not {batch!r}")
    value = int(digits)
    if value < 1 or (percent and value > 100):
        raise InvalidInputError(f"batch must be at least 1 (or 1% to 100%), not {batch!r}")
    return f"{value}%" if percent else value


def batch_size(batch, desired_number):
    """How many nodes one batch may take down: Kubernetes' DaemonSet maxUnavailable arithmetic.

    A percentage is of ``desiredNumberScheduled``, rounded up (``UnavailableCount`` calls
    ``intstrutil.GetScaledValueFromIntOrPercent(maxUnavailable, numberToSchedule, true)`` in
    kubernetes/kubernetes pkg/controller/daemon/util/daemonset_util.go; the API documents "calculated from
    percentage by rounding up"); the controller never uses 0 when maxSurge is 0 (``updatedDesiredNodeCounts``).
    """
    value = max_unavailable_value(batch)
    desired_number = max(0, int(desired_number or 0))
    if isinstance(value, int):
        count = value
    else:
        count = -(-int(value[:-1]) * desired_number // 100)
    return max(1, count) if desired_number else 0


def _pointer(key):
    return key.replace("~", "~0").replace("/", "~1")


def json_patch(ds, template=None, strategy=None, annotations=None, remove=()):
    """A JSON patch of ``ds`` guarded by what the decision rests on: template and strategy replaced, annotations set
    (``annotations``) and removed (``remove``, only those present).

    The guard tests the generation (any change of the spec) and the annotations as read (the rollout's progress,
    which another run may have moved on), not the resourceVersion: the DaemonSet controller writes the status after
    every pod change, and on a busy cluster that made every patch of a rollout on many nodes lose to it. A decision
    read from an older status stays valid: the status only moves towards what the next step observes anyway."""
    ops = [{"op": "test", "path": "/metadata/generation", "value": ds.generation}]
    if ds.annotations:
        ops.append({"op": "test", "path": "/metadata/annotations", "value": dict(ds.annotations)})
    if template is not None:
        ops.append({"op": "replace", "path": "/spec/template", "value": template})
    if strategy is not None:
        ops.append({"op": "add", "path": "/spec/updateStrategy", "value": strategy})
    current = ds.annotations or {}
    set_now = dict(annotations or {})
    gone = [key for key in remove if key in current and key not in set_now]
    if not current:
        if set_now:
            ops.append({"op": "add", "path": "/metadata/annotations", "value": set_now})
        return ops
    for key in sorted(set_now):
        ops.append({"op": "add", "path": "/metadata/annotations/" + _pointer(key), "value": set_now[key]})
    for key in sorted(gone):
        ops.append({"op": "remove", "path": "/metadata/annotations/" + _pointer(key)})
    return ops


def patched_annotations(ds, patch):
    """The annotations ``ds`` would have after ``patch`` (pure; for diffs and tests)."""
    result = dict(ds.annotations or {})
    for op in patch:
        path = op["path"]
        if path == "/metadata/annotations":
            result = dict(op["value"])
        elif path.startswith("/metadata/annotations/"):
            key = path[len("/metadata/annotations/") :].replace("~1", "/").replace("~0", "~")
            if op["op"] == "remove":
                result.pop(key, None)
            else:
                result[key] = op["value"]
    return result


def original_strategy(ds):
    """The strategy to restore: the recorded one during a rollout, else the DaemonSet's own."""
    recorded = (ds.annotations or {}).get(ORIGINAL_STRATEGY)
    if recorded:
        try:
            value = json.loads(recorded)
        except ValueError:
            value = None
        if isinstance(value, dict) and value.get("type"):
            return value
    return ds.strategy or DEFAULT_STRATEGY


def plan_first_patch(ds, new_template, canary_nodes=(), now=None):
    """The one guarded patch that starts a canary rollout of ``new_template`` on ``ds`` (a DaemonSetState).

    The template, the canary strategy (``maxUnavailable: 1``, or ``OnDelete`` with ``canary_nodes``) and the
    annotations go in together. A rollout replacing an earlier, unfinished one keeps that one's original strategy.
    """
    annotations = {
        PHASE: CANARY,
        TARGET: template_hash(new_template),
        ORIGINAL_STRATEGY: json.dumps(original_strategy(ds), sort_keys=True, separators=(",", ":")),
    }
    if now is not None:
        annotations[STARTED] = annotations[PHASE_SINCE] = format_time(now)
    if canary_nodes:
        annotations[NODES] = json.dumps(sorted(canary_nodes), separators=(",", ":"))
    strategy = ON_DELETE_STRATEGY if canary_nodes else CANARY_STRATEGY
    return json_patch(ds, template=new_template, strategy=strategy, annotations=annotations, remove=ANNOTATIONS)


def stop_after(desired, action):
    """True when the caller returns after carrying out ``action``: always for a terminal one, after any single
    action with ``wait: false`` (one step per operator reconcile)."""
    return action.kind in TERMINAL or not desired.wait


def canary_nodes_of(ds):
    """The canary nodes recorded on the DaemonSet (node-selective mode), or ()."""
    recorded = (ds.annotations or {}).get(NODES)
    if not recorded:
        return ()
    try:
        nodes = json.loads(recorded)
    except ValueError:
        return ()
    return tuple(str(node) for node in nodes) if isinstance(nodes, list) else ()


def available(pod, ds, now, at_least=0):
    """Ready for at least ``minReadySeconds`` and ``at_least`` seconds (unknown times count as available once Ready)."""
    if not pod.ready or pod.terminating:
        return False
    min_ready = max(ds.min_ready_seconds or 0, at_least or 0)
    if not min_ready or now is None or pod.ready_since is None:
        return True
    return now - pod.ready_since >= min_ready


def crashing(pod, crash_restarts):
    """The reason a pod will not become ready by itself, or None: a waiting reason of podstatus's one table, a crash
    loop only from ``crash_restarts`` restarts on."""
    return pod.waiting if podstatus.stuck(pod.waiting, pod.restarts, crash_restarts) else None


def rollout_complete(ds):
    """``kubectl rollout status`` for a DaemonSet: status observed, every node updated and available."""
    return (ds.observed_generation or 0) >= (ds.generation or 0) and (ds.updated or 0) >= (ds.desired or 0) and (ds.available or 0) >= (ds.desired or 0)


def describe_pod(pod):
    last_exit = f", last exit: {pod.last_exit}" if pod.last_exit else ""
    return f"pod {pod.name} on node {pod.node or '(unscheduled)'} (ready: {str(bool(pod.ready)).lower()}, restarts: {pod.restarts or 0}{last_exit}" + (
        f", waiting: {pod.waiting})" if pod.waiting else ")"
    )


def progress(observed):
    """One line of progress: phase, revision and the DaemonSet counters."""
    ds = observed.daemonset
    phase = (ds.annotations or {}).get(PHASE) or "none"
    return (
        f"phase {phase}, revision {observed.updated_hash or 'unknown'}: {ds.updated or 0} of {ds.desired or 0} nodes updated, "
        f"{ds.available or 0} available (generation {ds.generation}, observed {ds.observed_generation})"
    )


def _phase_annotations(phase, now):
    values = {PHASE: phase}
    if now is not None:
        values[PHASE_SINCE] = format_time(now)
    return values


def _elapsed(ds, now):
    since = parse_time((ds.annotations or {}).get(PHASE_SINCE))
    if since is None or now is None:
        return None
    return now - since


def _fast_strategy(desired, node_selective):
    if node_selective:
        return None  # stays OnDelete: we delete the pods batch by batch
    return {"type": ROLLING_UPDATE, "rollingUpdate": {"maxUnavailable": max_unavailable_value(desired.batch)}}


def starting(desired, observed):
    """True when ``next_step`` starts a rollout of ``desired.template`` (a new one, or one replacing an unfinished
    rollout of another template) rather than continuing one or finding the template in place."""
    ds = observed.daemonset
    annotations = ds.annotations or {}
    phase = annotations.get(PHASE)
    if phase is not None and annotations.get(TARGET) == template_hash(desired.template):
        return False
    return phase is not None or not contains(ds.template, desired.template)


def needs_selected_nodes(desired, observed):
    """True when the caller must list the nodes matching ``desired.canary_node_selector`` into
    ``observed.selected_nodes`` before asking ``next_step``: only when the rollout is about to start."""
    return not desired.undo and bool(desired.canary_node_selector) and observed.selected_nodes is None and starting(desired, observed)


def selected_canary_nodes(desired, observed):
    """The canary nodes of a rollout that starts now: ``desired.canary_nodes``, or the nodes matching
    ``desired.canary_node_selector`` (``observed.selected_nodes``) that run a pod of the DaemonSet."""
    if not desired.canary_node_selector:
        return tuple(desired.canary_nodes or ())
    hosts = {pod.node for pod in observed.pods if pod.node and not pod.terminating}
    return tuple(sorted(node for node in set(observed.selected_nodes or ()) if node in hosts))


def start_from_daemonset(desired, ds, now=None):
    """The ``Action`` that starts the rollout, decided from the DaemonSet (a ``DaemonSetState``) alone, or None when
    the decision is anything else or needs the pods: with ``canary_nodes`` or ``canary_node_selector`` the canary
    nodes are those running a pod. Otherwise ``next_step`` starts the same way whatever pods run, so a caller can
    start before it has listed them (a thousand pods take most of a second to list)."""
    if desired.undo or desired.canary_nodes or desired.canary_node_selector:
        return None
    action = next_step(desired, Observed(daemonset=ds, pods=(), updated_hash=None, previous_template=None, now=now))
    return action if action.kind == PATCH and action.reason == STARTED_REASON else None


def next_step(desired, observed):
    """The next ``Action`` of the canary rollout of ``desired.template`` given ``observed`` (pure)."""
    ds = observed.daemonset
    annotations = ds.annotations or {}
    phase = annotations.get(PHASE)
    target = template_hash(desired.template)
    matches = contains(ds.template, desired.template)
    now = observed.now

    if desired.undo:
        return _undo(desired, observed, phase)
    if phase == ROLLED_BACK and matches and annotations.get(TARGET) != target:
        # The template the rollback restored: in place, nothing to do. The record of the failed template stays, so
        # asking for that one again is refused rather than retried.
        return _settled(observed)
    if starting(desired, observed):
        return _start(desired, observed, phase)
    if phase is None:
        return _settled(observed)

    if phase == ROLLED_BACK:
        return Action(
            FAIL,
            f"the canary rollout of this template (target {target}) failed and was rolled back: {annotations.get(FAILURE) or 'no reason recorded'}. "
            f"Change the template to try again, or remove the {PHASE} annotation to retry the same one",
            "RolledBack",
            phase=ROLLED_BACK,
        )
    if phase == ROLLING_BACK:
        return _rolling_back(desired, observed)
    if phase not in PHASES:
        return Action(FAIL, f"unknown {PHASE} annotation {phase!r} on DaemonSet {ds.name}", "UnknownPhase", phase=phase)
    if not matches:
        return Action(
            FAIL,
            f"the pod template of DaemonSet {ds.namespace}/{ds.name} was changed by someone else during the canary rollout (phase {phase}); "
            "not continuing. Run again with the template now in place to adopt it, or restore the template",
            "TemplateChanged",
            phase=phase,
        )
    if phase == HALTED_PHASE:
        if desired.on_failure == ROLLBACK:
            return _rollback(desired, observed, annotations.get(FAILURE) or "halted earlier")
        return Action(
            HALTED,
            f"the canary rollout is halted: {annotations.get(FAILURE) or 'no reason recorded'}. {halted_choices(ds)}",
            "Halted",
            phase=HALTED_PHASE,
        )
    if (ds.observed_generation or 0) < (ds.generation or 0):
        return Action(WAIT, f"the DaemonSet controller to observe generation {ds.generation} ({progress(observed)})", "ObservedGeneration", phase=phase)
    if observed.updated_hash is None:
        return Action(WAIT, f"the ControllerRevision of the current template ({progress(observed)})", "ControllerRevision", phase=phase)

    changed_nodes = _canary_nodes_changed(desired, observed)
    if changed_nodes:
        return Action(FAIL, changed_nodes, "CanaryNodesChanged", phase=phase)
    node_selective = bool(canary_nodes_of(ds))
    if phase == PAUSED:
        crash = _crash(desired, observed)  # the canary may have started crashing during the pause
        if crash:
            return _failure(desired, observed, crash)
        if desired.pause_after_canary:
            return Action(PAUSE, f"paused after the canary ({progress(observed)}); run with pause_after_canary=false to continue", "Paused", phase=PAUSED)
        return _widen(desired, observed, node_selective, "CanaryResumed", "resumed after the pause")
    if phase == FAST:
        return _fast(desired, observed, node_selective)
    return _canary(desired, observed, node_selective, now)


def _canary_nodes_changed(desired, observed):
    """Why ``desired.canary_nodes`` cannot apply to the rollout in progress, or None: the canary nodes are chosen when
    a rollout starts (recorded in NODES) and a resumed rollout reads them from there. A node given now that was left
    out then because it ran no pod of the DaemonSet, and runs none now, is no change."""
    if not desired.canary_nodes or desired.canary_node_selector:
        return None
    ds = observed.daemonset
    recorded, given = set(canary_nodes_of(ds)), set(desired.canary_nodes)
    hosts = {pod.node for pod in observed.pods if pod.node and not pod.terminating}
    if not (recorded - given) and not ((given - recorded) & hosts) and recorded:
        return None
    started = f"with canary nodes {', '.join(sorted(recorded))}" if recorded else "without canary nodes (maxUnavailable 1)"
    return (
        f"the canary rollout in progress on DaemonSet {ds.namespace}/{ds.name} started {started}; canary_nodes now names "
        f"{', '.join(sorted(given))}. Run with the canary_nodes it started with to continue it, or with undo=true to roll it back, then start again"
    )


def _settled(observed):
    ds = observed.daemonset
    if (ds.observed_generation or 0) < (ds.generation or 0):
        return Action(WAIT, f"the DaemonSet controller to observe generation {ds.generation} ({progress(observed)})", "ObservedGeneration")
    if rollout_complete(ds):
        return Action(DONE, f"DaemonSet {ds.namespace}/{ds.name} already runs the template on all {ds.desired or 0} nodes", "UpToDate")
    return Action(WAIT, f"the rollout of the template, which is already in place ({progress(observed)})", "RolloutInProgress")


def _start(desired, observed, phase):
    ds = observed.daemonset
    if desired.canary_node_selector:
        if desired.canary_nodes:
            return Action(FAIL, "give canary_nodes or canary_node_selector, not both", "CanaryNodesTwice")
        if observed.selected_nodes is None:
            return Action(FAIL, f"the nodes matching canary_node_selector {desired.canary_node_selector!r} were not listed", "NodesNotListed")
        nodes = selected_canary_nodes(desired, observed)
        if not nodes:
            matching = sorted(observed.selected_nodes)
            listed = ", ".join(matching[:10]) + (f" and {len(matching) - 10} more" if len(matching) > 10 else "")
            found = f"matches {len(matching)} node(s) ({listed}), none of which runs" if matching else "matches no node, so no node runs"
            return Action(FAIL, f"canary_node_selector {desired.canary_node_selector!r} {found} a pod of DaemonSet {ds.namespace}/{ds.name}", "NoCanaryPods")
        left_out = ()
    else:
        # The canary gate waits for a new pod on every recorded node, so only nodes that run a pod are recorded.
        given = set(desired.canary_nodes or ())
        hosts = {pod.node for pod in observed.pods if pod.node and not pod.terminating}
        nodes = tuple(sorted(given & hosts))
        left_out = tuple(sorted(given - hosts))
        if given and not nodes:
            return Action(FAIL, f"none of the canary nodes ({', '.join(left_out)}) runs a pod of DaemonSet {ds.name}", "NoCanaryPods")
    max_unavailable_value(desired.batch)  # refuse a bad batch before changing anything
    patch = plan_first_patch(ds, desired.template, nodes, observed.now)
    how = f"OnDelete, canary nodes {', '.join(nodes)}" if nodes else "maxUnavailable 1"
    if left_out:
        how += f"; left out, running no pod of it: {', '.join(left_out)}"
    replaced = f"; replaces the unfinished canary rollout in phase {phase}" if phase else ""
    message = f"start the canary rollout of DaemonSet {ds.namespace}/{ds.name} ({how}){replaced}"
    return Action(PATCH, message, STARTED_REASON, patch=patch, event=Event("Normal", STARTED_REASON, message), phase=CANARY)


def halted_choices(ds):
    """What a halted rollout leaves running, and the ways on from it (the module's options)."""
    nodes = canary_nodes_of(ds)
    where = f"Only the canary nodes ({', '.join(nodes)}) run the new revision" if nodes else "At most one node runs the new revision"
    return (
        f"{where}. Fix the template and run again (a new rollout replaces this one); or roll back to the previous "
        "revision with undo=true (without template or images: the previous revision runs on every node again, the update "
        "strategy is restored and the rollout's annotations removed; the run succeeds), or with on_failure=rollback and the "
        "same template (the same rollback, but the run fails in phase rolledback and this template stays refused until it "
        "changes)"
    )


def start_warnings(ds):
    """Warnings for a rollout that starts on DaemonSet ``ds`` (a ``DaemonSetState``): on a single node the canary is
    the whole DaemonSet, so nothing keeps the previous revision running while the canary is judged."""
    if (ds.desired or 0) == 1:
        return [
            f"DaemonSet {ds.namespace}/{ds.name} runs on a single node: the canary is the whole DaemonSet, so no node keeps "
            "running the previous revision while the canary is judged (a failure takes the DaemonSet's only pod down until "
            "on_failure=rollback or undo=true brings the previous revision back)"
        ]
    return []


def _failure(desired, observed, message):
    ds = observed.daemonset
    message = message[:MAX_FAILURE_CHARS]
    if desired.on_failure == ROLLBACK and observed.previous_template is not None:
        return _rollback(desired, observed, message)
    if desired.on_failure == ROLLBACK:
        message = f"{message}; no previous ControllerRevision to roll back to, halted instead"[:MAX_FAILURE_CHARS]
    annotations = dict(_phase_annotations(HALTED_PHASE, observed.now), **{FAILURE: message})
    strategy = None if canary_nodes_of(ds) else CANARY_STRATEGY
    patch = json_patch(ds, strategy=strategy, annotations=annotations)
    text = f"halt the canary rollout: {message}. {halted_choices(ds)}"
    return Action(PATCH, text, "CanaryFailed", patch=patch, event=Event("Warning", "CanaryFailed", message), phase=HALTED_PHASE)


def _rollback(desired, observed, message):
    ds = observed.daemonset
    if observed.previous_template is None:
        return Action(FAIL, f"cannot roll back DaemonSet {ds.name}: no previous ControllerRevision ({message})", "NoPreviousRevision", phase=HALTED_PHASE)
    annotations = dict(_phase_annotations(ROLLING_BACK, observed.now), **{FAILURE: message})
    patch = json_patch(ds, template=observed.previous_template, strategy=CANARY_STRATEGY, annotations=annotations, remove=(NODES,))
    text = f"roll back to the previous revision: {message}"
    return Action(PATCH, text, "CanaryFailed", patch=patch, event=Event("Warning", "CanaryRollingBack", text), phase=ROLLING_BACK)


def _rollback_stuck(desired, observed):
    """The rollback cannot end by itself: a pod of the previous revision crash-loops, or rollout_timeout has passed
    since it began (a FAIL: the DaemonSet stays as it is, in phase rollingback)."""
    crash = _crash(desired, observed)
    elapsed = _elapsed(observed.daemonset, observed.now)
    if crash:
        why = crash
    elif desired.rollout_timeout is not None and elapsed is not None and elapsed > desired.rollout_timeout:
        why = f"not complete within rollout_timeout {desired.rollout_timeout}s ({progress(observed)})"
    else:
        return None
    return Action(FAIL, f"the rollback to the previous revision does not come up: {why}", "RollbackStuck", phase=ROLLING_BACK)


def _rolling_back(desired, observed):
    ds = observed.daemonset
    if not rollout_complete(ds):
        stuck = _rollback_stuck(desired, observed)
        if stuck is not None:
            return stuck
        return Action(WAIT, f"the rollback to the previous revision ({progress(observed)})", "RollingBack", phase=ROLLING_BACK)
    failure = (ds.annotations or {}).get(FAILURE) or "no reason recorded"
    annotations = _phase_annotations(ROLLED_BACK, None)
    patch = json_patch(ds, strategy=original_strategy(ds), annotations=annotations, remove=(ORIGINAL_STRATEGY, STARTED, PHASE_SINCE, NODES))
    text = f"rolled back to the previous revision and restored the update strategy: {failure}"
    return Action(PATCH, text, "CanaryRolledBack", patch=patch, event=Event("Warning", "CanaryRolledBack", text), phase=ROLLED_BACK)


def _undo(desired, observed, phase):
    """Undo on request: roll a rollout in progress (or halted) back to the previous revision, then restore the
    strategy and remove every annotation of the rollout, so the DaemonSet is as before it started."""
    ds = observed.daemonset
    if phase is None:
        return Action(DONE, f"no canary rollout of DaemonSet {ds.namespace}/{ds.name} is in progress: nothing to undo", "NothingToUndo")
    if phase == ROLLED_BACK:
        text = "remove the record of the rolled-back canary rollout (the previous revision already runs)"
        patch = json_patch(ds, remove=ANNOTATIONS)
        return Action(PATCH, text, "CanaryUndone", patch=patch, event=Event("Normal", "CanaryUndone", text), phase=None)
    if phase == ROLLING_BACK:
        if not rollout_complete(ds):
            return _rollback_stuck(desired, observed) or Action(
                WAIT, f"the rollback to the previous revision ({progress(observed)})", "RollingBack", phase=ROLLING_BACK
            )
        text = f"rolled back to the previous revision on request and restored the update strategy ({progress(observed)})"
        patch = json_patch(ds, strategy=original_strategy(ds), remove=ANNOTATIONS)
        return Action(PATCH, text, "CanaryUndone", patch=patch, event=Event("Normal", "CanaryUndone", text), phase=None)
    if (ds.observed_generation or 0) < (ds.generation or 0) or observed.updated_hash is None:
        # Right after a step: the previous revision is only known once the controller has seen the current template.
        return Action(WAIT, f"the DaemonSet controller to observe generation {ds.generation} ({progress(observed)})", "ObservedGeneration", phase=phase)
    if observed.previous_template is None:
        return Action(FAIL, f"cannot undo the canary rollout of DaemonSet {ds.name}: no previous ControllerRevision", "NoPreviousRevision", phase=phase)
    failure = (ds.annotations or {}).get(FAILURE)
    reason = f"undo requested in phase {phase}" + (f" (it had failed: {failure})" if failure else "")
    annotations = dict(_phase_annotations(ROLLING_BACK, observed.now), **{FAILURE: reason[:MAX_FAILURE_CHARS]})
    patch = json_patch(ds, template=observed.previous_template, strategy=CANARY_STRATEGY, annotations=annotations, remove=(NODES,))
    text = f"roll back to the previous revision: {reason}"
    return Action(PATCH, text, "CanaryUndo", patch=patch, event=Event("Normal", "CanaryUndo", text), phase=ROLLING_BACK)


def _new_pods(observed):
    return [pod for pod in observed.pods if pod.hash == observed.updated_hash and not pod.terminating]


def _crash(desired, observed):
    for pod in _new_pods(observed):
        reason = crashing(pod, desired.crash_restarts)
        if reason:
            return f"new revision {observed.updated_hash}: {describe_pod(pod)} is {reason}"
    return None


def _canary(desired, observed, node_selective, now):
    ds = observed.daemonset
    crash = _crash(desired, observed)
    if crash:
        return _failure(desired, observed, crash)
    new_ready = [pod for pod in _new_pods(observed) if available(pod, ds, now, desired.canary_ready_seconds)]
    waiting_for = ()
    if node_selective:
        nodes = canary_nodes_of(ds)
        on_nodes = [pod for pod in observed.pods if pod.node in nodes]
        old = sorted(pod.name for pod in on_nodes if pod.hash != observed.updated_hash and not pod.terminating)
        if old:
            message = f"delete the old pods on the canary nodes: {', '.join(old)}"
            return Action(DELETE_PODS, message, "CanaryPods", pods=old, phase=CANARY)
        # Every canary node must run an available pod of the new revision. Between the deletion of an old pod and
        # the creation of its replacement a node runs no pod at all: that is waited for (canary_timeout bounds it,
        # also for a canary node that left the cluster meanwhile), never taken as passed or failed.
        good = {pod.node for pod in new_ready}
        waiting_for = tuple(node for node in nodes if node not in good)
        passed = not waiting_for
    else:
        passed = bool(new_ready) or not ds.desired
    if passed:
        if desired.pause_after_canary:
            strategy = None if node_selective else ON_DELETE_STRATEGY
            patch = json_patch(ds, strategy=strategy, annotations=_phase_annotations(PAUSED, now))
            message = "the canary is ready; pause (updateStrategy OnDelete until resumed)"
            return Action(PATCH, message, "CanaryPaused", patch=patch, event=Event("Normal", "CanaryPaused", message), phase=PAUSED)
        return _widen(desired, observed, node_selective, "CanaryPassed", "the canary is ready")
    elapsed = _elapsed(ds, now)
    if desired.canary_timeout is not None and elapsed is not None and elapsed > desired.canary_timeout:
        pods = "; ".join(describe_pod(pod) for pod in _new_pods(observed)) or "no pod of the new revision exists"
        if waiting_for:
            return _failure(
                desired,
                observed,
                f"canary nodes without an available pod of revision {observed.updated_hash} after canary_timeout {desired.canary_timeout}s: "
                f"{', '.join(waiting_for)}; {pods}",
            )
        return _failure(desired, observed, f"no pod of revision {observed.updated_hash} became ready within canary_timeout {desired.canary_timeout}s: {pods}")
    if waiting_for:
        return Action(WAIT, f"available pods of the new revision on the canary nodes {', '.join(waiting_for)} ({progress(observed)})", "Canary", phase=CANARY)
    return Action(WAIT, f"a pod of the new revision to become ready ({progress(observed)})", "Canary", phase=CANARY)


def _widen(desired, observed, node_selective, reason, why):
    ds = observed.daemonset
    patch = json_patch(ds, strategy=_fast_strategy(desired, node_selective), annotations=_phase_annotations(FAST, observed.now))
    message = f"{why}; continue in batches of {max_unavailable_value(desired.batch)}"
    return Action(PATCH, message, reason, patch=patch, event=Event("Normal", reason, message), phase=FAST)


def _fast(desired, observed, node_selective):
    ds = observed.daemonset
    if rollout_complete(ds):
        patch = json_patch(ds, strategy=original_strategy(ds), remove=ANNOTATIONS)
        message = f"all {ds.desired or 0} nodes run revision {observed.updated_hash}; restore the original update strategy"
        return Action(PATCH, message, "CanaryCompleted", patch=patch, event=Event("Normal", "CanaryCompleted", message), phase=None)
    crash = _crash(desired, observed)
    if crash:
        return _failure(desired, observed, crash)
    if desired.pause_after_canary:
        # asked for after the canary had passed: the rollout stops where it is, as after the canary
        strategy = None if node_selective else ON_DELETE_STRATEGY
        patch = json_patch(ds, strategy=strategy, annotations=_phase_annotations(PAUSED, observed.now))
        message = f"pause_after_canary: the canary passed before; pause where the rollout stands (OnDelete until resumed; {progress(observed)})"
        return Action(PATCH, message, "CanaryPaused", patch=patch, event=Event("Normal", "CanaryPaused", message), phase=PAUSED)
    elapsed = _elapsed(ds, observed.now)
    if desired.rollout_timeout is not None and elapsed is not None and elapsed > desired.rollout_timeout:
        return _failure(desired, observed, f"the rollout did not finish within rollout_timeout {desired.rollout_timeout}s: {progress(observed)}")
    wanted = _fast_strategy(desired, node_selective)
    current = ds.strategy or {}
    was = (current.get("rollingUpdate") or {}).get("maxUnavailable")
    if wanted is not None and (current.get("type") != ROLLING_UPDATE or str(was) != str(wanted["rollingUpdate"]["maxUnavailable"])):
        # batch changed since the fast phase began (or the strategy was edited): the controller follows maxUnavailable
        patch = json_patch(ds, strategy=wanted)
        message = f"continue in batches of {max_unavailable_value(desired.batch)} (maxUnavailable was {was})"
        return Action(PATCH, message, "BatchChanged", patch=patch, event=Event("Normal", "BatchChanged", message), phase=FAST)
    if node_selective:
        pods = ondelete_batch(observed, batch_size(desired.batch, ds.desired))
        if pods:
            return Action(DELETE_PODS, f"delete the next batch of old pods: {', '.join(pods)}", "Batch", pods=pods, phase=FAST)
    return Action(WAIT, f"the rollout to reach every node ({progress(observed)})", "Rollout", phase=FAST)


def watched_revision(desired, observed, action):
    """The revision whose pods alone the decisions after ``action`` read, or None (every pod of the DaemonSet).

    Once the canary has passed, a rollout without canary nodes is the DaemonSet controller's rolling update: the
    decisions read the DaemonSet (complete, strategy, rollout_timeout) and the new revision's pods (crashing), never
    the old pods, whose deletion makes about half the pod events of a rollout. So after an action into (or within)
    phase fast, a caller that watches may watch the new revision's pods only, as long as ``narrowed_view_holds``."""
    if desired.undo or desired.canary_nodes or desired.canary_node_selector or not desired.wait:
        return None
    ds = observed.daemonset
    if action.phase != FAST or action.kind not in (WAIT, PATCH) or canary_nodes_of(ds) or observed.updated_hash is None:
        return None
    return observed.updated_hash if contains(ds.template, desired.template) else None


def narrowed_view_holds(desired, ds):
    """True while ``next_step`` on the DaemonSet ``ds`` (a ``DaemonSetState``) reads no pod outside the revision
    ``watched_revision`` named: phase fast, or no phase (the rollout is over: ``_settled`` reads the DaemonSet alone),
    with the desired template in place. A halt, a rollback or someone else's template brings every pod back into view."""
    phase = (ds.annotations or {}).get(PHASE)
    return phase in (FAST, None) and not canary_nodes_of(ds) and contains(ds.template, desired.template)


def ondelete_batch(observed, limit):
    """Old pods to delete now under an OnDelete strategy, as the DaemonSet controller's rolling update would:
    old pods that are unavailable at once, available ones while fewer than ``limit`` nodes are unavailable."""
    ds = observed.daemonset
    by_node = {}
    for pod in observed.pods:
        if pod.node:
            by_node.setdefault(pod.node, []).append(pod)
    unavailable = max(0, (ds.desired or 0) - len(by_node))
    ready_old, unready_old = [], []  # ready_old: one list of pods per node
    for node in sorted(by_node):
        pods = by_node[node]
        new = [pod for pod in pods if pod.hash == observed.updated_hash and not pod.terminating]
        old = [pod for pod in pods if pod.hash != observed.updated_hash and not pod.terminating]
        if new:
            if not any(available(pod, ds, observed.now) for pod in new):
                unavailable += 1
            continue
        if not old:
            unavailable += 1  # only terminating pods: being replaced
            continue
        if any(available(pod, ds, observed.now) for pod in old):
            ready_old.append(old)
        else:
            unavailable += 1
            unready_old.extend(old)
    budget = max(0, limit - unavailable)
    return sorted(pod.name for pod in unready_old) + [pod.name for group in ready_old[:budget] for pod in group]


def summary(observed):
    """Partial state for results and timeouts."""
    ds = observed.daemonset
    annotations = ds.annotations or {}
    return {
        "phase": annotations.get(PHASE),
        "target_hash": annotations.get(TARGET),
        "revision_hash": observed.updated_hash,
        "desired_number_scheduled": ds.desired or 0,
        "updated_number_scheduled": ds.updated or 0,
        "number_available": ds.available or 0,
        "canary_nodes": list(canary_nodes_of(ds)),
        "failure": annotations.get(FAILURE),
    }
