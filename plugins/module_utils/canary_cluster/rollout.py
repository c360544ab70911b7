# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canary rollout of a DaemonSet on a cluster: the I/O around ``canary.rollout.next_step``.

``run(client, params, check_mode)`` reads the DaemonSet, its pods and its ControllerRevisions, asks the pure core
what to do, carries the action out (a guarded JSON patch or pod deletions), records a core/v1 Event on the
DaemonSet and asks again, driven by a watch of the three kinds (``k8s.observe``). A start that does not depend on
the pods (no canary nodes) is carried out from the first GET, while the watches are still listing. A failed guard
(the DaemonSet changed since it was read) is not an error: the next observation decides again. With ``wait: false``
one action is carried out per run; check mode sends the first patch as a server-side dry run and predicts
``changed``.

With ``canary_node_selector`` the nodes are listed (one LIST with the selector) only when a rollout starts; the
canary nodes then live in the DaemonSet's annotations. With ``operator_condition`` the OperatorCondition's
``Upgradeable`` follows the phase (``condition.UpgradeableSync``): set to ``False`` before the first change of a
rollout and kept so while it runs or is halted, turned ``True`` once it is done or rolled back.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import functools
import time
from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import observe as canary_observe
from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as canary
from ansible_collections.kubeforge.operators.plugins.module_utils.canary.condition import BLOCKING
from ansible_collections.kubeforge.operators.plugins.module_utils.canary.selector import SelectorError, parse_label_selector
from ansible_collections.kubeforge.operators.plugins.module_utils.canary_cluster.condition import UpgradeableSync, operator_namespace
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError, api_error_message, api_error_status
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.clock import Deadline, monotonic
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import GUARD_FAILED, Cluster, GuardFailed, retry_guarded
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError, ResourceTimeoutError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.events import event_body
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.objects import delete_object, get_object, patch_object, to_dict
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import TRANSIENT_SECONDS, Source, observe, transient_error

# Time-based decisions (canary_timeout, rollout_timeout, minReadySeconds) are re-checked this often without events.
RECHECK_SECONDS = 2
# A decision reads every pod of the DaemonSet (milliseconds for a thousand): while events stream in, the next one
# waits THROTTLE times as long as the last took (k8s.observe), so deciding stays a small share of the run.
THROTTLE = 20


class CanaryError(KubeforgeError):
    """The canary rollout failed, halted or cannot start; ``result`` holds the state (phase, counts, failure)."""


def desired_template(live_template, params):
    """The new pod template: ``template`` as given, or ``images`` (container name -> image) applied to the live one."""
    if params.get("template") is not None:
        return params["template"]
    images = dict(params.get("images") or {})
    template = copy.deepcopy(live_template or {})
    spec = template.get("spec") or {}
    found = set()
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if container.get("name") in images:
                container["image"] = images[container["name"]]
                found.add(container["name"])
    missing = sorted(set(images) - found)
    if missing:
        raise CanaryError(f"the pod template has no container named {', '.join(missing)}")
    return template


def _node_selector(params):
    """``canary_node_selector`` checked (before any request) and in canonical form, or None."""
    if params.get("canary_node_selector") is None:
        return None
    if params.get("canary_nodes"):
        raise CanaryError("canary_nodes and canary_node_selector are mutually exclusive")
    try:
        return parse_label_selector(params["canary_node_selector"])
    except SelectorError as exc:
        raise CanaryError(f"canary_node_selector: {exc}") from exc


def _selector(ds):
    labels = (((ds.get("spec") or {}).get("selector") or {}).get("matchLabels")) or {}
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items())) or None


class Rollout:
    """One run of the module on one DaemonSet."""

    def __init__(self, client, params, check_mode):
        self.client = client
        self.cluster = Cluster(client)
        self.params = params
        self.check_mode = check_mode
        self.name, self.namespace = params["name"], params["namespace"]
        self.ds_resource = self.cluster.resource("DaemonSet", "apps/v1")
        self.pod_resource = self.cluster.resource("Pod", "v1")
        self.events = []
        self.warnings = []
        self.acted = False
        self.desired = None
        self.last_action = None
        self.pod_states = {}  # canary_observe.pod_states' cache: each pod is read once per resourceVersion
        self.unsent = []  # (reason, Event body) not created yet: the API server was unreachable
        self.unreachable_since = None
        self.selected_nodes = None
        self.node_selector = _node_selector(params)
        self.condition = None
        if params.get("operator_condition"):
            self.condition = UpgradeableSync(self.cluster, params["operator_condition"], operator_namespace(params), self.namespace, self.name)

    def _desired(self, ds):
        params = self.params
        try:
            batch = canary.max_unavailable_value(params["batch"])
        except ValueError as exc:
            raise CanaryError(str(exc)) from exc
        return canary.Desired(
            template=desired_template((ds.get("spec") or {}).get("template"), params),
            batch=batch,
            canary_timeout=params["canary_timeout"],
            rollout_timeout=params["rollout_timeout"],
            crash_restarts=params["crash_restarts"],
            on_failure=params["on_failure"],
            wait=params["wait"],
            canary_nodes=tuple(params.get("canary_nodes") or ()),
            pause_after_canary=params["pause_after_canary"],
            canary_node_selector=self.node_selector,
            canary_ready_seconds=params["canary_ready_seconds"],
            undo=bool(params.get("undo")),
        )

    def read(self):
        """One observation by plain GET/LIST: ``(ds, pods, revisions)``."""
        ds = get_object(self.client, self.ds_resource, self.name, self.namespace)
        if ds is None:
            raise CanaryError(f"DaemonSet {self.namespace}/{self.name} not found")
        selector = _selector(ds)
        pods = self._list("Pod", "v1", selector)
        revisions = self._list("ControllerRevision", "apps/v1", selector)
        return ds, pods, revisions

    def _list(self, kind, api_version, selector, namespaced=True):
        resource = self.cluster.resource(kind, api_version)
        params = {"label_selector": selector} if selector else {}
        if namespaced:
            params["namespace"] = self.namespace
        where = f" in {self.namespace}" if namespaced else ""
        try:
            return list((to_dict(self.client.get(resource, **params)) or {}).get("items") or [])
        except Exception as exc:
            raise K8sError(f"Failed to list {kind}{where}: {api_error_message(exc)}", status=api_error_status(exc)) from exc

    def select_nodes(self):
        """Names of the nodes matching ``canary_node_selector`` (listed once per run, when the rollout starts)."""
        if self.selected_nodes is None:
            nodes = self._list("Node", "v1", self.desired.canary_node_selector, namespaced=False)
            self.selected_nodes = tuple(sorted(str((node.get("metadata") or {}).get("name")) for node in nodes))
        return self.selected_nodes

    def decide(self, ds, pods, revisions):
        if self.desired is None:
            self.desired = self._desired(ds)
        observed = canary_observe.observe(ds, pods, revisions, now=time.time(), cache=self.pod_states)
        if canary.needs_selected_nodes(self.desired, observed):
            observed = observed._replace(selected_nodes=self.select_nodes())
        action = canary.next_step(self.desired, observed)
        if action.kind not in (canary.PATCH, canary.DELETE_PODS):
            annotations = observed.daemonset.annotations or {}
            self.sync_condition(annotations.get(canary.PHASE), annotations.get(canary.FAILURE))
        return observed, action

    def start_early(self, ds):
        """Start the rollout from ``ds`` as first read, before the watches have listed its pods, when the start does
        not depend on them (``canary.start_from_daemonset``): at a thousand nodes the listing takes most of a second.
        A failed guard, or an API server that is restarting, leaves the start to the watch loop's first decision."""
        if self.desired is None:
            self.desired = self._desired(ds)
        action = canary.start_from_daemonset(self.desired, canary_observe.daemonset_state(ds), now=time.time())
        if action is None:
            return
        try:
            self.carry_out(ds, action)
        except K8sError as exc:
            if not self.tolerate(exc):
                raise

    def sync_condition(self, phase, failure=None):
        """The OperatorCondition's ``Upgradeable`` for a DaemonSet in ``phase`` (when ``operator_condition`` is set)."""
        if self.condition is not None:
            self.condition.sync(phase, failure)

    def carry_out(self, ds, action):
        """Carry ``action`` out; True when done, False when the guard failed (observe again).

        The OperatorCondition blocks upgrades before a step into (or within) a rollout, and releases them after
        the step that ends one."""
        if action.kind not in (canary.PATCH, canary.DELETE_PODS):
            return True
        state = canary_observe.daemonset_state(ds)
        if action.reason == canary.STARTED_REASON:
            self.warnings.extend(w for w in canary.start_warnings(state) if w not in self.warnings)
        after = canary.patched_annotations(state, action.patch or [])
        failure = after.get(canary.FAILURE)
        if action.phase in BLOCKING:
            self.sync_condition(action.phase, failure)
        if action.kind == canary.PATCH:
            try:
                patch_object(self.client, self.ds_resource, self.name, action.patch, self.namespace, patch_type="json")
            except K8sError as exc:
                if exc.status in GUARD_FAILED:
                    return False
                raise
        else:
            for pod in action.pods:
                delete_object(self.client, self.pod_resource, pod, self.namespace)
        if action.phase not in BLOCKING:
            self.sync_condition(action.phase, failure)
        self.acted = True
        self.last_action = action
        if action.event is not None and not self.check_mode:
            self.record(ds, action.event)
        return True

    def record(self, ds, event):
        uid = (ds.get("metadata") or {}).get("uid")
        involved = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": self.name, "namespace": self.namespace, "uid": uid}}
        body = event_body(involved, event.type, event.reason, event.message, time.time())
        self.events.append({"type": event.type, "reason": event.reason, "message": event.message})
        self.unsent.append((event.reason, body))
        self.send_events()

    def send_events(self, last=False):
        """Create the Events not created yet, in order. While the API server is unreachable (restarting) they wait
        for the next call (the next step, at the latest the end of the run: ``last``); other errors are warnings."""
        pending, self.unsent = self.unsent, []
        for index, (reason, body) in enumerate(pending):
            try:
                self.cluster.create(body, self.namespace)
            except K8sError as exc:
                if transient_error(exc) and not last:
                    self.unsent = pending[index:]
                    return
                self.warnings.append(f"could not record the event {reason}: {exc}")

    def tolerate(self, exc):
        """True when ``exc``, an error of a request made while deciding or acting in the watch loop, comes from an API
        server that is restarting or overloaded (``k8s.observe.transient_error``) and such errors have not lasted
        ``TRANSIENT_SECONDS`` in a row: the next change decides again, from what the watches then show. That is safe:
        patches are guarded by the generation (and the annotations), and deleting a pod twice is harmless."""
        if not transient_error(exc):
            return False
        now = monotonic()
        if self.unreachable_since is None:
            self.unreachable_since = now
        return now - self.unreachable_since < TRANSIENT_SECONDS

    def fail(self, observed, action):
        result = self.result(observed, action)
        raise CanaryError(action.message, result=result)

    def result(self, observed, action, phase=None):
        ds = observed.daemonset
        summary = canary.summary(observed)
        annotations = {k: v for k, v in (ds.annotations or {}).items() if k in canary.ANNOTATIONS}
        if phase is None:
            phase = "done" if action.kind == canary.DONE else (ds.annotations or {}).get(canary.PHASE) or action.phase or "done"
        result = {
            "changed": self.acted,
            "phase": phase,
            "daemonset": {
                "name": ds.name,
                "namespace": ds.namespace,
                "generation": ds.generation,
                "strategy": ds.strategy,
                "annotations": annotations,
            },
            "desired_number_scheduled": summary["desired_number_scheduled"],
            "updated_number_scheduled": summary["updated_number_scheduled"],
            "number_available": summary["number_available"],
            "revision_hash": summary["revision_hash"],
            "events": self.events,
            "failure": summary["failure"],
            "message": self.last_action.message if action.kind == canary.DONE and self.last_action is not None else action.message,
            "canary_nodes": summary["canary_nodes"],
        }
        if self.condition is not None:
            result["operator_condition"] = self.condition.result()
        return result

    def changed(self):
        """Whether the run changed (or, in check mode, would change) the DaemonSet, its pods or the OperatorCondition."""
        return self.acted or (self.condition is not None and self.condition.changed)


def _diff_view(ds):
    spec = (ds or {}).get("spec") or {}
    return {"template": spec.get("template"), "updateStrategy": spec.get("updateStrategy")}


def _patched_view(ds, patch):
    """What the DaemonSet's template and strategy would be after ``patch`` (check mode's diff), with the defaults the
    API server fills into a RollingUpdate strategy (maxUnavailable 1, maxSurge 0), as the real run stores them."""
    view = copy.deepcopy(_diff_view(ds))
    for op in patch or []:
        if op["path"] == "/spec/template":
            view["template"] = op["value"]
        elif op["path"] == "/spec/updateStrategy":
            strategy = copy.deepcopy(op["value"])
            if strategy.get("type") == canary.ROLLING_UPDATE:
                rolling = strategy.setdefault("rollingUpdate", {})
                rolling.setdefault("maxUnavailable", 1)
                rolling.setdefault("maxSurge", 0)
            view["updateStrategy"] = strategy
    return view


def _one_step(rollout):
    """Check mode and ``wait: false``: observe once, carry out one action (retrying a failed guard)."""

    def attempt():
        ds, pods, revisions = rollout.read()
        observed, action = rollout.decide(ds, pods, revisions)
        if action.kind in (canary.FAIL, canary.HALTED):
            rollout.fail(observed, action)
        if not rollout.carry_out(ds, action):
            raise GuardFailed()
        return ds, observed, action

    # one step per run (an operator reconcile): a refused request fails this run and the next one tries again
    return retry_guarded(attempt, f"DaemonSet {rollout.namespace}/{rollout.name}", error=CanaryError, ride_out_restarts=False)


# The view a watch starts from: every pod of the DaemonSet (None), or once the canary has passed the pods of one
# revision (``canary.watched_revision``) with the ControllerRevisions as last listed.
Narrowed = namedtuple("Narrowed", ["revision", "revisions"])
# on_change's answer when a narrowed view no longer holds (a halt, a rollback): watch every pod again.
WIDEN = "widen"


def _sources(rollout, selector, narrowed):
    """What to watch: the DaemonSet, its pods and its ControllerRevisions; narrowed, the DaemonSet and the pods of
    one revision (the ControllerRevisions are those of ``narrowed``)."""
    pods = selector
    if narrowed is not None:
        pods = ",".join(part for part in (selector, f"{canary.REVISION_HASH_LABEL}={narrowed.revision}") if part)
    sources = [
        Source("daemonset", "apps/v1", "DaemonSet", rollout.namespace, rollout.name),
        Source("pods", "v1", "Pod", rollout.namespace, label_selector=pods, reduce=canary_observe.pod_fields),
    ]
    if narrowed is None:
        sources.append(Source("revisions", "apps/v1", "ControllerRevision", rollout.namespace, label_selector=selector))
    return sources


def _watch(rollout, timeout, ds):
    """``wait: true``: watch the DaemonSet (``ds`` as read at the start: its selector names the pods and
    ControllerRevisions), its pods and ControllerRevisions and act until a terminal action. Once the canary has
    passed, the watch of every pod is replaced by one of the new revision's pods (``canary.watched_revision``): the
    controller's deletions of the old pods are no longer streamed to the module and decided on."""
    selector = _selector(ds)
    deadline = Deadline(timeout)
    resources = {"daemonset": rollout.ds_resource, "pods": rollout.pod_resource}
    state = {}
    rollout.start_early(ds)

    def on_change(snapshot, narrowed):
        ds = (snapshot.get("daemonset") or {}).get(rollout.name)
        if ds is None:
            raise CanaryError(f"DaemonSet {rollout.namespace}/{rollout.name} was deleted during the rollout")
        if narrowed is not None and not canary.narrowed_view_holds(rollout.desired, canary_observe.daemonset_state(ds)):
            return WIDEN
        revisions = list((snapshot.get("revisions") or {}).values()) if narrowed is None else narrowed.revisions
        try:
            observed, action = rollout.decide(ds, list((snapshot.get("pods") or {}).values()), revisions)
            state["observed"], state["action"] = observed, action
            if action.kind in (canary.FAIL, canary.HALTED):
                rollout.fail(observed, action)
            if action.kind in (canary.DONE, canary.PAUSE):
                return ds, observed, action
            carried = rollout.carry_out(ds, action)  # a failed guard: the next event brings the new state
        except K8sError as exc:
            if not rollout.tolerate(exc):
                raise
            return None  # the API server is restarting: decide again on the next change (or tick)
        rollout.unreachable_since = None
        if rollout.unsent:
            rollout.send_events()
        revision = canary.watched_revision(rollout.desired, observed, action) if narrowed is None and carried else None
        return Narrowed(revision, revisions) if revision else None

    def on_timeout(snapshot):
        if "observed" not in state:
            return {}
        return rollout.result(state["observed"], state["action"])

    narrowed = None
    try:
        while True:
            outcome = observe(
                rollout.client,
                _sources(rollout, selector, narrowed),
                functools.partial(on_change, narrowed=narrowed),
                deadline.remaining(),
                on_timeout=on_timeout,
                tick=RECHECK_SECONDS,
                throttle=THROTTLE,
                resources=resources,
            )
            if isinstance(outcome, Narrowed):
                narrowed = outcome
            elif outcome is WIDEN:
                narrowed = None
            else:
                return outcome
    except ResourceTimeoutError as exc:
        action = state.get("action")
        exc.msg = f"Timed out after {timeout}s in the canary rollout of DaemonSet {rollout.namespace}/{rollout.name}" + (
            f", waiting for {action.message}" if action is not None and action.kind == canary.WAIT else ""
        ) + (
            "; the rollout is left as it stands (the DaemonSet controller goes on at its current maxUnavailable): run the module "
            "again to follow it to the end, or with undo=true to roll it back"
        )
        exc.args = (exc.msg,)
        exc.duration = exc.result["duration"] = deadline.elapsed()  # the whole wait, not its last view's
        raise


def check_request(params):
    """``undo`` alone, or ``template`` or ``images`` (checked here, not by AnsibleModule: roles pass ``undo: false``)."""
    given = [name for name in ("template", "images") if params.get(name)]
    if params.get("undo") and given:
        raise CanaryError(f"undo rolls back to the previous revision: it takes no {' or '.join(given)}")
    if not params.get("undo") and not given:
        raise CanaryError("give the new pod template (template) or new images (images), or undo=true")


def run(client, params, check_mode):
    """Carry out the canary rollout ``params`` (the module's options) describe; returns the module result."""
    check_request(params)
    timer = Deadline()
    rollout = Rollout(client, params, check_mode)
    before = get_object(client, rollout.ds_resource, rollout.name, rollout.namespace)
    if before is None:
        raise CanaryError(f"DaemonSet {rollout.namespace}/{rollout.name} not found")
    # A run that finishes a rollout an earlier run left in progress changed the DaemonSet; a rolled-back one is over.
    resumed = ((before.get("metadata") or {}).get("annotations") or {}).get(canary.PHASE) not in (None, canary.ROLLED_BACK)

    canary_timeout = params.get("canary_timeout") or 0
    if params["wait"] and not check_mode and not params.get("undo") and (params.get("wait_timeout") or 0) < canary_timeout:
        rollout.warnings.append(
            f"wait_timeout ({params['wait_timeout']}) is shorter than canary_timeout ({canary_timeout}): the wait may end before the "
            "canary's own timeout can halt or roll back a canary that never becomes ready"
        )
    try:
        if check_mode or not params["wait"]:
            ds, observed, action = _one_step(rollout)
        else:
            ds, observed, action = _watch(rollout, params["wait_timeout"], before)
    except KubeforgeError as exc:
        rollout.send_events(last=True)
        exc.result.setdefault("duration", timer.elapsed())
        if rollout.warnings:  # a failed run warns too (a single-node DaemonSet's canary halted it)
            exc.result.setdefault("warnings", list(rollout.warnings))
        raise
    rollout.send_events(last=True)

    if check_mode:
        done = action.kind == canary.DONE or (action.kind == canary.PATCH and action.phase is None)
        result = rollout.result(observed, action, phase=action.phase or ("done" if done else None))
        result["changed"] = action.kind not in (canary.DONE, canary.PAUSE) or rollout.changed()
        if action.patch:
            predicted = observed.daemonset._replace(annotations=canary.patched_annotations(observed.daemonset, action.patch))
            result["canary_nodes"] = list(canary.canary_nodes_of(predicted))
        after_view = _patched_view(ds, action.patch)
    else:
        if not params["wait"] and action.kind in (canary.PATCH, canary.DELETE_PODS):
            ds, pods, revisions = rollout.read()
            observed = canary_observe.observe(ds, pods, revisions, now=time.time())
            if action.phase in (canary.HALTED_PHASE, canary.ROLLED_BACK):
                rollout.fail(observed, action)
        result = rollout.result(observed, action)
        result["changed"] = rollout.changed() or (resumed and action.kind == canary.DONE)
        after_view = _diff_view(get_object(client, rollout.ds_resource, rollout.name, rollout.namespace) or ds)
    result["duration"] = timer.elapsed()
    if rollout.warnings:
        result["warnings"] = rollout.warnings
    if result["changed"]:
        result["diff"] = {"before": _diff_view(before), "after": after_view}
    return result


def execute(module):
    """The module's entry point (``KubeforgeModule.run``)."""
    return run(module.client, module.params, module.check_mode)
