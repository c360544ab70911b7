# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health gate after a cluster's change: installed at the target, workloads available, and staying so.

``verdict(gate, state, now)`` reads one snapshot - the owner (the CSV an OLM v0 Subscription installed, an OLM v1
ClusterExtension, or the DaemonSet), the operator's Deployments, their pods and the objects of the user's extra
conditions - and says ``passed``, ``failed`` (with why) or ``waiting`` (with what it waits for). ``state`` is what the
caller keeps between snapshots: each pod's restart count when it was first seen (a restart after that, or a crash
loop, fails the gate at once) and since when everything has been ready (the soak runs from there, and starts again
when something stops being ready). Pure: the caller watches and calls again.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.kubeforge.operators.plugins.module_utils import podstatus
from ansible_collections.kubeforge.operators.plugins.module_utils.fleet import record as rec
from ansible_collections.kubeforge.operators.plugins.module_utils.olm import status as olm

PASSED = "passed"
FAILED = "failed"
WAITING = "waiting"

# kind: the record's kind; target: the version (or {container: image}) the owner must show; deployments: the names of
# the Deployments to check (None: every one given); soak: seconds everything must stay ready; conditions: the user's
# extra checks [{key, type, status}] over the objects under ``state.extra[key]``.
Gate = namedtuple("Gate", ["kind", "target", "deployments", "soak", "conditions"])
Gate.__new__.__defaults__ = (None, 0, ())
# owner: CSV, ClusterExtension or DaemonSet (dict or None); deployments, pods: {name: object}; extra: {key: object}
Snapshot = namedtuple("Snapshot", ["owner", "deployments", "pods", "extra"])
Snapshot.__new__.__defaults__ = ({}, {}, {})


class GateState:
    """What the gate remembers between snapshots: restarts per pod uid at first sight, and since when all was ready."""

    def __init__(self):
        self.restarts = {}
        self.ready_since = None


def _labels(obj):
    return olm.metadata(obj).get("labels") or {}


def selector_matches(selector, labels):
    """A LabelSelector (``matchLabels``, ``matchExpressions``) against a label map; an empty selector matches nothing
    (a workload without one selects no pods here)."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or ():
        key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or ()
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def owner_state(kind, owner, target):
    """``(ready, failed, message)`` of the owner for the target."""
    wanted = rec.target_text(kind, target)
    if owner is None:
        return False, False, "the object to check is gone"
    if kind == rec.KIND_OLM_V0:
        phase = olm.status(owner).get("phase")
        version = olm.csv_version(owner)
        if version != wanted:
            return False, False, f"CSV {olm.name_of(owner)} is version {version}, not {wanted} yet"
        if phase == "Failed":
            cond = olm.status(owner)
            return False, True, f"CSV {olm.name_of(owner)} is Failed ({cond.get('reason')}): {cond.get('message')}"
        return phase == "Succeeded", False, f"CSV {olm.name_of(owner)} is {phase or 'not reported yet'}"
    if kind == rec.KIND_OLM_V1:
        bundle = (olm.status(owner).get("install") or {}).get("bundle") or {}
        installed = olm.condition(owner, "Installed") or {}
        if bundle.get("version") != wanted:
            return False, False, f"ClusterExtension {olm.name_of(owner)} has {bundle.get('version') or 'nothing'} installed, not {wanted} yet"
        ready = installed.get("status") == "True"
        return ready, False, f"ClusterExtension {olm.name_of(owner)} Installed={installed.get('status')} ({installed.get('reason')})"
    return _daemonset_state(owner, target)


def _daemonset_state(ds, target):
    pod_spec = ((olm.spec(ds).get("template") or {}).get("spec")) or {}
    images = {c.get("name"): c.get("image") for c in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or [])}
    differ = sorted(name for name, image in (target or {}).items() if images.get(name) != image)
    if differ:
        return False, False, f"DaemonSet {olm.name_of(ds)} does not run the new image of {', '.join(differ)}"
    st = olm.status(ds)
    desired = st.get("desiredNumberScheduled") or 0
    current = (st.get("observedGeneration") or 0) >= (olm.metadata(ds).get("generation") or 0)
    ready = current and st.get("updatedNumberScheduled", 0) == desired and st.get("numberAvailable", 0) == desired
    return ready, False, f"DaemonSet {olm.name_of(ds)}: {st.get('updatedNumberScheduled', 0)} updated, {st.get('numberAvailable', 0)} available of {desired}"


def deployment_state(deployment):
    """``(available, message)`` of a Deployment: rolled out (``kubectl rollout status``) and available."""
    spec, st = olm.spec(deployment), olm.status(deployment)
    wanted = spec.get("replicas", 1)
    current = (st.get("observedGeneration") or 0) >= (olm.metadata(deployment).get("generation") or 0)
    ready = current and st.get("updatedReplicas", 0) == wanted and st.get("availableReplicas", 0) >= wanted and st.get("replicas", 0) == wanted
    return ready, f"Deployment {olm.name_of(deployment)}: {st.get('availableReplicas', 0)} of {wanted} available"


def workload_pods(snapshot):
    """The live pods the Deployments (or the DaemonSet) select."""
    selectors = [olm.spec(d).get("selector") for d in snapshot.deployments.values()]
    if snapshot.owner is not None and olm.metadata(snapshot.owner).get("name") and olm.spec(snapshot.owner).get("selector"):
        selectors.append(olm.spec(snapshot.owner).get("selector"))
    return [pod for pod in snapshot.pods.values() if olm.live_pod(pod) and any(selector_matches(s, _labels(pod)) for s in selectors)]


def _container_statuses(pod):
    return (olm.status(pod).get("initContainerStatuses") or []) + (olm.status(pod).get("containerStatuses") or [])


def _restarts(pod):
    return sum(c.get("restartCount") or 0 for c in _container_statuses(pod))


def _why_restarted(pod):
    """``: container manager exit code 1 (Error)`` - the last exit of the containers that have restarted, so that the
    cause is the same whether the gate sees the first restart or, later, the kubelet's crash loop."""
    exits = [
        f"container {c.get('name')} {podstatus.describe_exit(podstatus.last_termination(c))}".rstrip()
        for c in _container_statuses(pod)
        if (c.get("restartCount") or 0) > 0
    ]
    return f": {', '.join(exits)}" if exits else ""


def pod_trouble(pod, state):
    """Why a pod fails the gate (stuck container, or restarted since first seen), or None."""
    problem = olm.first_problem(olm.POD_FAILURES, pod)
    if problem:
        return problem.message
    uid = olm.metadata(pod).get("uid") or olm.name_of(pod)
    restarts = _restarts(pod)
    first = state.restarts.setdefault(uid, restarts)
    if restarts > first:
        return f"pod {olm.name_of(pod)} restarted during the health gate (restarts: {first} -> {restarts}){_why_restarted(pod)}"
    return None


def _extra_state(gate, snapshot):
    """The user's extra conditions: ``(all hold, message of the first that does not)``."""
    for check in gate.conditions or ():
        obj = snapshot.extra.get(check["key"])
        if obj is None:
            return False, f"{check['key']} is not there"
        cond = olm.condition(obj, check["type"]) or {}
        if cond.get("status") != check["status"]:
            return False, f"{check['key']} has {check['type']}={cond.get('status') or 'unset'} (wanted {check['status']})"
    return True, ""


def verdict(gate, snapshot, state, now):
    """``(PASSED | FAILED | WAITING, message)`` for ``snapshot`` at ``now`` (seconds); updates ``state``."""
    for pod in workload_pods(snapshot):
        trouble = pod_trouble(pod, state)
        if trouble:
            return FAILED, trouble
    ready, failed, message = owner_state(gate.kind, snapshot.owner, gate.target)
    if failed:
        return FAILED, message
    waiting = [] if ready else [message]
    names = gate.deployments if gate.deployments is not None else sorted(snapshot.deployments)
    for name in names:
        deployment = snapshot.deployments.get(name)
        if deployment is None:
            waiting.append(f"Deployment {name} is not there")
            continue
        available, why = deployment_state(deployment)
        if not available:
            waiting.append(why)
    held, why = _extra_state(gate, snapshot)
    if not held:
        waiting.append(why)
    if waiting:
        state.ready_since = None
        return WAITING, "; ".join(waiting)
    if state.ready_since is None:
        state.ready_since = now
    healthy_for = now - state.ready_since
    if healthy_for >= (gate.soak or 0):
        return PASSED, f"healthy for {int(healthy_for)} s" if gate.soak else "healthy"
    return WAITING, f"healthy for {int(healthy_for)} of {gate.soak} s"
