# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OperatorCondition ``Upgradeable`` of an operator that runs a canary rollout (KubeVirt HCO's practice).

OLM v0 injects ``OPERATOR_CONDITION_NAME`` into the operator's pods and creates an OperatorCondition
(``operators.coreos.com/v2``) of that name in the operator's namespace; the operator sets ``spec.conditions``. OLM's
OperatorCondition controller copies every entry of ``spec.conditions`` into ``status.conditions`` (with the object's
generation as ``observedGeneration``; it never removes one), and before replacing the operator's CSV OLM reads the
``Upgradeable`` condition (``spec.overrides`` first, then ``status.conditions``): ``False`` keeps the next CSV
``Pending`` with reason ``OperatorConditionNotUpgradeable`` (operator-lifecycle-manager
``pkg/controller/operators/operatorcondition_controller.go: syncOperatorConditionStatus`` and
``pkg/controller/operators/olm/operatorconditions.go: isOperatorUpgradeable``).

So while a rollout runs (phases canary, fast, paused, rollingback) and when it halted, the condition is
``Upgradeable=False`` with reason ``CanaryRolloutInProgress`` and a message naming the DaemonSet and the phase; once
the rollout is done or rolled back it becomes ``Upgradeable=True`` (reason ``CanaryRolloutCompleted`` or
``CanaryRolledBack``), like HCO, which sets ``True`` when its upgrade is over. Removing the entry instead would
leave OLM's copy in ``status.conditions`` at ``False`` for good.

The condition is ours only while its reason is one of ours and its message names this DaemonSet: a ``False`` set
by someone else (the operator itself, another DaemonSet's rollout) is left alone and never turned ``True``; the
other entries of ``spec.conditions`` are kept as they are. ``lastTransitionTime`` changes only with the status
(``meta.SetStatusCondition``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.kubeforge.operators.plugins.module_utils.canary import rollout as canary

API_VERSION = "operators.coreos.com/v2"
KIND = "OperatorCondition"
UPGRADEABLE = "Upgradeable"
IN_PROGRESS = "CanaryRolloutInProgress"
COMPLETED = "CanaryRolloutCompleted"
ROLLED_BACK = "CanaryRolledBack"
OUR_REASONS = (IN_PROGRESS, COMPLETED, ROLLED_BACK)
# Phases in which the operator must not be upgraded: a rollout in progress, paused or halted.
BLOCKING = (canary.CANARY, canary.FAST, canary.PAUSED, canary.HALTED_PHASE, canary.ROLLING_BACK)
MAX_MESSAGE_CHARS = 1024


def owner_prefix(namespace, name):
    """How our messages start; a condition whose message does not start so belongs to someone else."""
    return f"DaemonSet {namespace}/{name}: canary rollout"


def wanted(namespace, name, phase, failure=None):
    """``(status, reason, message)`` of ``Upgradeable`` for a DaemonSet in ``phase`` (None or ``done``: no rollout).

    ``halted`` keeps the operator from being upgraded (a human has to look); ``rolledback`` and done release it.
    """
    prefix = owner_prefix(namespace, name)
    if phase in BLOCKING:
        message = f"{prefix} in phase {phase}"
        if phase == canary.HALTED_PHASE and failure:
            message += f": {failure}"
        return "False", IN_PROGRESS, message[:MAX_MESSAGE_CHARS]
    if phase == canary.ROLLED_BACK:
        return "True", ROLLED_BACK, f"{prefix} failed and was rolled back to the previous revision"
    return "True", COMPLETED, f"{prefix} completed"


def find(conditions, condition_type=UPGRADEABLE):
    for condition in conditions or ():
        if isinstance(condition, dict) and condition.get("type") == condition_type:
            return condition
    return None


def ours(condition, namespace, name):
    """True when ``condition`` was set by the canary rollout of this DaemonSet."""
    return condition is not None and condition.get("reason") in OUR_REASONS and str(condition.get("message") or "").startswith(owner_prefix(namespace, name))


def plan(operator_condition, namespace, name, phase, now, failure=None):
    """``(patch, condition)``: the guarded JSON patch that sets ``Upgradeable`` on ``operator_condition`` (the
    OperatorCondition as a dict) for the DaemonSet ``namespace/name`` in ``phase``, or None when nothing is to
    change; ``condition`` is the ``Upgradeable`` entry after it (None when there is none).

    Blocking phases set ``False`` unless someone else's ``False`` is there already; other phases turn our ``False``
    into ``True`` and leave anyone else's condition (and the absence of one) alone.
    """
    meta = operator_condition.get("metadata") or {}
    spec = operator_condition.get("spec")
    conditions = list((spec or {}).get("conditions") or [])
    current = find(conditions)
    status, reason, message = wanted(namespace, name, phase, failure)
    mine = ours(current, namespace, name)
    if status == "False":
        if current is not None and current.get("status") == "False" and not mine:
            return None, current  # already blocked by someone else: keep their reason
    elif not mine:
        return None, current  # nothing of ours to release
    if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == (status, reason, message):
        return None, current
    transition = current.get("lastTransitionTime") if current is not None and current.get("status") == status else None
    entry = {
        "type": UPGRADEABLE,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": transition or canary.format_time(now),
    }
    if current is None:
        updated = conditions + [entry]
    else:
        updated = [entry if item is current else copy.deepcopy(item) for item in conditions]
    patch = [{"op": "test", "path": "/metadata/resourceVersion", "value": meta.get("resourceVersion")}]
    if spec is None:
        patch.append({"op": "add", "path": "/spec", "value": {"conditions": updated}})
    elif "conditions" in spec:
        patch.append({"op": "replace", "path": "/spec/conditions", "value": updated})
    else:
        patch.append({"op": "add", "path": "/spec/conditions", "value": updated})
    return patch, entry


def public(condition):
    """The ``Upgradeable`` entry as returned to the user (or None)."""
    if condition is None:
        return None
    return {key: condition.get(key) for key in ("status", "reason", "message", "lastTransitionTime")}
